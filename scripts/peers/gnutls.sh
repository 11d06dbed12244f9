#!/usr/bin/env bash
# GnuTLS `gnutls-serv --http` as a TLS peer on 127.0.0.1 (TLS 1.2 and 1.3, default priorities).
#
#   gnutls.sh start  [--dir DIR] [--server-cert server|server-expired]
#   gnutls.sh stop   --dir DIR [--keep]
#   gnutls.sh status --dir DIR
#
# start prints only KEY=value lines: REQUIRE_PORT (--require-client-cert: a certificate is required
# in the handshake but not verified), VERIFY_PORT (--verify-client-cert: requested, verified when
# sent), BOTH_PORT (both: required and verified), DIR, PIDS, SERVER_CERT. Every path answers 200
# with gnutls-serv's session page once the handshake succeeded. CA names sent and trusted: the test
# intermediate and root. gnutls-serv has no option to bind one address: it listens on all of them
# (ports are high and random; the tests connect to 127.0.0.1). Exit 3: gnutls-bin is missing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$PEERS_DIR/interop_lib.sh"
PEER_NAME=gnutls
PORT_KEYS=(REQUIRE_PORT VERIFY_PORT BOTH_PORT)
peer_check() { command -v gnutls-serv >/dev/null || missing "gnutls-serv (apt-get install gnutls-bin)"; }
peer_launch() {
  local common=(--http --x509certfile "$INST_DIR/certs/chain.pem" --x509keyfile "$INST_DIR/certs/server.key"
    --x509cafile "$INST_DIR/certs/client-ca.pem")
  spawn require.log gnutls-serv "${common[@]}" --port "${PORTS[REQUIRE_PORT]}" --require-client-cert
  spawn verify.log gnutls-serv "${common[@]}" --port "${PORTS[VERIFY_PORT]}" --verify-client-cert
  spawn both.log gnutls-serv "${common[@]}" --port "${PORTS[BOTH_PORT]}" --require-client-cert --verify-client-cert
}
peer_main "$@"
