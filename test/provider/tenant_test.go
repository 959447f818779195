package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	workflowsv1alpha1 "github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// tenant is a client acting as a team that may do anything with
// fleetplane's managed resources, ProviderConfigs, Secrets and ConfigMaps
// of its own namespace, and nothing else: the rights a platform team gives
// a tenant of a shared control plane.
func tenant(t *testing.T, ns string) client.Client {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"kusto.m.fleetplane.io", "argocd.m.fleetplane.io", "workflows.m.fleetplane.io", "lifecycle.m.fleetplane.io", "experiments.fleetplane.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{APIGroups: []string{"m.fleetplane.io"}, Resources: []string{"providerconfigs"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"*"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "tenant"}},
	}
	create(t, role, binding)
	path, err := controlPlane.ServiceAccountKubeconfig(ctx, ns, "tenant")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// refusedAtApply expects the API server to refuse the object with a message
// mentioning want.
func refusedAtApply(t *testing.T, c client.Client, o client.Object, want string) {
	t.Helper()
	err := c.Create(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("creating %T %s: %v; want it refused mentioning %q", o, o.GetName(), err, want)
	}
}

// refusedBySynced waits for the provider to refuse a managed resource with
// a Synced=False condition mentioning want.
func refusedBySynced(t *testing.T, o interface {
	client.Object
	GetCondition(ct xpv2.ConditionType) xpv2.Condition
}, want string) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%s refused: %s", o.GetName(), want), func() (bool, string) {
		get(t, o)
		c := o.GetCondition(xpv2.TypeSynced)
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, want), c.Message
	})
}

// TestTenant tries, with a tenant's namespaced rights only, everything the
// multi-tenancy review found a namespace could make the provider do beyond
// what it owns. Each is refused, at apply time where the API server can
// tell, by the provider otherwise.
func TestTenant(t *testing.T) {
	ns := namespace(t)
	other := support.NamespaceNamed(t, kube, "tenant-b-"+t.Name())
	argoNS := support.NamespaceNamed(t, kube, "argocd-"+t.Name())
	granted := grantArgo(t, ns, argoNS, argoNS)
	// The admin shares a ClusterProviderConfig with another team only.
	notGranted := grantArgo(t, other, argoNS, argoNS)
	c := tenant(t, ns)
	ctx := context.Background()

	t.Run("it cannot write cluster-scoped configuration", func(t *testing.T) {
		pc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: v1alpha1.ClusterProviderConfigSpec{
			Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceInjectedIdentity}, NamespaceSelector: metav1.LabelSelector{},
			ArgoCD: &v1alpha1.ArgoCDPolicy{AllowedExecCommands: []string{"/bin/sh"}},
		}}
		if err := c.Create(ctx, pc); !kerrors.IsForbidden(err) {
			t.Errorf("a tenant created a ClusterProviderConfig: %v", err)
		}
	})

	t.Run("its own ProviderConfig cannot borrow the provider's identity", func(t *testing.T) {
		refusedAtApply(t, c, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "borrow"}, Spec: v1alpha1.ProviderConfigSpec{
			Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceInjectedIdentity},
		}}, "cannot use the provider's own identity")
	})

	t.Run("it cannot name a user-assigned identity the admin did not allow", func(t *testing.T) {
		partition := support.KustoServer(t, "Metrics")
		hb := heartbeat(ns, "borrowed-identity", partition.URL, "http://127.0.0.1:2")
		hb.Spec.ForProvider.Targets[0].ManagedIdentityClientID = "22222222-2222-2222-2222-222222222222"
		if err := c.Create(ctx, hb); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the heartbeat target refused", func() (bool, string) {
			get(t, hb)
			for _, ts := range hb.Status.AtProvider.Targets {
				if strings.Contains(ts.LastError, "needs a ClusterProviderConfig with credentials source InjectedIdentity") {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", hb.Status.AtProvider.Targets)
		})
	})

	kubeconfig := func(name, server, user string) *corev1.Secret {
		s := kubeconfigSecret(ns, name+"-kubeconfig", "t")
		kc := strings.Replace(string(s.Data["kubeconfig"]), "https://10.1.2.3", server, 1)
		if user != "" {
			kc = strings.Replace(kc, `user: {token: "t"}`, "user: {"+user+"}", 1)
		}
		s.Data["kubeconfig"] = []byte(kc)
		return s
	}
	register := func(name, cluster, pc string) *argocdv1alpha1.ClusterRegistration {
		r := registration(ns, name, cluster, pc)
		if err := c.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("it cannot use a ClusterProviderConfig not granted to it", func(t *testing.T) {
		if err := c.Create(ctx, kubeconfig("borrow", "https://10.9.0.1", "")); err != nil {
			t.Fatal(err)
		}
		// Its namespace is governed by one config: another, even one
		// whose selector would select it, is refused.
		refusedBySynced(t, register("borrow", "borrow", notGranted), "namespace "+ns+" is governed by ClusterProviderConfig "+granted+", not by "+notGranted)
	})

	t.Run("it cannot have Argo CD run a plugin of its choosing", func(t *testing.T) {
		if err := c.Create(ctx, kubeconfig("exec", "https://10.9.0.2", `exec: {command: /bin/sh, args: [-c, "curl evil"], apiVersion: client.authentication.k8s.io/v1beta1}`)); err != nil {
			t.Fatal(err)
		}
		refusedBySynced(t, register("exec", "exec", granted), `plugin "/bin/sh" is not one Argo CD may run`)
	})

	t.Run("it cannot register the cluster Argo CD runs on", func(t *testing.T) {
		refusedAtApply(t, c, registration(ns, "in-cluster", "in-cluster", granted), "in-cluster is Argo CD's name")
		if err := c.Create(ctx, kubeconfig("local", "https://kubernetes.default.svc", "")); err != nil {
			t.Fatal(err)
		}
		refusedBySynced(t, register("local", "local", granted), "the cluster Argo CD runs on")
	})

	t.Run("it cannot take over a cluster another namespace registered", func(t *testing.T) {
		create(t, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "cluster-prod", Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
			Data:       map[string][]byte{"name": []byte("prod"), "server": []byte("https://10.9.9.9")},
		})
		if err := c.Create(ctx, kubeconfig("steal", "https://10.9.9.9", "")); err != nil {
			t.Fatal(err)
		}
		refusedBySynced(t, register("steal", "steal", granted), "server https://10.9.9.9 is already registered")
		if err := c.Create(ctx, kubeconfig("prod", "https://10.9.0.3", "")); err != nil {
			t.Fatal(err)
		}
		refusedBySynced(t, register("prod", "prod", granted), "was not written by this ClusterRegistration")
	})

	t.Run("it cannot run a WorkflowTemplate the admin did not allow", func(t *testing.T) {
		pc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: granted}}
		update(t, pc, func() { pc.Spec.Workflows.AllowedTemplates = []string{"only-this"} })
		create(t, workflowTemplate(argoNS, "cluster-admin-job"))
		run := workflowRun(ns, "escalate", granted, "escalate-1", "cluster-admin-job", workflowsv1alpha1.MissingTemplateFail)
		if err := c.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		waitRun(t, ns, "escalate", "refused", func(r *workflowsv1alpha1.WorkflowRun) bool {
			return r.Status.AtProvider.Phase == "Failed" && strings.Contains(r.Status.AtProvider.Message, "is not one this namespace may run")
		})
		if _, ok := getWorkflow(t, argoNS, "escalate-1"); ok {
			t.Error("a Workflow was submitted from a template the admin did not allow")
		}
	})

	// The Kusto data plane: the other team's cluster and hub, which the
	// platform's identity may write, are not the tenant's to reach.
	theirs := support.KustoServer(t, "FleetDiscovery", "Metrics")
	support.KustoExec(t, theirs, "FleetDiscovery", ".create table ['Heartbeats'] (['Timestamp']:datetime, ['ClusterEndpoint']:string, ['Schema']:dynamic, ['PartitionMetadata']:dynamic)")
	ours := support.KustoServer(t, "FleetDiscovery", "Metrics")
	pc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: granted}}
	update(t, pc, func() {
		pc.Spec.Kusto = &v1alpha1.KustoPolicy{Endpoints: []v1alpha1.KustoEndpointGrant{{Endpoint: ours.URL, Databases: []string{"FleetDiscovery", "Metrics"}, Hub: &v1alpha1.KustoHubGrant{}}}, Quota: everySecond()}
	})

	t.Run("its Table cannot reach another team's cluster", func(t *testing.T) {
		tbl := heartbeatTable(ns, theirs.URL)
		tbl.Name = "theirs"
		tbl.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
		if err := c.Create(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		refusedBySynced(t, tbl, "does not grant Kusto endpoint "+theirs.URL)
		if err := c.Delete(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the refused Table gone", func() (bool, string) {
			err := kube.Get(ctx, client.ObjectKeyFromObject(tbl), &kustov1alpha1.Table{})
			return kerrors.IsNotFound(err), fmt.Sprint(err)
		})
		if got := theirs.Tables("FleetDiscovery")["Heartbeats"]; got == "" {
			t.Error("the other team's table is gone")
		}
	})

	t.Run("its Heartbeat cannot write into another team's hub", func(t *testing.T) {
		hb := heartbeat(ns, "forged", ours.URL, theirs.URL)
		if err := c.Create(ctx, hb); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the target refused", func() (bool, string) {
			get(t, hb)
			for _, ts := range hb.Status.AtProvider.Targets {
				if strings.Contains(ts.LastError, "does not grant Kusto endpoint "+theirs.URL) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", hb.Status.AtProvider.Targets)
		})
		if n := len(theirs.Rows("FleetDiscovery", "Heartbeats")); n != 0 {
			t.Errorf("%d rows in the other team's heartbeat table", n)
		}
	})

	t.Run("its Table never drops a table it did not create, whatever it writes", func(t *testing.T) {
		support.KustoExec(t, ours, "FleetDiscovery", ".create table ['Heartbeats'] (['Timestamp']:datetime, ['ClusterEndpoint']:string, ['Schema']:dynamic, ['PartitionMetadata']:dynamic)")
		tbl := heartbeatTable(ns, ours.URL)
		tbl.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
		// What an earlier release took as proof that it created the table.
		tbl.Annotations = map[string]string{"kusto.fleetplane.io/created-table": "FleetDiscovery.Heartbeats"}
		tbl.Spec.ForProvider.Columns = append(tbl.Spec.ForProvider.Columns, kustov1alpha1.Column{Name: "Injected", Type: "string"})
		if err := c.Create(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the table found, not claimed", func() (bool, string) {
			get(t, tbl)
			c := tbl.GetCondition(xpv2.TypeReady)
			return tbl.Status.AtProvider.Exists && strings.Contains(c.Message, "was not created by this Table"), fmt.Sprintf("%+v %q", tbl.Status.AtProvider, c.Message)
		})
		if at := tbl.Status.AtProvider; at.Created || at.Schema != "" {
			t.Errorf("atProvider %+v: claimed or described a table it did not create", at)
		}
		if err := c.Delete(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the Table gone", func() (bool, string) {
			err := kube.Get(ctx, client.ObjectKeyFromObject(tbl), &kustov1alpha1.Table{})
			return kerrors.IsNotFound(err), fmt.Sprint(err)
		})
		if got := ours.Tables("FleetDiscovery")["Heartbeats"]; got != "Timestamp:datetime,ClusterEndpoint:string,Schema:dynamic,PartitionMetadata:dynamic" {
			t.Errorf("the table is %q: deleting a Table changed or dropped a table it did not create", got)
		}
	})

	t.Run("its Federation cannot take over another team's hub", func(t *testing.T) {
		// The other team's Federation on its own hub, which its config
		// grants it, made after the tenant's: age gives the tenant nothing.
		squat := federation(ns, theirs.URL, "1s")
		if err := c.Create(ctx, squat); err != nil {
			t.Fatal(err)
		}
		refusedBySynced(t, squat, "does not grant Kusto endpoint "+theirs.URL)
		own := federation(other, theirs.URL, "1h")
		create(t, own)
		eventually(t, 30*time.Second, "the other team's Federation cycling", func() (bool, string) {
			get(t, own)
			return own.Status.AtProvider.LastCycleTime != nil && own.Status.AtProvider.Owner == "", fmt.Sprintf("%+v", own.Status.AtProvider)
		})
	})

	t.Run("its Federation cannot cycle more often than its quota allows", func(t *testing.T) {
		// The admin's quota, not the tenant's spec, decides how often the
		// shared provider reads a hub: with the default (a minute), a
		// Federation asking for a cycle a second is refused, and runs
		// once the admin allows it.
		update(t, pc, func() { pc.Spec.Kusto.Quota = nil })
		eager := federation(ns, ours.URL, "1h")
		eager.Name = "eager"
		if err := c.Create(ctx, eager); err != nil {
			t.Fatal(err)
		}
		refusedBySynced(t, eager, "spec.forProvider.interval 1s is shorter than the 1m0s ClusterProviderConfig "+granted+" allows (spec.kusto.quota.minFederationInterval)")
		update(t, pc, func() { pc.Spec.Kusto.Quota = everySecond() })
		eventually(t, 30*time.Second, "the Federation cycling once allowed", func() (bool, string) {
			get(t, eager)
			return eager.Status.AtProvider.LastCycleTime != nil, fmt.Sprintf("%+v", eager.Status.AtProvider)
		})
	})
}
