// Package credentials turns the ProviderConfig a managed resource names
// into Azure token credentials for the Kusto clusters it talks to. It never
// logs or returns secret material; errors name the Secret, not its content.
package credentials

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// Source is a resolved credential source.
type Source struct {
	kind xpv2.CredentialsSource
	sp   *servicePrincipal
	// grant says which user-assigned identities may be assumed.
	grant *tenancy.Grant
	// injected caches DefaultAzureCredential per managed identity client
	// ID, so tokens are reused across reconciles.
	injected *injectedCache
}

type servicePrincipal struct {
	TenantID     string `json:"tenantId"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// Resolver reads the credentials grants name. It is safe for concurrent
// use.
type Resolver struct {
	Kube     client.Client
	injected *injectedCache
	once     sync.Once
}

// Resolve reads the credentials the grant g of mg's ProviderConfig names.
func (r *Resolver) Resolve(ctx context.Context, mg resource.ModernManaged, g *tenancy.Grant) (*Source, error) {
	r.once.Do(func() { r.injected = &injectedCache{creds: map[string]azcore.TokenCredential{}} })
	creds := g.Credentials
	s := &Source{kind: creds.Source, grant: g, injected: r.injected}
	switch creds.Source {
	case xpv2.CredentialsSourceNone, xpv2.CredentialsSourceInjectedIdentity:
	case xpv2.CredentialsSourceSecret:
		sel := creds.SecretRef
		if sel == nil {
			return nil, errors.New("credentials source Secret needs credentials.secretRef")
		}
		// A namespaced ProviderConfig may only read Secrets of its own
		// namespace.
		if g.Kind == v1alpha1.ProviderConfigKind && sel.Namespace != "" && sel.Namespace != mg.GetNamespace() {
			return nil, fmt.Errorf("ProviderConfig %s may not read a Secret in namespace %s", g.Name, sel.Namespace)
		}
		if sel.Namespace == "" {
			sel = sel.DeepCopy()
			sel.Namespace = mg.GetNamespace()
		}
		data, err := resource.CommonCredentialExtractor(ctx, xpv2.CredentialsSourceSecret, r.Kube, xpv2.CommonCredentialSelectors{SecretRef: sel})
		if err != nil {
			return nil, fmt.Errorf("cannot read credentials from Secret %s/%s key %s: %w", sel.Namespace, sel.Name, sel.Key, err)
		}
		sp := &servicePrincipal{}
		if err := json.Unmarshal(data, sp); err != nil || sp.TenantID == "" || sp.ClientID == "" || sp.ClientSecret == "" {
			return nil, fmt.Errorf("the Secret %s/%s key %s must hold JSON with tenantId, clientId and clientSecret", sel.Namespace, sel.Name, sel.Key)
		}
		s.sp = sp
	default:
		return nil, fmt.Errorf("credentials source %q is not supported; use InjectedIdentity, Secret or None", creds.Source)
	}
	return s, nil
}

// Anonymous reports whether the source is None.
func (s *Source) Anonymous() bool { return s.kind == xpv2.CredentialsSourceNone }

// Credential returns the token credential to use, nil for None. A managed
// identity client ID picks a user-assigned identity of the provider's pod,
// and only one the ClusterProviderConfig allows.
func (s *Source) Credential(managedIdentityClientID string) (azcore.TokenCredential, error) {
	if err := s.grant.ManagedIdentity(managedIdentityClientID); err != nil {
		return nil, err
	}
	switch s.kind {
	case xpv2.CredentialsSourceNone:
		return nil, nil //nolint:nilnil // None means no credential: the client sends no token
	case xpv2.CredentialsSourceSecret:
		return azidentity.NewClientSecretCredential(s.sp.TenantID, s.sp.ClientID, s.sp.ClientSecret, nil)
	default:
		return s.injected.get(managedIdentityClientID)
	}
}

type injectedCache struct {
	mu    sync.Mutex
	creds map[string]azcore.TokenCredential
}

func (c *injectedCache) get(clientID string) (azcore.TokenCredential, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cred, ok := c.creds[clientID]; ok {
		return cred, nil
	}
	var cred azcore.TokenCredential
	var err error
	if clientID != "" {
		// A client ID names a user-assigned managed identity of the pod.
		cred, err = azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{ID: azidentity.ClientID(clientID)})
	} else {
		cred, err = azidentity.NewDefaultAzureCredential(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot build an Azure credential: %w", err)
	}
	c.creds[clientID] = cred
	return cred, nil
}
