#!/usr/bin/env bash
# Go net/http (crypto/tls) as a TLS 1.3-only peer on 127.0.0.1.
#
#   go.sh start  [--dir DIR] [--server-cert server|server-expired]
#   go.sh stop   --dir DIR [--keep]
#   go.sh status --dir DIR
#
# start prints only KEY=value lines: REQUEST_PORT (tls.RequestClientCert; the handler verifies the
# certificate itself: 200, or 403 when none or untrusted), REQUIRE_PORT (tls.RequireAndVerifyClientCert:
# the handshake fails without a trusted certificate), DIR, PIDS, SERVER_CERT. The server
# (scripts/peers/go/server.go, standard library only, no modules) is built into DIR at start,
# offline. Exit 3: go is missing (apt-get install golang-go).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$PEERS_DIR/interop_lib.sh"
PEER_NAME=go
PORT_KEYS=(REQUEST_PORT REQUIRE_PORT)
peer_check() { command -v go >/dev/null || missing "go (apt-get install golang-go)"; }
peer_launch() {
  if [[ ! -x "$INST_DIR/server" ]]; then
    mkdir -p "$INST_DIR/gocache" "$INST_DIR/gopath"
    GOCACHE=$INST_DIR/gocache GOPATH=$INST_DIR/gopath GOFLAGS= GO111MODULE=off GOTOOLCHAIN=local \
      go build -o "$INST_DIR/server" "$PEERS_DIR/go/server.go" >"$INST_DIR/build.log" 2>&1 \
      || { tail -n 20 "$INST_DIR/build.log" >&2; die "go build failed"; }
  fi
  spawn go.log "$INST_DIR/server" "$INST_DIR/certs" "${PORTS[REQUEST_PORT]}" "${PORTS[REQUIRE_PORT]}"
}
peer_main "$@"
