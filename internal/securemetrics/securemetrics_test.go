package securemetrics

import "testing"

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		name   string
		flags  Flags
		secure bool
	}{
		{"the default: HTTPS behind the API server's review", Flags{MetricsSecure: true, MetricsCertDir: "/certs"}, true},
		{"--no-metrics-secure: plain HTTP, no filter", Flags{MetricsCertDir: "/certs"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.flags.Options(":8080")
			if o.BindAddress != ":8080" || o.SecureServing != c.secure || (o.FilterProvider != nil) != c.secure {
				t.Errorf("address %q, secure %v, filter %v; want :8080, %v, %v", o.BindAddress, o.SecureServing, o.FilterProvider != nil, c.secure, c.secure)
			}
			if c.secure && o.CertDir != "/certs" || !c.secure && o.CertDir != "" {
				t.Errorf("cert dir %q", o.CertDir)
			}
		})
	}
}
