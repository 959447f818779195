#!/usr/bin/env bash
# Builds fleetplane's three Crossplane packages offline into _output/:
#   function-fleetplane.xpkg and provider-fleetplane.xpkg, each embedding a
#   runtime image (its static binary on an empty base, built without Docker
#   by tools/ociimage), and fleetplane.xpkg, the Configuration.
# Prints the path and digest of each package.
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

# The Configuration is the root crossplane.yaml plus package/configuration,
# with the XRs and Components users apply (not the render fixtures).
cfg=$out/configuration
rm -rf "$cfg" "$out/configuration-examples"
mkdir -p "$cfg" "$out/configuration-examples/adxcluster" "$out/configuration-examples/experiment/components"
cp crossplane.yaml "$cfg/"
cp -r package/configuration/. "$cfg/"
cp examples/adxcluster/*.yaml "$out/configuration-examples/adxcluster/"
cp examples/experiment/*.yaml "$out/configuration-examples/experiment/"
cp examples/experiment/components/*.yaml "$out/configuration-examples/experiment/components/"
"$xp" xpkg build --package-root "$cfg" --examples-root "$out/configuration-examples" -o "$out/fleetplane.xpkg" >&2

for p in function-fleetplane provider-fleetplane fleetplane; do
  echo "$out/$p.xpkg"
done
