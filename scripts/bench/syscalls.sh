#!/usr/bin/env bash
# System calls per HTTPS request, mtls against the C limit (issue #20 item 2), counted with strace:
# each client runs N1 and N2 keep-alive GETs (and N1/N2 connections for full and resumed
# handshakes) against a loopback nginx, and the per-request figure is the difference of the two
# counts divided by N2 − N1, so start-up, the trust store and the first connection cancel out.
#
#   scripts/bench/syscalls.sh [MTLS_BENCH]     MTLS_BENCH: an mtls-bench binary (default: debug build)
#
# Needs strace, nginx, cc, libssl-dev. Prints a Markdown table per mode.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/../.." && pwd)
WORK=$(mktemp -d)
trap '[[ -f $WORK/nginx.pid ]] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null; rm -rf "$WORK"' EXIT
MTLS_BENCH=${1:-}
if [[ -z $MTLS_BENCH ]]; then
  (cd "$ROOT" && swift build --product mtls-bench >&2)
  MTLS_BENCH="$(cd "$ROOT" && swift build --show-bin-path)/mtls-bench"
fi
cc -O2 -Wall -o "$WORK/c_https" "$BENCH_DIR/c_https.c" -lssl -lcrypto
certs=$ROOT/TestCerts
cat "$certs/server.pem" "$certs/intermediate-ca.pem" >"$WORK/chain.pem"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
resume_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$WORK/tmp"
cat >"$WORK/nginx.conf" <<CONF
daemon on;
pid $WORK/nginx.pid;
error_log $WORK/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $WORK/tmp/body; proxy_temp_path $WORK/tmp/proxy; fastcgi_temp_path $WORK/tmp/fastcgi;
    uwsgi_temp_path $WORK/tmp/uwsgi; scgi_temp_path $WORK/tmp/scgi;
    keepalive_requests 1000000;
    server { listen 127.0.0.1:$port ssl; ssl_certificate $WORK/chain.pem; ssl_certificate_key $certs/server.key;
             ssl_protocols TLSv1.3; ssl_session_cache off; ssl_session_tickets off; location = /small { return 200 "hello, bench\n"; } }
    server { listen 127.0.0.1:$resume_port ssl; ssl_certificate $WORK/chain.pem; ssl_certificate_key $certs/server.key;
             ssl_protocols TLSv1.3; ssl_session_cache shared:S:1m; ssl_session_tickets on; location = /small { return 200 "hello, bench\n"; } }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK" -e "$WORK/error.log"
sleep 0.3

# count MODE PORT N CLIENT... → "syscall count" lines of one run (threads included)
count() {
  local out=$WORK/strace.txt
  strace -f -qq -c -o "$out" "${@:4}" "$1" "$2" "$ROOT/TestCerts/root-ca.pem" /small "$3" >/dev/null 2>"$WORK/client.err" || { cat "$WORK/client.err" >&2; exit 1; }
  awk '$1 ~ /^[0-9.]+$/ && $NF != "total" { print $NF, $4 }' "$out"
}

table() { # MODE PORT N1 N2
  local mode=$1 p=$2 n1=$3 n2=$4
  python3 - "$mode" "$n1" "$n2" \
    "$(count "$mode" "$p" "$n1" "$WORK/c_https")" "$(count "$mode" "$p" "$n2" "$WORK/c_https")" \
    "$(count "$mode" "$p" "$n1" "$MTLS_BENCH" https)" "$(count "$mode" "$p" "$n2" "$MTLS_BENCH" https)" <<'PY'
import sys
mode, n1, n2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def parse(text):
    d = {}
    for line in text.splitlines():
        name, calls = line.split()
        d[name] = int(calls)
    return d
c1, c2, m1, m2 = (parse(t) for t in sys.argv[4:8])
per = lambda a, b, name: (b.get(name, 0) - a.get(name, 0)) / (n2 - n1)
names = sorted(set(c2) | set(m2), key=lambda k: -(per(m1, m2, k) + per(c1, c2, k)))
print(f"#### {mode}: system calls per {'request' if mode == 'keepalive' else 'connection'} ({n2 - n1} extra, strace -f -c)\n")
print("| system call | C limit | mtls | extra |\n|---|---:|---:|---:|")
tc = tm = 0.0
for name in names:
    c, m = per(c1, c2, name), per(m1, m2, name)
    if abs(c) < 0.005 and abs(m) < 0.005:
        continue
    tc += c; tm += m
    print(f"| {name} | {c:.2f} | {m:.2f} | {m - c:+.2f} |")
print(f"| **total** | **{tc:.2f}** | **{tm:.2f}** | **{tm - tc:+.2f}** |\n")
PY
}

echo "strace $(strace -V | head -1 | awk '{print $NF}'), $(openssl version | cut -d' ' -f1-2), nginx TLS 1.3 ECDSA on loopback; mtls-bench: $MTLS_BENCH"
echo
table keepalive "$port" 200 1200
table full "$port" 20 120
table resumed "$resume_port" 20 120
