package scaling

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// scheduleSchemas are the schedule fields users write, generated from
// apis/; each must carry SchedulePattern, so that apply time and the
// provider agree.
var scheduleSchemas = []struct{ file, path string }{
	{"../../package/configuration/xrds/adxmons.adx.fleetplane.io.yaml", "spec.autoscaler.schedule"},
}

func TestSchedulePatternIsApplied(t *testing.T) {
	for _, f := range scheduleSchemas {
		b, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Spec struct {
				Versions []struct {
					Schema struct {
						OpenAPIV3Schema schemaProps `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		p := doc.Spec.Versions[0].Schema.OpenAPIV3Schema
		for part := range strings.SplitSeq(f.path, ".") {
			p = p.Properties[part]
		}
		if p.Pattern != SchedulePattern {
			t.Errorf("%s %s pattern is %q, want scaling.SchedulePattern", f.file, f.path, p.Pattern)
		}
	}
}

type schemaProps struct {
	Pattern    string                 `json:"pattern"`
	Properties map[string]schemaProps `json:"properties"`
}
