#!/usr/bin/env bash
# Node.js HTTPS (the `https` module, default options) as a TLS peer on 127.0.0.1.
#
#   node.sh start  [--dir DIR] [--server-cert server|server-expired]
#   node.sh stop   --dir DIR [--keep]
#   node.sh status --dir DIR
#
# start prints only KEY=value lines: RENEG_PORT (TLS 1.2 only; /secure asks for the client certificate
# by req.socket.renegotiate({requestCert: true}) with session resumption left on, 403 unless trusted;
# / needs none), HANDSHAKE_PORT (TLS 1.2/1.3, requestCert + rejectUnauthorized in the handshake),
# DIR, PIDS, SERVER_CERT. Server source: scripts/peers/node/server.js. Exit 3: node is missing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$PEERS_DIR/interop_lib.sh"
PEER_NAME=node
PORT_KEYS=(RENEG_PORT HANDSHAKE_PORT)
peer_check() { command -v node >/dev/null || missing "node (apt-get install nodejs)"; }
peer_launch() { spawn node.log node "$PEERS_DIR/node/server.js" "$INST_DIR/certs" "${PORTS[RENEG_PORT]}" "${PORTS[HANDSHAKE_PORT]}"; }
peer_main "$@"
