//go:build tools

// Package tools pins kube-apiserver for fleetplane's controller and
// end-to-end tests, which run a real API server on loopback, and
// kube-controller-manager, whose garbage collector deletes what an owner
// leaves behind.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
