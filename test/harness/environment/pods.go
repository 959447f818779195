package environment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
)

// Runtime configs of the packages this environment installs beside
// fleetplane's own, which the ImageConfigs of runtimeImageConfigs give
// them: the package manager installs them as dependencies, so no
// Provider object could name one.
const (
	// providerKubernetesRuntime runs provider-kubernetes as the
	// ServiceAccount a platform team binds its rights to.
	providerKubernetesRuntime = "provider-kubernetes"
	// standInRuntime runs no pod at all: the upjet stand-ins' packages
	// carry CRDs and no runtime image, and their controllers are this
	// harness's. A Deployment of no replicas is available, so the
	// package manager reports their runtime healthy.
	standInRuntime = "stand-in-providers"
)

// install installs fleetplane as docs/install.md does on a cluster whose
// Crossplane runs from its chart: the RBAC Crossplane and the
// provider need (package/rbac), the provider's runtime config with the
// flags this environment needs, the mirror's ImageConfigs, `crossplane
// xpkg install` of the provider and of the Configuration. The package
// manager then runs the function, both providers and (with no replicas)
// the stand-ins as pods of the pushed packages; it waits until every
// package is healthy and the Lock lists them all.
func (e *Env) install(ctx context.Context) error {
	for _, f := range []string{"crossplane-adxmon.yaml", "crossplane-placement.yaml", "crossplane-tenancy.yaml", "crossplane-vcluster.yaml", "crossplane-talos.yaml"} {
		if err := e.CP.ApplyRBAC(ctx, filepath.Join(e.RBACDir(), f)); err != nil {
			return err
		}
	}
	host := e.PodHost()
	args := append([]string{"--poll=" + e.opts.poll("5s"),
		"--imds-endpoint=" + e.AzureAPI.URL, "--azure-resource-manager-endpoint=" + e.AzureAPI.URL,
		// The Kusto servers listen on the node network's host address.
		"--plain-http-networks=127.0.0.0/8,::1," + host + "/32"}, e.opts.debug()...)
	runtimeConfig, err := e.applyProviderRBAC(ctx, append(args, e.opts.ProviderArgs...))
	if err != nil {
		return err
	}
	if err := e.runtimeConfigs(ctx); err != nil {
		return err
	}
	if e.ScrapeToken, err = e.CP.MetricsScraper(ctx); err != nil {
		return err
	}
	if err := e.mirror(ctx); err != nil {
		return err
	}
	if err := e.CrossplaneCLI(ctx, "xpkg", "install", "provider", ProviderSource+":"+Version, ProviderName, "--runtime-config="+runtimeConfig); err != nil {
		return err
	}
	if err := e.CrossplaneCLI(ctx, "xpkg", "install", "configuration", ConfigurationSource+":"+Version, ConfigurationName); err != nil {
		return err
	}
	if err := e.waitPackages(ctx); err != nil {
		return err
	}
	pc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "ClusterProviderConfig",
		"metadata": map[string]any{"name": "default"},
		"spec":     map[string]any{"credentials": map[string]any{"source": "InjectedIdentity"}},
	}}
	if err := e.Kube.Create(ctx, pc); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("provider-kubernetes' ClusterProviderConfig: %w", err)
	}
	if err := e.excuseStartRace(ctx); err != nil {
		return err
	}
	return e.Alive()
}

// crdRace is what provider-kubernetes exits with when its pod starts
// before the API server serves its kinds: with --enable-watches it indexes
// its Objects while setting up, and an index needs the kind's mapping
// (the "no matches for kind" of a missing CRD). Crossplane v2 creates a
// provider's CRDs from its ManagedResourceDefinitions while the package
// manager already rolls out its Deployment, so on a busy API server the
// first run or two can lose that race; the kubelet restarts the
// container and a later run finds the kinds.
const crdRace = "no matches for kind"

// excuseStartRace waits, for at most startRaceTimeout, until every
// provider-kubernetes container that restarted during the install runs
// ready again, and records its restarts then, so that Alive counts only
// restarts after it. Each run that ended must have ended in crdRace: any
// other cause is an error, and fleetplane's own pods get no excuse at all.
// The package manager may call the provider healthy between two crashes
// (its Deployment was available for a moment), so the install's end can
// find the container waiting out a back-off; recording that count would
// count the next, successful, start as a restart.
func (e *Env) excuseStartRace(ctx context.Context) error {
	checked := map[string]int32{} // the newest ended run each container's log was read for
	// restarts are those of the look that found every container running:
	// the counts recorded are the ones whose runs were checked.
	var restarts map[string]int32
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, startRaceTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := e.packagePods(ctx)
		if err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // retry
		}
		settled := true
		restarts = map[string]int32{}
		for _, p := range pods {
			if p.Labels[pkgv1.LabelProvider] != PackageName(ProviderKubernetesSource) || p.DeletionTimestamp != nil {
				continue
			}
			for _, c := range p.Status.ContainerStatuses {
				key := string(p.UID) + "/" + c.Name
				if ended := lastEndedRun(c); ended+1 > checked[key] {
					log := e.runLog(p, c.Name, ended, 20)
					if !strings.Contains(log, crdRace) {
						return false, fmt.Errorf("pod %s restarted %d times during the install: %s\nits container's last run ended with:\n%s",
							p.Name, c.RestartCount, controlplane.DescribePods([]corev1.Pod{p}), log)
					}
					checked[key] = ended + 1
					e.logf("provider-kubernetes' run %d ended before the API server served its kinds (%s)", ended, crdRace)
				}
				if checked[key] > 0 {
					restarts[key] = c.RestartCount
				}
				if c.RestartCount > 0 && (c.State.Running == nil || !c.Ready) {
					settled = false
					last = controlplane.DescribePods([]corev1.Pod{p})
				}
			}
		}
		return settled, nil
	})
	if err != nil {
		if wait.Interrupted(err) {
			return fmt.Errorf("provider-kubernetes did not run ready again within %s of crashing during the install: %s", startRaceTimeout, last)
		}
		return err
	}
	if len(restarts) > 0 {
		e.startRestarts = restarts
	}
	return nil
}

// startRaceTimeout bounds excuseStartRace: the kubelet's back-off after
// the first four crashes adds up to 150 s, by which time the package
// manager has long created the kinds.
const startRaceTimeout = 4 * time.Minute

// runtimeConfigs creates provider-kubernetes' and the stand-ins' runtime
// configs, and ImageConfigs that give them to their packages by source.
// provider-kubernetes composes whatever an XR asks of it (namespaces,
// roles, workloads), as cluster-admin, as its documentation suggests.
func (e *Env) runtimeConfigs(ctx context.Context) error {
	drc := func(name string, spec map[string]any) client.Object {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "DeploymentRuntimeConfig",
			"metadata": map[string]any{"name": name}, "spec": spec,
		}}
	}
	pk := drc(providerKubernetesRuntime, map[string]any{
		"serviceAccountTemplate": map[string]any{"metadata": map[string]any{"name": providerKubernetesRuntime}},
		"deploymentTemplate": map[string]any{"spec": map[string]any{
			"selector": map[string]any{},
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "package-runtime", "args": toAny(append([]string{"--poll=" + e.opts.poll("10s"), "--enable-watches"}, e.opts.debug()...)),
			}}}},
		}},
	})
	stand := drc(standInRuntime, map[string]any{"deploymentTemplate": map[string]any{"spec": map[string]any{
		"replicas": int64(0), "selector": map[string]any{}, "template": map[string]any{},
	}}})
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "provider-kubernetes-cluster-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: controlplane.CrossplaneNamespace, Name: providerKubernetesRuntime}},
	}
	objs := []client.Object{pk, stand, binding}
	fn, err := e.functionRuntime()
	if err != nil {
		return err
	}
	objs = append(objs, fn...)
	// The package manager matches an ImageConfig against the package's
	// source as resolved, after the mirror's rewrite, so each names both.
	for name, ic := range map[string]struct {
		sources []string
		config  string
	}{
		"provider-kubernetes-runtime": {[]string{ProviderKubernetesSource}, providerKubernetesRuntime},
		"stand-in-providers-runtime":  {standInSources(), standInRuntime},
	} {
		var match []any
		for _, s := range ic.sources {
			match = append(match, map[string]any{"type": "Prefix", "prefix": s}, map[string]any{"type": "Prefix", "prefix": e.Registry.Mirror(s)})
		}
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "ImageConfig",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"matchImages": match, "runtime": map[string]any{"configRef": map[string]any{"name": ic.config}}},
		}})
	}
	for _, o := range objs {
		if err := e.Kube.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	return nil
}

// functionRuntime is package/rbac/function-runtime.yaml as a mirrored
// install applies it: the function's runtime config, and the ImageConfig
// giving it to the function by its source and by the mirror's.
func (e *Env) functionRuntime() ([]client.Object, error) {
	file := filepath.Join(e.RBACDir(), "function-runtime.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []client.Object
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if u.GetKind() == "ImageConfig" {
			match, _, _ := unstructured.NestedSlice(u.Object, "spec", "matchImages")
			for _, m := range match {
				if p, _ := m.(map[string]any)["prefix"].(string); p != "" {
					match = append(match, map[string]any{"type": "Prefix", "prefix": e.Registry.Mirror(p)})
				}
			}
			if err := unstructured.SetNestedSlice(u.Object, match, "spec", "matchImages"); err != nil {
				return nil, err
			}
		}
		out = append(out, u)
	}
	return out, nil
}

func standInSources() []string {
	var out []string
	for _, s := range standIns {
		out = append(out, s.source)
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// waitPackages waits until every package fleetplane's install makes is
// Installed and Healthy, the Lock lists them all, and every XRD is
// established.
func (e *Env) waitPackages(ctx context.Context) error {
	var pkgs []client.Object
	for _, c := range []string{"fleetplane-adx", "fleetplane-experiments", "fleetplane-placement"} {
		pkgs = append(pkgs, &pkgv1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: PackageName("ghcr.io/fleetplane/" + c)}})
	}
	pkgs = append(pkgs, &pkgv1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName}},
		&pkgv1.Function{ObjectMeta: metav1.ObjectMeta{Name: FunctionName}})
	for _, n := range append([]string{ProviderName, PackageName(ProviderKubernetesSource)}, standInNames()...) {
		pkgs = append(pkgs, &pkgv1.Provider{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	for _, o := range pkgs {
		if err := e.Crossplane.WaitHealthy(ctx, o, 4*time.Minute); err != nil {
			return fmt.Errorf("%w; pods: %s", err, e.packagePodsSay(ctx))
		}
	}
	// As long as the packages had: the XRDs' CRDs are established by an
	// API server that, on two busy cores, is still establishing the
	// providers' and Argo's large CRDs (one CI run most likely failed
	// on the one-minute wait this had).
	if err := e.waitLocked(ctx, 4*time.Minute); err != nil {
		return err
	}
	return e.Crossplane.WaitXRDsEstablished(ctx, 4*time.Minute)
}

// packagePods are the pods the package manager runs in Crossplane's
// namespace, of every package revision.
func (e *Env) packagePods(ctx context.Context) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := e.Kube.List(ctx, pods, client.InNamespace(controlplane.CrossplaneNamespace), client.HasLabels{pkgv1.LabelRevision}); err != nil {
		return nil, err
	}
	return pods.Items, nil
}

func (e *Env) packagePodsSay(ctx context.Context) string {
	pods, err := e.packagePods(ctx)
	if err != nil {
		return err.Error()
	}
	return controlplane.DescribePods(pods)
}

// PackagePod is the ready pod of the package named pkg (a Function or a
// Provider), of its active revision once an upgrade is through.
func (e *Env) PackagePod(ctx context.Context, pkg string) (*corev1.Pod, error) {
	pods, err := e.packagePods(ctx)
	if err != nil {
		return nil, err
	}
	for i, p := range pods {
		if p.DeletionTimestamp != nil || p.Labels[pkgv1.LabelFunction]+p.Labels[pkgv1.LabelProvider] != pkg || p.Status.PodIP == "" {
			continue
		}
		if len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready {
			return &pods[i], nil
		}
	}
	return nil, fmt.Errorf("no ready pod of %s: %s", pkg, controlplane.DescribePods(pods))
}

// MetricsOf is the /metrics of the ready pod of the package pkg (a
// Function or a Provider), on the port fleetplane's function and
// provider, and Crossplane's providers, serve metrics on by default.
func (e *Env) MetricsOf(ctx context.Context, pkg string) (string, error) {
	ip, err := e.PackagePodIP(ctx, pkg)
	if err != nil {
		return "", err
	}
	scheme := "http"
	if pkg == ProviderName || pkg == FunctionName {
		// fleetplane's own serve their metrics securely (ScrapeToken).
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(ip, "8080") + "/metrics", nil
}

// PackagePodIP is the IP of the ready pod of the package pkg, which this
// machine reaches on the nodes' pod network.
func (e *Env) PackagePodIP(ctx context.Context, pkg string) (string, error) {
	p, err := e.PackagePod(ctx, pkg)
	if err != nil {
		return "", err
	}
	return p.Status.PodIP, nil
}

// podsAlive returns an error for the first package pod whose container
// has restarted, with how its last run ended: a wait for something it
// should do would otherwise only time out. Pods of a revision an upgrade
// retired are not counted, nor the restarts excuseStartRace excused.
func (e *Env) podsAlive() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods, err := e.packagePods(ctx)
	if err != nil {
		return err
	}
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount > e.startRestarts[string(p.UID)+"/"+c.Name] {
				return fmt.Errorf("pod %s restarted %d times: %s\nits container's last run ended with:\n%s",
					p.Name, c.RestartCount, controlplane.DescribePods([]corev1.Pod{p}), e.lastRunLog(p, c, 20))
			}
		}
	}
	return nil
}

// lastEndedRun is the number of the container's newest run that ended,
// or -1 if none did. The kubelet numbers a container's runs from 0 and
// takes the status' RestartCount from its newest container: the current
// run's while it runs, and the run that ended while it waits out a
// back-off (or has ended for good), so the same count names different
// runs in the two states.
func lastEndedRun(c corev1.ContainerStatus) int32 {
	if c.State.Running != nil {
		return c.RestartCount - 1
	}
	if c.State.Terminated != nil || c.LastTerminationState.Terminated != nil {
		return c.RestartCount
	}
	return -1
}

// lastRunLog is the last n lines the container c of pod p wrote in its
// newest run that ended (see runLog).
func (e *Env) lastRunLog(p corev1.Pod, c corev1.ContainerStatus, n int) string {
	run := lastEndedRun(c)
	if run < 0 {
		return "(no run of it has ended)"
	}
	return e.runLog(p, c.Name, run, n)
}

// runLog is the last n lines the container named container of pod p
// wrote in its run numbered run, from the log its node's kubelet keeps
// (pod-logs/<namespace>_<pod>_<uid>/<container>/<run>.log): the
// container's status says only how it exited, its log says why. The
// kubelet removes all but the newest ended run's container and log, so
// older runs' logs may be gone. It reads at most the log's last 64 KiB.
func (e *Env) runLog(p corev1.Pod, container string, run int32, n int) string {
	rel := filepath.Join(fmt.Sprintf("%s_%s_%s", p.Namespace, p.Name, p.UID), container, fmt.Sprintf("%d.log", run))
	for _, dir := range e.podLogDirs() {
		b, err := tail(filepath.Join(dir, rel), 64<<10)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err.Error()
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		return strings.Join(lines[max(0, len(lines)-n):], "\n")
	}
	return fmt.Sprintf("(no log of run %d on any node)", run)
}

// podLogDirs are the pod-logs directories of the environment's nodes.
func (e *Env) podLogDirs() []string {
	if e.logDirs != nil {
		return e.logDirs
	}
	if e.Cluster == nil {
		return nil
	}
	var dirs []string
	for _, n := range e.Cluster.Nodes {
		dirs = append(dirs, n.PodLogs())
	}
	return dirs
}

// tail reads at most the last limit bytes of the file at path.
func tail(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(0, fi.Size()-limit)
	return io.ReadAll(io.LimitReader(io.NewSectionReader(f, off, fi.Size()-off), limit))
}

// WaitFunctionRevision waits until the Function's active revision is the
// one of package pkg (source:tag) and a ready pod runs it, and the pods
// of the revisions before it are gone: an upgrade through.
func (e *Env) WaitFunctionRevision(ctx context.Context, pkg string, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		l := &pkgv1.FunctionRevisionList{}
		if err := e.Kube.List(ctx, l, client.MatchingLabels{pkgv1.LabelParentPackage: FunctionName}); err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // retry
		}
		active := ""
		for _, r := range l.Items {
			if r.Spec.DesiredState == pkgv1.PackageRevisionActive && r.Spec.Package == pkg {
				active = r.Name
			}
		}
		pods, err := e.packagePods(ctx)
		if err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // retry
		}
		ready, others := false, 0
		for _, p := range pods {
			if p.Labels[pkgv1.LabelFunction] != FunctionName {
				continue
			}
			if p.Labels[pkgv1.LabelRevision] != active || active == "" {
				others++
				continue
			}
			ready = ready || (len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready)
		}
		last = fmt.Sprintf("active revision of %s %q, its pod ready %t, %d pods of other revisions: %s", pkg, active, ready, others, controlplane.DescribePods(pods))
		return ready && others == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", strings.TrimSpace(last), err)
	}
	return nil
}
