#!/usr/bin/env bash
# The federation cycle of fleetplane beside the adx-mon operator's (v0.3.0)
# over the very same heartbeat rows (test/harness/fleetgen), in one run:
# fresh cycles of 1,000 and 5,000 partitions, one schema everywhere and
# every list distinct. Prints each side's median and the ratio.
#
#   hack/anchorbench/run.sh            # COUNT=5 runs of each
#
# It copies adx-mon's module from the Go module proxy into the tool cache
# (the operator's functions are unexported, so the benchmark runs inside a
# copy of its package) and downloads the operator's dependencies the first
# time: minutes, then seconds. Not part of CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=v0.3.0
cache=${FLEETPLANE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetplane/tools}/anchorbench
count=${COUNT:-5}
work=$cache/adx-mon@$version
mkdir -p "$cache"

if [ ! -d "$work/operator" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && go mod init anchorbench >/dev/null 2>&1)
  dir=$(cd "$tmp" && go mod download -json "github.com/Azure/adx-mon@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "anchorbench: github.com/Azure/adx-mon@$version did not download" >&2; exit 1; }
  rm -rf "$work.tmp" && cp -r "$dir" "$work.tmp" && chmod -R u+w "$work.tmp" && mv "$work.tmp" "$work"
fi
cp "$root/hack/anchorbench/testdata/federation_anchor_test.go" "$work/operator/"
(cd "$root" && go run ./hack/anchorbench -out "$cache/rows")

echo "== adx-mon $version" >&2
(cd "$work" && ANCHOR_ROWS=$cache/rows go test -run '^$' -bench BenchmarkAnchorCycle -benchmem -count "$count" ./operator) | tee "$cache/adxmon.txt" >&2
echo "== fleetplane" >&2
(cd "$root" && go test ./provider/kusto/federation -run '^$' \
  -bench 'BenchmarkCycle/^fresh$/^(1000x5x200|5000x5x200|distinct)$' -benchmem -count "$count") | tee "$cache/fleetplane.txt" >&2

# Medians of ns/op by fleet, then the table.
median() {
  awk '/^Benchmark/ { name=$1; sub(/^Benchmark[A-Za-z]+\/fresh\//, "", name); sub(/-[0-9]+$/, "", name); print name, $3 }' "$1" |
    sort -k1,1 -k2,2n |
    awk '{ v[$1]=v[$1] " " $2; n[$1]++ } END { for (k in v) { split(v[k], a, " "); print k, a[int((n[k]+1)/2)] } }' | sort
}
join <(median "$cache/fleetplane.txt") <(median "$cache/adxmon.txt") |
  awk 'BEGIN { printf "%-22s %14s %14s %8s\n", "fleet", "fleetplane", "adx-mon", "ratio" }
    { printf "%-22s %11.1f ms %11.1f ms %7.1fx\n", $1, $2/1e6, $3/1e6, $3/$2 }'
