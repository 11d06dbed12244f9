#!/usr/bin/env bash
# The hostile-environment cases that need a real process, another user or a mount namespace
# (issue 38; the in-process cases are HostileEnvironmentTests, CredentialOriginTests,
# HostileOutputTests and ServeUnderLoadTests). Prints PASS/FAIL/SKIP per case and fails on any FAIL.
#   scripts/hostile.sh            uses $(swift build --show-bin-path)/mtls
#   MTLS_BIN=path scripts/hostile.sh
# As root (CI), also: other-user races with `setpriv --reuid=nobody`, device nodes in a private
# mount namespace (`unshare -m`, a tmpfs over /dev: the host's /dev/null is never at risk).
# Every case is bounded in time (timeout) and runs on loopback only.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mtls=${MTLS_BIN:-$(swift build --show-bin-path)/mtls}
[[ -x $mtls ]] || { echo "hostile.sh: $mtls is not built" >&2; exit 1; }
work=$(mktemp -d /tmp/mtls-hostile.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
certs=$root/TestCerts
failures=0
pass() { printf 'PASS %s\n' "$1"; }
fail() { printf 'FAIL %s: %s\n' "$1" "$2"; failures=$((failures + 1)); }
skip() { printf 'SKIP %s: %s\n' "$1" "$2"; }
export MTLS_QUIET_PASS_WARNING=1
export_args=(export --cert "$certs/client-alice.pem" --key "$certs/client-alice.key")
no_temporary() { ! find "$1" -name '*.mtls-*.tmp' | grep -q .; }

# --- Secrets -------------------------------------------------------------------------------------
case_name="secret: --password stdin at end of input is exit 3, no file"
d=$work/stdin; mkdir "$d"
timeout 20 "$mtls" "${export_args[@]}" --out "$d/a.p12" --password stdin </dev/null >/dev/null 2>"$d/err"; rc=$?
if [[ $rc == 3 && ! -e $d/a.p12 ]] && grep -q "stdin" "$d/err"; then pass "$case_name"; else fail "$case_name" "exit $rc, $(head -c 200 "$d/err")"; fi

case_name="secret: --password fd:9 with fd 9 closed is exit 3, no file"
d=$work/fd; mkdir "$d"
timeout 20 "$mtls" "${export_args[@]}" --out "$d/a.p12" --password fd:9 9<&- >/dev/null 2>"$d/err"; rc=$?
if [[ $rc == 3 && ! -e $d/a.p12 ]] && grep -q "fd:9" "$d/err"; then pass "$case_name"; else fail "$case_name" "exit $rc, $(head -c 200 "$d/err")"; fi

case_name="secret: --password fd:3 on an empty pipe is exit 3"
d=$work/emptypipe; mkdir "$d"
: | timeout 20 "$mtls" "${export_args[@]}" --out "$d/a.p12" --password fd:3 3<&0 >/dev/null 2>"$d/err"; rc=$?
if [[ $rc == 3 && ! -e $d/a.p12 ]]; then pass "$case_name"; else fail "$case_name" "exit $rc, $(head -c 200 "$d/err")"; fi

# Two cases that wait for a silent writer run in the background (10 s each).
d=$work/fifo; mkdir "$d"; mkfifo "$d/password" "$d/cert"
( start=$(date +%s); timeout 30 "$mtls" "${export_args[@]}" --out "$d/a.p12" --password "file:$d/password" >/dev/null 2>"$d/err1"; echo "$? $(( $(date +%s) - start ))" >"$d/rc1" ) &
fifo_secret=$!
( start=$(date +%s); timeout 30 "$mtls" inspect "$d/cert" >/dev/null 2>"$d/err2"; echo "$? $(( $(date +%s) - start ))" >"$d/rc2" ) &
fifo_input=$!

# --- Outputs -------------------------------------------------------------------------------------
case_name="output: EFBIG under ulimit -f (SIGXFSZ ignored) is exit 3, no partial or temporary file"
d=$work/efbig; mkdir "$d"
( ulimit -f 1; timeout 20 "$mtls" "${export_args[@]}" --out "$d/a.p12" --password pass:x >/dev/null 2>"$d/err" ); rc=$?
if [[ $rc == 3 && ! -e $d/a.p12 ]] && no_temporary "$d" && grep -q "File too large" "$d/err"; then pass "$case_name"; else fail "$case_name" "exit $rc, $(ls -A "$d" | tr '\n' ' ') $(head -c 200 "$d/err")"; fi

case_name="output: SIGTERM during probe -o leaves no temporary file"
d=$work/sigterm; mkdir "$d"
port_file=$d/port
python3 - "$certs" "$port_file" <<'PY' &
import socket, ssl, sys, time
certs, port_file = sys.argv[1], sys.argv[2]
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(certs + "/server-fullchain.pem", certs + "/server.key")
listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen(1)
open(port_file, "w").write(str(listener.getsockname()[1]))
listener.settimeout(20)
connection, _ = listener.accept()
tls = context.wrap_socket(connection, server_side=True)
tls.recv(65536)
tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\nContent-Type: application/octet-stream\r\n\r\n")
end = time.time() + 15
while time.time() < end:
    try: tls.sendall(b"x" * 4096)
    except OSError: break
    time.sleep(0.05)
PY
slow_server=$!
for _ in $(seq 50); do [[ -s $port_file ]] && break; sleep 0.1; done
if [[ -s $port_file ]]; then
  timeout 20 "$mtls" probe "https://localhost:$(cat "$port_file")/" --anchors "$certs/root-ca.pem" -o "$d/body.bin" >/dev/null 2>"$d/err" &
  probe=$!
  sleep 2
  kill -TERM $probe; wait $probe; rc=$?
  if [[ $rc == 143 && ! -e $d/body.bin ]] && no_temporary "$d"; then pass "$case_name"; else fail "$case_name" "exit $rc, left: $(ls -A "$d" | tr '\n' ' ')"; fi
else
  fail "$case_name" "the slow server did not start"
fi
kill $slow_server 2>/dev/null; wait $slow_server 2>/dev/null

# A link of our own like /dev/stdout (made in the work directory: an old binary run as root would
# otherwise replace the host's /dev/stdout with a regular file).
case_name="output: --force does not replace a link to standard output (like /dev/stdout)"
d=$work/stdout; mkdir "$d"; ln -s /proc/self/fd/1 "$d/stdout"
timeout 20 "$mtls" convert "$certs/server.pem" --to der --out "$d/stdout" --force 2>"$d/err" | cat >/dev/null; rc=${PIPESTATUS[0]}
if [[ $rc == 3 && -L $d/stdout ]]; then pass "$case_name"; else fail "$case_name" "exit $rc $(head -c 200 "$d/err")"; fi

# --- Inputs --------------------------------------------------------------------------------------
case_name="input: endless standard input stops at 64 MiB (exit 3, bounded memory)"
d=$work/zero; mkdir "$d"
( ulimit -v 2097152; cat /dev/zero | timeout 60 "$mtls" inspect - >/dev/null 2>"$d/err" ); rc=$?
if [[ $rc == 3 ]] && grep -q "larger than 64 MiB" "$d/err"; then pass "$case_name"; else fail "$case_name" "exit $rc $(head -c 200 "$d/err")"; fi

case_name="input: a 2^31-1 MAC iteration count costs nothing (inspect without a password)"
d=$work/iter; mkdir "$d"
python3 - "$certs/p12/client-alice-modern.p12" "$d/huge-mac.p12" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
# The MacData's iterations are the file's last INTEGER: 02 02 08 00 (2048) -> 02 04 7f ff ff ff.
tail = data.rindex(b"\x02\x02\x08\x00")
new = data[:tail] + b"\x02\x04\x7f\xff\xff\xff" + data[tail + 4:]
# Two more bytes: the PFX SEQUENCE (30 82 LL LL) and the MacData SEQUENCE grow by two.
total = int.from_bytes(new[2:4], "big") + 2
new[2:4] = total.to_bytes(2, "big")
mac = new.rindex(b"\x30", 0, new.rindex(b"\x30\x31\x30\x0d"))  # MacData starts before its DigestInfo
new[mac + 1] += 2
open(sys.argv[2], "wb").write(new)
PY
start=$(date +%s%N)
timeout 60 "$mtls" inspect "$d/huge-mac.p12" >/dev/null 2>"$d/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [[ $rc == 3 && $ms -lt 5000 ]] && grep -q "2147483647 iterations" "$d/err"; then pass "$case_name ($ms ms)"; else fail "$case_name" "exit $rc in $ms ms: $(head -c 300 "$d/err")"; fi

# --- Serve under load (the real binary, loopback, bounded) ---------------------------------------
case_name="serve: 400 idle connections do not deny a normal request"
d=$work/serve; mkdir "$d"
"$mtls" serve --port 0 --duration 60 >"$d/log" 2>&1 &
serve=$!
port=""
for _ in $(seq 100); do
  port=$(grep -o 'https://127.0.0.1:[0-9]*' "$d/log" 2>/dev/null | head -1 | sed 's/.*://')
  [[ -n $port ]] && break; sleep 0.2
done
if [[ -n $port ]]; then
  python3 - "$port" <<'PY' >"$d/result" 2>&1
import socket, ssl, sys, time
port = int(sys.argv[1])
idle = []
for _ in range(400):
    try: idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    except OSError: pass
time.sleep(1.5)
context = ssl.create_default_context(); context.check_hostname = False; context.verify_mode = ssl.CERT_NONE
worst = 0
for _ in range(5):
    start = time.time()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, context.wrap_socket(raw) as tls:
        tls.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        answer = tls.recv(100)
    worst = max(worst, time.time() - start)
    assert answer.startswith(b"HTTP/1.1 200"), answer
print(f"held {len(idle)} idle; worst normal request {worst:.2f} s")
sys.exit(0 if worst < 3 else 1)
PY
  if [[ $? == 0 ]]; then pass "$case_name: $(cat "$d/result")"; else fail "$case_name" "$(tail -3 "$d/result")"; fi
  case_name="serve: 100 slowloris heads are cut off by one 10 s deadline; normal requests answered meanwhile"
  python3 - "$port" <<'PY' >"$d/slow" 2>&1
import socket, ssl, sys, time
port = int(sys.argv[1])
context = ssl.create_default_context(); context.check_hostname = False; context.verify_mode = ssl.CERT_NONE
slow = []
for _ in range(100):
    tls = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))
    tls.sendall(b"GET / HTTP/1.1\r\n")
    slow.append(tls)
start = time.time()
worst = 0
open_ = set(range(len(slow)))
while time.time() - start < 16 and open_:
    for i in list(open_):
        try: slow[i].sendall(b"X")  # one header byte each half second: fresh time per read would never end
        except OSError: open_.discard(i)
    if 1 < time.time() - start < 2 and worst == 0:
        t = time.time()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, context.wrap_socket(raw) as tls:
            tls.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            assert tls.recv(100).startswith(b"HTTP/1.1 200")
        worst = time.time() - t
    time.sleep(0.5)
print(f"{100 - len(open_)} of 100 cut off after {time.time() - start:.1f} s; normal request {worst:.2f} s")
sys.exit(0 if not open_ and 0 < worst < 3 else 1)
PY
  if [[ $? == 0 ]]; then pass "$case_name: $(tail -1 "$d/slow")"; else fail "$case_name" "$(tail -3 "$d/slow")"; fi
else
  fail "$case_name" "serve did not start: $(head -3 "$d/log")"
fi
kill $serve 2>/dev/null; wait $serve 2>/dev/null

# --- Other users (root only: setpriv) ------------------------------------------------------------
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
  shared=$work/shared; mkdir -m 1777 "$shared"
  case_name="race: import --out-dir planted by another user is refused"
  setpriv --reuid=nobody --regid=nogroup --clear-groups mkdir -m 0777 "$shared/keys"
  timeout 20 "$mtls" import "$certs/p12/client-alice-modern.p12" --password pass:mtls --out-dir "$shared/keys" >/dev/null 2>"$work/err"; rc=$?
  if [[ $rc == 3 && -z $(ls -A "$shared/keys") ]] && grep -q "another user" "$work/err"; then pass "$case_name"; else fail "$case_name" "exit $rc: $(ls -A "$shared/keys") $(head -c 200 "$work/err")"; fi

  case_name="race: another user's symlink at --out is not replaced, even with --force"
  setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$work/victim" "$shared/out.der"
  echo keep >"$work/victim"
  timeout 20 "$mtls" convert "$certs/server.pem" --to der --out "$shared/out.der" --force >/dev/null 2>"$work/err"; rc=$?
  if [[ $rc == 3 && -L $shared/out.der && $(cat "$work/victim") == keep ]]; then pass "$case_name"; else fail "$case_name" "exit $rc $(head -c 200 "$work/err")"; fi

  case_name="race: a key written by nobody is 0600 from its creation (umask 000)"
  mine=$work/nobody; mkdir "$mine"; chown nobody:nogroup "$mine"
  setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c "umask 000; '$mtls' ${export_args[*]} --out '$mine/a.p12' --password pass:x" >/dev/null 2>&1
  mode=$(stat -c %a "$mine/a.p12" 2>/dev/null)
  if [[ $mode == 600 ]]; then pass "$case_name"; else fail "$case_name" "mode $mode"; fi
else
  skip "races with another user" "needs root and setpriv"
fi

# --- Devices (root only: private mount namespace) ------------------------------------------------
# Whether this machine lets root make a private mount namespace with a tmpfs (a container without
# CAP_SYS_ADMIN does not): the device case is skipped, not failed, where it cannot run.
if [[ $(id -u) == 0 ]] && unshare -m bash -c 'mount --make-rprivate / && mount -t tmpfs tmpfs /mnt' 2>/dev/null; then
  case_name="device: --out /dev/null --force leaves the device node (private mount namespace)"
  unshare -m bash -c "
    mount --make-rprivate / && mount -t tmpfs tmpfs /dev &&
    mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/urandom c 1 9 &&
    timeout 20 '$mtls' convert '$certs/client-alice.key' --to pem --out /dev/null --force 2>'$work/err'; echo \$? >'$work/rc';
    stat -c %F /dev/null >'$work/kind'" >/dev/null 2>&1
  if [[ $(cat "$work/rc" 2>/dev/null) == 3 && $(cat "$work/kind" 2>/dev/null) == "character special file" ]]; then pass "$case_name"; else fail "$case_name" "exit $(cat "$work/rc" 2>/dev/null), /dev/null is $(cat "$work/kind" 2>/dev/null)"; fi
else
  skip "device nodes" "needs root and unshare -m"
fi

# --- The FIFO cases started above ----------------------------------------------------------------
wait $fifo_secret $fifo_input
read -r rc seconds <"$work/fifo/rc1"
case_name="secret: file: on a FIFO with no writer gives up after 10 s (exit 3, no file)"
if [[ $rc == 3 && $seconds -lt 25 && ! -e $work/fifo/a.p12 ]]; then pass "$case_name ($seconds s)"; else fail "$case_name" "exit $rc after $seconds s"; fi
read -r rc seconds <"$work/fifo/rc2"
case_name="input: inspect of a FIFO with no writer gives up after 10 s (exit 3)"
if [[ $rc == 3 && $seconds -lt 25 ]]; then pass "$case_name ($seconds s)"; else fail "$case_name" "exit $rc after $seconds s"; fi

if [[ $failures -gt 0 ]]; then
  echo "hostile.sh: $failures case(s) failed" >&2
  exit 1
fi
echo "hostile.sh: every case passed"
