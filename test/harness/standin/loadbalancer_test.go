package standin

import (
	"bufio"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestLoadBalancerAdmitsOnlyItsSourceRanges: a connection from within
// the ranges reaches the target and carries bytes both ways; one from
// outside is closed before anything is passed.
func TestLoadBalancerAdmitsOnlyItsSourceRanges(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				_, _ = c.Write([]byte("echo " + line))
			}()
		}
	}()
	dial := func(lb *LoadBalancer) (string, error) {
		c, err := net.DialTimeout("tcp", lb.Addr.String(), 5*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("hello\n")); err != nil {
			return "", err
		}
		return bufio.NewReader(c).ReadString('\n')
	}

	admitting, err := ListenLoadBalancer("127.0.0.1:0", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.0/8")}, echo.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer admitting.Close()
	if got, err := dial(admitting); err != nil || got != "echo hello\n" {
		t.Errorf("from within the ranges: %q, %v; want the target's answer", got, err)
	}

	refusing, err := ListenLoadBalancer("127.0.0.1:0", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, echo.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer refusing.Close()
	if got, err := dial(refusing); err == nil || got != "" {
		t.Errorf("from outside the ranges: %q, %v; want the connection closed unanswered", got, err)
	}
	if admitting.Admitted.Load() != 1 || admitting.Refused.Load() != 0 || refusing.Admitted.Load() != 0 || refusing.Refused.Load() != 1 {
		t.Errorf("counts: admitting %d/%d, refusing %d/%d (admitted/refused)", admitting.Admitted.Load(), admitting.Refused.Load(), refusing.Admitted.Load(), refusing.Refused.Load())
	}
}
