package controlplane

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// DescribePods says what pods are doing, for a failure message: each
// one's phase and, per container (init containers first), whether it is
// ready, its restarts, why it waits and how its last run ended.
func DescribePods(pods []corev1.Pod) string {
	if len(pods) == 0 {
		return "no pod"
	}
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "%s %s", p.Name, p.Status.Phase)
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, " [%s ready=%t restarts=%d", c.Name, c.Ready, c.RestartCount)
			if w := c.State.Waiting; w != nil {
				fmt.Fprintf(&b, " waiting %s %s", w.Reason, w.Message)
			}
			if l := c.LastTerminationState.Terminated; l != nil {
				fmt.Fprintf(&b, " last %s exit %d %s", l.Reason, l.ExitCode, l.Message)
			}
			b.WriteString("]")
		}
		b.WriteString("; ")
	}
	return b.String()
}
