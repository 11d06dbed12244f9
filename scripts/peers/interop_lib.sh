# Shared start for the interop-matrix peers (node.sh, gnutls.sh, go.sh, python_pha.sh,
# java.sh, lighttpd.sh). Sourced after lib.sh. Each peer script defines:
#   PEER_NAME           short name (instance dir prefix, pattern for pid checks)
#   peer_check          fails with exit 3 (missing dependency) when the server is not installed
#   peer_launch         starts the daemon(s) from $INST_DIR with the ports in PORTS[...] (KEY=port),
#                       calling `spawn LOG CMD...` for each process
# Common options: --dir DIR, --server-cert NAME (a TestCerts/ base name: `server` (default) or
# `server-expired`), --keep. start prints the port keys, DIR=, PIDS= (space-separated), SERVER_CERT=.
# Certificates copied into DIR/certs: server.pem (leaf), chain.pem (leaf + intermediate),
# server.key, client-ca.pem (intermediate + root: the CAs accepted, and their names sent),
# server.p12 (leaf + key + intermediate, password mtls; for Java).

SERVER_CERT=server
peer_option() {
  case $1 in
    --server-cert) SERVER_CERT=${2:?--server-cert needs a TestCerts base name}; SHIFT=2 ;;
    *) return 1 ;;
  esac
}
PEER_PROCESSES=("PIDS::5")
PEER_USAGE_LINES=2,12

# spawn LOG CMD... -> runs CMD from $INST_DIR in its own session, no inherited stdio; records the pid
spawn() {
  local log=$1; shift
  (cd "$INST_DIR" && exec setsid "$@" </dev/null >"$INST_DIR/$log" 2>&1) &
  SPAWNED+=("$!")
}

peer_start() {
  peer_check
  [[ $SERVER_CERT =~ ^[a-z0-9-]+$ ]] || die "--server-cert takes a TestCerts base name such as server-expired"
  need_certs "$SERVER_CERT.pem" "$SERVER_CERT.key" intermediate-ca.pem root-ca.pem
  make_instance_dir "$PEER_NAME" "$DIR"
  local d=$INST_DIR
  if read_env "$d" && [[ -n "${ENV_PIDS:-}" ]]; then
    local p
    for p in $ENV_PIDS; do pid_alive "$p" && die "an instance is already running in $d (pid $p); stop it first"; done
  fi
  mkdir -p "$d/certs"
  cp "$CERTS/$SERVER_CERT.pem" "$d/certs/server.pem"
  cp "$CERTS/$SERVER_CERT.key" "$d/certs/server.key"
  cat "$CERTS/$SERVER_CERT.pem" "$CERTS/intermediate-ca.pem" >"$d/certs/chain.pem"
  cat "$CERTS/intermediate-ca.pem" "$CERTS/root-ca.pem" >"$d/certs/client-ca.pem"
  chmod 600 "$d/certs/server.key"
  local attempt key i ok
  for attempt in 1 2 3 4 5; do
    declare -gA PORTS=()
    local base; base=$(free_base "${#PORT_KEYS[@]}")
    i=0
    for key in "${PORT_KEYS[@]}"; do PORTS[$key]=$((base + i)); i=$((i + 1)); done
    SPAWNED=()
    peer_launch
    ok=1
    local all=() pid
    for key in "${PORT_KEYS[@]}"; do all+=("${PORTS[$key]}"); done
    if ! wait_ready "${PEER_READY_SECONDS:-20}" "" "" "${all[@]}"; then ok=0; fi
    for pid in "${SPAWNED[@]}"; do pid_alive "$pid" || ok=0; done
    if ((ok)); then
      {
        for key in "${PORT_KEYS[@]}"; do echo "$key=${PORTS[$key]}"; done
        echo "DIR=$d"; echo "PIDS=${SPAWNED[*]}"; echo "SERVER_CERT=$SERVER_CERT"
      } | tee "$d/instance.env"
      return 0
    fi
    for pid in "${SPAWNED[@]}"; do stop_pid "$pid" "" 3; done
    if grep -qiE 'in use|bind' "$d"/*.log 2>/dev/null; then note "port busy, retrying"; rm -f "$d"/*.log; continue; fi
    break
  done
  note "$PEER_NAME failed to start; logs in $d:"
  tail -n 20 "$d"/*.log >&2 || true
  exit 1
}
