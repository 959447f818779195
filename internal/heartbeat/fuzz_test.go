package heartbeat

import (
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/internal/kql"
)

// FuzzDecode feeds arbitrary heartbeat rows to the hub's decoder: whatever
// it accepts must be a valid endpoint and valid names, nothing else.
func FuzzDecode(f *testing.F) {
	f.Add("https://p1.kusto.windows.net", `[{"database":"Metrics","tables":["a","b"],"views":["v"]}]`)
	f.Add("https://x').database('y", `[{"database":"x'] | .drop table T //","tables":["\n"]}]`)
	f.Add("HTTPS://P1/", `[{"database":"D","tables":null,"views":[1,2]}]`)
	f.Add("https://p1", `[{"database":"","tables":["`+"\u2028"+`"]}]`)
	f.Fuzz(func(t *testing.T, endpoint, schema string) {
		p, _, err := Decode(time.Unix(0, 0), endpoint, schema, false)
		if err != nil {
			return
		}
		if ep, err := kql.Endpoint(p.Endpoint, false); err != nil || ep != p.Endpoint {
			t.Fatalf("accepted endpoint %q is not in normal form: %v", p.Endpoint, err)
		}
		for _, d := range p.Databases {
			for _, n := range append(append([]string{d.Database}, d.Tables...), d.Views...) {
				if err := kql.ValidateName(n); err != nil {
					t.Fatalf("accepted name %q: %v", n, err)
				}
			}
		}
	})
}
