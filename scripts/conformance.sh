#!/usr/bin/env bash
# Runs the x509-limbo public slice against `mtls verify` (and optionally the raw OpenSSL baseline).
# Usage: scripts/conformance.sh [--baseline] [extra run_limbo.py args...]
set -euo pipefail
cd "$(dirname "$0")/.."
LIMBO=${LIMBO:-../shared/conformance/limbo/run_limbo.py}
if [[ ! -f "$LIMBO" ]]; then echo "conformance: $LIMBO not found (the shared/ checkout sits beside this repository)" >&2; exit 2; fi
swift build -c release --product mtls >/dev/null
BIN=$(swift build -c release --show-bin-path)/mtls
if [[ "${1:-}" == "--baseline" ]]; then shift; python3 "$LIMBO" --validator openssl --jobs 2 "$@"; exit 0; fi
python3 "$LIMBO" --validator mtls --mtls-bin "$BIN" --jobs 2 "$@"
