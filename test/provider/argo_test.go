package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	lifecyclev1alpha1 "github.com/fleetplane/fleetplane/apis/lifecycle/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	workflowsv1alpha1 "github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/workflow"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

func kubeconfigSecret(ns, name, token string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"kubeconfig": support.Kubeconfig("https://10.1.2.3", token)}}
}

// grantArgo is the ClusterProviderConfig the cluster admin writes for a
// test: its namespace may register clusters into argoNS, in project
// experiments, and run any template of workflowsNS. Its name is returned.
func grantArgo(t *testing.T, tenantNS, argoNS, workflowsNS string) string {
	t.Helper()
	name := "argo-" + tenantNS
	create(t, &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ClusterProviderConfigSpec{
		Credentials:       v1alpha1.Credentials{Source: xpv2.CredentialsSourceNone},
		NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: tenantNS}},
		ArgoCD:            &v1alpha1.ArgoCDPolicy{Namespace: argoNS, Project: "experiments", AllowedExecCommands: []string{"argocd-k8s-auth"}},
		Workflows:         &v1alpha1.WorkflowsPolicy{Namespace: workflowsNS, AllowedTemplates: []string{"*"}},
		Kusto:             everyStandIn(),
	}})
	govern(t, tenantNS, name)
	return name
}

func registration(ns, name, cluster, providerConfig string) *argocdv1alpha1.ClusterRegistration {
	return &argocdv1alpha1.ClusterRegistration{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: argocdv1alpha1.ClusterRegistrationSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: providerConfig}},
			ForProvider: argocdv1alpha1.ClusterRegistrationParameters{
				ClusterName: cluster, KubeconfigSecretRef: argocdv1alpha1.SecretKeyRef{Name: cluster + "-kubeconfig", Key: "kubeconfig"},
				Labels: map[string]string{"experiments.fleetplane.io/experiment": "gw"},
			},
		},
	}
}

func condition(conds []xpv2.Condition, typ xpv2.ConditionType) xpv2.Condition {
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	return xpv2.Condition{}
}

func secretData(t *testing.T, ns, name string) (map[string][]byte, bool) {
	t.Helper()
	s := &corev1.Secret{}
	err := kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, s)
	if kerrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	if s.Labels["argocd.argoproj.io/secret-type"] != "cluster" {
		t.Fatalf("secret %s/%s lacks the Argo CD cluster label: %v", ns, name, s.Labels)
	}
	return s.Data, true
}

func TestClusterRegistration(t *testing.T) {
	ns := namespace(t)
	argoNS := support.NamespaceNamed(t, kube, "argocd-"+t.Name())
	pc := grantArgo(t, ns, argoNS, argoNS)
	create(t, kubeconfigSecret(ns, "gke-app-kubeconfig", "token-one"), registration(ns, "app", "gke-app", pc))

	var cfg map[string]any
	eventually(t, 30*time.Second, "the Argo CD cluster Secret", func() (bool, string) {
		data, ok := secretData(t, argoNS, "cluster-gke-app")
		if !ok {
			return false, "no secret yet"
		}
		if err := json.Unmarshal(data["config"], &cfg); err != nil {
			t.Fatalf("config is not JSON: %v", err)
		}
		if string(data["name"]) != "gke-app" || string(data["server"]) != "https://10.1.2.3" || string(data["project"]) != "experiments" {
			return false, fmt.Sprintf("data %q", data)
		}
		return cfg["bearerToken"] == "token-one", fmt.Sprintf("config %v", cfg)
	})
	if tls, _ := cfg["tlsClientConfig"].(map[string]any); tls["caData"] != "Q0EK" {
		t.Errorf("tlsClientConfig %v: want the kubeconfig's CA", cfg["tlsClientConfig"])
	}
	eventually(t, 30*time.Second, "the registration Ready", func() (bool, string) {
		r := get(t, registration(ns, "app", "", ""))
		c := condition(r.Status.Conditions, xpv2.TypeReady)
		return ready(c) && r.Status.AtProvider.Auth == "bearerToken" && r.Status.AtProvider.Server == "https://10.1.2.3", fmt.Sprintf("%+v %+v", c, r.Status.AtProvider)
	})

	// Cloud tokens rotate: the registration follows the kubeconfig.
	rotated := kubeconfigSecret(ns, "gke-app-kubeconfig", "token-two")
	if err := kube.Update(context.Background(), rotated); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the rotated token in Argo CD's Secret", func() (bool, string) {
		data, _ := secretData(t, argoNS, "cluster-gke-app")
		return strings.Contains(string(data["config"]), "token-two"), "still the old token"
	})

	// Labels follow the spec; a label someone else added stays.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "cluster-gke-app"}}
	update(t, secret, func() { secret.Labels["team"] = "platform" })
	reg := registration(ns, "app", "", "")
	update(t, reg, func() { reg.Spec.ForProvider.Labels = map[string]string{"tier": "gold"} })
	eventually(t, 30*time.Second, "the Secret's labels to follow the registration", func() (bool, string) {
		s := get(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "cluster-gke-app"}})
		_, old := s.Labels["experiments.fleetplane.io/experiment"]
		return !old && s.Labels["tier"] == "gold" && s.Labels["team"] == "platform" && s.Labels["argocd.argoproj.io/secret-type"] == "cluster",
			fmt.Sprintf("labels %v", s.Labels)
	})

	if err := kube.Delete(context.Background(), registration(ns, "app", "", "")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the cluster Secret removed", func() (bool, string) {
		_, ok := secretData(t, argoNS, "cluster-gke-app")
		return !ok, "secret still there"
	})
}

// A Secret fleetplane did not write is neither overwritten nor deleted,
// and a kubeconfig that cannot work is reported without its contents.
func TestClusterRegistrationRefuses(t *testing.T) {
	ns := namespace(t)
	argoNS := support.NamespaceNamed(t, kube, "argocd-"+t.Name())
	pc := grantArgo(t, ns, argoNS, argoNS)
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "cluster-taken", Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		Data:       map[string][]byte{"name": []byte("taken"), "server": []byte("https://prod")},
	}
	bad := kubeconfigSecret(ns, "broken-kubeconfig", "SECRET-TOKEN")
	bad.Data["kubeconfig"] = []byte(strings.Replace(string(bad.Data["kubeconfig"]), "https://10.1.2.3", "http://10.1.2.3", 1))
	create(t, foreign, kubeconfigSecret(ns, "taken-kubeconfig", "t"), registration(ns, "taken", "taken", pc),
		bad, registration(ns, "broken", "broken", pc))

	synced := func(name, want string) {
		eventually(t, 30*time.Second, name+" refused", func() (bool, string) {
			r := get(t, registration(ns, name, "", ""))
			c := condition(r.Status.Conditions, xpv2.TypeSynced)
			if strings.Contains(c.Message, "SECRET-TOKEN") {
				t.Fatalf("the condition quotes the kubeconfig's token: %s", c.Message)
			}
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, want), c.Message
		})
	}
	synced("taken", "was not written by this ClusterRegistration")
	synced("broken", "not an https URL")
	if data, _ := secretData(t, argoNS, "cluster-taken"); string(data["server"]) != "https://prod" || data["config"] != nil {
		t.Errorf("the foreign secret changed: %q", data)
	}
	if _, ok := secretData(t, argoNS, "cluster-broken"); ok {
		t.Error("a secret was written for a kubeconfig Argo CD cannot use")
	}

	if err := kube.Delete(context.Background(), registration(ns, "taken", "", "")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the refused registration deleted", func() (bool, string) {
		err := kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "taken"}, &argocdv1alpha1.ClusterRegistration{})
		return kerrors.IsNotFound(err), fmt.Sprint(err)
	})
	if _, ok := secretData(t, argoNS, "cluster-taken"); !ok {
		t.Error("deleting the registration deleted a Secret it did not write")
	}
}

func workflowTemplate(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"entrypoint": "main",
			"arguments":  map[string]any{"parameters": []any{map[string]any{"name": "experiment-name"}}},
			"templates":  []any{map[string]any{"name": "main", "container": map[string]any{"image": "alpine:3.20", "command": []any{"true"}}}},
		},
	}}
	u.SetGroupVersionKind(workflow.WorkflowTemplateGVK)
	return u
}

func workflowRun(ns, name, providerConfig, run, template string, onMissing workflowsv1alpha1.MissingTemplate) *workflowsv1alpha1.WorkflowRun {
	return &workflowsv1alpha1.WorkflowRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workflowsv1alpha1.WorkflowRunSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: providerConfig}},
			ForProvider: workflowsv1alpha1.WorkflowRunParameters{
				WorkflowTemplateRef: template, RunName: run, OnMissingTemplate: onMissing,
				// Deliberately not sorted: the order given is the order run.
				Parameters: []workflowsv1alpha1.Parameter{{Name: "experiment-name", Value: "gw"}, {Name: "app-endpoint", Value: "https://10.1.2.3"}, {Name: "load", Value: "high"}},
				Labels:     map[string]string{"experiments.fleetplane.io/experiment": "gw"},
			},
		},
	}
}

func getWorkflow(t *testing.T, ns, name string) (*unstructured.Unstructured, bool) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(workflow.WorkflowGVK)
	err := kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u)
	if kerrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return u, true
}

// argoSets plays Argo's workflow controller: it writes a phase.
func argoSets(t *testing.T, ns, name, phase string) {
	t.Helper()
	u, ok := getWorkflow(t, ns, name)
	if !ok {
		t.Fatalf("workflow %s/%s does not exist", ns, name)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	_ = unstructured.SetNestedField(u.Object, phase, "status", "phase")
	_ = unstructured.SetNestedField(u.Object, now, "status", "startedAt")
	if workflow.Terminal(phase) {
		_ = unstructured.SetNestedField(u.Object, now, "status", "finishedAt")
	}
	if err := kube.Update(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

func waitRun(t *testing.T, ns, name, what string, cond func(*workflowsv1alpha1.WorkflowRun) bool) *workflowsv1alpha1.WorkflowRun {
	t.Helper()
	var r *workflowsv1alpha1.WorkflowRun
	eventually(t, 30*time.Second, what, func() (bool, string) {
		r = get(t, &workflowsv1alpha1.WorkflowRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		return cond(r), fmt.Sprintf("%+v %+v", r.Status.AtProvider, r.Status.Conditions)
	})
	return r
}

func TestWorkflowRun(t *testing.T) {
	ns := namespace(t)
	argoNS := support.NamespaceNamed(t, kube, "argo-"+t.Name())
	pc := grantArgo(t, ns, argoNS, argoNS)
	create(t, workflowTemplate(argoNS, "gateway-validation"), workflowRun(ns, "validation", pc, "gw-validation-g1", "gateway-validation", workflowsv1alpha1.MissingTemplateFail))

	var wf *unstructured.Unstructured
	eventually(t, 30*time.Second, "the Workflow submitted", func() (bool, string) {
		var ok bool
		wf, ok = getWorkflow(t, argoNS, "gw-validation-g1")
		return ok, "not yet"
	})
	ref, _, _ := unstructured.NestedString(wf.Object, "spec", "workflowTemplateRef", "name")
	params, _, _ := unstructured.NestedSlice(wf.Object, "spec", "arguments", "parameters")
	var order []string
	for _, p := range params {
		m := p.(map[string]any)
		order = append(order, fmt.Sprintf("%s=%s", m["name"], m["value"]))
	}
	if ref != "gateway-validation" || strings.Join(order, ",") != "experiment-name=gw,app-endpoint=https://10.1.2.3,load=high" {
		t.Errorf("workflow runs %q with %v", ref, order)
	}
	if wf.GetLabels()["experiments.fleetplane.io/experiment"] != "gw" {
		t.Errorf("labels %v", wf.GetLabels())
	}
	waitRun(t, ns, "validation", "Pending while Argo has not picked it up", func(r *workflowsv1alpha1.WorkflowRun) bool {
		return r.Status.AtProvider.Phase == "Pending" && ready(condition(r.Status.Conditions, xpv2.TypeReady))
	})
	argoSets(t, argoNS, "gw-validation-g1", "Running")
	waitRun(t, ns, "validation", "Running", func(r *workflowsv1alpha1.WorkflowRun) bool {
		return r.Status.AtProvider.Phase == "Running" && r.Status.AtProvider.StartedAt != nil
	})
	argoSets(t, argoNS, "gw-validation-g1", "Succeeded")
	waitRun(t, ns, "validation", "Succeeded", func(r *workflowsv1alpha1.WorkflowRun) bool {
		return r.Status.AtProvider.Phase == "Succeeded" && r.Status.AtProvider.FinishedAt != nil
	})

	// Argo garbage-collects finished workflows; that is no reason to run
	// one again.
	old, _ := getWorkflow(t, argoNS, "gw-validation-g1")
	if err := kube.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	waitRun(t, ns, "validation", "the outcome kept after the Workflow is gone", func(r *workflowsv1alpha1.WorkflowRun) bool {
		c := condition(r.Status.Conditions, xpv2.TypeReady)
		return strings.Contains(c.Message, "no longer exists") && r.Status.AtProvider.Phase == "Succeeded"
	})
	if _, ok := getWorkflow(t, argoNS, "gw-validation-g1"); ok {
		t.Fatal("a finished run was submitted again")
	}

	// A new run name is a new run.
	r := &workflowsv1alpha1.WorkflowRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "validation"}}
	update(t, r, func() { r.Spec.ForProvider.RunName = "gw-validation-g2" })
	waitRun(t, ns, "validation", "the second run", func(r *workflowsv1alpha1.WorkflowRun) bool {
		return r.Status.AtProvider.WorkflowName == "gw-validation-g2" && r.Status.AtProvider.Phase == "Pending"
	})

	// A Workflow of the same name somebody else made is not adopted.
	foreign := workflow.Submission{Name: "gw-foreign", Namespace: argoNS, Template: "gateway-validation", OwnerUID: "someone-else"}.Workflow()
	create(t, foreign, workflowRun(ns, "foreign", pc, "gw-foreign", "gateway-validation", workflowsv1alpha1.MissingTemplateFail))
	waitRun(t, ns, "foreign", "the foreign Workflow refused", func(r *workflowsv1alpha1.WorkflowRun) bool {
		c := condition(r.Status.Conditions, xpv2.TypeSynced)
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "was not submitted by this WorkflowRun")
	})

	// Deleting the run deletes its Workflows, and only those.
	for _, n := range []string{"validation", "foreign"} {
		if err := kube.Delete(context.Background(), &workflowsv1alpha1.WorkflowRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the run's Workflows deleted", func() (bool, string) {
		_, ok := getWorkflow(t, argoNS, "gw-validation-g2")
		return !ok, "g2 still there"
	})
	eventually(t, 30*time.Second, "the foreign run gone", func() (bool, string) {
		err := kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "foreign"}, &workflowsv1alpha1.WorkflowRun{})
		return kerrors.IsNotFound(err), fmt.Sprint(err)
	})
	if _, ok := getWorkflow(t, argoNS, "gw-foreign"); !ok {
		t.Error("deleting a WorkflowRun deleted a Workflow it did not submit")
	}
}

func TestWorkflowRunMissingTemplate(t *testing.T) {
	ns := namespace(t)
	argoNS := support.NamespaceNamed(t, kube, "argo-"+t.Name())
	pc := grantArgo(t, ns, argoNS, argoNS)
	create(t,
		workflowRun(ns, "strict", pc, "strict-g1", "not-there-yet", workflowsv1alpha1.MissingTemplateFail),
		workflowRun(ns, "manual", pc, "manual-g1", "never-there", workflowsv1alpha1.MissingTemplateSuspend))

	waitRun(t, ns, "strict", "Failed for want of its template", func(r *workflowsv1alpha1.WorkflowRun) bool {
		return r.Status.AtProvider.Phase == "Failed" && strings.Contains(r.Status.AtProvider.Message, "WorkflowTemplate "+argoNS+"/not-there-yet does not exist")
	})
	if _, ok := getWorkflow(t, argoNS, "strict-g1"); ok {
		t.Error("a Workflow was submitted without its template")
	}

	// The inline workflow waits for `argo resume`.
	var wf *unstructured.Unstructured
	eventually(t, 30*time.Second, "the inline suspend Workflow", func() (bool, string) {
		var ok bool
		wf, ok = getWorkflow(t, argoNS, "manual-g1")
		return ok, "not yet"
	})
	tmpls, _, _ := unstructured.NestedSlice(wf.Object, "spec", "templates")
	entry, _, _ := unstructured.NestedString(wf.Object, "spec", "entrypoint")
	if len(tmpls) != 1 || tmpls[0].(map[string]any)["name"] != entry || tmpls[0].(map[string]any)["suspend"] == nil {
		t.Errorf("inline workflow: entrypoint %q templates %v", entry, tmpls)
	}
	waitRun(t, ns, "manual", "marked inline", func(r *workflowsv1alpha1.WorkflowRun) bool { return r.Status.AtProvider.Inline })

	// Creating the template lets the strict run go ahead.
	create(t, workflowTemplate(argoNS, "not-there-yet"))
	eventually(t, 30*time.Second, "the strict run submitted once its template exists", func() (bool, string) {
		_, ok := getWorkflow(t, argoNS, "strict-g1")
		return ok, "not yet"
	})
}

// expiryOf makes owner the Expiry's controller and target, as Crossplane
// makes an XR the controller of what it composes.
// expiryOf is the Expiry name, controlled by and targeting owner.
func expiryOf(ns, name string, owner client.Object, at time.Time) *lifecyclev1alpha1.Expiry {
	gvk := owner.GetObjectKind().GroupVersionKind()
	return &lifecyclev1alpha1.Expiry{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: new(true),
		}}},
		Spec: lifecyclev1alpha1.ExpirySpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: configOf(ns)},
			ForProvider: lifecyclev1alpha1.ExpiryParameters{
				Target:    lifecyclev1alpha1.ObjectRef{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: string(owner.GetUID())},
				ExpiresAt: metav1.NewTime(at),
			},
		},
	}
}

// experimentComposing creates an Experiment that, as Crossplane records
// it, composes the Expiry named expiry ("" for none).
func experimentComposing(t *testing.T, ns, name, expiry string) *unstructured.Unstructured {
	t.Helper()
	refs := []any{}
	if expiry != "" {
		refs = append(refs, map[string]any{"apiVersion": lifecyclev1alpha1.SchemeGroupVersion.String(), "kind": lifecyclev1alpha1.ExpiryKind, "name": expiry})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "experiments.fleetplane.io/v1alpha1", "kind": "Experiment",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"crossplane": map[string]any{"resourceRefs": refs}},
	}}
	create(t, u)
	return u
}

func configMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	create(t, cm)
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return cm
}

func exists(t *testing.T, o client.Object) bool {
	t.Helper()
	err := kube.Get(context.Background(), client.ObjectKeyFromObject(o), o)
	if err != nil && !kerrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// expiryCondition waits for the named Expiry's condition of typ to say msg.
func expiryCondition(t *testing.T, ns, name string, typ xpv2.ConditionType, msg string) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("Expiry %s: %s", name, msg), func() (bool, string) {
		e := get(t, &lifecyclev1alpha1.Expiry{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		c := condition(e.Status.Conditions, typ)
		return strings.Contains(c.Message, msg), c.Message
	})
}

func TestExpiry(t *testing.T) {
	ns := namespace(t)
	at := time.Now().Add(4 * time.Second).Truncate(time.Second)
	target := experimentComposing(t, ns, "experiment", "ttl")
	create(t, expiryOf(ns, "ttl", target, at))

	eventually(t, 30*time.Second, "the experiment deleted when due", func() (bool, string) {
		return !exists(t, experimentRef(ns, "experiment")), "still there"
	})
	if time.Now().Before(at) {
		t.Fatalf("deleted before %s", at)
	}

	// A new object under the expired one's name is not the one that
	// expired.
	first := experimentComposing(t, ns, "reborn", "stale")
	if err := kube.Delete(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	reborn := experimentComposing(t, ns, "reborn", "stale")
	stale := expiryOf(ns, "stale", reborn, at)
	stale.Spec.ForProvider.Target.UID = string(first.GetUID())
	create(t, stale)
	expiryCondition(t, ns, "stale", xpv2.TypeReady, "newer object")
	if !exists(t, experimentRef(ns, "reborn")) {
		t.Error("an expiry deleted a newer object of the same name")
	}

	// Deleting an Expiry cancels it.
	later := experimentComposing(t, ns, "later", "later")
	create(t, expiryOf(ns, "later", later, time.Now().Add(time.Hour)))
	expiryCondition(t, ns, "later", xpv2.TypeReady, "expires at ")
	if err := kube.Delete(context.Background(), &lifecyclev1alpha1.Expiry{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the expiry gone", func() (bool, string) {
		return !exists(t, &lifecyclev1alpha1.Expiry{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}}), "still there"
	})
	if !exists(t, experimentRef(ns, "later")) {
		t.Error("deleting an Expiry deleted its target")
	}
}

// TestExpiryDeletesOnlyWhatComposedIt is the tenant's attack: an Expiry
// pointed at something that did not compose it, its owner reference
// forged to match. Nothing is deleted.
func TestExpiryDeletesOnlyWhatComposedIt(t *testing.T) {
	ns := namespace(t)
	due := time.Now().Add(-time.Minute)

	secret := configMap(t, ns, "precious")
	create(t, expiryOf(ns, "configmap", secret, due))
	expiryCondition(t, ns, "configmap", xpv2.TypeSynced, "is not one")

	other := experimentComposing(t, ns, "someone-elses", "")
	create(t, expiryOf(ns, "forged", other, due))
	expiryCondition(t, ns, "forged", xpv2.TypeSynced, "does not compose this Expiry")

	bystander := experimentComposing(t, ns, "bystander", "")
	owner := experimentComposing(t, ns, "owner", "rogue")
	rogue := expiryOf(ns, "rogue", owner, due)
	rogue.Spec.ForProvider.Target.Name = "bystander"
	create(t, rogue)
	expiryCondition(t, ns, "rogue", xpv2.TypeSynced, "deletes only the composite resource that composed it")

	for _, o := range []client.Object{secret, other, bystander} {
		if !exists(t, o) {
			t.Errorf("%s %s was deleted", o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
		}
	}
}

func experimentRef(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("experiments.fleetplane.io/v1alpha1")
	u.SetKind("Experiment")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}
