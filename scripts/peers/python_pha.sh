#!/usr/bin/env bash
# Python's ssl module (/usr/bin/python3) with TLS 1.3 post-handshake authentication on 127.0.0.1.
#
#   python_pha.sh start  [--dir DIR] [--server-cert server|server-expired]
#   python_pha.sh stop   --dir DIR [--keep]
#   python_pha.sh status --dir DIR
#
# start prints only KEY=value lines: OPTIONAL_PORT (CERT_OPTIONAL: /secure asks by post-handshake
# auth; none -> 403, untrusted -> TLS failure), REQUIRED_PORT (CERT_REQUIRED: none or untrusted ->
# TLS failure), DIR, PIDS, SERVER_CERT. TLS 1.3 only; / needs no certificate. Server source:
# scripts/peers/python/pha_server.py. Exit 3: /usr/bin/python3 is missing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$PEERS_DIR/interop_lib.sh"
PEER_NAME=python-pha
PORT_KEYS=(OPTIONAL_PORT REQUIRED_PORT)
peer_check() { [[ -x /usr/bin/python3 ]] || missing "/usr/bin/python3 (apt-get install python3)"; }
peer_launch() { spawn python.log /usr/bin/python3 "$PEERS_DIR/python/pha_server.py" "$INST_DIR/certs" "${PORTS[OPTIONAL_PORT]}" "${PORTS[REQUIRED_PORT]}"; }
peer_main "$@"
