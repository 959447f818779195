// Package shared is what every provider-fleetplane controller does around
// its own logic: add itself to the manager with the shared options
// (Managed), record the ProviderConfig usage and resolve the namespace's
// grant (Grants), open a Kusto client with the resolved credentials
// (KustoConnector), and tell whether a composite composed a resource
// (ComposedBy).
package shared
