# fleetplane's build. `make help` lists the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO ?= go
TOOLS := tools/tools.sh
GEN := .cache/gen

.PHONY: help
help: ## List the targets.
	@awk -F':.*## ' '/^[a-z-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Build the pinned external tools into ~/.cache/fleetplane/tools, two module groups at a time (skips what is cached).
	@$(TOOLS) >/dev/null

.PHONY: generate
generate: ## Regenerate deepcopy code, method sets, XRDs, CRDs, the function input schema and docs/reference from apis/, and the OTLP messages adx-mon's build needs.
	@cg=$$($(TOOLS) controller-gen); aj=$$($(TOOLS) angryjet); \
	rm -rf $(GEN) && mkdir -p $(GEN)/xr; \
	$$cg object paths=./apis/...; \
	find apis -name 'zz_generated.*.go' ! -name zz_generated.deepcopy.go -delete; \
	$$aj generate-methodsets ./apis/...; \
	$$cg crd:crdVersions=v1,allowDangerousTypes=true $$(tools/apis.sh composite) output:crd:dir=$(GEN)/xr; \
	rm -rf package/provider/crds package/function/input; \
	$$cg crd:crdVersions=v1,allowDangerousTypes=true $$(tools/apis.sh managed) output:crd:dir=package/provider/crds; \
	$$cg crd:crdVersions=v1 $$(tools/apis.sh input) output:crd:dir=package/function/input; \
	$(GO) run ./tools/xrdgen -in $(GEN)/xr -out package/configuration/xrds; \
	mkdir -p $(GEN)/help; \
	for b in function provider; do COLUMNS=80 $(GO) run ./$$b --help > $(GEN)/help/$$b-fleetplane.txt; done; \
	$(GO) run ./tools/docgen -out docs/reference -help $(GEN)/help package/configuration/xrds package/provider/crds package/function/input; \
	crds=$$($(TOOLS) adx-mon-crds); rm -rf function/adxmon/crds && mkdir -p function/adxmon/crds; \
	for c in functions managementcommands summaryrules alertrules; do \
	  { echo "# Copied from github.com/Azure/adx-mon v0.3.0 operator/manifests/crds by \`make generate\`. DO NOT EDIT."; cat $$crds/$${c}_crd.yaml; } > function/adxmon/crds/$$c.yaml; \
	done; \
	find tools/adx-mon/otlp/protocolbuffers -name '*.pb.go' -delete; \
	(cd tools/adx-mon && $(GO) run ./otlpgen >/dev/null)

.PHONY: package
package: ## Build the function, provider and Configuration packages (.xpkg) and the release's RBAC (fleetplane-rbac.yaml) offline into _output/.
	@tools/package.sh

.PHONY: push
push: ## Build, then push the packages and the RBAC artifact to REGISTRY under VERSION: make push REGISTRY=ghcr.io/fleetplane VERSION=v0.1.0
	@# Checked before the minutes of make package, not after.
	@test -n "$(REGISTRY)" -a -n "$(VERSION)" || { echo "make push needs REGISTRY and VERSION, e.g. make push REGISTRY=ghcr.io/fleetplane VERSION=v0.1.0"; exit 2; }
	@$(MAKE) --no-print-directory package
	@tools/push.sh $(REGISTRY) $(VERSION)

.PHONY: test
test: ## What CI runs: vet, lint, gofmt, then every test (unit tables, render goldens, provider tests on a real API server, the e2e journeys on real nodes: about 30 minutes on two cores) and 5s of each fuzzer.
	@$(TOOLS) >/dev/null
	$(GO) vet ./...
	@$$($(TOOLS) golangci-lint 2>/dev/null) run ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@# The e2e package runs every journey on one control plane, about 11
	@# minutes on 2 cores: past go test's default 10-minute timeout.
	$(GO) test -count=1 -timeout 30m ./...
	@$(MAKE) --no-print-directory fuzz

.PHONY: test-unit
test-unit: ## The fast loop: every test that needs no tool build or control plane, with the race detector.
	$(GO) test -short -race -count=1 ./...

FUZZTIME ?= 5s
# Go minimizes every new interesting input for up to a minute by default,
# which turns a 5s budget into minutes; a second keeps FUZZTIME the cost.
FUZZMINIMIZETIME ?= 1s

.PHONY: fuzz
fuzz: ## Fuzz everything that quotes or parses, FUZZTIME per target (default 5s).
	@GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) tools/fuzz.sh

.PHONY: lint
lint: ## Run golangci-lint as make test does (configuration: .golangci.yml).
	@$$($(TOOLS) golangci-lint 2>/dev/null) run ./...

.PHONY: bench
bench: ## Run the benchmarks with allocation figures.
	$(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: footprint-quick
footprint-quick: ## The same at a third of the scale, in minutes.
	$(GO) run ./hack/footprint -quick $(FOOTPRINT_ARGS)

.PHONY: footprint
footprint: ## Measure provider-fleetplane beside provider-kubernetes on a local control plane (minutes; flags: FOOTPRINT_ARGS).
	$(GO) run ./hack/footprint $(FOOTPRINT_ARGS)

.PHONY: demo
demo: ## Run fleetplane locally: control plane, Crossplane, the packages, a federated fleet on local Kusto servers, an experiment on stand-ins, an adx-mon stack, a placement on two clusters, all of it as pods on real nodes (root).
	@# Built, then exec'd: make's child is the demo itself, which stops
	@# everything on Ctrl-C and exits 0 (under `go run`, make's SIGTERM
	@# would end the go command and leave make reporting an error).
	@# The tools first, in the open: on a first run their builds are most
	@# of the wait, and tools.sh says what it builds and how long it took.
	@$(TOOLS) $(DEMO_TOOLS) >/dev/null
	@mkdir -p .cache/bin && $(GO) build -o .cache/bin/demo ./hack/demo && exec .cache/bin/demo $(DEMO_ARGS)

# What the demo runs or reads; the linters and generators are left for
# make test.
DEMO_TOOLS := crossplane crossplane-core etcd kube-apiserver kube-controller-manager kubectl provider-kubernetes \
	crossplane-core-crds provider-kubernetes-crds upjet-azure-crds argocd-crds argo-workflows-crds \
	kubelet kube-scheduler kube-proxy coredns helm crossplane-chart-templates
# The real nodes' Debian packages, which only root may install (and which
# a node needs root to run), and adx-mon's components, which run on the
# nodes: without root the demo says in one line that it needs them.
ifeq ($(shell id -u),0)
DEMO_TOOLS += node-runtime adx-mon-ingestor adx-mon-collector adx-mon-alerter
endif
