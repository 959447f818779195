package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Application is Argo CD's Application kind.
var Application = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}

// InClusterServer is the server Argo CD knows without a cluster Secret.
const InClusterServer = "https://kubernetes.default.svc"

const resourcesFinalizer = "resources-finalizer.argocd.argoproj.io"

// ArgoCD plays Argo CD's application controller for Applications in one
// namespace: an Application whose destination is a registered cluster (a
// cluster Secret with a usable config, or the in-cluster server) and whose
// sources are well formed turns Synced and, after a delay, Healthy; one
// whose cluster is unknown gets the InvalidSpecError Argo CD reports. On
// deletion it drops the resources finalizer, as Argo CD does once it has
// pruned what the Application deployed.
type ArgoCD struct {
	kube      client.Client
	namespace string
	// HealthyAfter is how long an Application takes to turn Healthy.
	HealthyAfter time.Duration

	mu      sync.Mutex
	first   map[string]time.Time
	healthy map[string]time.Time
	deleted []string
}

// NewArgoCD returns an Argo CD stand-in for Applications in namespace.
func NewArgoCD(kube client.Client, namespace string) *ArgoCD {
	return &ArgoCD{kube: kube, namespace: namespace, HealthyAfter: time.Second, first: map[string]time.Time{}, healthy: map[string]time.Time{}}
}

// HealthyAt is when an Application first turned Healthy.
func (a *ArgoCD) HealthyAt(name string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.healthy[name]
	return t, ok
}

// Pruned lists Applications whose resources were pruned on deletion, in
// order.
func (a *ArgoCD) Pruned() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.deleted)
}

// Run reconciles until ctx is done.
func (a *ArgoCD) Run(ctx context.Context) {
	every(ctx, func() {
		apps := list(ctx, a.kube, Application, a.namespace)
		for i := range apps {
			a.reconcile(ctx, &apps[i])
		}
	})
}

func (a *ArgoCD) reconcile(ctx context.Context, app *unstructured.Unstructured) {
	name := app.GetName()
	if app.GetDeletionTimestamp() != nil {
		if slices.Contains(app.GetFinalizers(), resourcesFinalizer) {
			a.mu.Lock()
			a.deleted = append(a.deleted, name)
			a.mu.Unlock()
			removeFinalizer(ctx, a.kube, app, resourcesFinalizer)
		}
		return
	}
	server, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "server")
	status := map[string]any{}
	if err := a.clusterKnown(ctx, server); err != nil {
		status["health"] = map[string]any{"status": "Unknown"}
		status["sync"] = map[string]any{"status": "Unknown"}
		status["conditions"] = []any{map[string]any{"type": "InvalidSpecError", "message": err.Error()}}
		writeStatus(ctx, a.kube, app, status, false)
		return
	}
	sources, _, _ := unstructured.NestedSlice(app.Object, "spec", "sources")
	if msg := checkSources(sources); msg != "" {
		status["health"] = map[string]any{"status": "Unknown"}
		status["sync"] = map[string]any{"status": "Unknown"}
		status["conditions"] = []any{map[string]any{"type": "InvalidSpecError", "message": msg}}
		writeStatus(ctx, a.kube, app, status, false)
		return
	}
	a.mu.Lock()
	if _, ok := a.first[name]; !ok {
		a.first[name] = time.Now()
	}
	up := time.Since(a.first[name]) >= a.HealthyAfter
	if up {
		if _, ok := a.healthy[name]; !ok {
			a.healthy[name] = time.Now()
		}
	}
	a.mu.Unlock()
	revisions := make([]any, len(sources))
	for i := range sources {
		revisions[i] = fmt.Sprintf("%040x", i+1)
	}
	status["sync"] = map[string]any{"status": "Synced", "revisions": revisions}
	status["health"] = map[string]any{"status": "Progressing"}
	if up {
		status["health"] = map[string]any{"status": "Healthy"}
	}
	writeStatus(ctx, a.kube, app, status, false)
}

// clusterKnown checks that Argo CD could reach server: the in-cluster
// server, or a cluster Secret for it whose config Argo CD can read.
func (a *ArgoCD) clusterKnown(ctx context.Context, server string) error {
	if server == InClusterServer {
		return nil
	}
	secrets := &corev1.SecretList{}
	if err := a.kube.List(ctx, secrets, client.InNamespace(a.namespace), client.MatchingLabels{"argocd.argoproj.io/secret-type": "cluster"}); err != nil {
		return err
	}
	for _, s := range secrets.Items {
		if strings.TrimRight(string(s.Data["server"]), "/") != server {
			continue
		}
		var cfg struct {
			BearerToken     string `json:"bearerToken"`
			TLSClientConfig struct {
				CertData []byte `json:"certData"`
				KeyData  []byte `json:"keyData"`
			} `json:"tlsClientConfig"`
			ExecProviderConfig *struct {
				Command string `json:"command"`
			} `json:"execProviderConfig"`
		}
		if err := json.Unmarshal(s.Data["config"], &cfg); err != nil {
			return fmt.Errorf("cluster secret %s: config is not the JSON Argo CD reads: %w", s.Name, err)
		}
		if cfg.BearerToken == "" && len(cfg.TLSClientConfig.CertData) == 0 && cfg.ExecProviderConfig == nil {
			return fmt.Errorf("cluster secret %s has no credentials", s.Name)
		}
		return nil
	}
	return fmt.Errorf("application destination server '%s' and namespace do not match any of the allowed destinations in project: there are no clusters with this URL", server)
}

// checkSources rejects what Argo CD would: a source without repoURL, or
// with neither chart, path nor ref.
func checkSources(sources []any) string {
	if len(sources) == 0 {
		return "application has no sources"
	}
	for i, s := range sources {
		m, _ := s.(map[string]any)
		if m["repoURL"] == nil || m["repoURL"] == "" {
			return fmt.Sprintf("source %d has no repoURL", i)
		}
		if m["chart"] == nil && m["path"] == nil && m["ref"] == nil {
			return fmt.Sprintf("source %d has neither chart, path nor ref", i)
		}
	}
	return ""
}
