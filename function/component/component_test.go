package component

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

func TestComponentIsChecked(t *testing.T) {
	component := func(params ...v1alpha1.Parameter) *v1alpha1.Component {
		return &v1alpha1.Component{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ComponentKind},
			ObjectMeta: metav1.ObjectMeta{Name: "envoy-gateway"},
			Spec: v1alpha1.ComponentSpec{
				Type:       v1alpha1.ComponentApp,
				Sources:    []v1alpha1.Source{{RepoURL: "https://charts.example.org/envoy", Chart: "gateway-helm"}, {RepoURL: "https://github.com/example/lab.git", Ref: "values"}},
				Parameters: params,
			},
		}
	}
	cases := map[string]struct {
		c      *v1alpha1.Component
		status fnv1.Status
		reason string
		msg    string
		event  fnv1.Severity
	}{
		"valid": {
			c:      component(v1alpha1.Parameter{Name: "replicas", Default: "1"}, v1alpha1.Parameter{Name: "logLevel", Required: true}),
			status: fnv1.Status_STATUS_CONDITION_TRUE, reason: ReasonValid, msg: "app component with 2 sources and 2 declared parameters",
			event: fnv1.Severity_SEVERITY_NORMAL,
		},
		"a required parameter with a default": {
			c:      component(v1alpha1.Parameter{Name: "replicas", Default: "1", Required: true}),
			status: fnv1.Status_STATUS_CONDITION_FALSE, reason: ReasonInvalid, msg: "parameter replicas is required and has a default",
			event: fnv1.Severity_SEVERITY_WARNING,
		},
		"a typed default of another type": {
			c:      component(v1alpha1.Parameter{Name: "replicas", Type: v1alpha1.ParameterInt, Default: "1.5"}),
			status: fnv1.Status_STATUS_CONDITION_FALSE, reason: ReasonInvalid, msg: `the default of parameter replicas is declared int, and "1.5" is not a whole number`,
			event: fnv1.Severity_SEVERITY_WARNING,
		},
		"typed defaults that are their type": {
			c:      component(v1alpha1.Parameter{Name: "replicas", Type: v1alpha1.ParameterInt, Default: "-2"}, v1alpha1.Parameter{Name: "debug", Type: v1alpha1.ParameterBool, Default: "false"}),
			status: fnv1.Status_STATUS_CONDITION_TRUE, reason: ReasonValid, msg: "2 declared parameters",
			event: fnv1.Severity_SEVERITY_NORMAL,
		},
		"observability with a pod label key Kubernetes refuses": {
			c: func() *v1alpha1.Component {
				c := component()
				c.Spec.Observability = &v1alpha1.Observability{PodMonitor: true, PodLabels: map[string]v1alpha1.LabelValue{"app": "envoy", "bad key!": "x"}}
				return c
			}(),
			status: fnv1.Status_STATUS_CONDITION_FALSE, reason: ReasonInvalid, msg: `observability: pod label key "bad key!"`,
			event: fnv1.Severity_SEVERITY_WARNING,
		},
		"observability with valid pod labels": {
			c: func() *v1alpha1.Component {
				c := component()
				c.Spec.Observability = &v1alpha1.Observability{ServiceMonitor: true, MetricsPath: "/metrics", PodLabels: map[string]v1alpha1.LabelValue{"app.kubernetes.io/name": "envoy"}}
				return c
			}(),
			status: fnv1.Status_STATUS_CONDITION_TRUE, reason: ReasonValid, msg: "app component",
			event: fnv1.Severity_SEVERITY_NORMAL,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := ct.Run(t, Composer, ct.Call{XR: tc.c})
			r.WantNames()
			r.WantCondition(v1alpha1.ConditionComponent, tc.status, tc.reason, tc.msg)
			r.WantEvent(tc.event, tc.reason)
			if tc.status == fnv1.Status_STATUS_CONDITION_FALSE {
				r.WantNotReady()
			} else {
				r.WantDerivedReadiness()
			}
		})
	}
}
