#!/usr/bin/env bash
# An NTLM-protected HTTPS endpoint (IIS Windows authentication stand-in) on pyspnego.
#
#   ntlm.sh start  [--dir DIR] [--require-channel-binding]
#   ntlm.sh stop   --dir DIR [--keep]
#   ntlm.sh status --dir DIR
#
# start prints only KEY=value lines on stdout (eval-able):
#   PORT=<https://127.0.0.1:PORT/ntlm and /negotiate>  NTLM_DOMAIN=MTLS  NTLM_USER=alice
#   NTLM_PASSWORD=<password>  DIR=<instance dir>  PID=<server pid>  EPA=0|1
# /epa always requires the TLS channel binding (IIS Extended Protection); --require-channel-binding
# makes /ntlm and /negotiate require it too (EPA=1). The expected tls-server-end-point hash is computed
# here with openssl from the server certificate (RFC 5929: its signature hash, SHA-256 for MD5/SHA-1).
# pyspnego comes from /usr/bin/python3 when it has it, else from a virtualenv made on first use in
# scripts/peers/ntlm/.venv (python3 -m venv --system-site-packages; pip install pyspnego).
# The acceptor reads DIR/ntlm-users ("DOMAIN:user:password") through NTLM_USER_FILE.
# TLS: TestCerts/server-chain.pem + server.key (CN=localhost, SAN 127.0.0.1).
# Exit status 3 means a dependency is missing (the message says which).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
NTLM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NTLM_DOMAIN=MTLS
NTLM_USER=alice
NTLM_PASSWORD='N7lm+Pässword'

EPA=0
peer_option() {
  case $1 in
    --require-channel-binding) EPA=1; SHIFT=1 ;;
    *) return 1 ;;
  esac
}
PEER_PROCESSES=("PID:ntlm_server.py:10")

python_with_spnego() { # prints the interpreter that can import spnego, installing it if needed
  [[ -x /usr/bin/python3 ]] || missing "/usr/bin/python3 (apt-get install python3)"
  if /usr/bin/python3 -c 'import spnego' 2>/dev/null; then echo /usr/bin/python3; return; fi
  local venv=$NTLM_DIR/.venv
  if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c 'import spnego' 2>/dev/null; then echo "$venv/bin/python"; return; fi
  (
    exec 9>"$NTLM_DIR/.venv.lock"
    flock 9
    if ! [[ -x "$venv/bin/python" ]]; then
      /usr/bin/python3 -m venv --system-site-packages "$venv" >&2 || missing "python3-venv (apt-get install python3-venv)"
    fi
    "$venv/bin/python" -c 'import spnego' 2>/dev/null \
      || "$venv/bin/python" -m pip install --quiet --disable-pip-version-check pyspnego >&2 \
      || missing "pyspnego (pip install pyspnego failed)"
  ) || exit $?
  "$venv/bin/python" -c 'import spnego' 2>/dev/null || missing "pyspnego"
  echo "$venv/bin/python"
}

peer_start() {
  need_certs server-chain.pem server.key
  local python; python=$(python_with_spnego)
  make_instance_dir ntlm "$DIR"
  local d=$INST_DIR
  if read_env "$d" && pid_alive "${ENV_PID:-}" "ntlm_server.py"; then
    die "an instance is already running in $d; stop it first"
  fi
  cp "$CERTS/server-chain.pem" "$d/tls.pem"
  cp "$CERTS/server.key" "$d/tls.key"
  chmod 600 "$d/tls.key"
  printf '%s:%s:%s\n' "$NTLM_DOMAIN" "$NTLM_USER" "$NTLM_PASSWORD" >"$d/ntlm-users"
  chmod 600 "$d/ntlm-users"
  # RFC 5929 tls-server-end-point: hash of the leaf's DER with its signature's hash (MD5/SHA-1 -> SHA-256)
  local sigalg digest hash extra=()
  sigalg=$(openssl x509 -in "$d/tls.pem" -noout -text | sed -n 's/^ *Signature Algorithm: *//p' | head -n 1)
  case $sigalg in
    *[Ss][Hh][Aa]384*) digest=sha384 ;;
    *[Ss][Hh][Aa]512*) digest=sha512 ;;
    *) digest=sha256 ;;
  esac
  hash=$(openssl x509 -in "$d/tls.pem" -outform DER | openssl dgst "-$digest" -binary | od -An -v -tx1 | tr -d ' \n')
  [[ $EPA == 1 ]] && extra+=(--require-channel-binding)
  local attempt port pid
  for attempt in 1 2 3 4 5; do
    port=$(free_base 1)
    : >"$d/ntlm.log"
    NTLM_USER_FILE="$d/ntlm-users" setsid "$python" "$NTLM_DIR/ntlm_server.py" --port "$port" --dir "$d" --end-point-hash "$hash" "${extra[@]}" \
      </dev/null >>"$d/ntlm.log" 2>&1 &
    pid=$!
    if wait_ready 20 "$pid" "ntlm_server.py" "$port" && pid_alive "$pid" "ntlm_server.py"; then
      {
        echo "PORT=$port"
        echo "NTLM_DOMAIN=$NTLM_DOMAIN"
        echo "NTLM_USER=$NTLM_USER"
        echo "NTLM_PASSWORD=$NTLM_PASSWORD"
        echo "DIR=$d"
        echo "PID=$pid"
        echo "EPA=$EPA"
      } | tee "$d/instance.env"
      return 0
    fi
    stop_pid "$pid" "ntlm_server.py" 5
    grep -q 'Address already in use' "$d/ntlm.log" 2>/dev/null && { note "port $port busy, retrying"; continue; }
    break
  done
  note "the NTLM server failed to start; see $d/ntlm.log"
  tail -n 20 "$d/ntlm.log" >&2 || true
  exit 1
}

peer_main "$@"
