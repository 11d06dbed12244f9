#!/usr/bin/env bash
# The HTML reports (`probe --report`, `probe --targets --report`, `mtls report`) in headless
# Chromium against real servers on loopback, and a fleet sharded through GNU parallel: see
# scripts/report-browser-test.py. Screenshots and pages are kept in .build/ci-artifacts/reports/.
# Usage: scripts/report-browser-test.sh   (MTLS_BIN: the mtls binary; default .build/debug/mtls)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export MTLS_BIN="${MTLS_BIN:-$(swift build --show-bin-path)/mtls}"
[[ -f TestCerts/hostile/server.pem ]] || scripts/make-hostile-cert.sh >/dev/null
python3 scripts/report-browser-test.py "$@"
# 10,000 endpoints (records of the run above under new names): every row rendered, no console
# message or request; the times are printed (docs/BENCHMARKS.md), not asserted.
[[ $# -gt 0 ]] || python3 scripts/report-browser-test.py --bench 10000
