#!/usr/bin/env bash
# Builds fleetplane's three Crossplane packages offline into _output/:
#   function-fleetplane.xpkg and provider-fleetplane.xpkg, each embedding a
#   runtime image (its static binary on an empty base, built without Docker
#   by tools/ociimage); fleetplane-adx, fleetplane-experiments and
#   fleetplane-placement.xpkg, one Configuration per use case; and
#   fleetplane.xpkg, which depends on all three; and fleetplane-rbac.yaml,
#   the RBAC that goes before them.
# Prints the path of each.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/_output}
cd "$root"
xp=$(tools/tools.sh crossplane)

mkdir -p "$out/bin" "$out/empty"
for c in function provider; do
  CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$out/bin/$c-fleetplane" "./$c"
  go run ./tools/ociimage -binary "$out/bin/$c-fleetplane" -path "/$c-fleetplane" \
    -tag "xpkg.fleetplane.io/runtime/$c-fleetplane:dev" -o "$out/$c-runtime.tar" >/dev/null
done

"$xp" xpkg build --package-root package/function --examples-root "$out/empty" \
  --embed-runtime-image-tarball "$out/function-runtime.tar" -o "$out/function-fleetplane.xpkg" >&2
"$xp" xpkg build --package-root package/provider --examples-root examples/provider \
  --embed-runtime-image-tarball "$out/provider-runtime.tar" -o "$out/provider-fleetplane.xpkg" >&2

# One Configuration per use case, each package/<use case>/crossplane.yaml
# plus the XRDs, Compositions and activation policy of its API group from
# package/configuration (a new kind lands in its group's package by its
# group alone), with the XRs users apply as examples.
build_configuration() {
  local usecase=$1 group=$2 cfg=$out/fleetplane-$1 ex=$out/fleetplane-$1-examples f
  rm -rf "$cfg" "$ex"
  mkdir -p "$cfg/xrds" "$cfg/compositions" "$ex"
  cp "package/$usecase/crossplane.yaml" "$cfg/"
  cp package/configuration/xrds/*."$group".yaml "$cfg/xrds/"
  for f in package/configuration/compositions/*.yaml; do
    if grep -q "^    apiVersion: $group/" "$f"; then cp "$f" "$cfg/compositions/"; fi
  done
  cp "package/configuration/activations/$usecase.yaml" "$cfg/activation.yaml"
  shift 2
  for f in "$@"; do
    mkdir -p "$ex/$(dirname "$f")"
    cp "examples/$f" "$ex/$f"
  done
  "$xp" xpkg build --package-root "$cfg" --examples-root "$ex" -o "$out/fleetplane-$usecase.xpkg" >&2
}

cd examples
adx_examples=(adxcluster/*.yaml adxmon/*.yaml)
experiment_examples=(experiment/*.yaml experiment/components/*.yaml)
placement_examples=(placement/*.yaml clusterplacement/*.yaml)
cd "$root"
build_configuration adx adx.fleetplane.io "${adx_examples[@]}"
build_configuration experiments experiments.fleetplane.io "${experiment_examples[@]}"
build_configuration placement placement.fleetplane.io "${placement_examples[@]}"

# fleetplane, the root crossplane.yaml: all of the above by dependency.
rm -rf "$out/fleetplane"
mkdir -p "$out/fleetplane"
cp crossplane.yaml "$out/fleetplane/"
"$xp" xpkg build --package-root "$out/fleetplane" --examples-root "$out/empty" -o "$out/fleetplane.xpkg" >&2

# The RBAC and runtime configs a package cannot carry, which the cluster
# admin applies before installing the provider (docs/install.md): every
# file of package/rbac in one, each after a line naming its source, so the
# release is installed and upgraded as a whole.
{
  echo "# fleetplane's RBAC and runtime configs: apply before installing provider-fleetplane (docs/install.md)."
  for f in package/rbac/*.yaml; do
    printf -- '---\n# Source: %s\n' "$f"
    cat "$f"
    # A file without a final newline would run into the next separator.
    [ -z "$(tail -c1 "$f")" ] || echo
  done
} > "$out/fleetplane-rbac.yaml"

for p in function-fleetplane provider-fleetplane fleetplane-adx fleetplane-experiments fleetplane-placement fleetplane; do
  echo "$out/$p.xpkg"
done
echo "$out/fleetplane-rbac.yaml"
