// Package render runs the real crossplane CLI (render and beta validate,
// v2.2.0) against function-fleetplane, started by the test as a process,
// on every example in examples/. Rendered output is compared with golden
// files; run `go test ./test/render -update` to rewrite them after an
// intended change, and read the diff.
package render

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/devfunction"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// tool builds (or finds in the cache) a pinned tool and returns its path.
func tool(t testing.TB, root, name string) string {
	t.Helper()
	p, err := controlplane.Tool(root, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// suite is one XR kind's examples: examples/<name>/*.yaml, each rendered
// alone and with every stage of observed composed resources under
// examples/<name>/observed/<example>/<stage>/.
type suite struct {
	name        string
	composition string
	xrd         string
	// required holds the resources the function asks for, as the docs'
	// render recipe passes them: the admin's policy (links to
	// examples/policy) and what the kind's examples read.
	required string
	// kinds must each be composed by at least one render of the suite.
	kinds []string
	// asCreated sets what the API server sets on create, for XRs whose
	// composition depends on it.
	asCreated bool
}

func suites(root string) []suite {
	return []suite{
		{
			name:        "adxcluster",
			composition: filepath.Join(root, "package", "configuration", "compositions", "adxcluster.yaml"),
			xrd:         filepath.Join(root, "package", "configuration", "xrds", "adxclusters.adx.fleetplane.io.yaml"),
			required:    filepath.Join(root, "examples", "adxcluster", "required"),
			kinds:       []string{"ResourceGroup", "Cluster", "Database", "Heartbeat", "Table", "Federation"},
		},
		{
			name:        "experiment",
			composition: filepath.Join(root, "package", "configuration", "compositions", "experiment.yaml"),
			xrd:         filepath.Join(root, "package", "configuration", "xrds", "experiments.experiments.fleetplane.io.yaml"),
			required:    filepath.Join(root, "examples", "experiment", "required"),
			kinds: []string{"Network", "Subnetwork", "Cluster", "NodePool", "ProjectIAMMember", "ClusterRegistration", "Object", "WorkflowRun", "Expiry", "Usage", "ServiceAccount", "RoleBinding", "Secret", "Service", "StatefulSet",
				"TalosConfigTemplate", "MachineDeployment", "AWSMachineTemplate"},
			asCreated: true,
		},
		{
			name:        "adxmon",
			composition: filepath.Join(root, "package", "configuration", "compositions", "adxmon.yaml"),
			xrd:         filepath.Join(root, "package", "configuration", "xrds", "adxmons.adx.fleetplane.io.yaml"),
			required:    filepath.Join(root, "examples", "adxmon", "required"),
			kinds:       []string{"Namespace", "ADXCluster", "ServiceAccount", "ClusterRoleBinding", "RoleBinding", "Service", "StatefulSet", "ConfigMap", "DaemonSet", "Deployment", "Object"},
			asCreated:   true,
		},
		{
			name:        "placement",
			composition: filepath.Join(root, "package", "configuration", "compositions", "placement.yaml"),
			xrd:         filepath.Join(root, "package", "configuration", "xrds", "placements.placement.fleetplane.io.yaml"),
			required:    filepath.Join(root, "examples", "placement", "required"),
			kinds:       []string{"Object", "ReportedState"},
			asCreated:   true,
		},
		{
			name:        "clusterplacement",
			composition: filepath.Join(root, "package", "configuration", "compositions", "clusterplacement.yaml"),
			xrd:         filepath.Join(root, "package", "configuration", "xrds", "clusterplacements.placement.fleetplane.io.yaml"),
			required:    filepath.Join(root, "examples", "placement", "required"),
			kinds:       []string{"Object"},
			asCreated:   true,
		},
	}
}

// example is one render: an XR and, optionally, a stage of observed
// composed resources.
type example struct {
	xr, observed, golden string
}

func (s suite) examples(t testing.TB, root string) []example {
	t.Helper()
	dir := filepath.Join(root, "examples", s.name)
	xrs, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(xrs) == 0 {
		t.Fatalf("no examples in %s: %v", dir, err)
	}
	golden := filepath.Join(root, "test", "render", "testdata", s.name)
	var out []example
	for _, xr := range xrs {
		base := strings.TrimSuffix(filepath.Base(xr), ".yaml")
		out = append(out, example{xr: xr, golden: filepath.Join(golden, base+".yaml")})
		stages, _ := filepath.Glob(filepath.Join(dir, "observed", base, "*"))
		for _, st := range stages {
			out = append(out, example{xr: xr, observed: st, golden: filepath.Join(golden, base+"@"+filepath.Base(st)+".yaml")})
		}
	}
	return out
}

// compositionFor picks the Composition an XR selects by name from the
// suite's examples/<suite>/compositions, or the suite's default.
func (s suite) compositionFor(t testing.TB, root string, xr map[string]any) string {
	t.Helper()
	spec, _ := xr["spec"].(map[string]any)
	xp, _ := spec["crossplane"].(map[string]any)
	ref, _ := xp["compositionRef"].(map[string]any)
	name, _ := ref["name"].(string)
	if name == "" {
		return s.composition
	}
	files, _ := filepath.Glob(filepath.Join(root, "examples", s.name, "compositions", "*.yaml"))
	for _, f := range files {
		var c struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &c); err == nil && c.Metadata.Name == name {
			return f
		}
	}
	t.Fatalf("no Composition %s in examples/%s/compositions", name, s.name)
	return ""
}

// created is the XR as the API server would store it: with a creation
// time, UID and generation, which an Experiment's expiry and run names
// derive from.
func created(t testing.TB, path string) (string, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var xr map[string]any
	if err := yaml.Unmarshal(b, &xr); err != nil {
		t.Fatal(err)
	}
	md := xr["metadata"].(map[string]any)
	md["creationTimestamp"] = "2026-11-01T10:00:00Z"
	md["uid"] = "6f1c2d3e-0000-4000-8000-000000000001"
	md["generation"] = 1
	out, err := yaml.Marshal(xr)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(f, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return f, xr
}

func TestRenderExamples(t *testing.T) {
	support.NeedsTools(t)
	root := support.Root()
	xp := tool(t, root, "crossplane")
	addr := devfunction.Start(t, root, "--insecure")
	upjet := tool(t, root, "upjet-azure-crds")
	providerKubernetes := tool(t, root, "provider-kubernetes-crds")
	capi, capa := tool(t, root, "capi-crds"), tool(t, root, "capa-crds")
	talosBootstrap := tool(t, root, "talos-bootstrap-crds")

	// The schemas composed resources must satisfy: the real upjet Azure
	// CRDs and provider-kubernetes CRDs of the kinds we compose, those of
	// Cluster API, Sidero's Talos bootstrap provider and Cluster API
	// Provider AWS (the example policy's infrastructure) a talos target
	// composes directly, the GKE stand-in CRDs
	// (provider-upjet-gcp is not on the module proxy), provider-fleetplane's
	// CRDs and our XRDs.
	schemas := t.TempDir()
	for _, f := range []string{
		filepath.Join(upjet, "azure.m.upbound.io_resourcegroups.yaml"),
		filepath.Join(upjet, "kusto.azure.m.upbound.io_clusters.yaml"),
		filepath.Join(upjet, "kusto.azure.m.upbound.io_databases.yaml"),
		filepath.Join(upjet, "kusto.azure.m.upbound.io_databaseprincipalassignments.yaml"),
		filepath.Join(providerKubernetes, "kubernetes.m.crossplane.io_objects.yaml"),
		filepath.Join(capi, "cluster.x-k8s.io_clusters.yaml"),
		filepath.Join(capi, "cluster.x-k8s.io_machinedeployments.yaml"),
		filepath.Join(talosBootstrap, "bootstrap.cluster.x-k8s.io_talosconfigtemplates.yaml"),
		filepath.Join(capa, "infrastructure.cluster.x-k8s.io_awsmachinetemplates.yaml"),
	} {
		copyFile(t, f, filepath.Join(schemas, filepath.Base(f)))
	}
	for _, glob := range []string{"package/provider/crds/*.yaml", "package/configuration/xrds/*.yaml", "test/harness/standin/crds/*.yaml"} {
		fs, _ := filepath.Glob(filepath.Join(root, glob))
		for _, f := range fs {
			copyFile(t, f, filepath.Join(schemas, filepath.Base(f)))
		}
	}

	for _, s := range suites(root) {
		t.Run(s.name, func(t *testing.T) {
			kinds := map[string]bool{}
			for _, ex := range s.examples(t, root) {
				name := strings.TrimSuffix(filepath.Base(ex.golden), ".yaml")
				t.Run(name, func(t *testing.T) {
					xrFile, xr := ex.xr, map[string]any{}
					if s.asCreated {
						xrFile, xr = created(t, ex.xr)
					} else if b, err := os.ReadFile(ex.xr); err == nil {
						_ = yaml.Unmarshal(b, &xr)
					}
					args := []string{"render", xrFile, s.compositionFor(t, root, xr), filepath.Join(root, "examples", "functions.yaml"),
						"--include-function-results", "--include-full-xr", "--xrd", s.xrd,
						"--required-resources", s.required,
					}
					args = append(args, devfunction.Target(addr)...)
					if ex.observed != "" {
						args = append(args, "--observed-resources", ex.observed)
					}
					out, refusal := renderOrRefuse(t, xp, args...)
					compareGolden(t, ex.golden, out)
					if refusal {
						return
					}

					// Every composed resource must be valid for the CRD it targets.
					composed := withoutResults(t, out)
					for _, k := range kindsOf(t, composed) {
						kinds[k] = true
					}
					composed = withoutBuiltins(t, composed)
					f := filepath.Join(t.TempDir(), "rendered.yaml")
					if err := os.WriteFile(f, composed, 0o644); err != nil {
						t.Fatal(err)
					}
					validate(t, root, xp, schemas, f)
				})
			}
			// The examples between them must exercise every kind we compose.
			for _, k := range s.kinds {
				if !kinds[k] {
					t.Errorf("no example renders a %s", k)
				}
			}
		})
	}
}

// TestValidateExamples checks every example XR against the generated XRD,
// as the API server would at apply time, the example managed resources and
// ProviderConfigs against the provider's CRDs, and the Configuration's own
// objects (Composition, activation policy) and the example EnvironmentConfig
// against Crossplane's CRDs.
func TestValidateExamples(t *testing.T) {
	support.NeedsTools(t)
	root := support.Root()
	xp := tool(t, root, "crossplane")
	files, _ := filepath.Glob(filepath.Join(root, "examples", "adxcluster", "*.yaml"))
	files = append(files, filepath.Join(root, "examples", "adxcluster", "required", "cluster-labels.yaml"))
	more, _ := filepath.Glob(filepath.Join(root, "examples", "adxmon", "*.yaml"))
	files = append(files, more...)
	// The placement examples' own kinds; the inventory, properties and
	// workloads beside them are provider-kubernetes' and Kubernetes'.
	for _, glob := range []string{"*.yaml", "required/transforms.yaml", "required/collectors.yaml"} {
		more, _ = filepath.Glob(filepath.Join(root, "examples", "placement", glob))
		files = append(files, more...)
	}
	more, _ = filepath.Glob(filepath.Join(root, "examples", "clusterplacement", "*.yaml"))
	files = append(files, more...)
	for _, glob := range []string{"*.yaml", "components/*.yaml", "compositions/*.yaml"} {
		more, _ = filepath.Glob(filepath.Join(root, "examples", "experiment", glob))
		files = append(files, more...)
	}
	more, _ = filepath.Glob(filepath.Join(root, "package", "configuration", "*", "*.yaml"))
	files = append(files, more...)
	more, _ = filepath.Glob(filepath.Join(root, "package", "configuration", "*.yaml"))
	files = append(files, more...)
	more, _ = filepath.Glob(filepath.Join(root, "examples", "provider", "*.yaml"))
	files = append(files, more...)
	// The admin's policies; their namespaces are Kubernetes' own kind.
	files = append(files, filepath.Join(root, "examples", "policy", "platform.yaml"), filepath.Join(root, "examples", "policy", "team.yaml"))
	// The install examples whose schemas are here: Crossplane's
	// ImageConfig and DeploymentRuntimeConfig, upjet Azure's
	// ClusterProviderConfig.
	for _, f := range []string{"mirror.yaml", "verify.yaml", "azure-runtime.yaml", "azure-providerconfig.yaml", "gcp-runtime.yaml"} {
		files = append(files, filepath.Join(root, "examples", "install", f))
	}
	upjet, err := controlplane.Tool(root, "upjet-azure-crds")
	if err != nil {
		t.Fatal(err)
	}
	extensions := strings.Join([]string{
		filepath.Join(upjet, "azure.m.upbound.io_clusterproviderconfigs.yaml"),
		filepath.Join(root, "package", "configuration", "xrds"),
		filepath.Join(root, "package", "function", "input"),
		filepath.Join(root, "package", "provider", "crds"),
	}, ",")
	out := validate(t, root, xp, extensions, strings.Join(files, ","))
	// One line per object: the Composition's input is validated too.
	if n := strings.Count(out, "validated successfully"); n < len(files) {
		t.Errorf("%d objects validated, want at least %d:\n%s", n, len(files), out)
	}
}

// crossplaneImage is the core image whose CRDs beta validate needs for
// Crossplane's own kinds. The CLI would download it; the test puts the same
// CRDs, from the crossplane module, where the CLI's cache looks for them.
const crossplaneImage = "xpkg.crossplane.io/crossplane/crossplane:v2.2.0"

// TestCLIKnowsItsVersion: the pinned crossplane CLI is built with its
// version, which `crossplane version` prints and `crossplane beta
// validate` names the Crossplane image of its built-in schemas by (an
// unversioned build asks for "crossplane:", an invalid reference).
func TestCLIKnowsItsVersion(t *testing.T) {
	support.NeedsTools(t)
	out := runCmd(t, tool(t, support.Root(), "crossplane"), "version", "--client")
	if want := "Client Version: " + strings.TrimPrefix(crossplaneImage, "xpkg.crossplane.io/crossplane/crossplane:"); strings.TrimSpace(out) != want {
		t.Errorf("crossplane version --client printed %q, want %q", out, want)
	}
}

// validate runs crossplane beta validate offline and fails on any error or
// missing schema.
func validate(t testing.TB, root, xp, extensions, resources string) string {
	t.Helper()
	cache := t.TempDir()
	dst := filepath.Join(cache, strings.ReplaceAll(crossplaneImage, ":", "@"))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	crds, _ := filepath.Glob(filepath.Join(tool(t, root, "crossplane-crds"), "*.yaml"))
	for _, f := range crds {
		copyFile(t, f, filepath.Join(dst, filepath.Base(f)))
	}
	// No --crossplane-image: the CLI defaults to the image of its own
	// version, whose schemas the cache holds.
	return runCmd(t, xp, "beta", "validate", "--error-on-missing-schemas", "--cache-dir", cache, extensions, resources)
}

// refusalResult is how crossplane render fails on a fatal result of a
// refusal: the XR composes nothing, and says why (compose.FatalMessage).
var refusalResult = regexp.MustCompile(`returned a fatal result: .* \((NotGranted|QuotaExceeded|TooLarge): see condition [\w.]+\)`)

// renderOrRefuse runs crossplane render and returns what it printed, and
// whether the function refused the XR, which fails the render (as it
// fails the composition in a cluster: Synced=False). Any other failure
// fails the test.
func renderOrRefuse(t testing.TB, xp string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(xp, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case err == nil:
		return stdout.String() + stderr.String(), false
	case stdout.Len() == 0 && refusalResult.MatchString(stderr.String()):
		return "# crossplane render failed: the function refused the XR\n" + stderr.String(), true
	}
	t.Fatalf("crossplane %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	return "", false
}

func runCmd(t testing.TB, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String() + stderr.String()
}

func compareGolden(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file (run with -update): %v", err)
	}
	if string(want) != got {
		t.Errorf("render output differs from %s (run with -update and review the diff):\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff shows the first lines that differ, enough to locate a change.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
			if shown++; shown == 10 {
				break
			}
		}
	}
	return b.String()
}

// withoutResults drops the Result documents render adds with -r.
func withoutResults(t testing.TB, out string) []byte {
	t.Helper()
	var keep []string
	for doc := range strings.SplitSeq(out, "\n---\n") {
		doc = strings.TrimPrefix(doc, "---\n")
		if strings.TrimSpace(doc) == "" || strings.Contains(doc, "\nkind: Result\n") {
			continue
		}
		keep = append(keep, doc)
	}
	return []byte(strings.Join(keep, "\n---\n"))
}

// builtin decodes Kubernetes' own kinds strictly: an unknown or
// duplicated field is an error, as the API server's strict field
// validation makes it.
var builtin = serializer.NewCodecFactory(clientgoscheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// withoutBuiltins checks the documents of Kubernetes' own kinds (beta
// validate has no schemas for them) by decoding each strictly into its
// typed object, and returns the others for beta validate.
func withoutBuiltins(t testing.TB, docs []byte) []byte {
	t.Helper()
	var keep []string
	for doc := range strings.SplitSeq(string(docs), "\n---\n") {
		var m struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("rendered document is not YAML: %v", err)
		}
		gv, err := schema.ParseGroupVersion(m.APIVersion)
		if err != nil {
			t.Fatalf("rendered %s has apiVersion %q: %v", m.Kind, m.APIVersion, err)
		}
		if !clientgoscheme.Scheme.Recognizes(gv.WithKind(m.Kind)) {
			keep = append(keep, doc)
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := builtin.Decode(j, nil, nil); err != nil {
			t.Errorf("rendered %s is not a valid %s: %v", m.Kind, gv.WithKind(m.Kind), err)
		}
	}
	return []byte(strings.Join(keep, "\n---\n"))
}

func kindsOf(t testing.TB, docs []byte) []string {
	t.Helper()
	var kinds []string
	for doc := range strings.SplitSeq(string(docs), "\n---\n") {
		var m struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("rendered document is not YAML: %v", err)
		}
		kinds = append(kinds, m.Kind)
	}
	return kinds
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
