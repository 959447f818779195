#!/usr/bin/env bash
# Builds fleetplane's pinned external tools from the Go module proxy into a
# git-ignored cache keyed by name and version, and skips whatever is already
# there. Prints the path of each requested tool on stdout, one per line;
# progress goes to stderr.
#
#   tools/tools.sh crossplane controller-gen
#
# Besides binaries it fetches modules whose files fleetplane tests against
# (the real upjet CRDs, for example) and prints the directory of interest.
#
# Each tool has its own module under tools/<dir> (go.mod + go.sum pinned), so
# their dependency graphs never touch fleetplane's go.mod.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# Outside the clone by default: every key names a version (and, for a tool
# built from this repository's sources, their hash), so clones of any
# commit share one cache and a fresh CI clone starts warm.
cache=${FLEETPLANE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetplane/tools}

# name | version | module dir under tools/ | package to build | binary name | ldflags
catalog() {
  cat <<'CAT'
crossplane|v2.2.0|crossplane-cli|github.com/crossplane/crossplane/v2/cmd/crank|crossplane|-X github.com/crossplane/crossplane/v2/internal/version.version=v2.2.0
controller-gen|v0.23.0|controller-gen|sigs.k8s.io/controller-tools/cmd/controller-gen|controller-gen
angryjet|v0.0.0-20260719180100-659f1dc036c5|angryjet|github.com/crossplane/crossplane-tools/cmd/angryjet|angryjet
golangci-lint|v2.15.0|golangci-lint|github.com/golangci/golangci-lint/v2/cmd/golangci-lint|golangci-lint
etcd|v3.6.5|etcd|go.etcd.io/etcd/server/v3|etcd
kube-apiserver|v1.34.2|kube-apiserver|k8s.io/kubernetes/cmd/kube-apiserver|kube-apiserver
kube-controller-manager|v1.34.2|kube-apiserver|k8s.io/kubernetes/cmd/kube-controller-manager|kube-controller-manager
kubectl|v1.34.2|kube-apiserver|k8s.io/kubernetes/cmd/kubectl|kubectl|-X k8s.io/client-go/pkg/version.gitVersion=v1.34.2 -X k8s.io/component-base/version.gitVersion=v1.34.2
kubelet|v1.34.2|kube-apiserver|k8s.io/kubernetes/cmd/kubelet|kubelet|-X k8s.io/component-base/version.gitVersion=v1.34.2
kube-scheduler|v1.34.2|kube-apiserver|k8s.io/kubernetes/cmd/kube-scheduler|kube-scheduler
kube-proxy|v1.34.2|kube-apiserver|k8s.io/kubernetes/cmd/kube-proxy|kube-proxy|-X k8s.io/component-base/version.gitVersion=v1.34.2
crossplane-core|v2.4.0|crossplane-core|github.com/crossplane/crossplane/v2/cmd/crossplane|crossplane|-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=v2.4.0
provider-kubernetes|v1.0.0|provider-kubernetes|github.com/crossplane-contrib/provider-kubernetes/cmd/provider|provider-kubernetes
promcheck|v0.316.0|promcheck|fleetplane.tools/promcheck|promcheck
coredns|v1.12.1|coredns|fleetplane.tools/coredns|coredns
helm|v3.19.0|helm|helm.sh/helm/v3/cmd/helm|helm|-X helm.sh/helm/v3/internal/version.version=v3.19.0
adx-mon-ingestor|v0.3.0|adx-mon|github.com/Azure/adx-mon/cmd/ingestor|ingestor
adx-mon-alerter|v0.3.0|adx-mon|github.com/Azure/adx-mon/cmd/alerter|alerter
adx-mon-collector|v0.3.0|adx-mon|github.com/Azure/adx-mon/cmd/collector|collector
CAT
}

# name | module | version | directory inside the module to print [| h1
# sum, for a module the checksum database does not answer for, which is
# then checked against this pin instead]
modules() {
  cat <<'CAT'
upjet-azure-crds|github.com/upbound/provider-azure/v2|v2.3.0|package/crds
crossplane-crds|github.com/crossplane/crossplane/v2|v2.2.0|cluster/crds
crossplane-core-crds|github.com/crossplane/crossplane/v2|v2.4.0|cluster/crds
crossplane-chart-templates|github.com/crossplane/crossplane/v2|v2.4.0|cluster/charts/crossplane/templates
provider-kubernetes-crds|github.com/crossplane-contrib/provider-kubernetes|v1.0.0|package/crds
adx-mon-crds|github.com/Azure/adx-mon|v0.3.0|operator/manifests/crds
argocd-crds|github.com/argoproj/argo-cd/v3|v3.2.0|manifests/crds
argo-workflows-crds|github.com/argoproj/argo-workflows/v3|v3.7.0|manifests/base/crds/full
capi-crds|sigs.k8s.io/cluster-api|v1.11.3|config/crd/bases
capd-crds|sigs.k8s.io/cluster-api/test|v1.11.3|infrastructure/docker/config/crd/bases|h1:My8N5vHyWL1XAdwfP69bIajox8IJd7XhaSD8DRu8AHs=
capa-crds|sigs.k8s.io/cluster-api-provider-aws/v2|v2.9.0|config/crd/bases
talos-controlplane-crds|github.com/siderolabs/cluster-api-control-plane-provider-talos|v0.5.7|config/crd/bases|h1:lt69fkYZvGvX4+69YbnhkVeNdOv6TKxe/M8fuZE6+C4=
talos-bootstrap-crds|github.com/siderolabs/cluster-api-bootstrap-provider-talos|v0.6.8|config/crd/bases|h1:m6tOF+IEF5Ds6ddsNQ8nAkw6UwkgyqnyR8HNrfkjMMM=
CAT
}

fetch_module() {
  local name mod version sub sum nosumdb out dir got
  IFS='|' read -r name mod version sub sum <<<"$1"
  # Upbound's modules are not in the public checksum database; a module
  # pinned by its sum is checked against the pin instead.
  nosumdb=github.com/upbound
  if [ -n "$sum" ]; then
    nosumdb=$nosumdb,$mod
  fi
  out=$(cd "$root" && GONOSUMDB=$nosumdb GOFLAGS=-mod=mod go mod download -json "$mod@$version")
  dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$out")
  got=$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<<"$out")
  if [ -n "$sum" ] && [ "$got" != "$sum" ]; then
    echo "tools.sh: $mod@$version has sum '$got', pinned $sum" >&2
    return 1
  fi
  if [ -z "$dir" ] || [ ! -d "$dir/$sub" ]; then
    echo "tools.sh: cannot fetch $mod@$version" >&2
    return 1
  fi
  echo "$dir/$sub"
}

# The Debian packages a real node runs on (test/harness/node): runc,
# containerd, the CNI plugins, iptables. Pinned to bookworm's versions;
# when the mirror has moved past one (a security update), its current
# version is installed and named. Needs root, as a node does.
node_packages() {
  cat <<'CAT'
runc|runc|1.1.5+ds1-1+deb12u1
containerd|containerd|1.6.20~ds1-1+deb12u3
/usr/lib/cni/bridge|containernetworking-plugins|1.1.1+ds1-3+b5
iptables|iptables|1.8.9-2
CAT
}

node_runtime() {
  local cmd pkg version missing=() pinned=()
  while IFS='|' read -r cmd pkg version; do
    if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "$cmd" ]; then
      missing+=("$pkg")
      pinned+=("$pkg=$version")
    fi
  done < <(node_packages)
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "tools.sh: a real node needs root to install ${missing[*]} (apt-get) and to run containers" >&2
      return 1
    fi
    echo "tools.sh: installing Debian packages ${pinned[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y --no-install-recommends "${pinned[@]}" >&2; then
      echo "tools.sh: pinned versions unavailable; installing the mirror's current ${missing[*]}" >&2
      apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2
    fi
  fi
  command -v containerd
}

build_one() {
  local want=$1 line name version dir pkg bin ldflags out key
  if [ "$want" = node-runtime ]; then
    node_runtime
    return
  fi
  line=$(modules | awk -F'|' -v n="$want" '$1 == n')
  if [ -n "$line" ]; then
    fetch_module "$line"
    return
  fi
  line=$(catalog | awk -F'|' -v n="$want" '$1 == n')
  if [ -z "$line" ]; then
    echo "tools.sh: unknown tool '$want'; known: $( (catalog; modules) | cut -d'|' -f1 | tr '\n' ' ')node-runtime" >&2
    return 1
  fi
  IFS='|' read -r name version dir pkg bin ldflags <<<"$line"
  # Build flags are part of the cache key: other flags, other binary.
  key=$name-$version
  if [ -n "$ldflags" ]; then
    key=$key-$(printf '%s' "$ldflags" | sha256sum | cut -c1-8)
  fi
  # fleetplane's own tools (tools/<dir> holds their source): their source
  # is part of the key too, so an edit rebuilds them.
  if [[ $pkg == fleetplane.tools/* ]]; then
    key=$key-$(cat "$root/tools/$dir"/*.go "$root/tools/$dir/go.mod" "$root/tools/$dir/go.sum" | sha256sum | cut -c1-12)
  # A module that replaces dependencies with directories of its own
  # (tools/adx-mon/otlp) is part source too: every file of it counts.
  elif grep -q '=> \./' "$root/tools/$dir/go.mod"; then
    key=$key-$(cd "$root/tools/$dir" && find . -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-12)
  fi
  out=$cache/$key/$bin
  if [ -x "$out" ]; then
    echo "tools.sh: $name $version cached at $out" >&2
  else
    echo "tools.sh: building $name $version ($pkg); the first build can take minutes" >&2
    local start=$SECONDS
    mkdir -p "$(dirname "$out")"
    (cd "$root/tools/$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out.tmp" "$pkg")
    mv "$out.tmp" "$out"
    echo "tools.sh: built $name $version in $((SECONDS - start))s" >&2
  fi
  echo "$out"
}

# group is what a tool is built with: the tools of one module dir share
# most of their packages, so they build one after another (two concurrent
# builds of the same packages would each compile them); downloads of
# modules and the Debian packages are groups of their own.
group() {
  local dir
  dir=$(catalog | awk -F'|' -v n="$1" '$1 == n {print $3}')
  if [ -n "$dir" ]; then
    echo "$dir"
  elif [ "$1" = node-runtime ]; then
    echo node-runtime
  else
    echo modules
  fi
}

# build_all builds the requested tools, FLEETPLANE_TOOLS_JOBS groups at a
# time (default 2): one build's compile already keeps both cores of a
# small machine busy, but its module downloads and its link (one core)
# leave room for another. Paths print in the order asked, as before.
build_all() {
  local jobs=${FLEETPLANE_TOOLS_JOBS:-2} tmp t g i failed=0
  local -a groups=() members=()
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  for t in "$@"; do
    g=$(group "$t")
    for i in "${!groups[@]}"; do
      if [ "${groups[$i]}" = "$g" ]; then
        members[i]+=" $t"
        continue 2
      fi
    done
    groups+=("$g")
    members+=("$t")
  done
  for i in "${!groups[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
      wait -n || true
    done
    # Not `build_one || …`: a condition turns errexit off inside
    # build_one, which would then carry on past a failed build. A tool
    # is done when its marker is written, which errexit prevents.
    (
      for t in ${members[i]}; do
        build_one "$t" >"$tmp/$t.path"
        touch "$tmp/$t.done"
      done
    ) &
  done
  wait || true
  for t in "$@"; do
    if [ -e "$tmp/$t.done" ]; then
      cat "$tmp/$t.path"
    else
      echo "tools.sh: $t failed (its error is above)" >&2
      failed=1
    fi
  done
  return "$failed"
}

if [ $# -eq 0 ]; then
  # The Kubernetes module first: its six binaries are the longest group.
  set -- kube-apiserver kube-controller-manager kubectl kubelet kube-scheduler kube-proxy \
    $( (catalog; modules) | cut -d'|' -f1 | grep -vx 'kube-apiserver\|kube-controller-manager\|kubectl\|kubelet\|kube-scheduler\|kube-proxy') node-runtime
fi
if [ $# -eq 1 ]; then
  build_one "$1"
else
  build_all "$@"
fi
