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
# PID is the caller's own child, just started, so only its existence is checked, not PATTERN: until
# the child's `exec` has run, its command line is still the caller's, and taking that for a dead
# server failed a start (the revocation bed, on a loaded machine) with the server about to listen.
wait_ready() {
  local timeout=$1 pid=$2; shift 3
  (( timeout >= ${MTLS_PEER_START_SECONDS:-90} )) || timeout=${MTLS_PEER_START_SECONDS:-90}
  local deadline=$(( $(date +%s%N) / 1000000 + timeout * 1000 )) p ok
  while :; do
    ok=1
    for p in "$@"; do port_open "$p" || { ok=0; break; }; done
    [[ $ok == 1 ]] && return 0
    if [[ -n "$pid" ]] && ! pid_alive "$pid"; then return 1; fi
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

# missing WHAT -> exit 3: a server or tool the peer needs is not installed (tests skip on 3)
missing() { echo "$(basename "$0"): missing dependency: $*" >&2; exit 3; }

# The command line and the stop/status of every peer script:
#   SCRIPT start|stop|status [--dir DIR] [--keep] [the script's own options]
# A script sets PEER_PROCESSES, the processes stop ends and status checks, each as
# ENV_KEY:PATTERN:TIMEOUT_S (ENV_KEY names a PID or a space-separated PID list in instance.env; the
# PID is touched only while its command line holds PATTERN, in which @DIR@ stands for the
# instance directory). It defines peer_start, and optionally peer_option (takes one of its own
# options from "$@": sets its variables and SHIFT to the words used, returns 1 for an unknown one)
# and peer_stop_extra DIR (what stop does after ending the processes). The usage text is the
# script's header comment, lines PEER_USAGE_LINES (default 2,8). The script ends with peer_main "$@".
peer_usage() { sed -n "${PEER_USAGE_LINES:-2,8}p" "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

peer_main() {
  local cmd=${1:-}; [[ -n "$cmd" ]] || peer_usage; shift
  DIR= KEEP=
  while (($#)); do
    case $1 in
      --dir) (($# >= 2)) || die "--dir needs a directory"; DIR=$2; shift 2 ;;
      --keep) KEEP=1; shift ;;
      -h|--help) peer_usage ;;
      *)
        SHIFT=0
        if declare -F peer_option >/dev/null && peer_option "$@" && ((SHIFT > 0)); then shift "$SHIFT"; else die "unknown argument: $1"; fi
        ;;
    esac
  done
  case $cmd in
    start) peer_start ;;
    stop) peer_stop ;;
    status) peer_status ;;
    *) peer_usage ;;
  esac
}

# peer_processes DIR -> prints PIDS, PATTERN and TIMEOUT, separated by US (0x1F: a tab, being
# whitespace to read, would merge around an empty PATTERN), for each PEER_PROCESSES entry recorded in DIR's instance.env
peer_processes() {
  local d=$1 entry key rest pattern timeout var
  for entry in "${PEER_PROCESSES[@]}"; do
    key=${entry%%:*}; rest=${entry#*:}; pattern=${rest%:*}; timeout=${rest##*:}
    var=ENV_$key
    [[ -n "${!var:-}" ]] || continue
    printf '%s\x1f%s\x1f%s\n' "${!var}" "${pattern//@DIR@/$d}" "$timeout"
  done
}

peer_stop() {
  [[ -n "$DIR" ]] || die "stop needs --dir DIR"
  [[ -d "$DIR" ]] || return 0
  local d pids pattern timeout pid; d=$(cd "$DIR" && pwd)
  if read_env "$d"; then
    while IFS=$'\x1f' read -r pids pattern timeout; do
      for pid in $pids; do stop_pid "$pid" "$pattern" "$timeout"; done
    done < <(peer_processes "$d")
  fi
  if declare -F peer_stop_extra >/dev/null; then peer_stop_extra "$d"; fi
  rm -f "$d/instance.env"
  [[ -n "$KEEP" ]] || remove_instance_dir "$d"
}

peer_status() {
  [[ -n "$DIR" ]] || die "status needs --dir DIR"
  local d pids pattern timeout pid alive=0 dead=0
  if [[ -d "$DIR" ]] && d=$(cd "$DIR" && pwd) && read_env "$d"; then
    while IFS=$'\x1f' read -r pids pattern timeout; do
      for pid in $pids; do
        if pid_alive "$pid" "$pattern"; then alive=1; else dead=1; fi
      done
    done < <(peer_processes "$d")
  fi
  if ((alive && !dead)); then cat "$d/instance.env"; echo "RUNNING=1"; return 0; fi
  echo "RUNNING=0"; return 1
}
