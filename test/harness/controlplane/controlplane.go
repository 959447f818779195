// Package controlplane runs a real Kubernetes control plane on loopback
// for fleetplane's tests and demo: etcd, kube-apiserver and the garbage
// collector and namespace controllers of kube-controller-manager, built at
// pinned versions by tools/tools.sh, on free ports, with a kubeconfig, logs
// in files, readiness awaited with deadlines, and every process stopped on
// Stop (children also die if the parent does).
package controlplane

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// token is the bearer token of the control plane's admin user.
const token = "fleetplane-admin-token"

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	// Dir holds data, certificates, logs and the kubeconfig.
	Dir string
	// Kubeconfig is the path of an admin kubeconfig.
	Kubeconfig string
	// Config is the admin REST configuration.
	Config *rest.Config
	// URL is the API server's address.
	URL string
	// KubeletClientCA is the CA file a kubelet trusts for client
	// certificates: it signed the one the API server presents as
	// KubeletClientUser when it reads logs or runs exec.
	KubeletClientCA string

	procs []*Process
}

// Process is a child process with its log file.
type Process struct {
	Name string
	Log  string
	dir  string
	bin  string
	args []string
	env  []string
	cmd  *exec.Cmd
	// done closes when the process has exited.
	done chan struct{}
}

// Binary is the base name of the process's executable, which client-go
// puts first in its default user agent.
func (p *Process) Binary() string { return filepath.Base(p.bin) }

// Stop kills the process group and waits for it.
func (p *Process) Stop() {
	if p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Kill ends the process group at once, as a node failure or an OOM kill
// would: no signal handler runs, nothing is flushed.
func (p *Process) Kill() {
	if p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Restart starts the process again with the same binary, arguments and
// environment, appending to the same log. The old one must have ended.
func (p *Process) Restart() (*Process, error) {
	if !p.Exited() {
		return nil, fmt.Errorf("%s is still running", p.Name)
	}
	return Run(p.dir, p.Name, p.bin, p.args, p.env)
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Tail returns the last bytes of the process log, for failure messages.
func (p *Process) Tail(n int) string {
	b, _ := os.ReadFile(p.Log)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Run starts a binary in its own process group, logging to dir/name.log.
func Run(dir, name, bin string, args []string, env []string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	p := &Process{Name: name, Log: logPath, dir: dir, bin: bin, args: args, env: env, cmd: cmd, done: make(chan struct{})}
	go func() {
		// How it ended is in its log; Exited says that it did.
		_ = cmd.Wait()
		close(p.done)
		_ = f.Close()
	}()
	return p, nil
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Tool returns the path of a pinned tool, building it if needed.
func Tool(root, name string) (string, error) {
	cmd := exec.Command(filepath.Join(root, "tools", "tools.sh"), name)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("tools/tools.sh %s: %w\n%s", name, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// Start runs etcd and kube-apiserver in dir and waits until the API server
// is ready. root is the repository root, for tools/tools.sh.
func Start(ctx context.Context, root, dir string) (*ControlPlane, error) {
	return StartWith(ctx, root, dir, Options{})
}

// Options tune a control plane.
type Options struct {
	// Controllers of kube-controller-manager beyond the default set.
	Controllers []string
	// BindAddress is where the API server listens and what it
	// advertises as the `kubernetes` Service's endpoint: 127.0.0.1 by
	// default, a real node's Network.HostIP when pods are to reach it.
	BindAddress string
	// AuditLog, when set, is where kube-apiserver writes one JSON line
	// per completed request (metadata only): who asked, with which user
	// agent, for what. For measurements of clients' API traffic.
	AuditLog string
}

// auditPolicy records every request at the Metadata level, once, when
// its response is complete.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
- level: Metadata
`

// StartWith is Start with options.
func StartWith(ctx context.Context, root, dir string, o Options) (*ControlPlane, error) {
	controllers := o.Controllers
	etcdBin, err := Tool(root, "etcd")
	if err != nil {
		return nil, err
	}
	apiBin, err := Tool(root, "kube-apiserver")
	if err != nil {
		return nil, err
	}
	kcmBin, err := Tool(root, "kube-controller-manager")
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{Dir: dir}
	ok := false
	defer func() {
		if !ok {
			cp.Stop()
		}
	}()

	clientPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	peerPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	etcd, err := Run(dir, "etcd", etcdBin, []string{
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default=" + peerURL,
		// Tests do not need durability; fsync dominates etcd's latency.
		"--unsafe-no-fsync",
	}, nil)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, etcd)

	keyFile, err := writeServiceAccountKey(dir)
	if err != nil {
		return nil, err
	}
	kubeletCA, kubeletCert, kubeletKey, err := writeKubeletClientCert(dir)
	if err != nil {
		return nil, err
	}
	cp.KubeletClientCA = kubeletCA
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	bind := o.BindAddress
	if bind == "" {
		bind = "127.0.0.1"
	}
	apiArgs := []string{
		"--etcd-servers", etcdURL,
		"--secure-port", strconv.Itoa(port), "--bind-address", bind,
		"--cert-dir", filepath.Join(dir, "certs"),
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", keyFile, "--service-account-signing-key-file", keyFile,
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--authorization-mode", "RBAC", "--token-auth-file", tokens,
		"--enable-priority-and-fairness=false",
		// A real node (test/harness/node) is reached at its bridge's
		// address; its name resolves nowhere.
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		// A real node takes no anonymous request: the API server proves
		// itself with a client certificate the kubelet's CA signed.
		"--kubelet-client-certificate", kubeletCert, "--kubelet-client-key", kubeletKey,
	}
	if o.BindAddress != "" {
		// Webhooks (Crossplane's, a provider's) are Services of pods on a
		// real node, whose ClusterIPs only the node's namespace routes:
		// the API server calls the pod behind the Service instead.
		apiArgs = append(apiArgs, "--enable-aggregator-routing=true")
	}
	if o.AuditLog != "" {
		policy := filepath.Join(dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			return nil, err
		}
		// Synchronous writes and no rotation (a size of 0 would mean
		// the 100 MB default, which ten minutes of a fleet exceed): a
		// measurement reads every line of its window from one file.
		apiArgs = append(apiArgs, "--audit-policy-file", policy, "--audit-log-path", o.AuditLog, "--audit-log-mode", "blocking", "--audit-log-maxsize", "1000000")
	}
	api, err := Run(dir, "kube-apiserver", apiBin, apiArgs, nil)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, api)
	cp.URL = "https://" + net.JoinHostPort(bind, strconv.Itoa(port))
	cp.Config = &rest.Config{Host: cp.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 200, Burst: 400}

	if err := cp.waitReady(ctx, 90*time.Second); err != nil {
		return nil, err
	}
	cp.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(cp.Kubeconfig, cp.URL); err != nil {
		return nil, err
	}
	// Owners' dependents (an XR's composed resources, say) are deleted by
	// the garbage collector, and namespaces by their controller: without
	// them a deletion would never finish. The workload controllers make
	// the pods of the StatefulSets, DaemonSets and Deployments an ADXMon
	// composes and report their status from those pods (which real nodes
	// run, test/harness/node). No node lifecycle controller: nodes come
	// and go with a test. ClusterRole aggregation, as Crossplane's own
	// ClusterRole is built by it.
	kcm, err := Run(dir, "kube-controller-manager", kcmBin, []string{
		"--kubeconfig", cp.Kubeconfig, "--authentication-kubeconfig", cp.Kubeconfig, "--authorization-kubeconfig", cp.Kubeconfig,
		"--controllers", strings.Join(append([]string{"garbage-collector-controller", "namespace-controller", "statefulset-controller", "daemonset-controller", "deployment-controller", "replicaset-controller", "clusterrole-aggregation-controller"}, controllers...), ","),
		"--leader-elect=false", "--use-service-account-credentials=false", "--secure-port=0",
		// What root-ca-certificate-publisher-controller, when asked for,
		// publishes as every namespace's kube-root-ca.crt, which a pod's
		// in-cluster client verifies the API server with: the chain of
		// the API server's own self-signed certificate.
		"--root-ca-file", filepath.Join(dir, "certs", "apiserver.crt"),
	}, nil)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, kcm)
	ok = true
	return cp, nil
}

// waitReady polls /readyz until it answers ok or the deadline passes.
func (cp *ControlPlane) waitReady(ctx context.Context, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(timeout)
	for {
		for _, p := range cp.procs {
			if (p.Name == "etcd" || p.Name == "kube-apiserver") && p.Exited() {
				return fmt.Errorf("%s exited during start-up:\n%s", p.Name, p.Tail(4000))
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cp.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			tail := ""
			if i := slices.IndexFunc(cp.procs, func(p *Process) bool { return p.Name == "kube-apiserver" }); i >= 0 {
				tail = cp.procs[i].Tail(4000)
			}
			return fmt.Errorf("kube-apiserver not ready after %s:\n%s", timeout, tail)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// RestartAPIServer kills kube-apiserver, as a crash would, and starts it
// again on the same address, over the same etcd; it returns once the new
// one is ready. Clients see refused connections and broken watches
// meanwhile.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context) error {
	i := slices.IndexFunc(cp.procs, func(p *Process) bool { return p.Name == "kube-apiserver" })
	if i < 0 {
		return errors.New("no kube-apiserver")
	}
	old := cp.procs[i]
	old.Kill()
	p, err := old.Restart()
	if err != nil {
		return err
	}
	cp.Replace(old, p)
	return cp.waitReady(ctx, 90*time.Second)
}

// Stop stops every process, last started first.
func (cp *ControlPlane) Stop() {
	for _, v := range slices.Backward(cp.procs) {
		v.Stop()
	}
}

// Track adds a process to be stopped with the control plane.
func (cp *ControlPlane) Track(p *Process) { cp.procs = append(cp.procs, p) }

// Replace tracks next instead of old, a process restarted.
func (cp *ControlPlane) Replace(old, next *Process) {
	if i := slices.Index(cp.procs, old); i >= 0 {
		cp.procs[i] = next
		return
	}
	cp.Track(next)
}

// KubeletClientUser is who the API server is to a kubelet.
const KubeletClientUser = "kube-apiserver-kubelet-client"

// writeKubeletClientCert makes a CA and, signed by it, the client
// certificate the API server presents to kubelets; it returns the CA's,
// the certificate's and the key's files.
func writeKubeletClientCert(dir string) (caFile, certFile, keyFile string, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fleetplane kubelet client CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return "", "", "", err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: KubeletClientUser},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return "", "", "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", "", err
	}
	caFile, certFile, keyFile = filepath.Join(dir, "kubelet-client-ca.crt"), filepath.Join(dir, "kubelet-client.crt"), filepath.Join(dir, "kubelet-client.key")
	for path, block := range map[string]*pem.Block{
		caFile: {Type: "CERTIFICATE", Bytes: caDER}, certFile: {Type: "CERTIFICATE", Bytes: leafDER}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return "", "", "", err
		}
	}
	return caFile, certFile, keyFile, nil
}

func writeServiceAccountKey(dir string) (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "sa.key")
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return path, os.WriteFile(path, b, 0o600)
}

func writeKubeconfig(path, server string) error {
	return os.WriteFile(path, []byte(kubeconfigText(server, token)), 0o600)
}

// kubeconfigText is a kubeconfig for server with a bearer token.
func kubeconfigText(server, bearer string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fleetplane
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: fleetplane
  context:
    cluster: fleetplane
    user: admin
current-context: fleetplane
`, server, bearer)
}

// CPU is the processor time the process has used, user and system.
func (p *Process) CPU() (time.Duration, error) {
	if p.cmd.Process == nil {
		return 0, fmt.Errorf("%s is not running", p.Name)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count fields after its closing one. utime and stime are fields 14
	// and 15, in clock ticks of USER_HZ, which Linux fixes at 100.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc stat for %s", p.Name)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// RSS is the resident memory of the process in bytes, from /proc.
func (p *Process) RSS() (int64, error) {
	if p.cmd.Process == nil {
		return 0, fmt.Errorf("%s is not running", p.Name)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), "%d kB", &kb); err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS for %s", p.Name)
}
