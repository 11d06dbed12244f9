#!/usr/bin/env bash
# Runs the x509-limbo public slice against `mtls verify` (and optionally the raw OpenSSL baseline);
# --check also runs the limbo cases outside the slice (TestCerts/third-party/x509-limbo-extra).
# Usage: scripts/conformance.sh [--baseline | --check] [extra run_limbo.py args...]
#   --check      fail unless no chain that must be rejected is accepted, no case is skipped, and
#                >= 99.8 % of the cases that run pass (CI runs this). Runs with
#                --mtls-partial-chain auto: every trusted certificate is an anchor, as x509-limbo
#                means it (the runner passes --partial-chain when one is not self-issued), and the
#                runner picks --profile webpki or rfc5280 per case.
#   MTLS_BIN=P   use this mtls binary instead of building a release one
#   SCRATCH=DIR  build in DIR (swift build --scratch-path) instead of .build
#   JOBS=N       parallel validator calls (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
LIMBO=${LIMBO:-../shared/conformance/limbo/run_limbo.py}
JOBS=${JOBS:-2}
if [[ ! -f "$LIMBO" ]]; then echo "conformance: $LIMBO not found (the shared/ checkout sits beside this repository)" >&2; exit 2; fi
if [[ "${1:-}" == "--baseline" ]]; then shift; python3 "$LIMBO" --validator openssl --jobs "$JOBS" "$@"; exit 0; fi
check=0
if [[ "${1:-}" == "--check" ]]; then check=1; shift; fi
if [[ -n "${MTLS_BIN:-}" ]]; then
  BIN=$MTLS_BIN
else
  BUILD=(swift build -c release --product mtls)
  if [[ -n "${SCRATCH:-}" ]]; then BUILD+=(--scratch-path "$SCRATCH"); fi
  if ! log=$("${BUILD[@]}" 2>&1); then echo "$log" >&2; echo "conformance: the build failed" >&2; exit 2; fi
  BIN=$("${BUILD[@]}" --show-bin-path)/mtls
fi
if [[ $check -eq 0 ]]; then
  python3 "$LIMBO" --validator mtls --mtls-bin "$BIN" --jobs "$JOBS" "$@"
  exit 0
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# The public slice, then the limbo cases outside it (TestCerts/third-party/x509-limbo-extra).
check_suite() {
local ran
ran=$(python3 "$LIMBO" --validator mtls --mtls-bin "$BIN" --jobs "$JOBS" --mtls-partial-chain auto --json-out "$out" "$@" 2>&1) || {
  # A filter (--include, --ids-file) may select nothing in one of the two files.
  if grep -q "no testcases selected" <<<"$ran"; then echo "conformance: no case of this file is selected"; return 0; fi
  echo "$ran" >&2; return 1
}
tail -3 <<<"$ran"
python3 - "$out" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
results = data["results"]
ran = [r for r in results if r["outcome"] in ("pass", "fail")]
failed = [r for r in ran if r["outcome"] == "fail"]
false_accepts = [r for r in failed if r["expected"] == "FAILURE" and r.get("actual") == "SUCCESS"]
skipped = [r for r in results if r["outcome"] == "skip"]
rate = (len(ran) - len(failed)) / max(1, len(ran))
print(f"conformance: {len(ran) - len(failed)} of {len(ran)} run cases pass ({rate:.2%}); false accepts: {len(false_accepts)}; skipped: {len(skipped)}")
for r in skipped:
    print(f"  skip: {r['id']} ({r.get('reason')})")
for r in failed:
    print(f"  fail: {r['id']} (expected {r['expected']}, got {r.get('actual')})")
if false_accepts:
    print("conformance: a chain that must be rejected was accepted: a security bug", file=sys.stderr)
    sys.exit(1)
if skipped:
    print("conformance: cases were skipped; every case must run", file=sys.stderr)
    sys.exit(1)
if rate < 0.998:
    print("conformance: below the 99.8 % target", file=sys.stderr)
    sys.exit(1)
PY
}
check_suite "$@"
EXTRA=TestCerts/third-party/x509-limbo-extra/limbo-extra.json.gz
echo "conformance: the x509-limbo cases outside the public slice ($EXTRA)"
check_suite --limbo "$EXTRA" "$@"
