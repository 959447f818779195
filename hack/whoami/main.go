// Command whoami asks the API server, as a pod's in-cluster client does,
// who it is, resolves the API server's Service name through cluster DNS,
// and prints both answers. test/node runs it as a pod on the
// real node: a pod that prints its ServiceAccount's name has reached the
// API server through the `kubernetes` Service (kube-proxy), verified its
// certificate with the namespace's kube-root-ca.crt and authenticated
// with the token kubelet projected, as a provider's pod does.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "whoami:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	// The short name, as a pod writes it: the search path of the
	// resolv.conf kubelet wrote completes it.
	addrs, err := net.DefaultResolver.LookupHost(ctx, "kubernetes.default.svc")
	if err != nil {
		return err
	}
	fmt.Printf("server=%s user=%s kubernetes.default.svc=%s\n", cfg.Host, r.Status.UserInfo.Username, strings.Join(addrs, ","))
	return nil
}
