package environment

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
)

// TestLastEndedRun holds lastEndedRun to the kubelet's numbering: the
// status' RestartCount is the newest container's run, which is the
// current run while it runs and the run that ended while it waits.
func TestLastEndedRun(t *testing.T) {
	ended := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
	for _, tc := range []struct {
		name string
		c    corev1.ContainerStatus
		want int32
	}{
		{"first run starting", corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}, -1},
		{"first run running", corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, -1},
		{"first run crashed, backing off", corev1.ContainerStatus{
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, LastTerminationState: ended}, 0},
		{"second run running", corev1.ContainerStatus{RestartCount: 1,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, LastTerminationState: ended}, 0},
		// The CI run that failed: restarts=2 while backing off is run 2's
		// end, whose log is 2.log; run 1's log was already gone.
		{"third run crashed, backing off", corev1.ContainerStatus{RestartCount: 2,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, LastTerminationState: ended}, 2},
		{"third run ended for good", corev1.ContainerStatus{RestartCount: 2, State: ended}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastEndedRun(tc.c); got != tc.want {
				t.Errorf("lastEndedRun = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestExcuseStartRace plays provider-kubernetes' start as the kubelet
// reports it: a container backing off after its third run ended (restarts
// 2, its log 2.log, the runs before it collected), then running ready.
// The race is excused only by that run's own log, and only once the
// container runs again, counting the start that followed.
func TestExcuseStartRace(t *testing.T) {
	ended := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
	backingOff := corev1.ContainerStatus{Name: "package-runtime", RestartCount: 2,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, LastTerminationState: ended}
	running := corev1.ContainerStatus{Name: "package-runtime", RestartCount: 3, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, LastTerminationState: ended}
	for _, tc := range []struct {
		name    string
		logs    map[string]string // by run number
		wantErr string
	}{
		{"the race", map[string]string{"2": `setup failed: no matches for kind "Object" in version "kubernetes.m.crossplane.io/v1alpha1"`}, ""},
		{"another cause", map[string]string{"2": "panic: nil map"}, "panic: nil map"},
		{"only an older run's log", map[string]string{"1": crdRace}, "no log of run 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Name: "provider-kubernetes-abc", Namespace: controlplane.CrossplaneNamespace, UID: "u1",
				Labels: map[string]string{pkgv1.LabelRevision: "r1", pkgv1.LabelProvider: PackageName(ProviderKubernetesSource)},
			}}
			dir := t.TempDir()
			for run, text := range tc.logs {
				path := filepath.Join(dir, "crossplane-system_provider-kubernetes-abc_u1", "package-runtime", run+".log")
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			lists := 0
			kube := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				List: func(ctx context.Context, _ client.WithWatch, list client.ObjectList, _ ...client.ListOption) error {
					// Backing off for two looks, then running.
					p := pod.DeepCopy()
					p.Status.ContainerStatuses = []corev1.ContainerStatus{backingOff}
					if lists++; lists > 2 {
						p.Status.ContainerStatuses = []corev1.ContainerStatus{running}
					}
					list.(*corev1.PodList).Items = []corev1.Pod{*p}
					return nil
				},
			}).Build()
			e := &Env{Kube: kube, logDirs: []string{dir}, logf: t.Logf}
			err := e.excuseStartRace(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.startRestarts["u1/package-runtime"]; got != 3 {
				t.Errorf("excused %d restarts, want 3 (the start after the race counted too)", got)
			}
			if lists < 3 {
				t.Errorf("returned after %d looks, before the container ran again", lists)
			}
		})
	}
}
