package tenancy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// TestQuotaDefaults: a policy that sets no quota is bounded by the
// defaults tenancy.md lists; one that sets them gets what it says.
func TestQuotaDefaults(t *testing.T) {
	if got := experimentsLimits(nil); got != (ExperimentsLimits{Experiments: 5, Targets: 4, NodesPerTarget: 3, Nodes: 8, TTLDays: 7}) {
		t.Errorf("experiments defaults %+v", got)
	}
	if got := experimentsLimits(&v1alpha1.ExperimentsQuota{MaxExperiments: ptr.To[int32](0), MaxTTLDays: ptr.To[int32](30)}); got.Experiments != 0 || got.TTLDays != 30 || got.Nodes != 8 {
		t.Errorf("an explicit 0 allows none, the others keep their defaults: %+v", got)
	}
	if got := placementLimits(nil); got != (PlacementLimits{Clusters: 100, Copies: 1000}) {
		t.Errorf("placement defaults %+v", got)
	}
	g := &Grant{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"}
	l := g.ADXLimits(v1alpha1.AzureProvisioning{SubscriptionID: "s"})
	if l.Capacity != 10 || l.Databases != 16 || l.SKU("Standard_L8as_v3") != nil || l.SKU("Dev(No SLA)_Standard_E2a_v4") != nil || l.SKU("Standard_L32as_v3") == nil {
		t.Errorf("ADX defaults %+v", l)
	}
	if l.SKU("") != nil {
		t.Error("an SKU left to discovery is checked once discovered, not before")
	}
}

func TestFederationIntervals(t *testing.T) {
	d := func(s string) *metav1.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Duration{Duration: v}
	}
	def := &Grant{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"}
	fast := &Grant{Kind: v1alpha1.ClusterProviderConfigKind, Name: "fast", Kusto: v1alpha1.KustoPolicy{Quota: &v1alpha1.KustoQuota{MinFederationInterval: d("1s"), MinChangeCheckInterval: d("1s")}}}
	cases := []struct {
		g                    *Grant
		interval, check      *metav1.Duration
		field, wantSubstring string
	}{
		{g: def},
		{g: def, interval: d("1m"), check: d("15s")},
		{g: def, interval: d("1s"), field: "spec.kusto.quota.minFederationInterval", wantSubstring: "spec.forProvider.interval 1s is shorter than the 1m0s ClusterProviderConfig default allows"},
		{g: def, interval: d("10m"), check: d("1s"), field: "spec.kusto.quota.minChangeCheckInterval", wantSubstring: "spec.forProvider.changeCheckInterval 1s is shorter than the 15s"},
		{g: fast, interval: d("1s"), check: d("1s")},
	}
	for i, tc := range cases {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			err := tc.g.FederationIntervals(tc.interval, tc.check)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var q *QuotaError
			if !errors.As(err, &q) || q.Field != tc.field || !strings.Contains(err.Error(), tc.wantSubstring) || !strings.HasSuffix(err.Error(), "("+tc.field+")") {
				t.Fatalf("got %v, want a QuotaError on %s saying %q", err, tc.field, tc.wantSubstring)
			}
			if !IsQuota(fmt.Errorf("wrapped: %w", err)) {
				t.Error("IsQuota does not see through wrapping")
			}
		})
	}
}
