#!/usr/bin/env bash
# Pushes the six packages `make package` built to a registry with
# `crossplane xpkg push`, each under REGISTRY/<package>:VERSION, and the
# RBAC beside them as REGISTRY/fleetplane-rbac:VERSION (tools/ociartifact):
#
#   tools/push.sh ghcr.io/fleetplane v0.1.0 [DIR]
#
# DIR defaults to _output/. The CLI's own credentials apply (DOCKER_CONFIG,
# `crossplane xpkg login`), and SSL_CERT_FILE for a private CA. The
# Configurations name their dependencies by their ghcr.io/fleetplane
# sources: a registry elsewhere serves them through an ImageConfig
# rewrite (examples/install/mirror.yaml), which is what the tests do.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: tools/push.sh REGISTRY VERSION [DIR]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
registry=${1%/}
version=$2
dir=${3:-$root/_output}
# Exactly vMAJOR.MINOR.PATCH with an optional pre-release: what a
# dependency constraint in crossplane.yaml can select.
if ! [[ $version =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "tools/push.sh: VERSION must be a semver tag such as v0.1.0 (dependency constraints resolve only those); got '$version'" >&2
  exit 2
fi
packages=(function-fleetplane provider-fleetplane fleetplane-adx fleetplane-experiments fleetplane-placement fleetplane)
# All or nothing: every package is there before the first is pushed.
for p in "${packages[@]}"; do
  if [ ! -f "$dir/$p.xpkg" ]; then
    echo "tools/push.sh: $dir/$p.xpkg is missing; run make package first" >&2
    exit 1
  fi
done
if [ ! -f "$dir/fleetplane-rbac.yaml" ]; then
  echo "tools/push.sh: $dir/fleetplane-rbac.yaml is missing; run make package first" >&2
  exit 1
fi
xp=$("$root/tools/tools.sh" crossplane)

for p in "${packages[@]}"; do
  "$xp" xpkg push -f "$dir/$p.xpkg" "$registry/$p:$version" >&2
  echo "$registry/$p:$version"
done
# The RBAC, as an OCI artifact beside the packages (oras pull reads it).
(cd "$root" && go run ./tools/ociartifact push -f "$dir/fleetplane-rbac.yaml" "$registry/fleetplane-rbac:$version") >&2
echo "$registry/fleetplane-rbac:$version"
