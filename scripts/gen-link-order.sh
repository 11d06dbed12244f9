#!/usr/bin/env bash
# Regenerates packaging/link-order.txt: the functions of the `mtls` image that the common commands
# run, in the order the release link places them at the start of .text (lld --symbol-ordering-file,
# see scripts/release.sh). Code of a command then lies on few pages, so the kernel maps (and keeps
# resident) little more than what runs: see "1 GiB download through the CLI" in docs/BENCHMARKS.md.
#
#   scripts/gen-link-order.sh [BINARY]     BINARY: a release build (default: scripts/release.sh's,
#                                          built first when missing)
#
# Each workload runs once under `valgrind --tool=callgrind`: `--version`, a 1 MiB HTTPS download to
# a file (`probe URL -o FILE`, the path of the 1 GiB benchmark) and a plain `probe URL` from a local
# nginx, `verify`, `pin`, `inspect` and `convert` of TestCerts/. The names executed in our image are
# listed workload by workload (start-up first), each name once. Names that no longer exist are
# harmless (lld ignores them with --no-warn-symbol-ordering); regenerate after large changes.
# Needs valgrind, nginx, curl and binutils.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=packaging/link-order.txt
for tool in valgrind nginx curl objcopy; do command -v "$tool" >/dev/null || { echo "gen-link-order.sh: needs $tool" >&2; exit 1; }; done
binary=${1:-}
if [[ -z $binary ]]; then
  source scripts/release-flags.sh
  binary=$(swift build "${RELEASE_FLAGS[@]}" --show-bin-path)/mtls
  [[ -x $binary ]] || swift build "${RELEASE_FLAGS[@]}" --product mtls >&2
fi
work=$(mktemp -d)
chmod 755 "$work"  # nginx workers read www/ as another user
cleanup() { [[ -f $work/nginx/nginx.pid ]] && kill "$(cat "$work/nginx/nginx.pid")" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
# valgrind 3.19 cannot read Swift 6.3's DWARF: a copy without it (the symbol table is kept).
objcopy --strip-debug "$binary" "$work/mtls"

mkdir -p "$work/www" "$work/nginx/tmp"
truncate -s 1M "$work/www/big.bin"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat TestCerts/server.pem TestCerts/intermediate-ca.pem >"$work/chain.pem"
cat >"$work/nginx/nginx.conf" <<CONF
daemon on; master_process on; worker_processes 1; pid $work/nginx/nginx.pid; error_log $work/nginx/error.log warn;
events { worker_connections 16; }
http {
    access_log off; client_body_temp_path $work/nginx/tmp/b; proxy_temp_path $work/nginx/tmp/p;
    fastcgi_temp_path $work/nginx/tmp/f; uwsgi_temp_path $work/nginx/tmp/u; scgi_temp_path $work/nginx/tmp/s;
    server { listen 127.0.0.1:$PORT ssl; ssl_certificate $work/chain.pem; ssl_certificate_key $ROOT/TestCerts/server.key;
             ssl_protocols TLSv1.3; location = /big { alias $work/www/big.bin; } location = / { return 200 "hello\n"; } }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" -e "$work/nginx/error.log"
for _ in $(seq 50); do curl -s --cacert TestCerts/root-ca.pem -o /dev/null "https://localhost:$PORT/" && break; sleep 0.1; done

n=0
profile() { # ARGS... → one callgrind profile of `mtls ARGS...`
  n=$((n + 1))
  valgrind --tool=callgrind --demangle=no --compress-strings=no --dump-instr=no \
    --callgrind-out-file="$work/$(printf %02d $n).cg" "$work/mtls" "$@" >"$work/$n.out" 2>"$work/$n.log" ||
    { echo "gen-link-order.sh: mtls $* failed:" >&2; cat "$work/$n.out" >&2; tail -n 5 "$work/$n.log" >&2; exit 1; }
}
T=TestCerts AT=2026-06-01T00:00:00Z
profile --version
profile probe "https://localhost:$PORT/big" --anchors $T/root-ca.pem -o "$work/download.bin"
profile probe "https://localhost:$PORT/" --anchors $T/root-ca.pem
profile verify $T/server.pem --anchors $T/root-ca.pem --intermediates $T/intermediate-ca.pem --at $AT --host localhost
profile verify --batch $T/server.pem $T/server-rsa2048.pem $T/server-p384.pem --anchors $T/root-ca.pem --intermediates $T/intermediate-ca.pem --at $AT
profile pin $T/server.pem $T/root-ca.der --format spki
profile inspect $T/server.pem
profile convert $T/server.pem --to der --out "$work/server.der"

# Names of functions in our image (callgrind's ob= says which object the fn= after it belongs to;
# every function that ran has a fn= entry), profile by profile, each once, sorted by name within a
# profile (callgrind's own order is a hash order: sorting keeps the list stable, and a type's
# functions together); recursion levels ('2) and unnamed addresses dropped.
python3 - "$work/mtls" "$work"/*.cg >"$OUT.new" <<'PY'
import re, sys
image, files = sys.argv[1], sys.argv[2:]
seen, names = set(), []
for path in files:
    ob, new = None, set()
    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("fn="):
            name = re.sub(r"'\d+$", "", line[3:].strip())
            if ob == image and not name.startswith("0x") and name not in seen:
                new.add(name)
    seen |= new
    names += sorted(new)
print("\n".join(names))
PY
mv "$OUT.new" "$OUT"
echo "gen-link-order.sh: $(wc -l <"$OUT") functions in $OUT" >&2
