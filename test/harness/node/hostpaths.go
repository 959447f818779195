package node

import "os"

// AdxMonHostPaths are the directories of this machine that the pods an
// ADXMon composes mount (hostPath): the ingestor's and the collector's
// storage, and what the collector reads of the host.
var AdxMonHostPaths = []string{"/mnt/ingestor", "/mnt/collector", "/etc/pki", "/run/log", "/var/lib/docker"}

// ClaimHostPaths takes the machine-wide lock on dirs, host directories
// that pods mount, and returns its release, which removes those of dirs
// that did not exist before. Every node of this machine is the same host
// to a hostPath: two test processes running adx-mon side by side (the e2e
// and node suites do) would share one WAL directory, and the first to
// finish would remove it under the other's pods. A holder must have its
// pods gone before it releases.
func ClaimHostPaths(dirs ...string) (release func(), err error) {
	unlock, err := lockMachine("hostpaths")
	if err != nil {
		return nil, err
	}
	var made []string
	for _, d := range dirs {
		if _, err := os.Stat(d); os.IsNotExist(err) {
			made = append(made, d)
		}
	}
	return func() {
		for _, d := range made {
			_ = os.RemoveAll(d)
		}
		unlock()
	}, nil
}
