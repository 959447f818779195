// Package argocd turns a kubeconfig into the cluster Secret Argo CD reads
// (declarative setup: a Secret labelled argocd.argoproj.io/secret-type:
// cluster with the keys name, server and config, config being JSON).
//
// A kubeconfig is read from a Secret something else wrote (a cloud
// provider's connection details), so it is untrusted input: its size is
// capped, file references are refused (Argo CD cannot read the provider's
// files), and no error ever quotes its contents.
package argocd

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// MaxKubeconfigBytes caps the kubeconfig read from a Secret.
const MaxKubeconfigBytes = 256 << 10

// Auth methods, as shown in status.
const (
	AuthBearerToken = "bearerToken"
	AuthClientCert  = "tlsClientConfig"
	AuthExec        = "execProvider"
	AuthBasic       = "basic"
)

// TLSClientConfig is Argo CD's TLS configuration of a cluster. Byte fields
// marshal to base64, as Argo CD expects.
type TLSClientConfig struct {
	Insecure   bool   `json:"insecure"`
	ServerName string `json:"serverName,omitempty"`
	CertData   []byte `json:"certData,omitempty"`
	KeyData    []byte `json:"keyData,omitempty"`
	CAData     []byte `json:"caData,omitempty"`
}

// ExecProviderConfig is Argo CD's exec credential plugin configuration.
type ExecProviderConfig struct {
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	APIVersion  string            `json:"apiVersion,omitempty"`
	InstallHint string            `json:"installHint,omitempty"`
}

// ClusterConfig is the JSON in a cluster Secret's config key.
type ClusterConfig struct {
	Username           string              `json:"username,omitempty"`
	Password           string              `json:"password,omitempty"`
	BearerToken        string              `json:"bearerToken,omitempty"`
	TLSClientConfig    TLSClientConfig     `json:"tlsClientConfig"`
	ExecProviderConfig *ExecProviderConfig `json:"execProviderConfig,omitempty"`
	ProxyURL           string              `json:"proxyUrl,omitempty"`
}

// Auth names how the configuration authenticates.
func (c ClusterConfig) Auth() string {
	switch {
	case c.ExecProviderConfig != nil:
		return AuthExec
	case c.BearerToken != "":
		return AuthBearerToken
	case len(c.TLSClientConfig.CertData) > 0:
		return AuthClientCert
	case c.Username != "":
		return AuthBasic
	}
	return ""
}

// Cluster is what a kubeconfig says about how to reach its cluster.
type Cluster struct {
	Server string
	Config ClusterConfig
}

// ConfigJSON is the config key's value. encoding/json sorts map keys, so
// the same cluster always gives the same bytes.
func (c *Cluster) ConfigJSON() ([]byte, error) {
	return json.Marshal(c.Config) //nolint:gosec // G117: the password belongs in Argo CD's cluster config, which is a Secret
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// MaxErrorBytes bounds the errors FromKubeconfig returns: they end up in
// status conditions, and names in a kubeconfig can be long.
const MaxErrorBytes = 1024

// FromKubeconfig reads the current context of a kubeconfig.
func FromKubeconfig(data []byte) (*Cluster, error) {
	return readKubeconfig(data, true)
}

// ServerFromKubeconfig reads the server of a kubeconfig's current context
// and how to trust it (CA, server name, proxy), but not its user: for a
// registration whose credentials come from an exec plugin instead.
func ServerFromKubeconfig(data []byte) (*Cluster, error) {
	return readKubeconfig(data, false)
}

func readKubeconfig(data []byte, withUser bool) (*Cluster, error) {
	c, err := fromKubeconfig(data, withUser)
	if err != nil && len(err.Error()) > MaxErrorBytes {
		msg := err.Error()[:MaxErrorBytes-len("…")]
		for !utf8.ValidString(msg) {
			msg = msg[:len(msg)-1]
		}
		return nil, errors.New(msg + "…")
	}
	return c, err
}

func fromKubeconfig(data []byte, withUser bool) (*Cluster, error) {
	if len(data) == 0 {
		return nil, errors.New("the kubeconfig is empty")
	}
	if len(data) > MaxKubeconfigBytes {
		return nil, fmt.Errorf("the kubeconfig is %d bytes; at most %d are read", len(data), MaxKubeconfigBytes)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		// Parser messages can quote the offending value, which may be a
		// credential: keep only the line number.
		msg := "the kubeconfig does not parse"
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			msg += " (line " + m[1] + ")"
		}
		return nil, errors.New(msg)
	}
	ctxName := cfg.CurrentContext
	if ctxName == "" && len(cfg.Contexts) == 1 {
		for n := range cfg.Contexts {
			ctxName = n
		}
	}
	kctx, ok := cfg.Contexts[ctxName]
	if !ok {
		return nil, fmt.Errorf("the kubeconfig has no current context (contexts: %s)", strings.Join(sortedKeys(cfg.Contexts), ", "))
	}
	cl, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("context %q names cluster %q, which the kubeconfig does not define", ctxName, kctx.Cluster)
	}
	user, ok := cfg.AuthInfos[kctx.AuthInfo]
	if !ok && withUser {
		return nil, fmt.Errorf("context %q names user %q, which the kubeconfig does not define", ctxName, kctx.AuthInfo)
	}
	if !withUser {
		user = clientcmdapi.NewAuthInfo()
	}
	server, err := ServerURL(cl.Server)
	if err != nil {
		return nil, err
	}
	if cl.CertificateAuthority != "" || user.ClientCertificate != "" || user.ClientKey != "" || user.TokenFile != "" {
		return nil, errors.New("the kubeconfig refers to files (certificate-authority, client-certificate, client-key or tokenFile); Argo CD cannot read them: inline the data")
	}
	if user.AuthProvider != nil {
		return nil, fmt.Errorf("the kubeconfig uses the %q auth provider, which Argo CD does not support; use an exec plugin, a token or a client certificate", user.AuthProvider.Name)
	}
	c := ClusterConfig{
		TLSClientConfig: TLSClientConfig{
			Insecure:   cl.InsecureSkipTLSVerify,
			ServerName: cl.TLSServerName,
			CAData:     cl.CertificateAuthorityData,
		},
		ProxyURL: cl.ProxyURL,
	}
	switch {
	case !withUser:
	case user.Exec != nil:
		c.ExecProviderConfig = execConfig(user.Exec)
	case user.Token != "":
		c.BearerToken = user.Token
	case len(user.ClientCertificateData) > 0 || len(user.ClientKeyData) > 0:
		if len(user.ClientCertificateData) == 0 || len(user.ClientKeyData) == 0 {
			return nil, errors.New("the kubeconfig has a client certificate without its key, or a key without its certificate")
		}
		c.TLSClientConfig.CertData = user.ClientCertificateData
		c.TLSClientConfig.KeyData = user.ClientKeyData
	case user.Username != "":
		c.Username, c.Password = user.Username, user.Password
	default:
		return nil, fmt.Errorf("user %q of the kubeconfig has no credentials Argo CD can use (token, client certificate, exec plugin or username)", kctx.AuthInfo)
	}
	return &Cluster{Server: server, Config: c}, nil
}

func execConfig(e *clientcmdapi.ExecConfig) *ExecProviderConfig {
	out := &ExecProviderConfig{Command: e.Command, Args: e.Args, APIVersion: e.APIVersion, InstallHint: e.InstallHint}
	if len(e.Env) > 0 {
		out.Env = make(map[string]string, len(e.Env))
		for _, v := range e.Env {
			out.Env[v.Name] = v.Value
		}
	}
	return out
}

// ServerURL checks an API server address (an https URL with a host and
// nothing after the path) and returns it canonical: scheme and host in
// lower case, as they compare in DNS and URLs, and no trailing slash, as
// Argo CD drops it. Argo CD tells clusters apart by this string, so one
// cluster written two ways must not become two registrations.
func ServerURL(s string) (string, error) {
	// Credentials have no place in a server URL, and are not quoted back.
	if strings.Contains(s, "@") {
		return "", errors.New("the server URL carries user info; credentials belong in the kubeconfig's user")
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("server %s is not an https URL of an API server, without query or fragment", redactedURL(s, u, err))
	}
	return "https://" + strings.ToLower(u.Host) + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// redactedURL quotes a server URL for an error without what may carry a
// secret: a query string (tokens travel there) or a fragment is replaced
// by a marker, and a URL that does not parse is described, not quoted.
func redactedURL(s string, u *url.URL, err error) string {
	if err != nil {
		return fmt.Sprintf("(a value of %d bytes that does not parse as a URL)", len(s))
	}
	out := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		out += "?[redacted]"
	}
	if u.Fragment != "" {
		out += "#[redacted]"
	}
	return strconv.Quote(bound(out))
}

func bound(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Policy is what a registration may put into Argo CD's cluster config, as
// the cluster admin allows it.
type Policy struct {
	// ExecCommands Argo CD may run as exec credential plugins.
	ExecCommands []string
	// AllowInsecure accepts turning TLS verification off.
	AllowInsecure bool
	// AllowProxy accepts a proxy URL.
	AllowProxy bool
}

// inClusterHosts are the names of the cluster Argo CD runs on, which
// Argo CD registers itself as in-cluster.
var inClusterHosts = []string{"kubernetes.default.svc", "kubernetes.default", "kubernetes", "kubernetes.default.svc.cluster.local"}

// Check refuses what the policy does not allow: an exec plugin not on its
// list (Argo CD runs it in its own pods, with their identity), turning
// TLS verification off, a proxy, and the cluster Argo CD runs on.
func (c *Cluster) Check(p Policy) error {
	if e := c.Config.ExecProviderConfig; e != nil && !slices.Contains(p.ExecCommands, e.Command) {
		allowed := "none are allowed"
		if len(p.ExecCommands) > 0 {
			allowed = "allowed: " + strings.Join(p.ExecCommands, ", ")
		}
		return fmt.Errorf("the exec credential plugin %q is not one Argo CD may run (%s)", bound(e.Command), allowed)
	}
	if e := c.Config.ExecProviderConfig; e != nil {
		for _, k := range slices.Sorted(maps.Keys(e.Env)) {
			if u := strings.ToUpper(k); u == "PATH" || strings.HasPrefix(u, "LD_") || strings.HasPrefix(u, "DYLD_") {
				return fmt.Errorf("the exec credential plugin's environment sets %s, which would change what Argo CD runs", bound(k))
			}
		}
	}
	if c.Config.TLSClientConfig.Insecure && !p.AllowInsecure {
		return errors.New("the kubeconfig turns TLS verification off (insecure-skip-tls-verify), which is not allowed")
	}
	if c.Config.ProxyURL != "" && !p.AllowProxy {
		return errors.New("the kubeconfig names a proxy (proxy-url), which is not allowed")
	}
	// A trailing dot names the same host (fully qualified).
	if u, err := url.Parse(c.Server); err == nil && slices.Contains(inClusterHosts, strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")) {
		return fmt.Errorf("server %s is the cluster Argo CD runs on, which Argo CD registers itself as in-cluster", c.Server)
	}
	return nil
}

// UseExec makes Argo CD authenticate with an exec credential plugin instead
// of the kubeconfig's user, keeping the server and its CA.
func (c *Cluster) UseExec(command string, args []string, apiVersion string) {
	c.Config.BearerToken, c.Config.Username, c.Config.Password = "", "", ""
	c.Config.TLSClientConfig.CertData, c.Config.TLSClientConfig.KeyData = nil, nil
	c.Config.ExecProviderConfig = &ExecProviderConfig{Command: command, Args: slices.Clone(args), APIVersion: apiVersion}
}
