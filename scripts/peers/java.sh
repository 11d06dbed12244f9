#!/usr/bin/env bash
# Java JSSE (OpenJDK 17, com.sun.net.httpserver.HttpsServer) as a TLS peer on 127.0.0.1.
#
#   java.sh start  [--dir DIR] [--server-cert server|server-expired]
#   java.sh stop   --dir DIR [--keep]
#   java.sh status --dir DIR
#
# start prints only KEY=value lines: NEED_PORT (setNeedClientAuth: a trusted certificate is
# required in the handshake), WANT_PORT (setWantClientAuth: asked for in the handshake, the page
# answers 403 without one), DIR, PIDS, SERVER_CERT. TLS 1.2 and 1.3. The server
# (scripts/peers/java/JsseServer.java) runs as a single-file source program; its key store
# DIR/certs/server.p12 is made with openssl at start. Exit 3: java is missing (openjdk-17-jdk-headless).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$PEERS_DIR/interop_lib.sh"
PEER_NAME=java
PORT_KEYS=(NEED_PORT WANT_PORT)
PEER_READY_SECONDS=40
peer_check() { command -v java >/dev/null || missing "java (apt-get install openjdk-17-jdk-headless)"; }
peer_launch() {
  openssl pkcs12 -export -in "$INST_DIR/certs/chain.pem" -inkey "$INST_DIR/certs/server.key" \
    -passout pass:mtls -out "$INST_DIR/certs/server.p12" 2>>"$INST_DIR/openssl.log"
  chmod 600 "$INST_DIR/certs/server.p12"
  spawn java.log java -Xshare:auto -XX:TieredStopAtLevel=1 "$PEERS_DIR/java/JsseServer.java" "$INST_DIR/certs" "${PORTS[NEED_PORT]}" "${PORTS[WANT_PORT]}"
}
peer_main "$@"
