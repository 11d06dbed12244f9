#!/usr/bin/env bash
# Resident memory stays flat across 100,000 trust evaluations and 50,000 HTTPS requests (issue #9 asks 10,000):
# builds mtls-bench in release mode and runs `mtls-bench memory-flat`, which samples VmRSS after a
# warm-up of 10 % and after every further tenth, prints the tables and fails when VmRSS grew after
# the warm-up by more than 2 MiB (evaluations) or 3 MiB (requests).
#
#   scripts/memory-flat.sh                        the full check (100,000 evaluations, 50,000 requests)
#   scripts/memory-flat.sh --evaluations 10000 --requests 1000
#                                                 a shorter run (same budgets)
#   scripts/memory-flat.sh --self-test            shows that the check can fail: the same run with a
#                                                 deliberate leak (--leak-bytes 1024) must exit 1
#   SCRATCH=/path/.build scripts/memory-flat.sh   another build directory (default .build)
#
# Exit status: 0 flat, 1 grew beyond a budget, 2 an unexpected outcome (or the self-test failed).
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH="${SCRATCH:-.build}"

self_test=0
# 50,000 requests by default, five times the issue's 10,000: a leak of one TLS session per new
# connection (~1 KB, 1 in 10 requests here) grew 1 MiB over 10,000 requests, inside the 3 MiB
# budget, and 4.4 MiB over 50,000 — caught. The run takes seconds more.
args=(--requests 50000)
for argument in "$@"; do
  if [[ "$argument" == --self-test ]]; then self_test=1; else args+=("$argument"); fi
done

# The flags of scripts/release.sh (scripts/release-flags.sh), so that the full test run compiles the
# release libraries once for both (other flags rebuild every module).
ROOT=$PWD
source scripts/release-flags.sh
swift build "${RELEASE_FLAGS[@]}" --scratch-path "$SCRATCH" --product mtls-bench >&2
bench="$(swift build "${RELEASE_FLAGS[@]}" --scratch-path "$SCRATCH" --show-bin-path)/mtls-bench"
# With GNU time when present: the wall time and peak RSS of the whole run.
run() {
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f "memory-flat: %e s wall, peak RSS %M KiB" "$bench" memory-flat "$@"
  else
    "$bench" memory-flat "$@"
  fi
}

if [[ $self_test == 1 ]]; then
  status=0
  run "${args[@]}" --leak-bytes 1024 || status=$?
  if [[ $status == 1 ]]; then
    echo "memory-flat self-test: a leak of 1024 bytes per iteration was caught (exit 1), as it must be"
    exit 0
  fi
  echo "memory-flat self-test: FAILED: a leak of 1024 bytes per iteration gave exit $status, not 1" >&2
  exit 2
fi
run "${args[@]}"
