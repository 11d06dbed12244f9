# Shared helpers for scripts/peers/*.sh (sourced, not executed).
# Conventions for every peer script:
#   - stdout carries only KEY=value lines (eval-able); diagnostics go to stderr,
#     server logs go to files inside the instance DIR.
#   - daemons never inherit the caller's stdout/stderr (so a caller reading the
#     script's stdout through a pipe gets EOF as soon as the script exits).

PEERS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$PEERS_DIR/../.." && pwd)
CERTS=${MTLS_TEST_CERTS:-$REPO_ROOT/TestCerts}

die() { echo "$(basename "$0"): $*" >&2; exit 1; }
note() { echo "$(basename "$0"): $*" >&2; }

# free_base N -> prints a port P such that P..P+N-1 are all bindable on 127.0.0.1.
# Picks from 20000-31999 (below Linux's ephemeral range, so client sockets don't collide).
free_base() {
  python3 - "$1" <<'PY'
import random, socket, sys
n = int(sys.argv[1])
for _ in range(500):
    base = random.randint(20000, 32000 - n)
    socks = []
    try:
        for p in range(base, base + n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        for s in socks:
            s.close()
    print(base)
    sys.exit(0)
sys.exit("no free port range found")
PY
}

# read_env DIR -> reads DIR/instance.env (the KEY=value lines a start printed) into ENV_* variables
read_env() {
  [[ -f "$1/instance.env" ]] || return 1
  local k v
  while IFS='=' read -r k v; do printf -v "ENV_$k" '%s' "$v"; done <"$1/instance.env"
}

# port_open PORT -> 0 if something accepts TCP connections on 127.0.0.1:PORT
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pid_alive PID [PATTERN] -> 0 if PID runs and (optionally) its cmdline contains PATTERN
pid_alive() {
  local pid=$1 pat=${2:-}
  [[ -n "$pid" && "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # zombie?
  [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]] || return 1
  if [[ -n "$pat" ]]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pat" || return 1
  fi
  return 0
}

# wait_ready TIMEOUT_S PID PATTERN PORT... -> waits until all ports accept; fails early if PID dies.
# TIMEOUT_S is raised to MTLS_PEER_START_SECONDS (default 90): on a loaded machine (parallel builds
# writing to the same disk) Apache has taken longer than 15 s to open its ports. The bound only
# matters for a server that never comes up, and a dead one is noticed at once.
wait_ready() {
  local timeout=$1 pid=$2 pat=$3; shift 3
  (( timeout >= ${MTLS_PEER_START_SECONDS:-90} )) || timeout=${MTLS_PEER_START_SECONDS:-90}
  local deadline=$(( $(date +%s%N) / 1000000 + timeout * 1000 )) p ok
  while :; do
    ok=1
    for p in "$@"; do port_open "$p" || { ok=0; break; }; done
    [[ $ok == 1 ]] && return 0
    if [[ -n "$pid" ]] && ! pid_alive "$pid" "$pat"; then return 1; fi
    (( $(date +%s%N) / 1000000 < deadline )) || return 1
    sleep 0.05
  done
}

# stop_pid PID PATTERN [TIMEOUT_S] -> TERM, wait, then KILL. Only touches PID if its cmdline matches PATTERN.
stop_pid() {
  local pid=$1 pat=$2 timeout=${3:-10} i
  pid_alive "$pid" "$pat" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < timeout * 20; i++)); do
    pid_alive "$pid" "$pat" || return 0
    sleep 0.05
  done
  note "pid $pid did not exit after SIGTERM, sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  sleep 0.1
}

# make_instance_dir NAME [DIR] -> sets INST_DIR (creates a temp dir when DIR is empty; marks it auto-created)
make_instance_dir() {
  local name=$1 dir=${2:-}
  if [[ -z "$dir" ]]; then
    dir=$(mktemp -d "${TMPDIR:-/tmp}/mtls-peer-$name.XXXXXX")
    touch "$dir/.autocreated"
  else
    mkdir -p "$dir"
  fi
  INST_DIR=$(cd "$dir" && pwd)
}

# remove_instance_dir DIR -> removes DIR only if it was auto-created (and MTLS_PEERS_KEEP is not set)
remove_instance_dir() {
  local dir=$1
  [[ -z "${MTLS_PEERS_KEEP:-}" && -f "$dir/.autocreated" ]] || return 0
  rm -rf -- "$dir"
}

# need_certs FILE... -> fails unless every fixture exists
need_certs() {
  local f
  for f in "$@"; do [[ -r "$CERTS/$f" ]] || die "missing fixture $CERTS/$f (run scripts/make-test-certs.sh)"; done
}
