#!/usr/bin/env bash
# Makes TestCerts/hostile/: a self-signed server certificate whose subject carries markup that
# would run script if a report printed it unescaped (a <script> element and an <img onerror>),
# for the HTML report tests (Tests/MTLSCommandLineTests/ReportPageTests.swift and
# scripts/report-browser-test.sh). The payloads would mark <body data-pwned> if they ever ran.
#
# Requires: OpenSSL 3.0+ CLI.  Usage: scripts/make-hostile-cert.sh [OUT_DIR]
set -euo pipefail
ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT_DIR/TestCerts/hostile}"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export OPENSSL_CONF="$WORK/empty.cnf"
: >"$OPENSSL_CONF"

# The CN holds both payloads (64 characters at most by X.520, which OpenSSL's CLI does not
# enforce; the O and OU carry the longer ones).
CN='<script>document.body.dataset.pwned=1<\/script>'
O='<img src=x onerror="document.body.dataset.pwned=2">'
OU="\"><svg onload=document.body.dataset.pwned=3>"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -keyout "$OUT/server.key" -out "$OUT/server.pem" \
    -subj "/CN=$CN/O=$O/OU=$OU" -utf8 \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -addext "extendedKeyUsage=serverAuth" \
    -addext "basicConstraints=critical,CA:FALSE" 2>/dev/null
chmod 600 "$OUT/server.key"
openssl x509 -in "$OUT/server.pem" -noout -subject -nameopt RFC2253
