package scaling

import (
	"testing"

	"github.com/fleetplane/fleetplane/test/harness/support"
)

// scheduleSchemas are the schedule fields users write, generated from
// apis/; each must carry SchedulePattern, so that apply time and the
// provider agree.
var scheduleSchemas = []struct{ file, path string }{
	{"../../package/configuration/xrds/adxmons.adx.fleetplane.io.yaml", "spec.autoscaler.schedule"},
	{"../../package/provider/crds/scaling.m.fleetplane.io_autoscalers.yaml", "spec.forProvider.schedule"},
}

func TestSchedulePatternIsApplied(t *testing.T) {
	for _, f := range scheduleSchemas {
		if p := support.GeneratedField(t, f.file, f.path); p.Pattern != SchedulePattern {
			t.Errorf("%s %s pattern is %q, want scaling.SchedulePattern", f.file, f.path, p.Pattern)
		}
	}
}
