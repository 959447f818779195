#!/usr/bin/env bash
# Fuzz every Fuzz target of the two binaries and what they share
# (function/, provider/, internal/) for FUZZTIME each.
#
# Go's fuzz coordinator up to 1.26 can fail a target at the -fuzztime boundary
# with a bare "context deadline exceeded" although no input failed
# (go.dev/issue/75804, fixed in Go 1.27): the deadline closes the parent
# context before the workers' child context sees it. Such a run writes no
# failing input, so a target that failed that way, and only that way, is run
# once more; anything else — a written input, a panic, a second deadline —
# fails the build.
set -euo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-1s}

spurious() {
  grep -q '^    context deadline exceeded$' <<<"$1" && ! grep -q 'Failing input written to' <<<"$1"
}

# report prints the input a failing target wrote, whole: CI's clone is
# thrown away, so the file Go names there is gone once the run ends.
report() {
  local dir file
  dir=$("$GO" list -f '{{.Dir}}' "$1")
  file=$(sed -n 's/^.*Failing input written to \(.*\)$/\1/p' <<<"$2" | head -1)
  [ -n "$file" ] && [ -f "$dir/$file" ] || return 0
  echo
  echo "The failing input, to keep as a seed at ${dir#"$PWD/"}/$file:"
  echo "----- 8< -----"
  cat "$dir/$file"
  echo "----- >8 -----"
  echo "Save it there, then re-run it alone: go test $1 -run '$(basename "$(dirname "$file")")/$(basename "$file")' -v"
  echo "(docs/development.md, \"When the fuzz step fails\", says what to do next.)"
}

for pkg in $("$GO" list ./function/... ./provider/... ./internal/...); do
  for f in $("$GO" test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "fuzz $pkg $f"
    for attempt in 1 2; do
      if out=$("$GO" test "$pkg" -run '^$' -fuzz "^$f\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" 2>&1); then
        break
      fi
      if [ "$attempt" = 1 ] && spurious "$out"; then
        echo "  $f stopped on Go's fuzz deadline race with no failing input (go.dev/issue/75804); running it again"
        continue
      fi
      echo "$out"
      report "$pkg" "$out"
      exit 1
    done
  done
done
