package argocd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const ca = "-----BEGIN CERTIFICATE-----\nMIIBca\n-----END CERTIFICATE-----\n"

func kubeconfig(user string) []byte {
	return []byte(`apiVersion: v1
kind: Config
current-context: gke
clusters:
- name: gke
  cluster:
    server: https://34.1.2.3/
    certificate-authority-data: ` + b64(ca) + `
contexts:
- name: gke
  context: {cluster: gke, user: gke}
users:
- name: gke
  user:
` + user)
}

func b64(s string) string {
	out, _ := json.Marshal([]byte(s))
	return strings.Trim(string(out), `"`)
}

func TestFromKubeconfig(t *testing.T) {
	cases := map[string]struct {
		user string
		// want is the config key as Argo CD reads it.
		want     map[string]any
		wantAuth string
	}{
		"BearerToken": {
			user:     "    token: s3cr3t-token\n",
			want:     map[string]any{"bearerToken": "s3cr3t-token", "tlsClientConfig": map[string]any{"insecure": false, "caData": b64(ca)}},
			wantAuth: AuthBearerToken,
		},
		"ClientCertificate": {
			user: "    client-certificate-data: " + b64("CERT") + "\n    client-key-data: " + b64("KEY") + "\n",
			want: map[string]any{"tlsClientConfig": map[string]any{
				"insecure": false, "caData": b64(ca), "certData": b64("CERT"), "keyData": b64("KEY"),
			}},
			wantAuth: AuthClientCert,
		},
		"ExecPlugin": {
			user: `    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      args: [--verbose]
      env:
      - {name: ZZ, value: "2"}
      - {name: AA, value: "1"}
      installHint: install gke-gcloud-auth-plugin
`,
			want: map[string]any{
				"tlsClientConfig": map[string]any{"insecure": false, "caData": b64(ca)},
				"execProviderConfig": map[string]any{
					"command": "gke-gcloud-auth-plugin", "args": []any{"--verbose"},
					"env": map[string]any{"AA": "1", "ZZ": "2"}, "apiVersion": "client.authentication.k8s.io/v1beta1",
					"installHint": "install gke-gcloud-auth-plugin",
				},
			},
			wantAuth: AuthExec,
		},
		"Basic": {
			user:     "    username: admin\n    password: pw\n",
			want:     map[string]any{"username": "admin", "password": "pw", "tlsClientConfig": map[string]any{"insecure": false, "caData": b64(ca)}},
			wantAuth: AuthBasic,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := FromKubeconfig(kubeconfig(tc.user))
			if err != nil {
				t.Fatal(err)
			}
			if c.Server != "https://34.1.2.3" {
				t.Errorf("server %q: want the trailing slash dropped", c.Server)
			}
			if got := c.Config.Auth(); got != tc.wantAuth {
				t.Errorf("auth %q, want %q", got, tc.wantAuth)
			}
			raw, err := c.ConfigJSON()
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			again, _ := FromKubeconfig(kubeconfig(tc.user))
			raw2, _ := again.ConfigJSON()
			if string(raw) != string(raw2) {
				t.Error("the same kubeconfig rendered different bytes")
			}
		})
	}
}

func TestFromKubeconfigRejects(t *testing.T) {
	cases := map[string]struct {
		data []byte
		want string
	}{
		"Empty":       {nil, "empty"},
		"TooLarge":    {[]byte(strings.Repeat("#", MaxKubeconfigBytes+1)), "at most"},
		"TokenFile":   {kubeconfig("    tokenFile: /var/run/token\n"), "refers to files"},
		"CertFile":    {kubeconfig("    client-certificate: /etc/cert\n    client-key: /etc/key\n"), "refers to files"},
		"NoCreds":     {kubeconfig("    {}\n"), "no credentials"},
		"CertNoKey":   {kubeconfig("    client-certificate-data: " + b64("CERT") + "\n"), "without its key"},
		"AuthProvier": {kubeconfig("    auth-provider: {name: gcp}\n"), `"gcp" auth provider`},
		"PlainHTTP":   {[]byte(strings.Replace(string(kubeconfig("    token: t\n")), "https://", "http://", 1)), "not an https URL"},
		"NoContext":   {[]byte(strings.Replace(string(kubeconfig("    token: t\n")), "current-context: gke", "current-context: other", 1)), "no current context"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := FromKubeconfig(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A kubeconfig that does not parse must not have its contents, which may
// be credentials, repeated in the error that ends up in status.
func TestFromKubeconfigErrorHidesContents(t *testing.T) {
	for _, data := range []string{
		// The YAML parser quotes both of these values in its errors.
		"users:\n- name: x\n  user:\n    token: !!int TOPSECRET\n",
		"users:\n- name: x\n  user:\n    token: *TOPSECRET\n",
		"users:\n- name: x\n  user:\n    token: [TOPSECRET\n",
	} {
		_, err := FromKubeconfig([]byte(data))
		if err == nil {
			t.Fatalf("%q parsed", data)
		}
		if strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("error quotes the kubeconfig: %v", err)
		}
	}
}

func TestSingleContextWithoutCurrent(t *testing.T) {
	data := strings.Replace(string(kubeconfig("    token: t\n")), "current-context: gke\n", "", 1)
	if _, err := FromKubeconfig([]byte(data)); err != nil {
		t.Fatalf("a kubeconfig with one context needs no current-context: %v", err)
	}
}

func TestSecret(t *testing.T) {
	c, err := FromKubeconfig(kubeconfig("    token: t\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := Registration{Owner: "exp/reg", Namespace: "argocd", Name: "gw-app", Project: "experiments", Labels: map[string]string{"team": "a"}, Cluster: *c}
	s, err := r.Secret()
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "cluster-gw-app" || s.Namespace != "argocd" {
		t.Errorf("secret %s/%s", s.Namespace, s.Name)
	}
	if s.Labels[LabelSecretType] != SecretTypeCluster || s.Labels["team"] != "a" {
		t.Errorf("labels %v", s.Labels)
	}
	for k, v := range map[string]string{"name": "gw-app", "server": "https://34.1.2.3", "project": "experiments"} {
		if string(s.Data[k]) != v {
			t.Errorf("data[%s] = %q, want %q", k, s.Data[k], v)
		}
	}
	if !OwnedBy(s, "exp/reg") || OwnedBy(s, "other/reg") {
		t.Error("ownership")
	}

	live := s.DeepCopy()
	live.Labels["added-by-someone"] = "x"
	if !UpToDate(live, s) {
		t.Error("an extra label makes the secret out of date")
	}
	live.Data["server"] = []byte("https://elsewhere")
	if UpToDate(live, s) {
		t.Error("changed server is up to date")
	}
	Apply(live, s)
	if !UpToDate(live, s) || live.Labels["added-by-someone"] != "x" {
		t.Error("apply lost data or another's label")
	}

	// A label dropped from the registration goes; others' labels stay.
	r.Labels = map[string]string{"tier": "gold"}
	want, err := r.Secret()
	if err != nil {
		t.Fatal(err)
	}
	if UpToDate(live, want) {
		t.Error("a dropped label leaves the secret up to date")
	}
	Apply(live, want)
	if _, ok := live.Labels["team"]; ok || live.Labels["tier"] != "gold" || live.Labels["added-by-someone"] != "x" || live.Labels[LabelSecretType] != SecretTypeCluster {
		t.Errorf("labels after dropping team: %v", live.Labels)
	}
	if !UpToDate(live, want) {
		t.Error("not up to date after apply")
	}
}

func TestServerURLCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"https://34.1.2.3":                 "https://34.1.2.3",
		"httpS://0":                        "https://0",
		"HTTPS://Cluster.Example.COM:443/": "https://cluster.example.com:443",
		"https://h/k8s/clusters/c-1/":      "https://h/k8s/clusters/c-1",
		"https://[FD00::1]:6443":           "https://[fd00::1]:6443",
	} {
		got, err := ServerURL(in)
		if err != nil || got != want {
			t.Errorf("ServerURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestServerURLErrorsRedactSecrets(t *testing.T) {
	for _, s := range []string{
		"https://34.1.2.3/?token=SECRETMARK",
		"https://34.1.2.3/#SECRETMARK",
		"https://34.1.2.3/path?access_token=SECRETMARK&x=1",
		"ht tps://SECRETMARK:",
		"http://34.1.2.3/?sig=SECRETMARK",
	} {
		_, err := ServerURL(s)
		if err == nil {
			t.Errorf("ServerURL(%q) accepted", s)
			continue
		}
		if strings.Contains(err.Error(), "SECRETMARK") {
			t.Errorf("ServerURL(%q) error quotes what may be a secret: %v", s, err)
		}
	}
}

func TestPolicy(t *testing.T) {
	allow := Policy{ExecCommands: []string{"argocd-k8s-auth"}}
	withUser := func(user string) *Cluster {
		c, err := FromKubeconfig(kubeconfig(user))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cases := map[string]struct {
		c      *Cluster
		policy Policy
		want   string
	}{
		"a token":                     {c: withUser("    token: t\n"), policy: Policy{}},
		"an allowed plugin":           {c: withUser("    exec: {command: argocd-k8s-auth, args: [gcp], apiVersion: client.authentication.k8s.io/v1beta1}\n"), policy: allow},
		"a plugin not on the list":    {c: withUser("    exec: {command: /bin/sh, args: [-c, 'curl evil'], apiVersion: client.authentication.k8s.io/v1beta1}\n"), policy: allow, want: `plugin "/bin/sh" is not one Argo CD may run (allowed: argocd-k8s-auth)`},
		"no plugin allowed at all":    {c: withUser("    exec: {command: argocd-k8s-auth, apiVersion: client.authentication.k8s.io/v1beta1}\n"), policy: Policy{}, want: "none are allowed"},
		"an allowed plugin, hijacked": {c: withUser("    exec: {command: argocd-k8s-auth, apiVersion: client.authentication.k8s.io/v1beta1, env: [{name: LD_PRELOAD, value: /tmp/x.so}]}\n"), policy: allow, want: "sets LD_PRELOAD"},
		"insecure":                    {c: insecure(withUser("    token: t\n")), policy: Policy{}, want: "turns TLS verification off"},
		"insecure, allowed":           {c: insecure(withUser("    token: t\n")), policy: Policy{AllowInsecure: true}},
		"a proxy":                     {c: proxied(withUser("    token: t\n")), policy: Policy{}, want: "names a proxy"},
		"the cluster Argo CD runs on": {c: &Cluster{Server: "https://kubernetes.default.svc", Config: ClusterConfig{BearerToken: "t"}}, policy: Policy{}, want: "in-cluster"},
		"the cluster Argo CD runs on, fully qualified": {c: &Cluster{Server: "https://kubernetes.default.svc.cluster.local.", Config: ClusterConfig{BearerToken: "t"}}, policy: Policy{}, want: "in-cluster"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.c.Check(tc.policy)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func insecure(c *Cluster) *Cluster { c.Config.TLSClientConfig.Insecure = true; return c }
func proxied(c *Cluster) *Cluster  { c.Config.ProxyURL = "http://proxy:3128"; return c }

func TestUseExecReplacesTheUser(t *testing.T) {
	c, err := FromKubeconfig(kubeconfig("    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZ\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.UseExec("argocd-k8s-auth", []string{"gcp"}, "client.authentication.k8s.io/v1beta1")
	b, _ := c.ConfigJSON()
	want := `{"tlsClientConfig":{"insecure":false,"caData":"` + b64(ca) + `"},"execProviderConfig":{"command":"argocd-k8s-auth","args":["gcp"],"apiVersion":"client.authentication.k8s.io/v1beta1"}}`
	if string(b) != want {
		t.Errorf("config = %s\nwant     %s", b, want)
	}
}
