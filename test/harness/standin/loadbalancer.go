package standin

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LoadBalancer plays a cloud's layer-4 load balancer in front of a
// Service of type LoadBalancer, as Azure's and AWS's network load
// balancers are: it listens at an address of its own, admits only
// connections from the Service's loadBalancerSourceRanges (every source
// when there are none, as the clouds do), and passes each admitted
// connection's bytes unchanged to a node's port of the Service
// (nodePort), where kube-proxy takes over. TLS is end to end: the
// balancer sees none of it.
type LoadBalancer struct {
	// Addr is where it listens.
	Addr netip.AddrPort
	// Admitted and Refused count connections, by the source ranges.
	Admitted, Refused atomic.Int64

	ln     net.Listener
	ranges []netip.Prefix
	target string
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

// ListenLoadBalancer starts a balancer at listen (ip:port) passing to
// target (host:port), admitting sources within ranges (every source when
// ranges is empty).
func ListenLoadBalancer(listen string, ranges []netip.Prefix, target string) (*LoadBalancer, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	addr, err := netip.ParseAddrPort(ln.Addr().String())
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	lb := &LoadBalancer{Addr: addr, ln: ln, ranges: ranges, target: target, conns: map[net.Conn]struct{}{}}
	lb.wg.Add(1)
	go lb.serve()
	return lb, nil
}

// ExposeService gives the Service ns/name of type LoadBalancer a
// balancer at ip, on the Service's first port, passing to that port's
// nodePort on nodeIP, and writes ip into the Service's
// status.loadBalancer, as the cloud's controller does once its balancer
// is programmed.
func ExposeService(ctx context.Context, c client.Client, ns, name, ip, nodeIP string) (*LoadBalancer, error) {
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		return nil, err
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].NodePort == 0 {
		return nil, fmt.Errorf("service %s/%s is %s with ports %v: a balancer needs a LoadBalancer Service with a nodePort", ns, name, svc.Spec.Type, svc.Spec.Ports)
	}
	var ranges []netip.Prefix
	for _, r := range svc.Spec.LoadBalancerSourceRanges {
		p, err := netip.ParsePrefix(r)
		if err != nil {
			return nil, fmt.Errorf("service %s/%s: source range %q: %w", ns, name, r, err)
		}
		ranges = append(ranges, p)
	}
	port := svc.Spec.Ports[0]
	lb, err := ListenLoadBalancer(net.JoinHostPort(ip, strconv.Itoa(int(port.Port))), ranges, net.JoinHostPort(nodeIP, strconv.Itoa(int(port.NodePort))))
	if err != nil {
		return nil, err
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	if err := c.Status().Update(ctx, svc); err != nil {
		lb.Close()
		return nil, fmt.Errorf("service %s/%s status: %w", ns, name, err)
	}
	return lb, nil
}

func (lb *LoadBalancer) serve() {
	defer lb.wg.Done()
	for {
		in, err := lb.ln.Accept()
		if err != nil {
			return
		}
		if !lb.admits(in.RemoteAddr()) {
			lb.Refused.Add(1)
			_ = in.Close()
			continue
		}
		lb.Admitted.Add(1)
		lb.wg.Add(1)
		go lb.pass(in)
	}
}

func (lb *LoadBalancer) admits(a net.Addr) bool {
	if len(lb.ranges) == 0 {
		return true
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return false
	}
	for _, r := range lb.ranges {
		if r.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// pass copies bytes both ways until either side closes.
func (lb *LoadBalancer) pass(in net.Conn) {
	defer lb.wg.Done()
	out, err := net.DialTimeout("tcp", lb.target, 10*time.Second)
	if err != nil {
		_ = in.Close()
		return
	}
	if !lb.track(in, out) {
		return
	}
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(out, in)
	go cp(in, out)
	<-done
	lb.untrack(in, out)
	<-done
}

// track registers a pair so that Close ends it; false when the balancer
// is closing, having closed both.
func (lb *LoadBalancer) track(in, out net.Conn) bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.conns == nil {
		_, _ = in.Close(), out.Close()
		return false
	}
	lb.conns[in], lb.conns[out] = struct{}{}, struct{}{}
	return true
}

func (lb *LoadBalancer) untrack(in, out net.Conn) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	_, _ = in.Close(), out.Close()
	delete(lb.conns, in)
	delete(lb.conns, out)
}

// Close stops listening, ends every connection and waits for them.
func (lb *LoadBalancer) Close() {
	_ = lb.ln.Close()
	lb.mu.Lock()
	for c := range lb.conns {
		_ = c.Close()
	}
	lb.conns = nil
	lb.mu.Unlock()
	lb.wg.Wait()
}
