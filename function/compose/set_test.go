package compose

import (
	"testing"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// obj is a composed resource whose spec says which rendering it is.
func obj(rendering string) *composed.Unstructured {
	o := composed.New()
	o.SetAPIVersion("example.org/v1")
	o.SetKind("Thing")
	o.Object["spec"] = map[string]any{"rendering": rendering}
	return o
}

// observedThing is what Crossplane reports for a resource composed with
// rendering, ready or not.
func observedThing(rendering string, ready bool) resource.ObservedComposed {
	o := obj(rendering)
	o.SetName("thing-x1")
	o.SetAnnotations(map[string]string{
		"crossplane.io/external-name":             "thing",
		"crossplane.io/composition-resource-name": "n",
		"example.org/kept":                        "yes",
	})
	status := "False"
	if ready {
		status = "True"
	}
	o.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": status}}}
	return resource.ObservedComposed{Resource: o}
}

type outcome struct {
	Rendering string
	Ready     bool
}

func TestSetRule(t *testing.T) {
	cases := map[string]struct {
		observed map[resource.Name]resource.ObservedComposed
		plan     func(s *Set)
		want     map[string]outcome
		held     []string
	}{
		"a first resource is created at once": {
			plan: func(s *Set) { s.Add("a", obj("new")) },
			want: map[string]outcome{"a": {"new", false}},
		},
		"a new resource waits for its predecessor to be Ready": {
			observed: map[resource.Name]resource.ObservedComposed{"a": observedThing("old", false)},
			plan: func(s *Set) {
				s.Add("a", obj("new"))
				s.Add("b", obj("new"), "a")
			},
			want: map[string]outcome{"a": {"new", false}},
			held: []string{"b"},
		},
		"a new resource is created once its predecessor is Ready": {
			observed: map[resource.Name]resource.ObservedComposed{"a": observedThing("old", true)},
			plan: func(s *Set) {
				s.Add("a", obj("new"))
				s.Add("b", obj("new"), "a")
			},
			want: map[string]outcome{"a": {"new", true}, "b": {"new", false}},
		},
		"a predecessor that is not in the set holds": {
			plan: func(s *Set) { s.Add("b", obj("new"), "a") },
			held: []string{"b"},
		},
		"an edit reaches a resource whose predecessor is not Ready": {
			observed: map[resource.Name]resource.ObservedComposed{"a": observedThing("old", false), "b": observedThing("old", true)},
			plan: func(s *Set) {
				s.Add("a", obj("edited"))
				s.Add("b", obj("edited"), "a")
			},
			want: map[string]outcome{"a": {"edited", false}, "b": {"edited", true}},
		},
		"a closed precondition holds only what does not exist": {
			observed: map[resource.Name]resource.ObservedComposed{"a": observedThing("old", true)},
			plan: func(s *Set) {
				s.AddWhen(false, "a", obj("edited"))
				s.AddWhen(false, "b", obj("new"))
			},
			want: map[string]outcome{"a": {"edited", true}},
			held: []string{"b"},
		},
		"what cannot be rendered is kept as observed": {
			observed: map[resource.Name]resource.ObservedComposed{"a": observedThing("old", true)},
			plan:     func(s *Set) { s.Keep("a", "never-composed") },
			want:     map[string]outcome{"a": {"old", true}},
		},
		"keep does not replace a rendering": {
			observed: map[resource.Name]resource.ObservedComposed{"a": observedThing("old", true)},
			plan: func(s *Set) {
				s.Add("a", obj("new"))
				s.Keep("a")
			},
			want: map[string]outcome{"a": {"new", true}},
		},
		"freeze composes nothing new and removes nothing": {
			observed: map[resource.Name]resource.ObservedComposed{"a": observedThing("old", true), "gone-from-spec": observedThing("old", false)},
			plan: func(s *Set) {
				s.Add("a", obj("edited"))
				s.Add("b", obj("new"), "a")
				s.Freeze()
			},
			want: map[string]outcome{"a": {"edited", true}, "gone-from-spec": {"old", false}},
			held: []string{"b"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := NewSet(tc.observed)
			tc.plan(s)
			got := map[string]outcome{}
			for n, d := range s.desired {
				r, _ := d.Resource.GetString("spec.rendering")
				got[string(n)] = outcome{r, d.Ready == resource.ReadyTrue}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("desired (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.held, s.Held(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetain(t *testing.T) {
	got := Retain(observedThing("old", true).Resource)
	want := map[string]any{
		"apiVersion": "example.org/v1",
		"kind":       "Thing",
		"metadata": map[string]any{"annotations": map[string]any{
			// The external name must survive; Crossplane's own bookkeeping
			// must not be rewound by an apply.
			"crossplane.io/external-name": "thing",
			"example.org/kept":            "yes",
		}},
		"spec": map[string]any{"rendering": "old"},
	}
	if diff := cmp.Diff(want, got.Object); diff != "" {
		t.Errorf("Retain (-want +got):\n%s", diff)
	}
}
