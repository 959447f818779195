package environment

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
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
