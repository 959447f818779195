package shared

// KustoConnector: before a controller talks to Kusto it does what Grants
// does, then resolves the credentials and opens a client.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/internal/tenancy"
	"github.com/fleetplane/fleetplane/provider/credentials"
	"github.com/fleetplane/fleetplane/provider/httplimit"
	"github.com/fleetplane/fleetplane/provider/kusto"
)

// KustoConnector resolves credentials and opens Kusto clients.
type KustoConnector struct {
	grants   *Grants
	resolver *credentials.Resolver
	// Options apply to every client.
	Options kusto.Options
}

// NewKustoConnector returns a connector reading ProviderConfigs with kube.
func NewKustoConnector(kube client.Client, opts kusto.Options) *KustoConnector {
	return &KustoConnector{
		grants:   NewGrants(kube),
		resolver: &credentials.Resolver{Kube: kube},
		Options:  opts,
	}
}

// Session is the resolved credentials of one managed resource, from which
// clients to any of its endpoints are opened.
type Session struct {
	grant   *tenancy.Grant
	source  *credentials.Source
	options kusto.Options
}

// Connect tracks mg's ProviderConfig usage and resolves its credentials.
func (c *KustoConnector) Connect(ctx context.Context, mg resource.ModernManaged) (*Session, error) {
	g, err := c.grants.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	src, err := c.resolver.Resolve(ctx, mg, g)
	if err != nil {
		return nil, err
	}
	return &Session{grant: g, source: src, options: c.Options}, nil
}

// Grant is what the managed resource's ProviderConfig grants it.
func (s *Session) Grant() *tenancy.Grant { return s.grant }

// Credential is the Azure credential of the session, as the managed
// identity clientID when given; nil for credentials source None.
func (s *Session) Credential(managedIdentityClientID string) (azcore.TokenCredential, error) {
	return s.source.Credential(managedIdentityClientID)
}

// Client opens a client to endpoint, as the managed identity clientID when
// given.
func (s *Session) Client(endpoint, managedIdentityClientID string) (*kusto.Client, error) {
	cred, err := s.Credential(managedIdentityClientID)
	if err != nil {
		return nil, err
	}
	return kusto.New(endpoint, cred, s.options)
}

// Limits of one Azure Resource Manager call.
const (
	ARMTimeout  = 30 * time.Second
	MaxARMBytes = 4 << 20
)

// ARM is the credential and client options for an Azure Resource Manager
// client (armkusto, armmonitor) at endpoint, Azure's when empty.
// Credentials source None, meant for local stand-ins, sends an empty
// token, which only a plain-http endpoint (never Azure) accepts.
// Resource providers are never registered as a side effect: that is an
// administrator's decision.
func (s *Session) ARM(endpoint string) (azcore.TokenCredential, *arm.ClientOptions, error) {
	cred, err := s.Credential("")
	if err != nil {
		return nil, nil, err
	}
	opts := &arm.ClientOptions{DisableRPRegistration: true}
	// Every answer bounded while it is read, every call under a deadline
	// shorter than a reconcile's: ARM and Azure Monitor answer what
	// fleetplane asks in kilobytes.
	opts.Transport = httplimit.Client{HTTP: &http.Client{Timeout: ARMTimeout}, Max: MaxARMBytes}
	if endpoint != "" {
		opts.Cloud = cloud.Configuration{
			ActiveDirectoryAuthorityHost: cloud.AzurePublic.ActiveDirectoryAuthorityHost,
			Services:                     map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: endpoint, Audience: cloud.AzurePublic.Services[cloud.ResourceManager].Audience}},
		}
	}
	if cred == nil {
		if !strings.HasPrefix(endpoint, "http://") {
			return nil, nil, errors.New("credentials source None cannot call Azure Resource Manager; use a Secret or the provider's identity")
		}
		cred = noToken{}
		opts.InsecureAllowCredentialWithHTTP = true
	}
	return cred, opts, nil
}

// noToken is the credential of source None.
type noToken struct{}

func (noToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "", ExpiresOn: time.Now().Add(time.Hour)}, nil
}
