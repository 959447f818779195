// Command teamapp is the team's application in the e2e Placement journey,
// run as real pods on a workload cluster's node: the web Deployment serves
// with it, the migrate Job prints with it and ends, and the smoke Job
// probes web's Service with it. It stands in for the nginx and busybox
// images of examples/placement/required/workloads.yaml, which cannot be
// pulled here; what matters is what the pods do, not whose binary does it.
//
//	teamapp serve            answer HTTP on :8080 with the pod's name
//	teamapp say TEXT...      print TEXT and exit 0
//	teamapp probe URL        GET URL every second; once it answered 200,
//	                         report ready on :8081/ready and keep probing
//	                         for the life of the pod, as a soak test does
//	teamapp dribble          answer every request on :9091 with "#\n"
//	                         every 100 ms, never ending the answer: the
//	                         e2e hostile tenant's metrics endpoint, which
//	                         a scraper must give up on
//
// The e2e hostile tenant runs it too, as a pod that serves its metrics
// as slowly as it can.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: teamapp serve | say TEXT... | probe URL | dribble")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve()
	case "say":
		fmt.Println(strings.Join(os.Args[2:], " "))
	case "dribble":
		err = dribble()
	case "probe":
		if len(os.Args) != 3 {
			err = errors.New("probe takes one URL")
			break
		}
		err = probe(os.Args[2])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "teamapp:", err)
		os.Exit(1)
	}
}

func serve() error {
	host, _ := os.Hostname()
	s := &http.Server{Addr: ":8080", ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "web %s\n", host)
	})}
	return s.ListenAndServe()
}

func dribble() error {
	s := &http.Server{Addr: ":9091", ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := fmt.Fprint(w, "#\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})}
	return s.ListenAndServe()
}

// probe reports ready from the first 200 on: a probe that fails later is
// logged, not unready, so that the pod's readiness records that the Job
// reached the Service through cluster DNS and kube-proxy at least once.
func probe(url string) error {
	var ok atomic.Bool
	go func() {
		mux := http.NewServeMux()
		mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) {
			if !ok.Load() {
				http.Error(w, "web not reached yet", http.StatusServiceUnavailable)
			}
		})
		s := &http.Server{Addr: ":8081", ReadHeaderTimeout: 5 * time.Second, Handler: mux}
		fmt.Fprintln(os.Stderr, "teamapp: readiness server:", s.ListenAndServe())
		os.Exit(1)
	}()
	c := &http.Client{Timeout: 3 * time.Second}
	for {
		if body, err := get(c, url); err != nil {
			fmt.Println("probe:", err)
		} else if !ok.Swap(true) {
			fmt.Printf("probe: %s answered %q\n", url, body)
		}
		time.Sleep(time.Second)
	}
}

func get(c *http.Client, url string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return strings.TrimSpace(string(b)), nil
}
