#!/usr/bin/env bash
# `openssl s_server` as a minimal TLS peer on 127.0.0.1 (server.pem + server.key + intermediate).
#
#   s_server.sh start [--dir DIR] [--port PORT] [--tls 1.2|1.3] [--verify-after] [--no-verify]
#                     [extra openssl s_server args...]
#   s_server.sh stop   --dir DIR [--keep]
#   s_server.sh status --dir DIR
#
# start prints only KEY=value lines: PORT=, DIR=, PID=. Output of s_server goes to DIR/s_server.log.
# Default mode: `-www` (any "GET /..." gets an HTTP/1.0 200 text/html status page: protocol,
# cipher, session, and "no client certificate available" or the client's certificate) with
# `-Verify 3 -verify_return_error`: a client cert is REQUIRED in the initial handshake and a missing
# or invalid one aborts the handshake with a TLS alert. CA names sent = intermediate + root.
# --tls pins the protocol (-tls1_2 / -tls1_3); default both.
# --no-verify: no CertificateRequest at all.
# --verify-after: no cert in the initial handshake; it is asked for later by renegotiation:
#   with -www, a request line starting "GET /renegcert" makes s_server call SSL_renegotiate with
#   SSL_VERIFY_PEER|SSL_VERIFY_CLIENT_ONCE (cert requested, not required) and then answer the
#   page; "GET /reneg" renegotiates without asking for a cert. -no_resumption_on_reneg is added
#   (otherwise the client resumes the session and no CertificateRequest is sent). This is TLS 1.2
#   only and --verify-after therefore pins -tls1_2: s_server's -www mode has no TLS 1.3
#   post-handshake-auth trigger (on TLS 1.3 "GET /renegcert" HANGS: s_server waits forever for a
#   ClientHello, blocking the whole single-threaded server) — use apache.sh /secure for PHA.
#   Add -verify_return_error to make a bad cert fatal.
#   CAVEAT: s_server answers as soon as it has read the request LINE, and after triggering the
#   renegotiation it reads one more line before printing the page. A client that sends the whole
#   request at once (curl, any HTTP library) gets the page *before* the renegotiation ran
#   ("no client certificate available"). It works when the client sends "GET /renegcert ...\r\n",
#   waits (the renegotiation happens while it reads), then sends "\r\n" — e.g.
#     (printf 'GET /renegcert HTTP/1.0\r\n'; sleep 1; printf '\r\n'; sleep 1) |
#       openssl s_client -connect 127.0.0.1:$PORT -cert client-alice.pem -key client-alice.key
#   For realistic per-path renegotiation / PHA use apache.sh (/secure).
#   (Interactive s_server, i.e. without -www and with a terminal on its stdin: the *operator* types
#   "R" = renegotiate requesting a cert, "r" = renegotiate, "c" = TLS 1.3 post-handshake
#   CertificateRequest (client must offer PHA), "k"/"K" = KeyUpdate. This script runs s_server
#   with stdin=/dev/null, so that mode is not reachable through it.)
# Extra args are appended last, so they override the defaults (e.g. `-rev`, `-verify 3`,
# `-cert ../server-rsa2048.pem`, `-naccept 1`). Stop kills the process by PID.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT= TLS= MODE=require EXTRA=()
peer_option() {
  case $1 in
    --port) PORT=${2:?--port needs a number}; SHIFT=2 ;;
    --tls) TLS=${2:?--tls needs a version}; SHIFT=2 ;;
    --verify-after) MODE=after; SHIFT=1 ;;
    --no-verify) MODE=none; SHIFT=1 ;;
    --) shift; EXTRA+=("$@"); SHIFT=$(($# + 1)) ;;
    *) EXTRA+=("$1"); SHIFT=1 ;;
    *) return 1 ;;
  esac
}
PEER_PROCESSES=("PID:@DIR@/certs/server.pem:5")

peer_start() {
  need_certs server.pem server.key intermediate-ca.pem root-ca.pem
  make_instance_dir s_server "$DIR"
  local d=$INST_DIR
  if read_env "$d" && pid_alive "${ENV_PID:-}" "$d/"; then
    die "an instance is already running in $d (pid $ENV_PID); stop it first"
  fi
  mkdir -p "$d/certs"
  cp "$CERTS/server.pem" "$CERTS/server.key" "$CERTS/intermediate-ca.pem" "$d/certs/"
  cat "$CERTS/intermediate-ca.pem" "$CERTS/root-ca.pem" >"$d/certs/client-ca.pem"
  chmod 600 "$d/certs/server.key"

  local args=(-www -cert "$d/certs/server.pem" -key "$d/certs/server.key"
    -cert_chain "$d/certs/intermediate-ca.pem" -CAfile "$d/certs/client-ca.pem")
  if [[ $MODE == after ]]; then
    [[ "$TLS" != 1.3 ]] || die "--verify-after needs TLS 1.2 (s_server -www cannot do TLS 1.3 PHA)"
    TLS=1.2
  fi
  case $TLS in
    "") ;;
    1.2) args+=(-tls1_2) ;;
    1.3) args+=(-tls1_3) ;;
    *) die "--tls must be 1.2 or 1.3" ;;
  esac
  case $MODE in
    require) args+=(-Verify 3 -verify_return_error) ;;
    # a resumed (abbreviated) renegotiation would carry no CertificateRequest
    after) args+=(-no_resumption_on_reneg) ;;
    none) ;;
  esac

  local attempt port pid
  for attempt in 1 2 3 4 5; do
    port=${PORT:-$(free_base 1)}
    # run from DIR (for -WWW/-HTTP file serving); own session; no inherited stdio.
    (cd "$d" && exec setsid openssl s_server -accept "127.0.0.1:$port" "${args[@]}" "${EXTRA[@]}" \
      </dev/null >"$d/s_server.log" 2>&1) &
    pid=$!
    if wait_ready 10 "$pid" "s_server" "$port"; then
      { echo "PORT=$port"; echo "DIR=$d"; echo "PID=$pid"; } | tee "$d/instance.env"
      return 0
    fi
    stop_pid "$pid" "s_server" 3
    if [[ -z "$PORT" ]] && grep -qiE 'in use|unable to bind' "$d/s_server.log" 2>/dev/null; then
      note "port $port busy, retrying"; continue
    fi
    break
  done
  note "s_server failed to start; see $d/s_server.log"
  tail -n 20 "$d/s_server.log" >&2 || true
  exit 1
}

peer_main "$@"
