#!/usr/bin/env bash
# Benchmarks side by side: mtls against the C limit (the same OpenSSL called from C), openssl,
# curl, wrk and Python `cryptography` — verify, pin, PKCS#12, HTTPS, fleet probe, start-up — with
# medians, min–max, ratios, targets and peak RSS. See docs/BENCHMARKS.md.
#
#   scripts/bench/run_all.sh [WORKLOAD...]     WORKLOAD: startup pin pkcs12 verify https fleet fanout (default: all)
#   scripts/bench/run_all.sh --check [WORKLOAD...]
#       a short run (fewer requests, connections, endpoints and fuzz iterations), then every ratio
#       compared with the committed scripts/bench/baseline.json: exit 1 when one moved the wrong way
#       by more than 20 % (BENCH_TOLERANCE=0.2). Not part of scripts/test.sh: it needs a quiet machine.
#   scripts/bench/run_all.sh --save-baseline [WORKLOAD...]
#       the same short run, its checks written into scripts/bench/baseline.json (other workloads kept).
#
# Environment: BENCH_RUNS (5 runs after the warm-up), BENCH_WORK (/tmp/mtls-bench: corpora, binaries
# and results; the corpora are kept between runs), BENCH_SCRATCH (the Swift build directory,
# .build/bench), BENCH_STATIC (1: the release build's flags, scripts/release-flags.sh; 0: dynamic),
# BENCH_FUZZ (20000 differential fuzz iterations of the DER walk), BENCH_KEEPALIVE (20000),
# BENCH_CONNECTIONS (200), BENCH_FLEET (1000; 0 leaves those rows out), BENCH_FLEET_SAMPLE (30), BENCH_FLEET_DELAY_MS (100);
# the fleet at scale: BENCH_FLEET_SCALE (10000 endpoints), BENCH_FLEET_CONCURRENCY (1000, from one
# process), BENCH_FLEET_SHARDS (4 processes with --shard I/N, the concurrency split between them),
# BENCH_FLEET_SCALE_RUNS (3), BENCH_FLEET_BASELINE (another build's `mtls`, e.g. an earlier commit's, run
# alternately with this one at scale: the ratio to it; BENCH_FLEET_BASELINE_LABEL names it), BENCH_FLEET_PEERS (500 endpoints for sslyze and mtls beside it; 0: no
# peers), BENCH_FLEET_TESTSSL (10 endpoints for testssl.sh), BENCH_FLEET_PEERS_RUNS (2),
# BENCH_SAMPLE_MS (2: how often the processes are sampled in /proc for their threads); the fan-out:
# BENCH_FANOUT (500 concurrent sends, and probes at that --concurrency), BENCH_FANOUT_DELAY_MS (200).
# Needs: swift, cc, libssl-dev, openssl, nginx, curl, wrk, hyperfine, python3 with `cryptography`,
# and for the fleet testssl.sh and sslyze (installed here when missing and this is Debian as root;
# sslyze with pip into a venv in BENCH_WORK).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/../.." && pwd)
BASELINE=$BENCH_DIR/baseline.json
CHECK=0 SAVE=0 workloads=()
for arg in "$@"; do
  case $arg in
    --check) CHECK=1 ;;
    --save-baseline) SAVE=1 ;;
    startup | pin | pkcs12 | verify | https | fleet | fanout) workloads+=("$arg") ;;
    *) echo "run_all.sh: unknown argument '$arg' (workloads: startup pin pkcs12 verify https fleet fanout; --check, --save-baseline)" >&2; exit 2 ;;
  esac
done
if ((CHECK || SAVE)); then
  # The short run: the baseline is made with the same knobs, so its ratios compare with a check's.
  export BENCH_FUZZ=${BENCH_FUZZ:-2000} BENCH_KEEPALIVE=${BENCH_KEEPALIVE:-1000} BENCH_CONNECTIONS=${BENCH_CONNECTIONS:-100} BENCH_FLEET=${BENCH_FLEET:-300}
  # The fleet at scale keeps its concurrency (the thread and RSS checks are about 1000 at once) on
  # fewer endpoints; the peers are not run (they take minutes and guard nothing of mtls).
  export BENCH_FLEET_SCALE=${BENCH_FLEET_SCALE:-3000} BENCH_FLEET_PEERS=${BENCH_FLEET_PEERS:-0}
  if ((CHECK)) && [[ ! -f $BASELINE ]]; then echo "run_all.sh: no $BASELINE: make one with --save-baseline" >&2; exit 2; fi
fi
export BENCH_WORK=${BENCH_WORK:-/tmp/mtls-bench}
SCRATCH=${BENCH_SCRATCH:-$ROOT/.build/bench}
STATIC=${BENCH_STATIC:-1}
FUZZ=${BENCH_FUZZ:-20000}
STARTED=$(date +%s)
export BENCH_OUT=$BENCH_WORK/results/$(date -u +%Y%m%dT%H%M%SZ)
export BENCH_BIN=$BENCH_WORK/bin
mkdir -p "$BENCH_OUT" "$BENCH_BIN"

say() { printf '\n== %s (%ss)\n' "$*" "$(($(date +%s) - STARTED))" >&2; }
die() { echo "run_all.sh: $*" >&2; exit 1; }

# --- Tools -----------------------------------------------------------------------------------------
missing=()
for tool in wrk hyperfine nginx curl; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]})); then
  [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || die "install: ${missing[*]}"
  say "installing ${missing[*]}"
  apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi
PYTHON=${BENCH_PYTHON:-$(command -v python3)}
if ! "$PYTHON" -c 'import cryptography.x509.verification' 2>/dev/null; then
  say "installing Python cryptography"
  "$PYTHON" -m pip install --quiet cryptography 2>/dev/null || "$PYTHON" -m pip install --quiet --break-system-packages cryptography
fi
export BENCH_PYTHON=$PYTHON
# The fleet's peers: testssl.sh (Debian) and sslyze (PyPI, in a venv of its own: its pinned
# cryptography and nassl must not replace the ones the other Python contenders use). Not with
# BENCH_FLEET_PEERS=0, which leaves them out.
if [[ ${BENCH_FLEET_PEERS:-500} != 0 ]] && { ((${#workloads[@]} == 0)) || [[ " ${workloads[*]} " == *" fleet "* ]]; }; then
  if ! command -v testssl >/dev/null; then
    [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || die "install: testssl.sh"
    say "installing testssl.sh"
    apt-get install -y -qq testssl.sh >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq testssl.sh >/dev/null; }
  fi
  PEERS_VENV=$BENCH_WORK/peers-venv
  if [[ ! -x $PEERS_VENV/bin/sslyze ]]; then
    say "installing sslyze into $PEERS_VENV"
    "$PYTHON" -m venv "$PEERS_VENV"
    "$PEERS_VENV/bin/pip" install --quiet sslyze >&2
  fi
  export BENCH_SSLYZE=$PEERS_VENV/bin/sslyze BENCH_TESTSSL=$(command -v testssl)
fi

# --- Build -----------------------------------------------------------------------------------------
say "swift build -c release (static Swift runtime: $STATIC)"
# BENCH_STATIC=1: the shipped binary's flags (scripts/release-flags.sh: static runtime, ordered functions).
build=(-c release)
if [[ $STATIC == 1 ]]; then
  source "$ROOT/scripts/release-flags.sh"
  build=("${RELEASE_FLAGS[@]}")
fi
flags=("${build[@]}" --scratch-path "$SCRATCH")
(cd "$ROOT" && swift build "${flags[@]}" --product mtls >&2 && swift build "${flags[@]}" --product mtls-bench >&2)
products=$(cd "$ROOT" && swift build "${flags[@]}" --show-bin-path)
cp "$products/mtls" "$products/mtls-bench" "$BENCH_BIN/"
# The floor of a Swift process (SwiftFloor/Package.swift: the OpenSSL calls of `openssl verify`
# from Swift, with and without FoundationEssentials), built with the same flags.
floor=("${build[@]}" --package-path "$BENCH_DIR/SwiftFloor" --scratch-path "$SCRATCH-floor")
swift build "${floor[@]}" >&2
floor_products=$(swift build "${floor[@]}" --show-bin-path)
cp "$floor_products/swift-floor" "$floor_products/swift-floor-foundation" "$BENCH_BIN/"
for program in runner corpus c_verify c_pin c_https; do
  cc -O2 -Wall -o "$BENCH_BIN/$program" "$BENCH_DIR/$program.c" -lssl -lcrypto
done

# --- Corpora (kept while corpus.c is unchanged) ------------------------------------------------------
stamp=$(sha256sum "$BENCH_DIR/corpus.c" | cut -c1-16)
if [[ ! -f $BENCH_WORK/corpus-$stamp ]]; then
  say "corpora: 2,000 leaves under one intermediate and root, ECDSA P-256 and RSA-2048"
  rm -rf "$BENCH_WORK/ec" "$BENCH_WORK/rsa" "$BENCH_WORK/seeds" "$BENCH_WORK"/corpus-*
  "$BENCH_BIN/corpus" "$BENCH_WORK/ec" ec 2000
  "$BENCH_BIN/corpus" "$BENCH_WORK/rsa" rsa 2000 16
  # Seeds for the fuzzer with the names, keys and signatures the corpora lack.
  seeds=$BENCH_WORK/seeds
  mkdir -p "$seeds"
  n=0
  seed() { # SUBJECT openssl-req-arguments...
    local subject=$1
    shift
    n=$((n + 1))
    openssl req -x509 -new -nodes -keyout "$seeds/$n.key" -out "$seeds/$n.pem" -days 3650 -utf8 -subj "$subject" "$@" 2>/dev/null || rm -f "$seeds/$n.pem"
  }
  seed "/C=US/O=x\\, y/CN=a+OU=b" -multivalue-rdn -newkey ec -pkeyopt ec_paramgen_curve:P-384
  seed "/DC=com/DC=example/CN=host.example.com/emailAddress=a@example.com" -newkey ed25519
  seed "/CN= lead/O=#hash/OU=trail " -newkey ed25519
  seed "/CN=Grüße/O=Ünïcødé/L=東京" -newkey ed25519
  seed "/CN=x=y/O=a;b/OU=q\"r/ST=<s>" -newkey ed25519
  seed "/CN=pss/O=mtls bench" -newkey rsa:2048 -sigopt rsa_padding_mode:pss -addext "basicConstraints=critical,CA:TRUE,pathlen:3"
  seed "/CN=no constraints/O=mtls bench" -newkey ed25519 -addext "subjectAltName=DNS:x.test" -addext "keyUsage=digitalSignature"
  touch "$BENCH_WORK/corpus-$stamp"
fi
# Sparse bodies for the download benchmark (served from the page cache).
mkdir -p "$BENCH_WORK/www"
[[ -f $BENCH_WORK/www/big.bin ]] || truncate -s 1G "$BENCH_WORK/www/big.bin"
[[ -f $BENCH_WORK/www/big64.bin ]] || truncate -s 64M "$BENCH_WORK/www/big64.bin"

# --- The DER walk, fuzzed against d2i_X509 -----------------------------------------------------------
say "differential fuzzing of the pin DER walk ($FUZZ iterations)"
seed_files=("$BENCH_WORK"/ec/{root,int}.pem "$BENCH_WORK"/ec/leaves/leaf-0000{1,2}.pem "$BENCH_WORK"/rsa/{root,int}.pem "$BENCH_WORK"/rsa/leaves/leaf-00001.pem)
for f in "$BENCH_WORK"/seeds/*.pem; do [[ -s $f ]] && seed_files+=("$f"); done
if ! "$BENCH_BIN/mtls-bench" fuzz "$FUZZ" "$STARTED" "${seed_files[@]}" 2>"$BENCH_OUT/fuzz.txt"; then
  tail -20 "$BENCH_OUT/fuzz.txt" >&2
  die "the fast DER walk disagrees with d2i_X509 (see $BENCH_OUT/fuzz.txt)"
fi
tail -1 "$BENCH_OUT/fuzz.txt" >&2

# --- nginx (and the fleet's delaying upstream) on free loopback ports --------------------------------
ports=$("$PYTHON" - <<'PY'
import socket
socks = []
for _ in range(6):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
)
read -r PORT_T13 PORT_T13_RESUME PORT_T12 PORT_T12_RESUME PORT_FLEET PORT_BACKEND <<<"$ports"
export PORT_T13 PORT_T13_RESUME PORT_T12 PORT_T12_RESUME PORT_FLEET
NGINX_DIR=$BENCH_WORK/nginx
rm -rf "$NGINX_DIR"
mkdir -p "$NGINX_DIR/tmp"
EC=$BENCH_WORK/ec RSA=$BENCH_WORK/rsa WWW=$BENCH_WORK/www
server() { # PORT CERTDIR PROTOCOLS RESUME
  local resume="ssl_session_cache off; ssl_session_tickets off;"
  [[ $4 == 1 ]] && resume="ssl_session_cache shared:S$1:1m; ssl_session_tickets on;"
  local ciphers=""
  [[ $3 == TLSv1.2 ]] && ciphers="ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256;"
  cat <<CONF
    server {
        listen 127.0.0.1:$1 ssl backlog=4096;
        ssl_certificate $2/server.pem;
        ssl_certificate_key $2/server.key;
        ssl_protocols $3;
        $ciphers
        $resume
        location = /small { return 200 "hello, bench\n"; }
        location = /big { alias $WWW/big.bin; }
        location = /big64 { alias $WWW/big64.bin; }
        location /fleet/ { proxy_pass http://fleet; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
CONF
}
# The fleet at scale: up to a thousand clients' connections at once, each with its own connection
# to the upstream, so more descriptors and connections than the default and a longer accept queue.

cat >"$NGINX_DIR/nginx.conf" <<CONF
daemon on;
master_process on;
worker_processes 2;
worker_rlimit_nofile 65536;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 16384; }
http {
    access_log off;
    client_body_temp_path $NGINX_DIR/tmp/body;
    proxy_temp_path $NGINX_DIR/tmp/proxy;
    fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
    uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
    scgi_temp_path $NGINX_DIR/tmp/scgi;
    default_type text/plain;
    server_tokens off;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    ssl_session_timeout 1h;
    upstream fleet { server 127.0.0.1:$PORT_BACKEND; keepalive 1024; }
$(server "$PORT_T13" "$EC" TLSv1.3 0)
$(server "$PORT_T13_RESUME" "$EC" TLSv1.3 1)
$(server "$PORT_T12" "$RSA" TLSv1.2 0)
$(server "$PORT_T12_RESUME" "$RSA" TLSv1.2 1)
$(server "$PORT_FLEET" "$EC" TLSv1.3 0)
}
CONF
cleanup() {
  [[ -f $NGINX_DIR/nginx.pid ]] && kill "$(cat "$NGINX_DIR/nginx.pid")" 2>/dev/null || true
  [[ -n ${BACKEND_PID:-} ]] && kill "$BACKEND_PID" 2>/dev/null || true
  rm -f "$BENCH_WORK/download.bin"
}
trap cleanup EXIT
nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" -e "$NGINX_DIR/error.log"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"  # mtls at --concurrency 1000 and the upstream's sockets
"$PYTHON" "$BENCH_DIR/fleet_backend.py" "$PORT_BACKEND" "${BENCH_FLEET_DELAY_MS:-100}" </dev/null >/dev/null 2>&1 &
BACKEND_PID=$!
for _ in $(seq 50); do
  curl -s --cacert "$EC/root.pem" "https://localhost:$PORT_FLEET/fleet/0" >/dev/null 2>&1 && break
  sleep 0.1
done

# --- Run ------------------------------------------------------------------------------------------
say "benchmarks ($(uptime | sed 's/.*load average/load average/'))"
{
  echo "# mtls benchmarks, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(openssl version | cut -d' ' -f1-2), $(swift --version 2>&1 | head -1 | sed 's/ (.*//'), $(nginx -v 2>&1 | cut -d' ' -f3), $(curl --version | head -1 | cut -d' ' -f1-2), Python $("$PYTHON" -c 'import sys, cryptography; print(sys.version.split()[0], "cryptography", cryptography.__version__)')."
  echo "Load before: $(cut -d' ' -f1-3 /proc/loadavg); static Swift runtime: $STATIC; fuzz: $(grep RESULT "$BENCH_OUT/fuzz.txt" | sed 's/RESULT //; s/ rss_kib.*//')."
  echo
  "$PYTHON" "$BENCH_DIR/harness.py" "${workloads[@]}"
  echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg); total $(($(date +%s) - STARTED)) s including the build."
} | tee "$BENCH_OUT/report.md"
if ((SAVE)); then
  "$PYTHON" "$BENCH_DIR/harness.py" --save-baseline "$BASELINE" "$BENCH_OUT/results.json"
  say "baseline written: $BASELINE (from $BENCH_OUT)"
fi
if ((CHECK)); then
  status=0
  "$PYTHON" "$BENCH_DIR/harness.py" --compare "$BASELINE" "$BENCH_OUT/results.json" | tee -a "$BENCH_OUT/report.md" || status=$?
  say "done: $BENCH_OUT/report.md"
  exit "$status"
fi
say "done: $BENCH_OUT/report.md"
