#!/usr/bin/env bash
# Makes (once) a Python venv with pyca `cryptography` under .build/pyca-venv and prints its python.
# The PKCS#12 corpus test uses it as an independent reader (scripts/pkcs12-pyca.py).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${PYCA_VENV:-$ROOT/.build/pyca-venv}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY="$(command -v python3)"
if ! "$VENV/bin/python" -c 'import cryptography' 2>/dev/null; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check cryptography >&2
fi
echo "$VENV/bin/python"
