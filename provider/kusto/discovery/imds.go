// Package discovery finds where an ADX cluster can be provisioned when its
// spec leaves that out: the subscription, resource group and region of the
// machine provider-fleetplane runs on, from Azure's instance metadata
// service (IMDS), and a SKU Azure offers in that region, by the adx-mon
// operator's preference. Everything it reads is remote and untrusted:
// sizes are capped and values checked against Azure's naming rules before
// anything uses them.
package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/fleetplane/fleetplane/internal/azurename"
)

// DefaultIMDSEndpoint is Azure's link-local instance metadata service.
const DefaultIMDSEndpoint = "http://169.254.169.254"

// imdsPath asks for the instance's compute metadata.
const imdsPath = "/metadata/instance/compute?api-version=2021-02-01"

// maxIMDSBytes caps what is read from IMDS: its compute document is a few
// kilobytes.
const maxIMDSBytes = 1 << 20

// Instance is what IMDS says about the machine.
type Instance struct {
	SubscriptionID string
	ResourceGroup  string
	Location       string
	// Name of the VM, for AKS nodes aks-<pool>-<n>-vmss<i>.
	Name string
	Tags map[string]string
}

// IMDS reads the instance metadata service.
type IMDS struct {
	// Endpoint is the service's base URL; DefaultIMDSEndpoint in Azure.
	Endpoint string
	// Client defaults to one with a 2 s timeout: IMDS answers at once or
	// is not there.
	Client *http.Client
}

// Instance asks IMDS about the machine.
func (m IMDS) Instance(ctx context.Context) (Instance, error) {
	c := m.Client
	if c == nil {
		c = &http.Client{Timeout: 2 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(m.Endpoint, "/")+imdsPath, nil)
	if err != nil {
		return Instance{}, fmt.Errorf("cannot ask IMDS at %s: %w", m.Endpoint, err)
	}
	// IMDS refuses requests without it, which keeps it from being reached
	// through a forwarding proxy by mistake.
	req.Header.Set("Metadata", "true")
	rsp, err := c.Do(req)
	if err != nil {
		return Instance{}, fmt.Errorf("cannot reach Azure's instance metadata service at %s (is provider-fleetplane running in Azure?): %w", m.Endpoint, err)
	}
	defer func() { _ = rsp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(rsp.Body, maxIMDSBytes))
	if err != nil {
		return Instance{}, fmt.Errorf("cannot read IMDS's answer: %w", err)
	}
	if rsp.StatusCode != http.StatusOK {
		return Instance{}, fmt.Errorf("IMDS at %s answered %s", m.Endpoint, rsp.Status)
	}
	var doc struct {
		SubscriptionID    string `json:"subscriptionId"`
		ResourceGroupName string `json:"resourceGroupName"`
		Location          string `json:"location"`
		Name              string `json:"name"`
		TagsList          []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"tagsList"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return Instance{}, fmt.Errorf("IMDS's answer is not its compute document: %w", err)
	}
	in := Instance{SubscriptionID: doc.SubscriptionID, ResourceGroup: doc.ResourceGroupName, Location: doc.Location, Name: doc.Name, Tags: map[string]string{}}
	for _, t := range doc.TagsList {
		if len(t.Name) <= 512 && len(t.Value) <= 256 && len(in.Tags) < 64 {
			in.Tags[t.Name] = t.Value
		}
	}
	switch {
	case !azurename.SubscriptionID(in.SubscriptionID):
		return Instance{}, errors.New("IMDS reported no valid subscription ID")
	case !azurename.ResourceGroup(in.ResourceGroup):
		return Instance{}, errors.New("IMDS reported no valid resource group")
	case !azurename.Location(in.Location):
		return Instance{}, errors.New("IMDS reported no valid location")
	}
	in.SubscriptionID = strings.ToLower(in.SubscriptionID)
	in.Location = strings.ToLower(strings.ReplaceAll(in.Location, " ", ""))
	return in, nil
}

// AKS tags AKS puts on its node VM scale sets.
const (
	tagAKSClusterName = "aks-managed-cluster-name"
	tagAKSClusterRG   = "aks-managed-cluster-rg"
)

// nodeResourceGroup is AKS's default node resource group name,
// MC_<group>_<cluster>_<location>.
var nodeResourceGroup = regexp.MustCompile(`(?i)^MC_(.+)_(.+)_([a-z0-9]+)$`)

// AKS is the AKS cluster an instance belongs to. A node's own resource
// group is AKS's node resource group, which AKS owns and deletes with the
// cluster: an ADX cluster must go into the AKS cluster's resource group
// instead. OnAKS without a ResourceGroup means the instance is an AKS node
// whose cluster's group cannot be told for sure.
type AKS struct {
	OnAKS         bool
	ClusterName   string
	ResourceGroup string
}

// AKSOf reads the AKS cluster from the node's tags, or else from the node
// resource group's default name when that splits one way only.
func AKSOf(in Instance) AKS {
	name, rg := in.Tags[tagAKSClusterName], in.Tags[tagAKSClusterRG]
	if name != "" || rg != "" {
		a := AKS{OnAKS: true}
		if azurename.AKSCluster(name) {
			a.ClusterName = name
		}
		if azurename.ResourceGroup(rg) {
			a.ResourceGroup = rg
		}
		return a
	}
	m := nodeResourceGroup.FindStringSubmatch(in.ResourceGroup)
	if m == nil || !strings.EqualFold(m[3], in.Location) {
		return AKS{}
	}
	a := AKS{OnAKS: true}
	// MC_a_b_c_westeurope is ambiguous: group a_b or a, cluster c or b_c.
	if inner := m[1] + "_" + m[2]; strings.Count(inner, "_") == 1 {
		a.ResourceGroup, a.ClusterName = m[1], m[2]
	}
	return a
}
