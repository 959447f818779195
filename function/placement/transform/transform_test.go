package transform

import (
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/function/placement/jsonpath"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestObject(t *testing.T) {
	cases := map[string]struct {
		group, kind string
		in, want    string
		removals    []string
	}{
		"every object: server metadata, last-applied, status": {
			group: "", kind: "ConfigMap",
			in: `
metadata:
  name: cm
  namespace: wds
  uid: 1234
  resourceVersion: "7"
  generation: 2
  generateName: cm-
  selfLink: /api/v1/x
  finalizers: [a]
  ownerReferences: [{kind: X}]
  managedFields: [{manager: kubectl}]
  labels: {app: web}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
    keep: me
data: {a: b}
status: {phase: x}
`,
			want: `
metadata:
  name: cm
  namespace: wds
  labels: {app: web}
  annotations: {keep: me}
data: {a: b}
`,
		},
		"a Service loses what its cluster assigns": {
			group: "", kind: "Service",
			in: `
metadata: {name: web, annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}}
spec:
  clusterIP: 10.0.0.7
  clusterIPs: [10.0.0.7, fd00::7]
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  externalTrafficPolicy: Cluster
  internalTrafficPolicy: Cluster
  sessionAffinity: None
  type: NodePort
  ports: [{port: 80, nodePort: 30080}, {port: 443}]
  selector: {app: web}
`,
			want: `
metadata: {name: web}
spec:
  type: NodePort
  ports: [{port: 80}, {port: 443}]
  selector: {app: web}
`,
		},
		"a headless Service stays headless": {
			group: "", kind: "Service",
			in:   `{metadata: {name: db}, spec: {clusterIP: None, clusterIPs: [None, "10.0.0.1"], ports: [{port: 5432}]}}`,
			want: `{metadata: {name: db}, spec: {clusterIP: None, clusterIPs: [None], ports: [{port: 5432}]}}`,
		},
		"node ports preserved on request (the seed's key)": {
			group: "", kind: "Service",
			in:   `{metadata: {name: np, annotations: {kubestellar.io/annotations/preserve: nodeport}}, spec: {ports: [{port: 80, nodePort: 30080}]}}`,
			want: `{metadata: {name: np, annotations: {kubestellar.io/annotations/preserve: nodeport}}, spec: {ports: [{port: 80, nodePort: 30080}]}}`,
		},
		"node ports preserved on request (KubeStellar's key)": {
			group: "", kind: "Service",
			in:   `{metadata: {name: np, annotations: {control.kubestellar.io/preserve: nodeport}}, spec: {ports: [{port: 80, nodePort: 30080}]}}`,
			want: `{metadata: {name: np, annotations: {control.kubestellar.io/preserve: nodeport}}, spec: {ports: [{port: 80, nodePort: 30080}]}}`,
		},
		"another value does not preserve": {
			group: "", kind: "Service",
			in:   `{metadata: {name: np, annotations: {control.kubestellar.io/preserve: all}}, spec: {ports: [{port: 80, nodePort: 30080}]}}`,
			want: `{metadata: {name: np, annotations: {control.kubestellar.io/preserve: all}}, spec: {ports: [{port: 80}]}}`,
		},
		"a Job loses its generated selector, labels, tracking and suspension": {
			group: "batch", kind: "Job",
			in: `
metadata:
  name: pi
  annotations: {batch.kubernetes.io/job-tracking: ""}
  labels: {controller-uid: u, batch.kubernetes.io/controller-uid: u, app: pi}
spec:
  suspend: true
  suspended: true
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u}}
  template:
    metadata:
      labels: {controller-uid: u, batch.kubernetes.io/controller-uid: u, job-name: pi}
    spec: {restartPolicy: Never}
`,
			want: `
metadata:
  name: pi
  labels: {app: pi}
spec:
  template:
    metadata:
      labels: {job-name: pi}
    spec: {restartPolicy: Never}
`,
		},
		"a Job rule does not apply to another group's Job": {
			group: "example.com", kind: "Job",
			in:   `{metadata: {name: x}, spec: {suspend: true, selector: {a: b}}}`,
			want: `{metadata: {name: x}, spec: {suspend: true, selector: {a: b}}}`,
		},
		"custom removals come last, and only if present": {
			group: "apps", kind: "Deployment",
			in:       `{metadata: {name: d, labels: {test.kubestellar.io/delete-me: "x", keep: "y"}}, spec: {replicas: 3}}`,
			removals: []string{`$.metadata.labels["test.kubestellar.io/delete-me"]`, "$.spec.paused", "$.status.replicas"},
			want:     `{metadata: {name: d, labels: {keep: "y"}}, spec: {replicas: 3}}`,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := obj(t, c.in)
			before := obj(t, c.in)
			var paths []jsonpath.Path
			for _, r := range c.removals {
				p, err := jsonpath.Parse(r)
				if err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			got := Object(in, c.group, c.kind, paths...)
			if want := obj(t, c.want); !reflect.DeepEqual(got, want) {
				g, _ := yaml.Marshal(got)
				w, _ := yaml.Marshal(want)
				t.Errorf("got\n%s\nwant\n%s", g, w)
			}
			if !reflect.DeepEqual(in, before) {
				t.Error("Object changed its input")
			}
		})
	}
}
