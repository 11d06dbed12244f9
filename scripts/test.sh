#!/usr/bin/env bash
# The one command that installs what the tests need and runs them (CI runs exactly this).
#   scripts/test.sh            build (no warnings allowed), unit + interop tests, lint
#   scripts/test.sh --quick    skip the dependency install and lint
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[[ "${1:-}" == "--quick" ]] && quick=1

step() { printf '\n==> %s\n' "$*"; }

if [[ $quick -eq 0 ]]; then
  step "dependencies"
  scripts/install-deps.sh
fi

step "build (warnings are errors)"
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
swift build --build-tests 2>&1 | tee "$build_log"
if grep -E "^/.*: warning:" "$build_log" | grep -v "/.build/" >/dev/null; then
  echo "test.sh: the build has warnings (listed above); fix them" >&2
  exit 1
fi

if [[ $quick -eq 0 && -x scripts/lint.sh ]]; then
  step "lint"
  scripts/lint.sh
fi

step "tests"
swift test 2>&1 | tee "$build_log"
status=${PIPESTATUS[0]}
exit "$status"
