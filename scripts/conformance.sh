#!/usr/bin/env bash
# Runs the x509-limbo public slice against `mtls verify` (and optionally the raw OpenSSL baseline).
# Usage: scripts/conformance.sh [--baseline] [extra run_limbo.py args...]
#   SCRATCH=DIR  build in DIR (swift build --scratch-path) instead of .build
#   JOBS=N       parallel validator calls (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
LIMBO=${LIMBO:-../shared/conformance/limbo/run_limbo.py}
JOBS=${JOBS:-2}
if [[ ! -f "$LIMBO" ]]; then echo "conformance: $LIMBO not found (the shared/ checkout sits beside this repository)" >&2; exit 2; fi
if [[ "${1:-}" == "--baseline" ]]; then shift; python3 "$LIMBO" --validator openssl --jobs "$JOBS" "$@"; exit 0; fi
BUILD=(swift build -c release --product mtls)
if [[ -n "${SCRATCH:-}" ]]; then BUILD+=(--scratch-path "$SCRATCH"); fi
if ! log=$("${BUILD[@]}" 2>&1); then echo "$log" >&2; echo "conformance: the build failed" >&2; exit 2; fi
BIN=$("${BUILD[@]}" --show-bin-path)/mtls
python3 "$LIMBO" --validator mtls --mtls-bin "$BIN" --jobs "$JOBS" "$@"
