package aggregate

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	deployment = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	daemonSet  = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	job        = schema.GroupKind{Group: "batch", Kind: "Job"}
)

func status(s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return m
}

const (
	rolledOut = `{"replicas":2,"updatedReplicas":2,"readyReplicas":2,"availableReplicas":2,"conditions":[
		{"type":"Available","status":"True","reason":"MinimumReplicasAvailable","lastTransitionTime":"2026-11-26T06:00:00Z"},
		{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable","lastTransitionTime":"2026-11-26T06:01:00Z"}]}`
	rollingOut = `{"replicas":2,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"unavailableReplicas":1,"conditions":[
		{"type":"Available","status":"False","reason":"MinimumReplicasUnavailable","message":"Deployment does not have minimum availability.","lastTransitionTime":"2026-11-26T06:02:00Z"},
		{"type":"Progressing","status":"True","reason":"ReplicaSetUpdated","lastTransitionTime":"2026-11-26T06:02:00Z"}]}`
	stuck = `{"replicas":2,"availableReplicas":0,"unavailableReplicas":2,"conditions":[
		{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded","message":"ReplicaSet \"web-1\" has timed out progressing.","lastTransitionTime":"2026-11-26T06:03:00Z"}]}`
)

func TestStatus(t *testing.T) {
	cases := map[string]struct {
		gk      schema.GroupKind
		reports []Report
		want    string
	}{
		"a Deployment rolled out everywhere is rolled out, at this generation": {
			gk:      deployment,
			reports: []Report{{"wec1", status(rolledOut), true}, {"wec2", status(rolledOut), true}},
			want: `{"availableReplicas":2,"conditions":[` +
				`{"lastTransitionTime":"2026-11-26T06:00:00Z","lastUpdateTime":"2026-11-26T06:00:00Z","message":"available on all 2 clusters","reason":"MinimumReplicasAvailable","status":"True","type":"Available"},` +
				`{"lastTransitionTime":"2026-11-26T06:01:00Z","lastUpdateTime":"2026-11-26T06:01:00Z","message":"rolled out on all 2 clusters","reason":"NewReplicaSetAvailable","status":"True","type":"Progressing"}],` +
				`"observedGeneration":7,"readyReplicas":2,"replicas":2,"unavailableReplicas":0,"updatedReplicas":2}`,
		},
		"the slowest cluster sets the counters and the conditions, named": {
			gk:      deployment,
			reports: []Report{{"wec1", status(rolledOut), true}, {"wec2", status(rollingOut), true}},
			want: `{"availableReplicas":1,"conditions":[` +
				`{"lastTransitionTime":"2026-11-26T06:02:00Z","lastUpdateTime":"2026-11-26T06:02:00Z","message":"cluster wec2: Deployment does not have minimum availability.","reason":"MinimumReplicasUnavailable","status":"False","type":"Available"},` +
				`{"lastTransitionTime":"2026-11-26T06:02:00Z","lastUpdateTime":"2026-11-26T06:02:00Z","message":"rolling out on wec2","reason":"ReplicaSetUpdated","status":"True","type":"Progressing"}],` +
				`"observedGeneration":7,"readyReplicas":1,"replicas":2,"unavailableReplicas":1,"updatedReplicas":1}`,
		},
		"a deadline exceeded anywhere is the answer": {
			gk:      deployment,
			reports: []Report{{"wec1", status(rollingOut), true}, {"wec2", status(stuck), true}},
			want: `{"availableReplicas":0,"conditions":[` +
				`{"lastTransitionTime":"2026-11-26T06:02:00Z","lastUpdateTime":"2026-11-26T06:02:00Z","message":"cluster wec1: Deployment does not have minimum availability.","reason":"MinimumReplicasUnavailable","status":"False","type":"Available"},` +
				`{"lastTransitionTime":"2026-11-26T06:03:00Z","lastUpdateTime":"2026-11-26T06:03:00Z","message":"cluster wec2: ReplicaSet \"web-1\" has timed out progressing.","reason":"ProgressDeadlineExceeded","status":"False","type":"Progressing"}],` +
				`"observedGeneration":7,"readyReplicas":0,"replicas":2,"unavailableReplicas":2,"updatedReplicas":0}`,
		},
		"a cluster not yet reporting, or on an older copy: no observedGeneration": {
			gk:      deployment,
			reports: []Report{{"wec1", status(rolledOut), true}, {"wec2", nil, false}},
			want: `{"availableReplicas":0,"conditions":[` +
				`{"lastTransitionTime":"2026-11-26T06:00:00Z","lastUpdateTime":"2026-11-26T06:00:00Z","message":"cluster wec2 has not reported","reason":"NotReported","status":"False","type":"Available"},` +
				`{"lastTransitionTime":"2026-11-26T06:01:00Z","lastUpdateTime":"2026-11-26T06:01:00Z","message":"rolling out on wec2","reason":"ReplicaSetUpdated","status":"True","type":"Progressing"}],` +
				`"readyReplicas":0,"replicas":0,"unavailableReplicas":0,"updatedReplicas":0}`,
		},
		"a DaemonSet's counters add up": {
			gk: daemonSet,
			reports: []Report{
				{"wec1", status(`{"currentNumberScheduled":3,"desiredNumberScheduled":3,"numberReady":3,"updatedNumberScheduled":3,"numberAvailable":3}`), true},
				{"wec2", status(`{"currentNumberScheduled":5,"desiredNumberScheduled":5,"numberReady":4,"updatedNumberScheduled":5,"numberAvailable":4,"numberUnavailable":1}`), true},
			},
			want: `{"currentNumberScheduled":8,"desiredNumberScheduled":8,"numberAvailable":7,"numberMisscheduled":0,"numberReady":7,"numberUnavailable":1,"observedGeneration":7,"updatedNumberScheduled":8}`,
		},
		"a Job runs while it runs anywhere": {
			gk: job,
			reports: []Report{
				{"wec1", status(`{"active":1,"ready":1,"startTime":"2026-11-26T06:05:00Z"}`), true},
				{"wec2", status(`{"succeeded":1,"startTime":"2026-11-26T06:04:00Z","completionTime":"2026-11-26T06:06:00Z","conditions":[{"type":"Complete","status":"True","lastTransitionTime":"2026-11-26T06:06:00Z"}]}`), true},
			},
			want: `{"active":1,"failed":0,"ready":1,"startTime":"2026-11-26T06:04:00Z","succeeded":1,"terminating":0}`,
		},
		"a Job is complete when complete everywhere": {
			gk: job,
			reports: []Report{
				{"wec1", status(`{"succeeded":1,"startTime":"2026-11-26T06:05:00Z","completionTime":"2026-11-26T06:07:00Z","conditions":[{"type":"Complete","status":"True","lastTransitionTime":"2026-11-26T06:07:00Z"}]}`), true},
				{"wec2", status(`{"succeeded":1,"startTime":"2026-11-26T06:04:00Z","completionTime":"2026-11-26T06:06:00Z","conditions":[{"type":"Complete","status":"True","lastTransitionTime":"2026-11-26T06:06:00Z"}]}`), true},
			},
			want: `{"active":0,"completionTime":"2026-11-26T06:07:00Z","conditions":[{"lastTransitionTime":"2026-11-26T06:07:00Z","message":"completed on all 2 clusters","reason":"Completed","status":"True","type":"Complete"}],"failed":0,"ready":0,"startTime":"2026-11-26T06:04:00Z","succeeded":2,"terminating":0}`,
		},
		"a Job that failed on one cluster failed": {
			gk: job,
			reports: []Report{
				{"wec1", status(`{"succeeded":1,"conditions":[{"type":"Complete","status":"True"}]}`), true},
				{"wec2", status(`{"failed":6,"conditions":[{"type":"Failed","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit"}]}`), true},
			},
			want: `{"active":0,"conditions":[{"message":"cluster wec2: Job has reached the specified backoff limit","reason":"BackoffLimitExceeded","status":"True","type":"Failed"}],"failed":6,"ready":0,"succeeded":1,"terminating":0}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Status(tc.gk, 7, tc.reports)
			if !ok {
				t.Fatal("not aggregated")
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
	if _, ok := Status(schema.GroupKind{Kind: "ConfigMap"}, 1, nil); ok || Aggregated(schema.GroupKind{Kind: "Service"}) {
		t.Error("kinds without a rollout status are not aggregated")
	}
}
