#!/usr/bin/env bash
# Starts every peer in scripts/peers/ and proves with curl and `openssl s_client` that it behaves as
# documented. One line per check, then "N passed, M failed"; exit status 1 on any failure.
# Every server started here is stopped on exit (trap); with failures the instance dirs are kept
# and listed (logs inside). Only 127.0.0.1 and high ports are used.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CERTS=${MTLS_TEST_CERTS:-$(cd "$HERE/../.." && pwd)/TestCerts}
cd "$CERTS" || { echo "no TestCerts dir at $CERTS" >&2; exit 2; }

PASS=0 FAIL=0
STARTED=()        # "script|dir" of every running instance
WATCH_PIDS=()     # every server pid (masters + children) seen, checked after stop
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mtls-selftest.XXXXXX")

pass() { PASS=$((PASS + 1)); printf 'PASS  %s\n' "$1"; }
fail() { FAIL=$((FAIL + 1)); printf 'FAIL  %s%s\n' "$1" "${2:+  -- $2}"; }
# check NAME COMMAND... : pass when COMMAND succeeds
check() { local n=$1; shift; if "$@" >"$TMP/check.out" 2>&1; then pass "$n"; else fail "$n" "$(tail -c 300 "$TMP/check.out" | tr '\n' ' ')"; fi; }

stop_all() {
  local e script dir keep=()
  ((FAIL > 0)) && keep=(--keep)
  for e in "${STARTED[@]}"; do
    script=${e%%|*} dir=${e#*|}
    "$HERE/$script" stop --dir "$dir" "${keep[@]}" >/dev/null 2>&1 || true
    ((FAIL > 0)) && echo "kept $script instance dir: $dir" >&2
  done
  STARTED=()
}
cleanup() { stop_all; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# start SCRIPT VARPREFIX ARGS... : runs SCRIPT start, exports its KEY=value lines as VARPREFIX_KEY
start() {
  local script=$1 pfx=$2; shift 2
  local out k v
  if ! out=$("$HERE/$script" start "$@" 2>"$TMP/start.err"); then
    fail "$script start $*" "$(tail -c 400 "$TMP/start.err" | tr '\n' ' ')"; return 1
  fi
  while IFS='=' read -r k v; do
    [[ "$k" =~ ^[A-Z_]+$ ]] || { fail "$script start: non KEY=value stdout line: $k=$v"; return 1; }
    printf -v "${pfx}_$k" '%s' "$v"
  done <<<"$out"
  local dv="${pfx}_DIR" pv="${pfx}_PID"
  STARTED+=("$script|${!dv}")
  WATCH_PIDS+=("${!pv}")
  pass "$script start $* -> $(echo $out)"
}

CURL=(curl -sS --max-time 15 --cacert root-ca.pem)
ALICE=(--cert client-alice.pem --key client-alice.key)
EXPIRED=(--cert client-alice-expired.pem --key client-alice-expired.key)

# status URL ARGS... -> prints HTTP status (000 on transport failure)
status() { local u=$1; shift; "${CURL[@]}" -o /dev/null -w '%{http_code}' "$@" "$u" 2>/dev/null; }
# expect_status WANT URL ARGS...
expect_status() { local want=$1 got; shift; got=$(status "$@"); [[ "$got" == "$want" ]] || { echo "got HTTP $got, want $want"; return 1; }; }
# expect_body REGEX URL ARGS... (grep -E on the body, HTTP status must be 200)
expect_body() {
  local re=$1 u=$2; shift 2
  local code; code=$("${CURL[@]}" -o "$TMP/body" -w '%{http_code}' "$@" "$u") || { echo "curl failed"; return 1; }
  [[ "$code" == 200 ]] || { echo "HTTP $code"; cat "$TMP/body"; return 1; }
  grep -qE -- "$re" "$TMP/body" || { echo "body lacks /$re/:"; cat "$TMP/body"; return 1; }
}
# expect_header REGEX URL ARGS...
expect_header() {
  local re=$1 u=$2; shift 2
  "${CURL[@]}" -o /dev/null -D "$TMP/hdr" "$@" "$u" || { echo "curl failed"; return 1; }
  tr -d '\r' <"$TMP/hdr" | grep -qiE -- "$re" || { echo "headers lack /$re/:"; cat "$TMP/hdr"; return 1; }
}
# expect_tls_refusal REGEX URL ARGS... : curl must fail at the TLS layer (no HTTP status) with REGEX in its error
expect_tls_refusal() {
  local re=$1 u=$2 code rc; shift 2
  code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' "$@" "$u" 2>"$TMP/err"); rc=$?
  [[ $rc -ne 0 && "$code" == 000 ]] || { echo "curl rc=$rc HTTP $code (expected a TLS failure)"; return 1; }
  grep -qiE -- "$re" "$TMP/err" || { echo "error lacks /$re/:"; cat "$TMP/err"; return 1; }
}
# s_client_http PORT PATH ARGS... -> raw HTTP/1.1 exchange through openssl s_client (-quiet => -ign_eof)
s_client_http() {
  local port=$1 path=$2; shift 2
  printf 'GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$path" |
    timeout 15 openssl s_client -connect "127.0.0.1:$port" -CAfile root-ca.pem -quiet "$@" 2>&1
}
# s_client_trace PORT PATH ARGS... -> -trace output of a request
s_client_trace() {
  local port=$1 path=$2; shift 2
  printf 'GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$path" |
    timeout 15 openssl s_client -connect "127.0.0.1:$port" -CAfile root-ca.pem -ign_eof -trace "$@" 2>&1
}
expect_grep() { local re=$1 f=$2; grep -qE -- "$re" "$f" || { echo "/$re/ not found in $f:"; tail -n 30 "$f"; return 1; }; }

#######################################################################################
echo "## install-deps"
check "install-deps.sh (idempotent, all present)" "$HERE/../install-deps.sh"

#######################################################################################
echo "## apache (TLS 1.2 + 1.3)"
if start apache.sh A; then
  U=https://127.0.0.1:$A_PORT
  check "apache status reports RUNNING=1" bash -c "'$HERE/apache.sh' status --dir '$A_DIR' | grep -qx RUNNING=1"
  for v in 1.2 1.3; do
    check "apache TLS$v / 200 without client cert" expect_body 'mtls apache root' "$U/" --tls-max "$v" --tlsv"$v"
    check "apache TLS$v /secure + alice -> 200, subject CN=client-alice, $v" \
      expect_body "subject=CN=client-alice,O=mtls test,C=US" "$U/secure" --tls-max "$v" --tlsv"$v" "${ALICE[@]}"
    check "apache TLS$v /secure reports protocol TLSv$v verify=SUCCESS" \
      bash -c "grep -q '^protocol=TLSv$v\$' '$TMP/body' && grep -q '^verify=SUCCESS\$' '$TMP/body'"
    check "apache TLS$v /secure X-Client-Subject header" \
      expect_header '^X-Client-Subject: CN=client-alice,O=mtls test,C=US$' "$U/secure" --tls-max "$v" --tlsv"$v" "${ALICE[@]}"
    check "apache TLS$v POST 200 KiB to /secure (renegotiation/PHA with body)" \
      expect_body '^body_bytes=204800$' "$U/secure" --tls-max "$v" --tlsv"$v" "${ALICE[@]}" \
      --data-binary @<(head -c 204800 /dev/zero)
    check "apache TLS$v POST 2 MB to /secure without Expect -> 413 (> SSLRenegBufferSize 1 MiB)" \
      expect_status 413 "$U/secure" --tls-max "$v" --tlsv"$v" "${ALICE[@]}" -H 'Expect:' \
      --data-binary @<(head -c 2000000 /dev/zero)
    check "apache TLS$v POST 2 MB to /secure with Expect: 100-continue -> 200 (body sent after re-auth)" \
      expect_body '^body_bytes=2000000$' "$U/secure" --tls-max "$v" --tlsv"$v" "${ALICE[@]}" -H 'Expect: 100-continue' \
      --data-binary @<(head -c 2000000 /dev/zero)
    check "apache TLS$v /optional without cert -> 200 verify=NONE" expect_body '^verify=NONE$' "$U/optional" --tls-max "$v" --tlsv"$v"
    check "apache TLS$v /optional + alice -> verify=SUCCESS" expect_body '^verify=SUCCESS$' "$U/optional" --tls-max "$v" --tlsv"$v" "${ALICE[@]}"
    check "apache TLS$v /secure-403 without cert -> HTTP 403" expect_status 403 "$U/secure-403" --tls-max "$v" --tlsv"$v"
    check "apache TLS$v /secure-403 + alice -> 200" expect_status 200 "$U/secure-403" --tls-max "$v" --tlsv"$v" "${ALICE[@]}"
  done
  check "apache TLS1.2 /secure without cert -> refused (handshake_failure alert in renegotiation)" \
    expect_tls_refusal 'alert handshake failure' "$U/secure" --tls-max 1.2
  check "apache TLS1.3 /secure without cert -> refused (certificate_required alert, PHA)" \
    expect_tls_refusal 'alert certificate required' "$U/secure" --tls-max 1.3 --tlsv1.3
  check "apache TLS1.2 /secure expired client cert -> refused (certificate_expired alert)" \
    expect_tls_refusal 'alert certificate expired' "$U/secure" --tls-max 1.2 "${EXPIRED[@]}"
  check "apache TLS1.3 /secure expired client cert -> refused (certificate_expired alert)" \
    expect_tls_refusal 'alert certificate expired' "$U/secure" --tls-max 1.3 --tlsv1.3 "${EXPIRED[@]}"
  check "apache error.log: TLS1.2 renegotiation happened (AH02221)" expect_grep 'AH02221: Requesting connection re-negotiation' "$A_DIR/error.log"
  check "apache error.log: expired cert rejected" expect_grep 'certificate has expired' "$A_DIR/error.log"

  s_client_http "$A_PORT" /secure -tls1_3 -enable_pha "${ALICE[@]}" >"$TMP/pha.out"
  check "s_client TLS1.3 -enable_pha /secure -> HTTP 200 (post-handshake auth)" expect_grep '^HTTP/1.1 200 ' "$TMP/pha.out"
  s_client_http "$A_PORT" /secure -tls1_3 "${ALICE[@]}" >"$TMP/nopha.out"
  check "s_client TLS1.3 WITHOUT pha /secure -> HTTP 403 (cert never requested)" expect_grep '^HTTP/1.1 403 ' "$TMP/nopha.out"
  check "apache error.log: AH10158 cannot perform post-handshake authentication" expect_grep 'AH10158' "$A_DIR/error.log"
  s_client_http "$A_PORT" /secure -tls1_2 -no_renegotiation "${ALICE[@]}" >"$TMP/noreneg.out"
  check "s_client TLS1.2 -no_renegotiation /secure -> handshake_failure alert, no HTTP" \
    bash -c "grep -q 'alert handshake failure' '$TMP/noreneg.out' && ! grep -q '^HTTP/' '$TMP/noreneg.out'"
  s_client_http "$A_PORT" / -tls1_3 -verify_return_error -verify_hostname localhost >"$TMP/root.out"
  check "s_client / verifies server chain (root-ca, hostname localhost)" expect_grep '^HTTP/1.1 200 ' "$TMP/root.out"
  s_client_trace "$A_PORT" /secure -tls1_2 "${ALICE[@]}" >"$TMP/trace-main.out"
  check "s_client -trace TLS1.2 /secure: renegotiation CertificateRequest names intermediate + root" \
    bash -c "[[ \$(grep -c 'DistinguishedName' '$TMP/trace-main.out') == 2 ]] && grep -q 'CN = mtls Test Intermediate CA' '$TMP/trace-main.out' && grep -q 'HelloRequest' '$TMP/trace-main.out'"

  check "apache /basic without credentials -> 401" expect_status 401 "$U/basic"
  check "apache /basic --basic -u mtls:mtls -> 200 remote_user=mtls" expect_body '^remote_user=mtls$' "$U/basic" --basic -u mtls:mtls
  check "apache /basic wrong password -> 401" expect_status 401 "$U/basic" --basic -u mtls:nope
  check "apache /digest challenge: Digest realm=\"mtls\"" expect_header '^WWW-Authenticate: Digest realm="mtls"' "$U/digest"
  check "apache /digest --digest -u mtls:mtls -> 200 remote_user=mtls" expect_body '^remote_user=mtls$' "$U/digest" --digest -u mtls:mtls
  check "apache /digest wrong password -> 401" expect_status 401 "$U/digest" --digest -u mtls:nope
  check "apache /redirect -> 302 Location .../" expect_header "^Location: https://127.0.0.1:$A_PORT/\$" "$U/redirect"
  check "apache /redirect status 302" expect_status 302 "$U/redirect"
  check "apache /cookie Set-Cookie" expect_header '^Set-Cookie: session=abc; Path=/; Secure; HttpOnly$' "$U/cookie"
  check "apache /sjis Content-Type text/html; charset=Shift_JIS" expect_header '^Content-Type: text/html; charset=Shift_JIS$' "$U/sjis"
  "${CURL[@]}" -o "$TMP/sjis" "$U/sjis"
  check "apache /sjis body has Shift_JIS bytes of 日本語のページ" python3 -c "
import sys; b=open('$TMP/sjis','rb').read(); w='日本語のページ'.encode('shift_jis')
sys.exit(0 if w in b else 'missing %r in %r' % (w, b))"
  "${CURL[@]}" -o "$TMP/cp932" "$U/cp932"
  check "apache /cp932 body has CP932-only ① (0x87 0x40), declared Shift_JIS" python3 -c "
import sys; b=open('$TMP/cp932','rb').read()
try: b.decode('shift_jis'); sys.exit('strict shift_jis decoded it')
except UnicodeDecodeError: pass
sys.exit(0 if '①'.encode('cp932') == b'\x87\x40' and b'\x87\x40' in b and '①' in b.decode('cp932') else 'missing')"
  check "apache /cp932 Content-Type charset=Shift_JIS" expect_header '^Content-Type: text/html; charset=Shift_JIS$' "$U/cp932"

  # CADN vhost
  for v in 1.2 1.3; do
    check "apache cadn TLS$v /cadn + alice -> 200" expect_body 'subject=CN=client-alice' "https://127.0.0.1:$A_CADN_PORT/cadn" --tls-max "$v" --tlsv"$v" "${ALICE[@]}"
  done
  s_client_trace "$A_CADN_PORT" /cadn -tls1_2 "${ALICE[@]}" >"$TMP/trace-cadn12.out"
  check "s_client -trace TLS1.2 /cadn: CA names = only 'mtls Other Root CA'" \
    bash -c "[[ \$(grep -c 'DistinguishedName' '$TMP/trace-cadn12.out') == 1 ]] && grep -q 'DistinguishedName.*CN = mtls Other Root CA' '$TMP/trace-cadn12.out'"
  s_client_trace "$A_CADN_PORT" /cadn -tls1_3 -enable_pha "${ALICE[@]}" >"$TMP/trace-cadn13.out"
  check "s_client -trace TLS1.3 /cadn: certificate_authorities = one DN (Other Root)" \
    bash -c "grep -q 'certificate_authorities(47), length=68' '$TMP/trace-cadn13.out' && grep -A6 'certificate_authorities(47)' '$TMP/trace-cadn13.out' | grep -q 'mtls Other'"
  check "apache cadn client-other (untrusted CA) -> refused (unknown ca)" \
    expect_tls_refusal 'unknown ca' "https://127.0.0.1:$A_CADN_PORT/cadn" --tls-max 1.2 --cert client-other.pem --key client-other.key

  # CRL vhost
  for v in 1.2 1.3; do
    check "apache crl TLS$v /secure-crl + alice -> 200 (CRL chain check passes)" \
      expect_body 'verify=SUCCESS' "https://127.0.0.1:$A_CRL_PORT/secure-crl" --tls-max "$v" --tlsv"$v" "${ALICE[@]}"
  done
  check "apache crl / without cert -> 200" expect_status 200 "https://127.0.0.1:$A_CRL_PORT/"

  #####################################################################################
  echo "## second apache (--tls-max 1.2) running alongside the first"
  if start apache.sh B --tls-max 1.2; then
    check "two apache instances: distinct dirs and ports" bash -c "[[ '$A_DIR' != '$B_DIR' && '$A_PORT' != '$B_PORT' ]]"
    check "apache#2 TLS1.3-only client refused (protocol version)" \
      expect_tls_refusal 'protocol version|alert' "https://127.0.0.1:$B_PORT/" --tlsv1.3
    check "apache#2 negotiates TLS1.2 /secure + alice -> 200 protocol=TLSv1.2" \
      expect_body '^protocol=TLSv1.2$' "https://127.0.0.1:$B_PORT/secure" "${ALICE[@]}"
    check "apache#1 still answers TLS1.3 while #2 runs" expect_body '^protocol=TLSv1.3$' "$U/secure" "${ALICE[@]}"
  fi
fi

#######################################################################################
echo "## nginx (client cert in the initial handshake)"
if start nginx.sh N; then
  for v in 1.2 1.3; do
    check "nginx on TLS$v without cert -> 400 (No required SSL certificate)" expect_status 400 "https://127.0.0.1:$N_PORT/" --tls-max "$v" --tlsv"$v"
    check "nginx on TLS$v + alice -> 200 verify=SUCCESS subject" \
      expect_body '^verify=SUCCESS subject=CN=client-alice,O=mtls test,C=US$' "https://127.0.0.1:$N_PORT/" --tls-max "$v" --tlsv"$v" "${ALICE[@]}"
    check "nginx on TLS$v expired cert -> 400" expect_status 400 "https://127.0.0.1:$N_PORT/" --tls-max "$v" --tlsv"$v" "${EXPIRED[@]}"
  done
  echo | timeout 15 openssl s_client -connect "127.0.0.1:$N_PORT" -CAfile root-ca.pem >"$TMP/n-on.out" 2>&1
  check "s_client nginx on: CertificateRequest in handshake names intermediate + root" \
    bash -c "grep -q 'Acceptable client certificate CA names' '$TMP/n-on.out' && grep -q 'CN = mtls Test Intermediate CA' '$TMP/n-on.out' && grep -q 'CN = mtls Test Root CA' '$TMP/n-on.out'"
  check "nginx optional without cert -> 200 verify=NONE" expect_body '^verify=NONE' "https://127.0.0.1:$N_OPTIONAL_PORT/"
  check "nginx optional + alice -> verify=SUCCESS" expect_body '^verify=SUCCESS' "https://127.0.0.1:$N_OPTIONAL_PORT/" "${ALICE[@]}"
  echo | timeout 15 openssl s_client -connect "127.0.0.1:$N_OPTIONAL_NO_CA_PORT" -CAfile root-ca.pem >"$TMP/n-noca.out" 2>&1
  check "s_client nginx optional_no_ca: 'No client certificate CA names sent'" expect_grep 'No client certificate CA names sent' "$TMP/n-noca.out"
  check "nginx optional_no_ca without cert -> 200 verify=NONE" expect_body '^verify=NONE' "https://127.0.0.1:$N_OPTIONAL_NO_CA_PORT/"
  check "nginx optional_no_ca + alice -> verify=SUCCESS" expect_body '^verify=SUCCESS' "https://127.0.0.1:$N_OPTIONAL_NO_CA_PORT/" "${ALICE[@]}"
  check "nginx optional_no_ca + client-other -> 200 verify=FAILED:..." \
    expect_body '^verify=FAILED:.* subject=CN=client-other' "https://127.0.0.1:$N_OPTIONAL_NO_CA_PORT/" --cert client-other.pem --key client-other.key
fi

#######################################################################################
echo "## openssl s_server"
if start s_server.sh S; then
  for v in 1.2 1.3; do
    check "s_server TLS$v without cert -> refused in handshake" expect_tls_refusal 'alert' "https://127.0.0.1:$S_PORT/" --tls-max "$v" --tlsv"$v"
    check "s_server TLS$v + alice -> 200 page shows client cert" \
      expect_body 'Subject: C=US, O=mtls test, CN=client-alice' "https://127.0.0.1:$S_PORT/" --tls-max "$v" --tlsv"$v" "${ALICE[@]}"
  done
  check "s_server expired cert -> refused (certificate_expired alert)" expect_tls_refusal 'certificate expired' "https://127.0.0.1:$S_PORT/" "${EXPIRED[@]}"
fi
if start s_server.sh R --verify-after; then
  check "s_server --verify-after / without cert -> 200" expect_body 'no client certificate available' "https://127.0.0.1:$R_PORT/"
  check "s_server --verify-after: TLS1.3 not offered" expect_tls_refusal 'alert|version' "https://127.0.0.1:$R_PORT/" --tlsv1.3
  (printf 'GET /renegcert HTTP/1.0\r\n'; sleep 1; printf '\r\n'; sleep 1) |
    timeout 15 openssl s_client -connect "127.0.0.1:$R_PORT" -CAfile root-ca.pem "${ALICE[@]}" >"$TMP/reneg.out" 2>&1
  check "s_server --verify-after GET /renegcert (split request): renegotiated, page shows alice" \
    bash -c "grep -q 'Subject: C=US, O=mtls test, CN=client-alice' '$TMP/reneg.out' && grep -qE ' [1-9][0-9]* server renegotiates' '$TMP/reneg.out' \
      && ! grep -q 'no client certificate available' '$TMP/reneg.out' || { tail -n 25 '$TMP/reneg.out'; exit 1; }"
fi

#######################################################################################
echo "## teardown"
# children of every master, to check they are gone too
for p in "${WATCH_PIDS[@]}"; do
  for c in $(pgrep -P "$p" 2>/dev/null); do WATCH_PIDS+=("$c"); done
done
PORTS=()
for v in A_PORT A_CADN_PORT A_CRL_PORT B_PORT B_CADN_PORT B_CRL_PORT N_PORT N_OPTIONAL_PORT N_OPTIONAL_NO_CA_PORT S_PORT R_PORT; do
  [[ -n "${!v:-}" ]] && PORTS+=("${!v}")
done
DIRS=(); for e in "${STARTED[@]}"; do DIRS+=("${e#*|}"); done
NSTOP=${#STARTED[@]}
stop_all
alive=()
for p in "${WATCH_PIDS[@]}"; do
  if kill -0 "$p" 2>/dev/null && [[ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ]]; then alive+=("$p"); fi
done
check "stopped $NSTOP instances: none of ${#WATCH_PIDS[@]} server processes left" bash -c "[[ -z '${alive[*]}' ]] || { echo 'alive: ${alive[*]}'; exit 1; }"
check "all ${#PORTS[@]} ports closed" bash -c 'for p in "$@"; do (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && { echo "port $p still open"; exit 1; }; done; exit 0' _ "${PORTS[@]}"
if ((FAIL == 0)); then
  check "auto-created instance dirs removed" bash -c 'for d in "$@"; do [[ -e "$d" ]] && { echo "$d exists"; exit 1; }; done; exit 0' _ "${DIRS[@]}"
fi

echo "$PASS passed, $FAIL failed"
((FAIL == 0))
