// Command kusto-server runs fleetplane's in-memory Kusto cluster as a
// process, for the local demo and end-to-end tests:
//
//	kusto-server --listen 127.0.0.1:8080 --database Metrics --database Logs
//	kusto-server --listen 127.0.0.1:8081 --seed partition.yaml
//
// A seed file lists databases and the management commands that set them up:
//
//	databases:
//	  Metrics:
//	  - .create table ['cpu'] (['v']:real)
//	  Logs: []
//
// Besides Kusto's REST endpoints it serves a small control API under
// /fleetplane/ (see package kustoserver).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
)

type seed struct {
	Databases map[string][]string `json:"databases"`
}

type names []string

func (n *names) String() string     { return fmt.Sprint(*n) }
func (n *names) Set(v string) error { *n = append(*n, v); return nil }

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve on")
	seedFile := flag.String("seed", "", "YAML file of databases and the commands that set them up")
	var dbs names
	flag.Var(&dbs, "database", "database to create (repeatable)")
	flag.Parse()

	s := kustoserver.New(dbs...)
	if *seedFile != "" {
		if err := load(s, *seedFile); err != nil {
			fmt.Fprintln(os.Stderr, "kusto-server:", err)
			os.Exit(1)
		}
	}
	if err := s.Start(*listen); err != nil {
		fmt.Fprintln(os.Stderr, "kusto-server:", err)
		os.Exit(1)
	}
	fmt.Println("kusto-server listening on", s.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	_ = s.Close()
}

func load(s *kustoserver.Server, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sd seed
	if err := yaml.UnmarshalStrict(b, &sd); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dbs := make([]string, 0, len(sd.Databases))
	for db := range sd.Databases {
		dbs = append(dbs, db)
	}
	sort.Strings(dbs)
	for _, db := range dbs {
		s.CreateDatabase(db)
		for _, cmd := range sd.Databases[db] {
			if err := s.Exec(db, cmd); err != nil {
				return fmt.Errorf("%s: database %s: %q: %w", path, db, cmd, err)
			}
		}
	}
	return nil
}
