#!/usr/bin/env bash
# lighttpd 1.4 with mod_openssl as a TLS peer on 127.0.0.1 (TLS 1.2 and 1.3).
#
#   lighttpd.sh start  [--dir DIR] [--server-cert server|server-expired]
#   lighttpd.sh stop   --dir DIR [--keep]
#   lighttpd.sh status --dir DIR
#
# start prints only KEY=value lines: ENFORCE_PORT (ssl.verifyclient.activate + enforce: a trusted
# certificate is required in the handshake), OPTIONAL_PORT (activate, enforce "disable": asked for in
# the handshake, the connection goes on without one or with an untrusted one), DIR, PIDS,
# SERVER_CERT. Both serve DIR/htdocs/index.html (200). Config: DIR/lighttpd.conf.
# Exit 3: lighttpd or mod_openssl is missing (apt-get install lighttpd lighttpd-mod-openssl).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$PEERS_DIR/interop_lib.sh"
PEER_NAME=lighttpd
PORT_KEYS=(ENFORCE_PORT OPTIONAL_PORT)
peer_check() {
  [[ -x /usr/sbin/lighttpd ]] || missing "lighttpd (apt-get install lighttpd)"
  [[ -f /usr/lib/lighttpd/mod_openssl.so ]] || missing "mod_openssl (apt-get install lighttpd-mod-openssl)"
}
peer_launch() {
  local d=$INST_DIR
  mkdir -p "$d/htdocs"
  echo "lighttpd ok" >"$d/htdocs/index.html"
  cat >"$d/lighttpd.conf" <<CONF
server.modules = ("mod_openssl")
server.document-root = "$d/htdocs"
server.errorlog = "$d/error.log"
server.pid-file = "$d/lighttpd.pid"
server.bind = "127.0.0.1"
server.port = ${PORTS[ENFORCE_PORT]}
index-file.names = ("index.html")
ssl.engine = "enable"
ssl.pemfile = "$d/certs/chain.pem"
ssl.privkey = "$d/certs/server.key"
ssl.ca-file = "$d/certs/client-ca.pem"
ssl.verifyclient.activate = "enable"
ssl.verifyclient.enforce = "enable"
ssl.verifyclient.depth = 3
\$SERVER["socket"] == "127.0.0.1:${PORTS[OPTIONAL_PORT]}" {
  ssl.engine = "enable"
  ssl.pemfile = "$d/certs/chain.pem"
  ssl.privkey = "$d/certs/server.key"
  ssl.ca-file = "$d/certs/client-ca.pem"
  ssl.verifyclient.activate = "enable"
  ssl.verifyclient.enforce = "disable"
}
CONF
  spawn lighttpd.log /usr/sbin/lighttpd -D -f "$d/lighttpd.conf"
}
peer_main "$@"
