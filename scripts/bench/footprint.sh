#!/usr/bin/env bash
# The footprint of `mtls` binaries, side by side with OpenSSL's and curl's:
#   - file size and the shared libraries each binary loads (Foundation and ICU named);
#   - start-up: `mtls --version` against `openssl version` (hyperfine, alternated 3 rounds);
#   - peak RSS of a 1 GiB download through the CLI (`mtls probe -o FILE`) against `curl -o FILE`,
#     from a local nginx serving a sparse 1 GiB file over TLS 1.3.
#
#   scripts/bench/footprint.sh LABEL=BINARY...
#   e.g. scripts/bench/footprint.sh before=/tmp/old/mtls after=.build/release/mtls
#
# Prints a Markdown table; the raw hyperfine JSON and /usr/bin/time output go to $FOOTPRINT_OUT
# (default /tmp/mtls-footprint). Needs nginx, hyperfine, curl and GNU time.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${FOOTPRINT_OUT:-/tmp/mtls-footprint}
RUNS=${FOOTPRINT_RUNS:-200}
(($#)) || { sed -n '2,12p' "$0" >&2; exit 2; }
for tool in nginx hyperfine curl /usr/bin/time; do command -v "$tool" >/dev/null || { echo "footprint.sh: needs $tool" >&2; exit 1; }; done
rm -rf "$OUT" && mkdir -p "$OUT/www" "$OUT/nginx/tmp"
labels=() binaries=()
for pair in "$@"; do
  [[ $pair == *=* ]] || { echo "footprint.sh: give LABEL=BINARY, not '$pair'" >&2; exit 2; }
  labels+=("${pair%%=*}") && binaries+=("$(realpath "${pair#*=}")")
  [[ -x ${binaries[-1]} ]] || { echo "footprint.sh: ${binaries[-1]} is not an executable" >&2; exit 2; }
done

# --- nginx with the test server certificate on a free port -----------------------------------------
truncate -s 1G "$OUT/www/big.bin"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat "$ROOT/TestCerts/server.pem" "$ROOT/TestCerts/intermediate-ca.pem" >"$OUT/chain.pem"
cat >"$OUT/nginx/nginx.conf" <<CONF
daemon on; master_process on; worker_processes 1; pid $OUT/nginx/nginx.pid; error_log $OUT/nginx/error.log warn;
events { worker_connections 64; }
http {
    access_log off; client_body_temp_path $OUT/nginx/tmp/b; proxy_temp_path $OUT/nginx/tmp/p;
    fastcgi_temp_path $OUT/nginx/tmp/f; uwsgi_temp_path $OUT/nginx/tmp/u; scgi_temp_path $OUT/nginx/tmp/s;
    server { listen 127.0.0.1:$PORT ssl; ssl_certificate $OUT/chain.pem; ssl_certificate_key $ROOT/TestCerts/server.key;
             ssl_protocols TLSv1.3; location = /big { alias $OUT/www/big.bin; } }
}
CONF
nginx -c "$OUT/nginx/nginx.conf" -p "$OUT/nginx" -e "$OUT/nginx/error.log"
trap 'kill "$(cat "$OUT/nginx/nginx.pid")" 2>/dev/null || true; rm -f "$OUT"/download-* "$OUT/www/big.bin"' EXIT
URL="https://localhost:$PORT/big"
for _ in $(seq 50); do curl -s --cacert "$ROOT/TestCerts/root-ca.pem" -o /dev/null -r 0-0 "$URL" && break; sleep 0.1; done

kib_to_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
peak_rss() { # NAME COMMAND... → peak RSS in KiB of the command (it must exit 0 and write 1 GiB)
  local name=$1 file=$OUT/download-$1
  shift
  /usr/bin/time -f '%M' -o "$OUT/time-$name.txt" "$@" "$file" >/dev/null 2>"$OUT/stderr-$name.txt" || { echo "footprint.sh: $name failed:" >&2; tail -5 "$OUT/stderr-$name.txt" >&2; exit 1; }
  [[ $(stat -c %s "$file") == 1073741824 ]] || { echo "footprint.sh: $name wrote $(stat -c %s "$file") bytes, not 1 GiB" >&2; exit 1; }
  rm -f "$file"
  tail -1 "$OUT/time-$name.txt"
}

# --- Start-up: three alternated rounds; the median of each round's medians -------------------------
hf=(hyperfine -N --warmup 20 --runs "$RUNS" --style none)
for round in 1 2 3; do
  args=("openssl version")
  for binary in "${binaries[@]}"; do args+=("$binary --version"); done
  "${hf[@]}" --export-json "$OUT/startup-$round.json" "${args[@]}" >/dev/null 2>&1
done
median_ms() { # INDEX → the median over rounds of the hyperfine median of command INDEX, in ms
  python3 - "$OUT" "$1" <<'PY'
import json, statistics, sys
out, index = sys.argv[1], int(sys.argv[2])
values = [json.load(open(f"{out}/startup-{r}.json"))["results"][index]["median"] for r in (1, 2, 3)]
print(f"{statistics.median(values) * 1000:.2f}")
PY
}
openssl_ms=$(median_ms 0)

echo "| binary | size | shared libraries (Foundation, ICU) | \`--version\` | ratio to \`openssl version\` ($openssl_ms ms) | 1 GiB \`probe -o\` peak RSS |"
echo "|---|---|---|---|---|---|"
for index in "${!binaries[@]}"; do
  binary=${binaries[$index]}
  size=$(stat -c %s "$binary")
  libs=$(ldd "$binary" | grep -c '=>' || true)
  heavy=$(ldd "$binary" | grep -oE 'lib(Foundation|FoundationInternationalization|_FoundationICU|icu[a-z]*)[^ ]*\.so[^ ]*' | sed 's/\.so.*//' | sort -u | paste -sd, - || true)
  ms=$(median_ms $((index + 1)))
  ratio=$(awk -v a="$ms" -v b="$openssl_ms" 'BEGIN { printf "%.2f", a / b }')
  rss=$(peak_rss "${labels[$index]}" "$binary" probe "$URL" --anchors "$ROOT/TestCerts/root-ca.pem" -o)
  printf '| %s | %s bytes | %s (%s) | %s ms | %s× | %s MiB |\n' "${labels[$index]}" "$size" "$libs" "${heavy:-none}" "$ms" "$ratio" "$(kib_to_mib "$rss")"
done
curl_rss=$(peak_rss curl curl -s --cacert "$ROOT/TestCerts/root-ca.pem" "$URL" -o)
echo
echo "curl -o FILE: peak RSS $(kib_to_mib "$curl_rss") MiB; $(openssl version | cut -d' ' -f1-2); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)."
