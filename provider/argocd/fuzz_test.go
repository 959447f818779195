package argocd

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFromKubeconfig feeds arbitrary kubeconfigs: reading never panics, an
// error stays short enough for a status condition and is UTF-8, and a result is an https
// server with a config that round-trips as JSON.
func FuzzFromKubeconfig(f *testing.F) {
	f.Add(string(kubeconfig("    token: t\n")))
	f.Add(string(kubeconfig("    exec: {command: gke-gcloud-auth-plugin, apiVersion: client.authentication.k8s.io/v1beta1}\n")))
	f.Add("contexts:\n- name: " + strings.Repeat("a", 5000) + "\n  context: {cluster: c, user: u}\n- name: b\n  context: {cluster: c, user: u}\n")
	f.Add("clusters:\n- name: c\n  cluster: {server: 'http://h'}\n")
	f.Fuzz(func(t *testing.T, data string) {
		c, err := FromKubeconfig([]byte(data))
		if err != nil {
			if n := len(err.Error()); n > MaxErrorBytes {
				t.Fatalf("error of %d bytes", n)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error %q is not UTF-8, which a condition must be", err)
			}
			return
		}
		checkResult(t, c)
	})
}

// FuzzKubeconfigCredentials places a credential in each field that holds
// one, with fuzzed server and names around it: an error never depends on
// the credential's value, so it cannot quote it.
func FuzzKubeconfigCredentials(f *testing.F) {
	f.Add("https://34.1.2.3", "gke", "SECRETMARK-123")
	f.Add("https://h:99999999", "x", "SECRETMARK-123")
	f.Add("ht tps://h", "", "SECRETMARK-123")
	f.Add("https://h", "gke", "line 3: \"")
	f.Fuzz(func(t *testing.T, server, name, secret string) {
		const other = "REPLACEMENT-CREDENTIAL"
		if secret == other {
			return
		}
		for _, field := range credentialFields {
			errSecret := kubeconfigError(t, server, name, field(secret))
			errOther := kubeconfigError(t, server, name, field(other))
			// A credential YAML cannot hold fails parsing, whose error
			// names only a line; any other error must not change with it.
			if errSecret != "" && errOther != "" && errSecret != errOther && !strings.HasPrefix(errSecret, "the kubeconfig does not parse") {
				t.Fatalf("the error depends on the credential:\n%s\n%s", errSecret, errOther)
			}
		}
	})
}

var credentialFields = []func(string) string{
	func(s string) string { return "token: " + quote(s) },
	func(s string) string { return "username: u\n    password: " + quote(s) },
	func(s string) string {
		b := base64.StdEncoding.EncodeToString([]byte(s))
		return "client-certificate-data: " + b + "\n    client-key-data: " + b
	},
	func(s string) string {
		return "exec: {command: plugin, apiVersion: client.authentication.k8s.io/v1beta1, env: [{name: T, value: " + quote(s) + "}]}"
	},
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// kubeconfigError reads a kubeconfig of one context and returns its error,
// or "" after checking the result.
func kubeconfigError(t *testing.T, server, name, user string) string {
	t.Helper()
	data := "apiVersion: v1\nkind: Config\ncurrent-context: " + quote(name) +
		"\nclusters:\n- name: " + quote(name) + "\n  cluster:\n    server: " + quote(server) +
		"\ncontexts:\n- name: " + quote(name) + "\n  context: {cluster: " + quote(name) + ", user: " + quote(name) + "}" +
		"\nusers:\n- name: " + quote(name) + "\n  user:\n    " + user + "\n"
	c, err := FromKubeconfig([]byte(data))
	if err != nil {
		return err.Error()
	}
	checkResult(t, c)
	return ""
}

func checkResult(t *testing.T, c *Cluster) {
	t.Helper()
	if !strings.HasPrefix(c.Server, "https://") {
		t.Fatalf("server %q", c.Server)
	}
	b, err := c.ConfigJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back ClusterConfig
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("config JSON does not parse: %v", err)
	}
}

func TestServerUserInfoNotQuoted(t *testing.T) {
	for _, server := range []string{"https://admin:hunter2-secret@34.1.2.3", "ht tps://admin:hunter2-secret@h", "https://hunter2-secret@h/"} {
		_, err := ServerURL(server)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ServerURL(%q) = %v, want an error that does not quote the credential", server, err)
		}
	}
}
