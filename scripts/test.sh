#!/usr/bin/env bash
# The one command that installs what the tests need and runs them (CI runs exactly this).
#   scripts/test.sh            dependencies, build (no warnings allowed), lint, the Examples/ packages,
#                              unit + interop tests, API guide, x509-limbo conformance, memory-flat
#                              check, the release artefacts (static binary and .deb,
#                              scripts/test-release.sh), 30 s fuzz smoke per target
#   scripts/test.sh --quick    build, examples and tests only (no install, lint, conformance, memory, fuzz)
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

step "layering (folders depend one way: docs/ARCHITECTURE.md)"
python3 scripts/layering.py

if [[ $quick -eq 0 && -x scripts/lint.sh ]]; then
  step "lint"
  scripts/lint.sh || { [[ "${MTLS_LINT_STRICT:-1}" == "1" ]] && exit 1; }
fi

if [[ $quick -eq 0 ]]; then
  # The comparison that `scripts/bench/run_all.sh --check` makes, on made-up results (the benchmark
  # itself needs a quiet machine and is not run here).
  step "benchmark regression guard (its comparison logic)"
  python3 scripts/bench/test_harness.py
fi

step "hostile environment (secrets, outputs, inputs, other users, devices, serve under load; issue 38)"
scripts/hostile.sh

step "examples (packages that depend on mtls by path; the library consumer against mtls serve)"
scripts/examples.sh

step "tests"
set +e
MTLS_REQUIRE_EXAMPLES=1 swift test 2>&1 | tee "$build_log"
status=${PIPESTATUS[0]}
set -e
[[ $status -eq 0 ]] || exit "$status"

step "HTML reports in headless Chromium (DOM against the JSON, no console errors, no network; screenshots in .build/ci-artifacts/reports)"
MTLS_BIN="$(swift build --show-bin-path)/mtls" scripts/report-browser-test.sh

if [[ $quick -eq 0 ]]; then
  step "API guide (DocC catalogs of MTLSTrust and MTLSHTTP)"
  scripts/docs.sh
  step "x509-limbo conformance (no false accepts, >= 99.8 %; the trust fast path against the reference path on every case)"
  if [[ -f ../shared/conformance/limbo/run_limbo.py ]]; then
    MTLS_BIN="$(swift build --show-bin-path)/mtls" scripts/trust-differential.sh
  else
    echo "conformance: ../shared/conformance not present beside this checkout; skipped"
  fi
  step "memory flat (100,000 trust evaluations, 50,000 HTTPS requests; release build)"
  scripts/memory-flat.sh
  step "release artefacts (static binary with the toolchain hidden, .deb installed and removed)"
  # The same release build directory as memory-flat: the libraries it compiled are reused.
  scripts/test-release.sh
  if [[ -x scripts/fuzz.sh && "${MTLS_FUZZ_SMOKE:-1}" == "1" ]]; then
    step "fuzz smoke (30 s per target, then the saved regressions)"
    # Its own work directory in the checkout: corpora and instrumented builds of other runs on the
    # machine are not touched (MTLS_FUZZ_SMOKE=0 skips the step).
    FUZZ_WORK="${FUZZ_WORK:-$PWD/.build/fuzz}" scripts/fuzz.sh --smoke
  fi
fi

# The closing line CI reads, after everything above has passed.
python3 - "$build_log" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1], errors="replace") if re.search(r"Executed \d+ tests?", l)]
if lines:
    m = re.search(r"Executed (\d+) tests?, with (?:(\d+) tests? skipped and )?(\d+) failures?", lines[-1])
    total, skipped, failed = int(m.group(1)), int(m.group(2) or 0), int(m.group(3))
    print(f"{total - skipped - failed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY
exit 0
