#!/usr/bin/env bash
# Builds the packages in Examples/ (they depend on mtls by path, as an outside project would) and runs
# the library consumer against a real `mtls serve` on loopback. scripts/test.sh runs it before the
# tests, which also use the PinSetPlugin example it builds (Examples/.build/debug/PinnedApp).
#   scripts/examples.sh            build + run; exit 1 when a step of the consumer fails
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --package-path Examples 2>&1 | tail -n 3
mtls="$(swift build --show-bin-path)/mtls"
[[ -x "$mtls" ]] || swift build --product mtls
consumer="$(swift build --package-path Examples --show-bin-path)/MTLSConsumer"
fanout="$(swift build --package-path Examples --show-bin-path)/MTLSFanOut"

work=$(mktemp -d)
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$mtls" serve --port 0 --pki-dir "$work/pki" --duration 120 >"$work/serve.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(grep -oE 'listening on https://127\.0\.0\.1:[0-9]+' "$work/serve.log" | grep -oE '[0-9]+$' || true)
  [[ -n "$port" ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log" >&2; echo "examples: mtls serve did not start" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$port" ]] || { cat "$work/serve.log" >&2; echo "examples: mtls serve printed no port within 10 s" >&2; exit 1; }

echo "examples: MTLSConsumer against mtls serve on port $port"
# The .p12 password on standard input, as the consumer reads it.
printf 'mtls\n' | "$consumer" "https://localhost:$port" "$work/pki"

echo "examples: MTLSFanOut against mtls serve on port $port (200 sends, 100 at a time, and a cancelled one)"
"$fanout" "https://localhost:$port" "$work/pki/ca.pem" 200 100
