package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	xpmeta "github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	workflowsv1alpha1 "github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/workflow"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// The fault tests break one thing at a time under a running fleet and
// check the two promises a hub operator cares about: nothing federated is
// dropped because something failed, and everything converges once it
// heals.

// federated is what a hub federates: its functions and group members.
type federated struct {
	functions []string
	members   []string
}

func (f *fleet) federated() federated {
	return federated{functions: slices.Sorted(maps.Keys(f.hub.Functions("Metrics"))), members: groupMembers(f.hub, "Metrics")}
}

func (s federated) String() string {
	return fmt.Sprintf("functions %v, members %v", s.functions, s.members)
}

// converged waits for every partition in the groups, every function on the
// hub and a Ready federation, and returns what is federated.
func (f *fleet) converged(t *testing.T, what string, functions int) federated {
	t.Helper()
	var got federated
	eventually(t, 90*time.Second, what, func() (bool, string) {
		got = f.federated()
		fo := get(t, &kustov1alpha1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "hub"}})
		ok := len(got.functions) == functions && len(got.members) == len(f.partitions) && ready(fo.GetCondition(xpv2.TypeReady))
		return ok, fmt.Sprintf("%s; Ready %s", got, fo.GetCondition(xpv2.TypeReady).Message)
	})
	return got
}

// unchanged fails if the hub federates anything other than want.
func (f *fleet) unchanged(t *testing.T, want federated) {
	t.Helper()
	if got := f.federated(); got.String() != want.String() {
		t.Fatalf("the hub lost federation: %s, was %s", got, want)
	}
}

// destructive lists the commands the hub received that remove anything or
// change a group's members: a hub that rode out a fault needs neither.
func destructive(s *kustoserver.Server) []string {
	var out []string
	for _, c := range s.Commands() {
		if strings.Contains(c.Text, ".drop ") || strings.Contains(c.Text, ".alter entity_group") {
			out = append(out, c.Text)
		}
	}
	return out
}

func federationOf(t *testing.T, ns string) *kustov1alpha1.Federation {
	t.Helper()
	return get(t, &kustov1alpha1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hub"}})
}

// restartProvider kills the provider as a node failure would (SIGKILL: no
// handler runs, nothing in flight finishes) and starts it again.
func restartProvider(t *testing.T) {
	t.Helper()
	old := provider
	old.Kill()
	p, err := old.Restart()
	if err != nil {
		t.Fatal(err)
	}
	controlPlane.Replace(old, p)
	provider = p
}

// TestHubOutage: the hub fails every request, then cannot be reached at
// all, for several federation cycles each time. Nothing may leave the hub,
// the federation says why it is not synced, its sync time stands still,
// and it converges when the hub is back.
func TestHubOutage(t *testing.T) {
	f := newFleet(t, "1h")
	want := f.converged(t, "a federated hub", 4)

	outage := func(t *testing.T, what, message string, start, end func()) {
		t.Helper()
		f.hub.ResetCommands()
		start()
		// A cycle in flight when the fault starts may still sync; the
		// sync time stands still from the first failure on.
		failedFrom := time.Now()
		var synced *metav1.Time
		eventually(t, 60*time.Second, "the federation reporting "+what+" for 5s", func() (bool, string) {
			fo := federationOf(t, f.ns)
			c := fo.GetCondition(xpv2.TypeSynced)
			if c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, message) {
				failedFrom, synced = time.Now(), fo.Status.AtProvider.LastSyncTime
			}
			return time.Since(failedFrom) > 5*time.Second, c.Message
		})
		fo := federationOf(t, f.ns)
		if !fo.Status.AtProvider.LastSyncTime.Equal(synced) {
			t.Errorf("lastSyncTime moved during the outage: %v, was %v", fo.Status.AtProvider.LastSyncTime, synced)
		}
		f.unchanged(t, want)
		end()
		healed := time.Now()
		eventually(t, 60*time.Second, "a sync after the outage", func() (bool, string) {
			fo := federationOf(t, f.ns)
			return ready(fo.GetCondition(xpv2.TypeSynced)) && fo.Status.AtProvider.LastSyncTime.After(failedFrom), fo.GetCondition(xpv2.TypeSynced).Message
		})
		t.Logf("%s: synced again %s after the hub healed", what, time.Since(healed).Round(100*time.Millisecond))
		f.unchanged(t, want)
		if d := destructive(f.hub); len(d) > 0 {
			t.Errorf("the hub was sent destructive commands: %q", d)
		}
	}

	t.Run("every request fails with 503", func(t *testing.T) {
		outage(t, "503s", "503", func() {
			if err := f.hub.InjectFault(kustoserver.Fault{Status: 503}); err != nil {
				t.Fatal(err)
			}
		}, f.hub.ClearFaults)
	})
	t.Run("the hub is unreachable", func(t *testing.T) {
		outage(t, "a refused connection", "connection refused", func() {
			if err := f.hub.Close(); err != nil {
				t.Fatal(err)
			}
		}, func() {
			if err := f.hub.Restart(); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// TestHeartbeatsLapse: no partition can be read for three times the
// heartbeat TTL. The hub reads no heartbeat at all, which looks exactly
// like a fleet that vanished; it must hold everything, say so, and carry
// on when the heartbeats return.
func TestHeartbeatsLapse(t *testing.T) {
	f := newFleet(t, "3s")
	want := f.converged(t, "a federated hub", 4)
	f.hub.ResetCommands()
	for _, p := range f.partitions {
		if err := p.InjectFault(kustoserver.Fault{Status: 503}); err != nil {
			t.Fatal(err)
		}
	}
	lapsed := time.Now()
	eventually(t, 60*time.Second, "the federation holding every partition after 3 TTLs", func() (bool, string) {
		f.unchanged(t, want)
		fo := federationOf(t, f.ns)
		held := fo.Status.AtProvider.HeldBack
		ok := len(held) == len(f.partitions) && strings.Contains(held[0], "no heartbeat was read")
		return ok && time.Since(lapsed) > 9*time.Second, fmt.Sprintf("heldBack %+v", held)
	})
	for _, p := range f.partitions {
		p.ClearFaults()
	}
	back := time.Now()
	eventually(t, 60*time.Second, "nothing held back once heartbeats return", func() (bool, string) {
		f.unchanged(t, want)
		fo := federationOf(t, f.ns)
		return len(fo.Status.AtProvider.HeldBack) == 0 && ready(fo.GetCondition(xpv2.TypeReady)), fmt.Sprintf("%+v", fo.Status.AtProvider.HeldBack)
	})
	t.Logf("heartbeats lapsed %s (TTL 3s); nothing held back %s after they returned", back.Sub(lapsed).Round(100*time.Millisecond), time.Since(back).Round(100*time.Millisecond))
	f.unchanged(t, want)
	if d := destructive(f.hub); len(d) > 0 {
		t.Errorf("the hub was sent destructive commands: %q", d)
	}
}

// TestProviderKilledMidCycle kills the provider while the hub holds a
// federation script and the partitions' heartbeat ingests in flight. After
// a restart every heartbeat resumes and the hub converges, with every
// function and member once.
func TestProviderKilledMidCycle(t *testing.T) {
	f := newFleet(t, "1h")
	f.converged(t, "a federated hub", 4)

	// A new table makes the next cycle change the hub. The hub holds
	// that script, then every heartbeat ingest, so the provider dies with
	// both in flight. (Not the ingests first: the new table reaches the
	// federation through one.)
	hold := func(match string) {
		t.Helper()
		hits := make(chan string, 1)
		if err := f.hub.InjectFault(kustoserver.Fault{Match: match, Delay: 5 * time.Minute, Hit: hits}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-hits:
		case <-time.After(60 * time.Second):
			t.Fatalf("the hub never held a request matching %q", match)
		}
	}
	support.KustoExec(t, f.partitions[0], "Metrics", ".create table ['gpu'] (['v']:real)")
	hold(`create-or-alter function`)
	hold(`^\.ingest`)
	restartProvider(t)
	killed := time.Now()
	f.hub.ClearFaults()

	got := f.converged(t, "the hub converged after the restart", 5)
	t.Logf("the hub converged %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	if !slices.Contains(got.functions, "gpu") {
		t.Errorf("functions %v lack the new table's", got.functions)
	}
	for i := range f.partitions {
		name := fmt.Sprintf("p%d", i+1)
		eventually(t, 30*time.Second, "heartbeat "+name+" after the restart", func() (bool, string) {
			hb := get(t, &kustov1alpha1.Heartbeat{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}})
			for _, ts := range hb.Status.AtProvider.Targets {
				if ts.LastSuccessTime != nil && ts.LastSuccessTime.After(killed) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", hb.Status.AtProvider.Targets)
		})
	}
	groups := f.hub.EntityGroups("Metrics")["MetricsSpoke"]
	if len(groups) != len(f.partitions) {
		t.Errorf("entity group MetricsSpoke = %v: every partition once", groups)
	}
}

// holdSubmissionRecord makes the API server refuse every change to a
// WorkflowRun of ns, but status, once its create-pending annotation is
// stored: the provider can submit the Workflow and never record that it
// did, the state a provider killed between the two leaves behind. It
// returns a function that lifts the hold.
func holdSubmissionRecord(t *testing.T, ns string) func() {
	t.Helper()
	name := "hold-submission-record-" + ns
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
				Operations: []admissionv1.OperationType{admissionv1.Update},
				Rule:       admissionv1.Rule{APIGroups: []string{workflowsv1alpha1.Group}, APIVersions: []string{"*"}, Resources: []string{"workflowruns"}},
			}}}},
			Validations: []admissionv1.Validation{{
				Expression: "!has(oldObject.metadata.annotations) || !('" + xpmeta.AnnotationKeyExternalCreatePending + "' in oldObject.metadata.annotations)",
				Message:    "held by the fault test",
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
		},
	}
	create(t, policy, binding)
	// The API server applies a policy once its informers see it: probe
	// with a run the provider cannot act on (no such config) until an
	// update past its pending annotation is refused.
	probe := workflowRun(ns, "probe", "no-such-config", "probe", "none", workflowsv1alpha1.MissingTemplateFail)
	probe.Annotations = map[string]string{xpmeta.AnnotationKeyExternalCreatePending: time.Now().Format(time.RFC3339)}
	create(t, probe)
	eventually(t, 30*time.Second, "the hold in force", func() (bool, string) {
		p := get(t, &workflowsv1alpha1.WorkflowRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}})
		p.Labels = map[string]string{"probe": time.Now().Format("150405.000000")}
		err := kube.Update(context.Background(), p)
		return err != nil && strings.Contains(err.Error(), "held by the fault test"), fmt.Sprint(err)
	})
	return func() {
		if err := kube.Delete(context.Background(), binding); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the hold lifted", func() (bool, string) {
			p := get(t, &workflowsv1alpha1.WorkflowRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}})
			p.Labels = map[string]string{"probe": time.Now().Format("150405.000000")}
			err := kube.Update(context.Background(), p)
			return err == nil, fmt.Sprint(err)
		})
		_ = kube.Delete(context.Background(), policy)
	}
}

// workflowsOf lists the Workflows a WorkflowRun submitted.
func workflowsOf(t *testing.T, ns string, run *workflowsv1alpha1.WorkflowRun) []string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(workflow.WorkflowListGVK)
	if err := kube.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{workflow.LabelOwnerUID: string(run.UID)}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range list.Items {
		out = append(out, w.GetName())
	}
	return out
}

// TestProviderKilledMidSubmit kills the provider after it submitted a
// Workflow and before it recorded the submission. The restarted provider
// must find the Workflow instead of stopping for good on the half-done
// create (crossplane-runtime's default) or submitting it twice, and must
// record it, so that it is not submitted again once Argo deletes it.
func TestProviderKilledMidSubmit(t *testing.T) {
	ns := namespace(t)
	argoNS := support.NamespaceNamed(t, kube, "argo-"+t.Name())
	pc := grantArgo(t, ns, argoNS, argoNS)
	lift := holdSubmissionRecord(t, ns)
	create(t, workflowTemplate(argoNS, "gateway-validation"), workflowRun(ns, "validation", pc, "gw-validation-k1", "gateway-validation", workflowsv1alpha1.MissingTemplateFail))
	key := &workflowsv1alpha1.WorkflowRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "validation"}}
	eventually(t, 30*time.Second, "the Workflow submitted and not recorded", func() (bool, string) {
		r := get(t, key)
		_, ok := getWorkflow(t, argoNS, "gw-validation-k1")
		pending := r.Annotations[xpmeta.AnnotationKeyExternalCreatePending] != ""
		return ok && pending && xpmeta.GetExternalName(r) == "", fmt.Sprintf("workflow %v, annotations %v", ok, r.Annotations)
	})
	restartProvider(t)
	lift()

	r := waitRun(t, ns, "validation", "the run recorded after the restart", func(r *workflowsv1alpha1.WorkflowRun) bool {
		return xpmeta.GetExternalName(r) == "gw-validation-k1" && r.Status.AtProvider.Phase == "Pending" &&
			ready(condition(r.Status.Conditions, xpv2.TypeReady)) && ready(condition(r.Status.Conditions, xpv2.TypeSynced))
	})
	if got := workflowsOf(t, argoNS, r); len(got) != 1 {
		t.Fatalf("the run submitted %v", got)
	}
	// Argo deletes the Workflow; the run is not submitted again.
	argoSets(t, argoNS, "gw-validation-k1", "Succeeded")
	waitRun(t, ns, "validation", "Succeeded", func(r *workflowsv1alpha1.WorkflowRun) bool { return r.Status.AtProvider.Phase == "Succeeded" })
	old, _ := getWorkflow(t, argoNS, "gw-validation-k1")
	if err := kube.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	waitRun(t, ns, "validation", "the outcome kept", func(r *workflowsv1alpha1.WorkflowRun) bool {
		return strings.Contains(condition(r.Status.Conditions, xpv2.TypeReady).Message, "no longer exists")
	})
	if got := workflowsOf(t, argoNS, r); len(got) != 0 {
		t.Fatalf("the run was submitted again: %v", got)
	}
}

// TestAPIServerRestartUnderLoad kills kube-apiserver while the provider
// works on a fleet of heartbeats, a federation, workflow runs and cluster
// registrations, and starts it again. Everything converges and nothing is
// duplicated: one Workflow per run, one Argo CD Secret per registration,
// every partition in the hub's group once.
func TestAPIServerRestartUnderLoad(t *testing.T) {
	const partitions, runs, registrations = 12, 10, 5
	ns := namespace(t)
	hub := support.KustoServer(t, "FleetDiscovery", "Metrics")
	f := &fleet{ns: ns, hub: hub}
	argoNS := support.NamespaceNamed(t, kube, "argo-"+t.Name())
	pc := grantArgo(t, ns, argoNS, argoNS)

	var objs []client.Object
	objs = append(objs, heartbeatTable(ns, hub.URL), federation(ns, hub.URL, "1h"), workflowTemplate(argoNS, "gateway-validation"))
	for i := range partitions {
		p := support.KustoServer(t, "Metrics")
		support.KustoExec(t, p, "Metrics", ".create table ['cpu'] (['v']:real)")
		f.partitions = append(f.partitions, p)
		objs = append(objs, heartbeat(ns, fmt.Sprintf("p%d", i+1), p.URL, hub.URL))
	}
	for i := range runs {
		objs = append(objs, workflowRun(ns, fmt.Sprintf("run-%d", i), pc, fmt.Sprintf("gw-restart-%d", i), "gateway-validation", workflowsv1alpha1.MissingTemplateFail))
	}
	for i := range registrations {
		cluster := fmt.Sprintf("restart-%d", i)
		s := kubeconfigSecret(ns, cluster+"-kubeconfig", "token")
		// Distinct servers: a server is registered once.
		s.Data["kubeconfig"] = []byte(strings.Replace(string(s.Data["kubeconfig"]), "https://10.1.2.3", fmt.Sprintf("https://10.1.3.%d", i+1), 1))
		objs = append(objs, s, registration(ns, cluster, cluster, pc))
	}
	create(t, objs...)
	// Under load: the provider is mid-way through its first reconciles.
	eventually(t, 30*time.Second, "the first Workflow submitted", func() (bool, string) {
		_, ok := getWorkflow(t, argoNS, "gw-restart-0")
		return ok, "not yet"
	})
	down := time.Now()
	if err := controlPlane.RestartAPIServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver down for %s", time.Since(down).Round(time.Millisecond))

	up := time.Now()
	f.converged(t, "every partition federated", 1)
	for i := range runs {
		r := waitRun(t, ns, fmt.Sprintf("run-%d", i), "a submitted run", func(r *workflowsv1alpha1.WorkflowRun) bool {
			return ready(condition(r.Status.Conditions, xpv2.TypeReady)) && ready(condition(r.Status.Conditions, xpv2.TypeSynced))
		})
		if got := workflowsOf(t, argoNS, r); len(got) != 1 {
			t.Errorf("run-%d submitted %v", i, got)
		}
	}
	for i := range registrations {
		eventually(t, 30*time.Second, "registration Ready", func() (bool, string) {
			r := get(t, registration(ns, fmt.Sprintf("restart-%d", i), "", ""))
			return ready(condition(r.Status.Conditions, xpv2.TypeReady)), fmt.Sprintf("%+v", r.Status.Conditions)
		})
	}
	secrets := &corev1.SecretList{}
	if err := kube.List(context.Background(), secrets, client.InNamespace(argoNS), client.MatchingLabels{"argocd.argoproj.io/secret-type": "cluster"}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != registrations {
		t.Errorf("%d Argo CD cluster Secrets for %d registrations", len(secrets.Items), registrations)
	}
	for i := range partitions {
		eventually(t, 30*time.Second, "heartbeat Ready", func() (bool, string) {
			hb := get(t, &kustov1alpha1.Heartbeat{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%d", i+1)}})
			return ready(hb.GetCondition(xpv2.TypeReady)), hb.GetCondition(xpv2.TypeReady).Message
		})
	}
	t.Logf("%d heartbeats, a federation, %d runs and %d registrations converged %s after kube-apiserver was back", partitions, runs, registrations, time.Since(up).Round(100*time.Millisecond))
	if members := hub.EntityGroups("Metrics")["MetricsSpoke"]; len(members) != partitions {
		t.Errorf("MetricsSpoke has %d members for %d partitions", len(members), partitions)
	}
	if provider.Exited() {
		t.Errorf("the provider exited:\n%s", provider.Tail(4000))
	}
}
