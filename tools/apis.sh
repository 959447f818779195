#!/usr/bin/env bash
# Lists fleetplane's API packages of one kind as controller-gen path
# arguments, found by their +groupName marker, so that `make generate`
# needs no list of packages and a new group cannot ship without its CRD:
#   composite  XR groups, which become XRDs (package/configuration/xrds)
#   managed    provider-fleetplane's groups, m.fleetplane.io and *.m.fleetplane.io
#              (package/provider/crds)
#   input      the function input, fn.fleetplane.io (package/function/input)
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:?usage: tools/apis.sh composite|managed|input}
grep -rl --include='*.go' '^// +groupName=' apis | sort | while read -r f; do
  group=$(sed -n 's#^// +groupName=##p' "$f")
  case "$group" in
    fn.fleetplane.io) kind=input ;;
    m.fleetplane.io | *.m.fleetplane.io) kind=managed ;;
    *) kind=composite ;;
  esac
  if [ "$kind" = "$want" ]; then
    echo "paths=./$(dirname "$f")/..."
  fi
done
