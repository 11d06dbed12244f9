#!/usr/bin/env bash
# Regenerates TestCerts/ (certificates, keys, CRLs, PKCS#12 files and
# deliberately broken inputs) for the mtls test suite, then verifies them.
#
# Requires: OpenSSL 3.0+ CLI, coreutils, python3 (stdlib only).
# Usage:    scripts/make-test-certs.sh
#
# Key material is freshly generated on every run, so certificates and keys
# differ between runs; names, subjects, SANs, serial numbers, validity dates,
# extensions and encodings are fixed. Tests evaluate at 2026-06-01T00:00:00Z
# (unix 1780272000).
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT_DIR/TestCerts"
ATTIME=1780272000

OPENSSL="${OPENSSL:-openssl}"
ossl() { "$OPENSSL" "$@"; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# Keep OpenSSL away from any user/system config that could change defaults.
export OPENSSL_CONF="$WORK/empty.cnf"
: >"$OPENSSL_CONF"

# Validity windows (YYYYMMDDHHMMSSZ)
GOOD_START=20250101000000Z;  GOOD_END=20350101000000Z
ROOT_START=20250101000000Z;  ROOT_END=20450101000000Z
EXP_START=20200101000000Z;   EXP_END=20210101000000Z
NYV_START=20400101000000Z;   NYV_END=20410101000000Z
CRL_LAST=20250101000000Z;    CRL_NEXT=20350101000000Z

SUBJ_PREFIX="/C=US/O=mtls test"

rm -rf "$OUT"
mkdir -p "$OUT/keys" "$OUT/p12" "$OUT/bad"

# --------------------------------------------------------------------------
# Throwaway CA configuration / databases
# --------------------------------------------------------------------------
CNF="$WORK/ca.cnf"
{
  cat <<'EOF'
[ req ]
distinguished_name = req_dn
prompt             = no
[ req_dn ]
CN = placeholder

[ policy_anything ]
countryName            = optional
stateOrProvinceName    = optional
localityName           = optional
organizationName       = optional
organizationalUnitName = optional
commonName             = optional
emailAddress           = optional

[ crl_ext ]
authorityKeyIdentifier = keyid:always
EOF
  for ca in root int other self; do
    d="$WORK/db/$ca"
    mkdir -p "$d/newcerts"
    : >"$d/index.txt"
    echo 01 >"$d/serial"
    echo 01 >"$d/crlnumber"
    cat <<EOF

[ ca_$ca ]
dir              = $d
database         = $d/index.txt
new_certs_dir    = $d/newcerts
serial           = $d/serial
crlnumber        = $d/crlnumber
default_md       = sha256
policy           = policy_anything
unique_subject   = no
copy_extensions  = none
email_in_dn      = no
crl_extensions   = crl_ext
EOF
  done
} >"$CNF"

# genkey <type> <out>   (unencrypted PKCS#8 PEM)
genkey() {
  local type="$1" out="$2"
  case "$type" in
    ec256)   ossl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:named_curve -out "$out" ;;
    ec384)   ossl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -pkeyopt ec_param_enc:named_curve -out "$out" ;;
    rsa2048) ossl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$out" ;;
    rsa4096) ossl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:4096 -out "$out" ;;
    ed25519) ossl genpkey -quiet -algorithm ED25519 -out "$out" ;;
    *) echo "unknown key type $type" >&2; exit 1 ;;
  esac
  chmod 644 "$out"
}

# mkext <file> <basicConstraints> <keyUsage> <eku|-> <san|-> [aki]
mkext() {
  local f="$1" bc="$2" ku="$3" eku="$4" san="$5" aki="${6:-keyid:always}"
  {
    echo "[ ext ]"
    echo "basicConstraints = $bc"
    echo "keyUsage = $ku"
    [ "$eku" != "-" ] && echo "extendedKeyUsage = $eku"
    echo "subjectKeyIdentifier = hash"
    echo "authorityKeyIdentifier = $aki"
    [ "$san" != "-" ] && echo "subjectAltName = $san"
    true
  } >"$f"
}

# sign <ca:root|int|other|self> <name> <subject-CN> <start> <end> <serial-hex> <extfile>
# Uses $OUT/<name>.key, writes $OUT/<name>.pem and $OUT/<name>.der
sign() {
  local ca="$1" name="$2" cn="$3" start="$4" end="$5" serial="$6" ext="$7"
  local key="$OUT/$name.key" csr="$WORK/$name.csr"
  ossl req -new -config "$CNF" -key "$key" -subj "$SUBJ_PREFIX/CN=$cn" -out "$csr"
  echo "$serial" >"$WORK/db/$ca/serial"
  local args=(ca -batch -config "$CNF" -name "ca_$ca" -notext -md sha256 -preserveDN
              -in "$csr" -out "$OUT/$name.pem" -startdate "$start" -enddate "$end"
              -extfile "$ext" -extensions ext)
  case "$ca" in
    root)  args+=(-cert "$OUT/root-ca.pem" -keyfile "$OUT/root-ca.key") ;;
    int)   args+=(-cert "$OUT/intermediate-ca.pem" -keyfile "$OUT/intermediate-ca.key") ;;
    other) args+=(-cert "$OUT/other-root-ca.pem" -keyfile "$OUT/other-root-ca.key") ;;
    self)  args+=(-selfsign -keyfile "$key") ;;
  esac
  ossl "${args[@]}" 2>"$WORK/ca.log" || { cat "$WORK/ca.log" >&2; exit 1; }
  ossl x509 -in "$OUT/$name.pem" -outform DER -out "$OUT/$name.der"
}

CA_KU="critical,keyCertSign,cRLSign"
EC_KU="critical,digitalSignature"
RSA_KU="critical,digitalSignature,keyEncipherment"
SAN_LOCAL="DNS:localhost,IP:127.0.0.1,IP:::1"

# --------------------------------------------------------------------------
# CAs
# --------------------------------------------------------------------------
genkey ec256 "$OUT/root-ca.key"
mkext "$WORK/root.ext" "critical,CA:TRUE" "$CA_KU" - - "keyid:always"
sign self root-ca "mtls Test Root CA" "$ROOT_START" "$ROOT_END" 1000 "$WORK/root.ext"

genkey ec256 "$OUT/intermediate-ca.key"
mkext "$WORK/int.ext" "critical,CA:TRUE,pathlen:0" "$CA_KU" - -
sign root intermediate-ca "mtls Test Intermediate CA" "$GOOD_START" "$GOOD_END" 1001 "$WORK/int.ext"

genkey ec256 "$OUT/other-root-ca.key"
sign self other-root-ca "mtls Other Root CA" "$ROOT_START" "$ROOT_END" 3000 "$WORK/root.ext"

# --------------------------------------------------------------------------
# Server leaves (issued by intermediate)
# --------------------------------------------------------------------------
# leaf <name> <keytype> <CN> <san|-> <eku> <start> <end> <serial> [ca]
leaf() {
  local name="$1" kt="$2" cn="$3" san="$4" eku="$5" start="$6" end="$7" serial="$8" ca="${9:-int}"
  local ku="$EC_KU"
  case "$kt" in rsa*) ku="$RSA_KU" ;; esac
  genkey "$kt" "$OUT/$name.key"
  mkext "$WORK/$name.ext" "critical,CA:FALSE" "$ku" "$eku" "$san"
  sign "$ca" "$name" "$cn" "$start" "$end" "$serial" "$WORK/$name.ext"
}

leaf server                 ec256   localhost         "$SAN_LOCAL" serverAuth "$GOOD_START" "$GOOD_END" 2001
leaf server-rsa2048         rsa2048 localhost         "$SAN_LOCAL" serverAuth "$GOOD_START" "$GOOD_END" 2002
leaf server-rsa4096         rsa4096 localhost         "$SAN_LOCAL" serverAuth "$GOOD_START" "$GOOD_END" 2003
leaf server-p384            ec384   localhost         "$SAN_LOCAL" serverAuth "$GOOD_START" "$GOOD_END" 2004
leaf server-ed25519         ed25519 localhost         "$SAN_LOCAL" serverAuth "$GOOD_START" "$GOOD_END" 2005
leaf server-expired         ec256   localhost         "$SAN_LOCAL" serverAuth "$EXP_START"  "$EXP_END"  2006
leaf server-notyetvalid     ec256   localhost         "$SAN_LOCAL" serverAuth "$NYV_START"  "$NYV_END"  2007
leaf server-wronghost       ec256   wrong.example.com "DNS:wrong.example.com" serverAuth "$GOOD_START" "$GOOD_END" 2008
leaf server-multi           ec256   api.example.com   "DNS:api.example.com,DNS:www.example.com" serverAuth "$GOOD_START" "$GOOD_END" 2009
leaf server-cn-only         ec256   localhost         -            serverAuth "$GOOD_START" "$GOOD_END" 200A
leaf server-clientauth-only ec256   localhost         "$SAN_LOCAL" clientAuth "$GOOD_START" "$GOOD_END" 200B
leaf server-revoked         ec256   localhost         "$SAN_LOCAL" serverAuth "$GOOD_START" "$GOOD_END" 200C

cp "$OUT/server.der" "$OUT/server.cer"
cat "$OUT/server.pem" "$OUT/intermediate-ca.pem" >"$OUT/server-chain.pem"
cat "$OUT/server.pem" "$OUT/intermediate-ca.pem" "$OUT/root-ca.pem" >"$OUT/server-fullchain.pem"

# Self-signed dev server certificate (CA:FALSE)
genkey ec256 "$OUT/self-signed.key"
mkext "$WORK/self-signed.ext" "critical,CA:FALSE" "$EC_KU" serverAuth "DNS:localhost,IP:127.0.0.1"
sign self self-signed localhost "$GOOD_START" "$GOOD_END" 4001 "$WORK/self-signed.ext"

# --------------------------------------------------------------------------
# Client leaves
# --------------------------------------------------------------------------
leaf client-alice            ec256   client-alice     "email:alice@example.com" clientAuth "$GOOD_START" "$GOOD_END" 2101
leaf client-alice-expired    ec256   client-alice     "email:alice@example.com" clientAuth "$EXP_START"  "$EXP_END"  2102
leaf client-bob-rsa          rsa2048 client-bob       -                         clientAuth "$GOOD_START" "$GOOD_END" 2103
leaf client-serverauth-only  ec256   client-wrong-eku -                         serverAuth "$GOOD_START" "$GOOD_END" 2104
leaf client-other            ec256   client-other     -                         clientAuth "$GOOD_START" "$GOOD_END" 3001 other
leaf client-revoked          ec256   client-revoked   "email:revoked@example.com" clientAuth "$GOOD_START" "$GOOD_END" 2105
cat "$OUT/client-alice.pem" "$OUT/intermediate-ca.pem" >"$OUT/client-alice-chain.pem"

# --------------------------------------------------------------------------
# CRLs
# --------------------------------------------------------------------------
ossl ca -batch -config "$CNF" -name ca_int -cert "$OUT/intermediate-ca.pem" -keyfile "$OUT/intermediate-ca.key" \
  -revoke "$OUT/server-revoked.pem" -crl_reason keyCompromise 2>"$WORK/ca.log" || { cat "$WORK/ca.log" >&2; exit 1; }
ossl ca -batch -config "$CNF" -name ca_int -cert "$OUT/intermediate-ca.pem" -keyfile "$OUT/intermediate-ca.key" \
  -revoke "$OUT/client-revoked.pem" -crl_reason keyCompromise 2>"$WORK/ca.log" || { cat "$WORK/ca.log" >&2; exit 1; }
# Pin the revocation date to 2025-01-01T00:00:00Z (openssl ca records "now").
python3 - "$WORK/db/int/index.txt" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().splitlines()
out = []
for l in lines:
    f = l.split("\t")
    if f[0] == "R":
        f[2] = "250101000000Z,keyCompromise"
    out.append("\t".join(f))
open(p, "w").write("\n".join(out) + "\n")
PY
echo 1000 >"$WORK/db/int/crlnumber"
ossl ca -batch -config "$CNF" -name ca_int -cert "$OUT/intermediate-ca.pem" -keyfile "$OUT/intermediate-ca.key" \
  -md sha256 -gencrl -crl_lastupdate "$CRL_LAST" -crl_nextupdate "$CRL_NEXT" -out "$OUT/intermediate-crl.pem" 2>"$WORK/ca.log" \
  || { cat "$WORK/ca.log" >&2; exit 1; }
echo 1000 >"$WORK/db/root/crlnumber"
ossl ca -batch -config "$CNF" -name ca_root -cert "$OUT/root-ca.pem" -keyfile "$OUT/root-ca.key" \
  -md sha256 -gencrl -crl_lastupdate "$CRL_LAST" -crl_nextupdate "$CRL_NEXT" -out "$OUT/root-crl.pem" 2>"$WORK/ca.log" \
  || { cat "$WORK/ca.log" >&2; exit 1; }
cat "$OUT/intermediate-crl.pem" "$OUT/root-crl.pem" >"$OUT/crls.pem"

# --------------------------------------------------------------------------
# Bundles
# --------------------------------------------------------------------------
cp "$OUT/root-ca.pem" "$OUT/anchors.pem"
cat "$OUT/root-ca.pem" "$OUT/other-root-ca.pem" >"$OUT/all-roots.pem"
: >"$OUT/bundle-with-text.pem"
for c in server intermediate-ca root-ca; do
  ossl x509 -in "$OUT/$c.pem" -text -noout >>"$OUT/bundle-with-text.pem"
  cat "$OUT/$c.pem" >>"$OUT/bundle-with-text.pem"
done

# --------------------------------------------------------------------------
# keys/ : the same RSA key and the same EC P-256 key in several encodings
# --------------------------------------------------------------------------
K="$OUT/keys"
genkey rsa2048 "$K/rsa-pkcs8.pem"
ossl rsa  -in "$K/rsa-pkcs8.pem" -traditional -out "$K/rsa-pkcs1.pem" 2>/dev/null
ossl rsa  -in "$K/rsa-pkcs8.pem" -traditional -outform DER -out "$K/rsa-pkcs1.der" 2>/dev/null
ossl pkcs8 -topk8 -nocrypt -in "$K/rsa-pkcs8.pem" -outform DER -out "$K/rsa-pkcs8.der"
ossl pkcs8 -topk8 -in "$K/rsa-pkcs8.pem" -v2 aes-256-cbc -v2prf hmacWithSHA256 -passout pass:secret -out "$K/rsa-pkcs8-encrypted.pem"
ossl rsa  -in "$K/rsa-pkcs8.pem" -aes128 -traditional -passout pass:secret -out "$K/rsa-traditional-encrypted.pem" 2>/dev/null
ossl pkey -in "$K/rsa-pkcs8.pem" -pubout -out "$K/rsa-public.pem"

genkey ec256 "$K/ec-p256-pkcs8.pem"
ossl ec   -in "$K/ec-p256-pkcs8.pem" -out "$K/ec-p256-sec1.pem" 2>/dev/null
ossl pkcs8 -topk8 -nocrypt -in "$K/ec-p256-pkcs8.pem" -outform DER -out "$K/ec-p256.der"
ossl pkey -in "$K/ec-p256-pkcs8.pem" -pubout -out "$K/ec-p256-public.pem"

genkey ec384 "$WORK/ec384.pem"
ossl ec -in "$WORK/ec384.pem" -out "$K/ec-p384-sec1.pem" 2>/dev/null

genkey ed25519 "$K/ed25519-pkcs8.pem"

genkey ec256 "$K/backup.key"
ossl req -new -config "$CNF" -key "$K/backup.key" -subj "$SUBJ_PREFIX/CN=mtls backup key" -out "$K/backup.csr"

# --------------------------------------------------------------------------
# PKCS#12
# --------------------------------------------------------------------------
P="$OUT/p12"
CA_CHAIN="$WORK/ca-chain.pem"
cat "$OUT/intermediate-ca.pem" "$OUT/root-ca.pem" >"$CA_CHAIN"
alice=(-inkey "$OUT/client-alice.key" -in "$OUT/client-alice.pem" -name alice)

ossl pkcs12 -export "${alice[@]}" -certfile "$CA_CHAIN" -passout pass:mtls -out "$P/client-alice-modern.p12"
ossl pkcs12 -export -legacy "${alice[@]}" -certfile "$CA_CHAIN" -passout pass:mtls -out "$P/client-alice-legacy-rc2.p12"
ossl pkcs12 -export "${alice[@]}" -certfile "$CA_CHAIN" -certpbe PBE-SHA1-3DES -keypbe PBE-SHA1-3DES -macalg sha1 \
  -passout pass:mtls -out "$P/client-alice-3des.p12"
ossl pkcs12 -export "${alice[@]}" -passout pass:mtls -out "$P/client-alice-nochain.p12"
ossl pkcs12 -export "${alice[@]}" -certfile "$CA_CHAIN" -passout pass: -out "$P/client-alice-emptypass.p12"
ossl pkcs12 -export "${alice[@]}" -certfile "$CA_CHAIN" -keypbe NONE -certpbe NONE -nomac -passout pass: \
  -out "$P/client-alice-nopass.p12"
ossl pkcs12 -export -nokeys -in "$CA_CHAIN" -passout pass:mtls -out "$P/certs-only.p12"
ossl pkcs12 -export -inkey "$OUT/server.key" -in "$OUT/server.pem" -name server -certfile "$CA_CHAIN" \
  -passout pass:mtls -out "$P/server.p12"
ossl pkcs12 -export -inkey "$OUT/client-bob-rsa.key" -in "$OUT/client-bob-rsa.pem" -name bob \
  -passout pass:mtls -out "$P/client-bob-rsa.p12"
# Two identities (alice, bob) in one MAC-less, unencrypted file, alice's bags twice.
ossl pkcs12 -export -keypbe NONE -certpbe NONE -nomac -passout pass: -name alice \
  -inkey "$OUT/client-alice.key" -in "$OUT/client-alice.pem" -out "$WORK/alice-plain.p12"
ossl pkcs12 -export -keypbe NONE -certpbe NONE -nomac -passout pass: -name bob \
  -inkey "$OUT/client-bob-rsa.key" -in "$OUT/client-bob-rsa.pem" -out "$WORK/bob-plain.p12"
python3 "$(dirname "$0")/make-pkcs12-two-identities.py" "$P/two-identities.p12" "$WORK/alice-plain.p12" "$WORK/bob-plain.p12"

# --------------------------------------------------------------------------
# bad/
# --------------------------------------------------------------------------
B="$OUT/bad"
: >"$B/empty.pem"
python3 - "$OUT/server.der" "$B/truncated.der" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(d[: len(d) // 2])
PY
python3 - "$OUT/server.pem" "$B/broken-base64.pem" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
# corrupt the 3rd base64 line: replace 8 chars in the middle with invalid ones
i = 3
l = lines[i]
mid = len(l) // 2
lines[i] = l[: mid - 4] + "!@#$%^&*" + l[mid + 4 :]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
python3 - "$B/garbage.bin" <<'PY'
import random, sys
r = random.Random(0x6D746C73)  # fixed seed -> reproducible garbage
open(sys.argv[1], "wb").write(bytes([0xFF]) + r.randbytes(4095))
PY
cp "$OUT/server.key" "$B/key-as-cert.pem"
python3 - "$P/client-alice-modern.p12" "$B/corrupt-mac.p12" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())

def tlv(buf, off):
    """Return (tag, content_start, content_end) for the DER TLV at off."""
    tag = buf[off]
    l = buf[off + 1]
    p = off + 2
    if l & 0x80:
        n = l & 0x7F
        l = int.from_bytes(buf[p : p + n], "big")
        p += n
    return tag, p, p + l

def children(buf, start, end):
    out, off = [], start
    while off < end:
        t, s, e = tlv(buf, off)
        out.append((t, s, e))
        off = e
    return out

t, s, e = tlv(d, 0)                       # PFX SEQUENCE
version, authsafe, macdata = children(d, s, e)
digestinfo = children(d, macdata[1], macdata[2])[0]
_, digest_s, digest_e = children(d, digestinfo[1], digestinfo[2])[1]  # OCTET STRING digest
pos = (digest_s + digest_e) // 2
d[pos] ^= 0x01
open(sys.argv[2], "wb").write(bytes(d))
print(f"corrupt-mac.p12: flipped byte at offset {pos} (MAC digest spans {digest_s}..{digest_e - 1}, file size {len(d)})")
PY
head -c 200 "$P/client-alice-modern.p12" >"$B/truncated.p12"
cat >"$B/not-a-cert.txt" <<'EOF'
This is a plain text file. It is not a certificate, not a key and not PEM.
It exists so tests can check that mtls reports a clear error for it.
EOF
{
  echo "This bundle contains a CRL and text, but no certificates."
  cat "$OUT/intermediate-crl.pem"
} >"$B/no-certs-bundle.pem"

# --------------------------------------------------------------------------
# Verification
# --------------------------------------------------------------------------
FAIL=0
ok()   { echo "  ok   $*"; }
bad()  { echo "  FAIL $*" >&2; FAIL=1; }
cd "$OUT"
V=(verify -attime "$ATTIME" -CAfile root-ca.pem -untrusted intermediate-ca.pem)

# expect_ok <desc> <args...>
expect_ok() {
  local desc="$1"; shift
  if out=$(ossl "$@" 2>&1); then ok "$desc"; else bad "$desc: $out"; fi
}
# expect_fail <desc> <regex> <args...>
expect_fail() {
  local desc="$1" re="$2"; shift 2
  if out=$(ossl "$@" 2>&1); then bad "$desc: unexpectedly succeeded"
  elif grep -Eq "$re" <<<"$out"; then ok "$desc"
  else bad "$desc: wrong error: $out"; fi
}

echo "Verifying fixtures:"
for c in server server-rsa2048 server-rsa4096 server-p384 server-ed25519 server-multi server-revoked; do
  expect_ok "$c verifies (sslserver)" "${V[@]}" -purpose sslserver "$c.pem"
done
expect_ok   "server verifies for host localhost" "${V[@]}" -purpose sslserver -verify_hostname localhost server.pem
expect_ok   "server verifies for IP 127.0.0.1"   "${V[@]}" -verify_ip 127.0.0.1 server.pem
expect_ok   "server verifies for IP ::1"         "${V[@]}" -verify_ip ::1 server.pem
expect_ok   "server-chain.pem as untrusted"      verify -attime "$ATTIME" -CAfile root-ca.pem -untrusted server-chain.pem server.pem
expect_ok   "intermediate verifies"              verify -attime "$ATTIME" -CAfile root-ca.pem intermediate-ca.pem
expect_fail "server-expired is expired"          "certificate has expired" "${V[@]}" server-expired.pem
expect_fail "server-notyetvalid not yet valid"   "certificate is not yet valid" "${V[@]}" server-notyetvalid.pem
expect_fail "server-wronghost fails localhost"   "hostname mismatch" "${V[@]}" -verify_hostname localhost server-wronghost.pem
expect_ok   "server-multi ok for www.example.com" "${V[@]}" -verify_hostname www.example.com server-multi.pem
expect_fail "server-multi fails localhost"       "hostname mismatch" "${V[@]}" -verify_hostname localhost server-multi.pem
expect_fail "server-clientauth-only not sslserver" "unsuitable certificate purpose" "${V[@]}" -purpose sslserver server-clientauth-only.pem
if ossl x509 -in server-cn-only.pem -noout -ext subjectAltName 2>/dev/null | grep -q .; then
  bad "server-cn-only has a SAN"; else ok "server-cn-only has no SAN"; fi
expect_ok   "server-revoked ok without CRL check" "${V[@]}" server-revoked.pem
expect_fail "server-revoked rejected with crls.pem" "certificate revoked" "${V[@]}" -crl_check -CRLfile crls.pem server-revoked.pem
expect_fail "server-revoked rejected (crl_check_all)" "certificate revoked" "${V[@]}" -crl_check_all -CRLfile crls.pem server-revoked.pem
expect_ok   "server ok with crl_check_all"       "${V[@]}" -crl_check_all -CRLfile crls.pem server.pem
expect_ok   "client-alice ok with crl_check_all" "${V[@]}" -crl_check_all -CRLfile crls.pem -purpose sslclient client-alice.pem
expect_ok   "self-signed trusted as own anchor"  verify -attime "$ATTIME" -CAfile self-signed.pem -purpose sslserver -verify_hostname localhost self-signed.pem
expect_fail "self-signed untrusted vs root"      "self-signed certificate|unable to get local issuer" "${V[@]}" self-signed.pem
for c in client-alice client-bob-rsa; do
  expect_ok "$c verifies (sslclient)" "${V[@]}" -purpose sslclient "$c.pem"
done
expect_ok   "client-alice-chain.pem as untrusted" verify -attime "$ATTIME" -CAfile root-ca.pem -untrusted client-alice-chain.pem -purpose sslclient client-alice.pem
expect_fail "client-alice-expired is expired"    "certificate has expired" "${V[@]}" -purpose sslclient client-alice-expired.pem
expect_fail "client-serverauth-only not sslclient" "unsuitable certificate purpose" "${V[@]}" -purpose sslclient client-serverauth-only.pem
expect_ok   "client-revoked ok without CRL check" "${V[@]}" -purpose sslclient client-revoked.pem
expect_fail "client-revoked rejected with crls.pem" "certificate revoked" "${V[@]}" -purpose sslclient -crl_check -CRLfile crls.pem client-revoked.pem
expect_fail "client-other untrusted by root-ca"  "unable to get local issuer" "${V[@]}" client-other.pem
expect_ok   "client-other ok vs other-root-ca"   verify -attime "$ATTIME" -CAfile other-root-ca.pem -purpose sslclient client-other.pem
expect_ok   "client-other ok vs all-roots.pem"   verify -attime "$ATTIME" -CAfile all-roots.pem -purpose sslclient client-other.pem
expect_ok   "intermediate CRL signature"         crl -in intermediate-crl.pem -noout -CAfile intermediate-ca.pem
expect_ok   "root CRL signature"                 crl -in root-crl.pem -noout -CAfile root-ca.pem

# key/cert pairs
for c in root-ca intermediate-ca other-root-ca server server-rsa2048 server-rsa4096 server-p384 server-ed25519 \
         server-expired server-notyetvalid server-wronghost server-multi server-cn-only server-clientauth-only \
         server-revoked self-signed client-alice client-alice-expired client-bob-rsa client-other client-serverauth-only client-revoked; do
  a=$(ossl x509 -in "$c.pem" -noout -pubkey | sha256sum)
  b=$(ossl pkey -in "$c.key" -pubout | sha256sum)
  head -1 "$c.key" | grep -q '^-----BEGIN PRIVATE KEY-----$' || bad "$c.key is not unencrypted PKCS#8"
  [ "$a" = "$b" ] && ok "$c.key matches $c.pem" || bad "$c.key does not match $c.pem"
done

# DER copies
for d in *.der; do
  if ossl x509 -in "${d%.der}.pem" -outform DER | cmp -s - "$d"; then ok "$d == DER($(basename "$d" .der).pem)"
  else bad "$d differs from ${d%.der}.pem"; fi
done
cmp -s server.cer server.der && ok "server.cer == server.der" || bad "server.cer differs"

# keys/
rsa_pub=$(ossl pkey -in keys/rsa-pkcs8.pem -pubout)
[ "$(ossl pkey -in keys/rsa-pkcs1.pem -pubout)" = "$rsa_pub" ] && ok "rsa-pkcs1.pem same key" || bad "rsa-pkcs1.pem"
[ "$(ossl pkey -inform DER -in keys/rsa-pkcs1.der -pubout)" = "$rsa_pub" ] && ok "rsa-pkcs1.der same key" || bad "rsa-pkcs1.der"
[ "$(ossl pkey -inform DER -in keys/rsa-pkcs8.der -pubout)" = "$rsa_pub" ] && ok "rsa-pkcs8.der same key" || bad "rsa-pkcs8.der"
[ "$(ossl pkey -in keys/rsa-pkcs8-encrypted.pem -passin pass:secret -pubout)" = "$rsa_pub" ] && ok "rsa-pkcs8-encrypted.pem same key" || bad "rsa-pkcs8-encrypted.pem"
[ "$(ossl pkey -in keys/rsa-traditional-encrypted.pem -passin pass:secret -pubout)" = "$rsa_pub" ] && ok "rsa-traditional-encrypted.pem same key" || bad "rsa-traditional-encrypted.pem"
[ "$(cat keys/rsa-public.pem)" = "$rsa_pub" ] && ok "rsa-public.pem matches" || bad "rsa-public.pem"
ec_pub=$(ossl pkey -in keys/ec-p256-pkcs8.pem -pubout)
[ "$(ossl pkey -in keys/ec-p256-sec1.pem -pubout)" = "$ec_pub" ] && ok "ec-p256-sec1.pem same key" || bad "ec-p256-sec1.pem"
[ "$(ossl pkey -inform DER -in keys/ec-p256.der -pubout)" = "$ec_pub" ] && ok "ec-p256.der same key" || bad "ec-p256.der"
[ "$(cat keys/ec-p256-public.pem)" = "$ec_pub" ] && ok "ec-p256-public.pem matches" || bad "ec-p256-public.pem"
expect_fail "rsa-pkcs8-encrypted needs password" "bad decrypt|unable to load|Could not read" pkey -in keys/rsa-pkcs8-encrypted.pem -passin pass:wrong -noout
chk_hdr() { grep -q -- "$2" "$1" && ok "$1 has '$2'" || bad "$1 lacks '$2'"; }
chk_hdr keys/rsa-pkcs1.pem "BEGIN RSA PRIVATE KEY"
chk_hdr keys/rsa-pkcs8.pem "BEGIN PRIVATE KEY"
chk_hdr keys/rsa-pkcs8-encrypted.pem "BEGIN ENCRYPTED PRIVATE KEY"
chk_hdr keys/rsa-traditional-encrypted.pem "Proc-Type: 4,ENCRYPTED"
chk_hdr keys/rsa-traditional-encrypted.pem "DEK-Info: AES-128-CBC"
chk_hdr keys/ec-p256-sec1.pem "BEGIN EC PRIVATE KEY"
chk_hdr keys/ec-p384-sec1.pem "BEGIN EC PRIVATE KEY"
chk_hdr keys/ed25519-pkcs8.pem "BEGIN PRIVATE KEY"
chk_hdr keys/rsa-public.pem "BEGIN PUBLIC KEY"
chk_hdr keys/ec-p256-public.pem "BEGIN PUBLIC KEY"
expect_ok "backup.csr self-signature" req -in keys/backup.csr -noout -verify

# PKCS#12
expect_ok   "client-alice-modern.p12"      pkcs12 -info -noout -in p12/client-alice-modern.p12 -passin pass:mtls
expect_ok   "client-alice-legacy-rc2.p12 (-legacy)" pkcs12 -legacy -info -noout -in p12/client-alice-legacy-rc2.p12 -passin pass:mtls
expect_fail "client-alice-legacy-rc2.p12 w/o -legacy is unsupported" "unsupported" pkcs12 -info -noout -in p12/client-alice-legacy-rc2.p12 -passin pass:mtls
expect_ok   "client-alice-3des.p12"        pkcs12 -info -noout -in p12/client-alice-3des.p12 -passin pass:mtls
expect_ok   "client-alice-nochain.p12"     pkcs12 -info -noout -in p12/client-alice-nochain.p12 -passin pass:mtls
expect_ok   "client-alice-emptypass.p12"   pkcs12 -info -noout -in p12/client-alice-emptypass.p12 -passin pass:
expect_ok   "client-alice-nopass.p12"      pkcs12 -info -noout -in p12/client-alice-nopass.p12 -passin pass:
expect_ok   "certs-only.p12"               pkcs12 -info -noout -in p12/certs-only.p12 -passin pass:mtls
expect_ok   "server.p12"                   pkcs12 -info -noout -in p12/server.p12 -passin pass:mtls
expect_ok   "client-bob-rsa.p12"           pkcs12 -info -noout -in p12/client-bob-rsa.p12 -passin pass:mtls
expect_fail "client-alice-modern.p12 wrong password" "[Mm]ac verify error" pkcs12 -info -noout -in p12/client-alice-modern.p12 -passin pass:wrong
count_certs() { ossl pkcs12 "${@:2}" -in "$1" -nokeys 2>/dev/null | grep -c 'BEGIN CERTIFICATE' || true; }
[ "$(count_certs p12/client-alice-modern.p12 -passin pass:mtls)" = 3 ] && ok "modern p12 has 3 certs" || bad "modern p12 cert count"
[ "$(count_certs p12/client-alice-nochain.p12 -passin pass:mtls)" = 1 ] && ok "nochain p12 has 1 cert" || bad "nochain p12 cert count"
[ "$(count_certs p12/certs-only.p12 -passin pass:mtls)" = 2 ] && ok "certs-only p12 has 2 certs" || bad "certs-only p12 cert count"
if ossl pkcs12 -in p12/certs-only.p12 -passin pass:mtls -nocerts -nodes 2>/dev/null | grep -q 'PRIVATE KEY'; then
  bad "certs-only.p12 contains a key"; else ok "certs-only.p12 has no key"; fi

# bad/
[ ! -s bad/empty.pem ] && ok "bad/empty.pem is empty" || bad "bad/empty.pem not empty"
[ "$(stat -c %s bad/garbage.bin)" = 4096 ] && ok "bad/garbage.bin is 4096 bytes" || bad "garbage size"
[ "$(stat -c %s bad/truncated.p12)" = 200 ] && ok "bad/truncated.p12 is 200 bytes" || bad "truncated.p12 size"
expect_fail "bad/truncated.der unparsable"     "." x509 -inform DER -in bad/truncated.der -noout
expect_fail "bad/broken-base64.pem unparsable" "." x509 -in bad/broken-base64.pem -noout
expect_fail "bad/garbage.bin unparsable"       "." x509 -inform DER -in bad/garbage.bin -noout
expect_fail "bad/key-as-cert.pem not a cert"   "." x509 -in bad/key-as-cert.pem -noout
expect_fail "bad/not-a-cert.txt not a cert"    "." x509 -in bad/not-a-cert.txt -noout
expect_fail "bad/no-certs-bundle.pem no cert"  "." x509 -in bad/no-certs-bundle.pem -noout
expect_fail "bad/corrupt-mac.p12 MAC error"    "[Mm]ac verify error" pkcs12 -info -noout -in bad/corrupt-mac.p12 -passin pass:mtls
expect_fail "bad/truncated.p12 parse error"    "." pkcs12 -info -noout -in bad/truncated.p12 -passin pass:mtls
if ossl pkcs12 -info -noout -in bad/corrupt-mac.p12 -passin pass:mtls 2>&1 | grep -Eqi "asn1|parse|header too long|too long"; then
  bad "bad/corrupt-mac.p12 fails with a parse error"; else ok "bad/corrupt-mac.p12 is not a parse error"; fi
[ "$(grep -c 'BEGIN CERTIFICATE' bundle-with-text.pem)" = 3 ] && ok "bundle-with-text.pem has 3 certs" || bad "bundle-with-text"

cd "$ROOT_DIR"
if [ "$FAIL" -ne 0 ]; then echo "Fixture verification FAILED" >&2; exit 1; fi

# --------------------------------------------------------------------------
# README.md (static description + PKCS#12 algorithm summary from openssl)
# --------------------------------------------------------------------------
readme_static() {
  cat <<'README'
# TestCerts

Fixtures for the `mtls` test suite: a small PKI (root → intermediate → leaves), an unrelated
second root, CRLs, private keys in many encodings, PKCS#12 files made with different
algorithms, and deliberately broken inputs.

**Do not edit by hand.** Everything here, including this README, is produced by

```sh
scripts/make-test-certs.sh
```

The script wipes `TestCerts/`, regenerates every file with the `openssl` CLI (OpenSSL 3.0,
`openssl ca` with a throwaway config/database in a temp dir, `-md sha256`), then checks
the results with `openssl verify` / `openssl pkcs12` and fails if anything is off.
Keys are generated fresh on each run, so key material, signatures and fingerprints change
between runs; file names, subjects, SANs, serial numbers, validity dates, extensions,
encodings and passwords do not.

**Tests must evaluate at the fixed time 2026-06-01T00:00:00Z (unix `1780272000`)**, e.g.
`openssl verify -attime 1780272000 -CAfile root-ca.pem -untrusted intermediate-ca.pem server.pem`.

## Conventions

- Subjects are `C=US, O=mtls test, CN=<CN>`.
- Every single-certificate `.pem` has a `.der` twin with the same basename (byte-identical to
  `openssl x509 -outform DER`). Multi-certificate bundles (`*-chain.pem`, `server-fullchain.pem`,
  `anchors.pem`, `all-roots.pem`, `bundle-with-text.pem`, `crls.pem`) have no `.der`.
- Every `<name>.key` next to a `<name>.pem` is that certificate's private key as an
  **unencrypted PKCS#8 PEM** (`BEGIN PRIVATE KEY`).
- Validity: "good" = 2025-01-01T00:00:00Z → 2035-01-01T00:00:00Z; roots 2025-01-01 → 2045-01-01;
  "expired" = 2020-01-01 → 2021-01-01; "not yet valid" = 2040-01-01 → 2041-01-01 (all 00:00:00Z).
- CAs: `basicConstraints` critical `CA:TRUE` (intermediate `pathlen:0`), `keyUsage` critical
  `keyCertSign, cRLSign`, SKI + AKI (AKI = own SKI on self-signed roots).
- Leaves: `basicConstraints` critical `CA:FALSE`, `keyUsage` critical `digitalSignature`
  (+ `keyEncipherment` for RSA keys), EKU non-critical, SKI + AKI, SAN (non-critical) as listed.
- "localhost SANs" = `DNS:localhost, IP:127.0.0.1, IP:::1`.
- Serial numbers are fixed (hex): root `1000`, intermediate `1001`, server leaves `2001`–`200C`,
  client leaves `2101`–`2104`, other root `3000`, client-other `3001`, self-signed `4001`.

## Certificate authorities

| file | role | issuer | validity | names | key | password | what it tests |
|---|---|---|---|---|---|---|---|
| `root-ca.pem` / `.der` / `.key` | trust anchor | self | 2025 → 2045 | CN=mtls Test Root CA | ECDSA P-256 | – | the trusted root for everything below |
| `intermediate-ca.pem` / `.der` / `.key` | intermediate CA (pathlen:0), serial 1001 | root-ca | good | CN=mtls Test Intermediate CA | ECDSA P-256 | – | chain building; issuer of all `server*`/`client*` leaves except `client-other` and `self-signed` |
| `other-root-ca.pem` / `.der` / `.key` | unrelated root | self | 2025 → 2045 | CN=mtls Other Root CA | ECDSA P-256 | – | "issued by an untrusted CA"; issuer of `client-other` |
| `anchors.pem` | bundle | – | – | root-ca only | – | – | trust-anchor file with one root (copy of `root-ca.pem`) |
| `all-roots.pem` | bundle | – | – | root-ca + other-root-ca | – | – | trust-anchor file with several roots |

## Server certificates

All issued by the intermediate, CN=localhost, localhost SANs, EKU serverAuth, good validity,
ECDSA P-256 — unless the row says otherwise.

| file | role | issuer | validity | names / SANs | key | password | what it tests |
|---|---|---|---|---|---|---|---|
| `server.pem` / `.der` / `.cer` / `.key` | the normal server identity (serial 2001) | intermediate | good | CN=localhost; localhost SANs | ECDSA P-256 | – | happy path; `.cer` is a DER copy for extension-based format detection |
| `server-chain.pem` | leaf + intermediate | – | – | – | – | – | presenting / loading a chain |
| `server-fullchain.pem` | leaf + intermediate + root | – | – | – | – | – | chain that includes the anchor |
| `server-rsa2048.pem` / `.der` / `.key` | server, RSA | intermediate | good | localhost SANs | RSA 2048 | – | RSA leaf (KU also keyEncipherment) |
| `server-rsa4096.pem` / `.der` / `.key` | server, RSA | intermediate | good | localhost SANs | RSA 4096 | – | large RSA leaf |
| `server-p384.pem` / `.der` / `.key` | server, EC | intermediate | good | localhost SANs | ECDSA P-384 | – | P-384 leaf |
| `server-ed25519.pem` / `.der` / `.key` | server, EdDSA | intermediate | good | localhost SANs | Ed25519 | – | Ed25519 leaf (signed by the ECDSA intermediate) |
| `server-expired.pem` / `.der` / `.key` | server | intermediate | 2020-01-01 → 2021-01-01 | localhost SANs | ECDSA P-256 | – | expired certificate (`certificate has expired`) |
| `server-notyetvalid.pem` / `.der` / `.key` | server | intermediate | 2040-01-01 → 2041-01-01 | localhost SANs | ECDSA P-256 | – | not yet valid (`certificate is not yet valid`) |
| `server-wronghost.pem` / `.der` / `.key` | server | intermediate | good | CN=wrong.example.com; `DNS:wrong.example.com` only | ECDSA P-256 | – | hostname mismatch for `localhost` |
| `server-multi.pem` / `.der` / `.key` | server | intermediate | good | CN=api.example.com; `DNS:api.example.com, DNS:www.example.com` | ECDSA P-256 | – | multi-name cert; "valid for api.example.com, www.example.com, not for X" hints |
| `server-cn-only.pem` / `.der` / `.key` | server | intermediate | good | CN=localhost, **no SAN extension** | ECDSA P-256 | – | must be rejected for host `localhost` under SAN-only matching (note: plain `openssl verify -verify_hostname` still falls back to CN and accepts it) |
| `server-clientauth-only.pem` / `.der` / `.key` | server with wrong EKU | intermediate | good | localhost SANs; EKU **clientAuth** only | ECDSA P-256 | – | wrong purpose for a server (`unsuitable certificate purpose` with `-purpose sslserver`) |
| `server-revoked.pem` / `.der` / `.key` | server, revoked (serial 200C) | intermediate | good | localhost SANs | ECDSA P-256 | – | listed in `intermediate-crl.pem` (keyCompromise, revocationDate 2025-01-01T00:00:00Z); valid without CRL checking |
| `self-signed.pem` / `.der` / `.key` | typical self-signed dev server cert (serial 4001) | self | good | CN=localhost; `DNS:localhost, IP:127.0.0.1`; EKU serverAuth; CA:FALSE, KU digitalSignature | ECDSA P-256 | – | self-signed leaf: untrusted vs root-ca; OK when pinned / used as its own anchor |

## Client certificates

| file | role | issuer | validity | names / SANs | key | password | what it tests |
|---|---|---|---|---|---|---|---|
| `client-alice.pem` / `.der` / `.key` | the normal client identity (serial 2101) | intermediate | good | CN=client-alice; `email:alice@example.com`; EKU clientAuth | ECDSA P-256 | – | happy-path mTLS client |
| `client-alice-chain.pem` | leaf + intermediate | – | – | – | – | – | client presenting a chain |
| `client-alice-expired.pem` / `.der` / `.key` | client | intermediate | 2020-01-01 → 2021-01-01 | CN=client-alice; `email:alice@example.com`; clientAuth | ECDSA P-256 | – | expired client cert |
| `client-bob-rsa.pem` / `.der` / `.key` | client | intermediate | good | CN=client-bob; no SAN; clientAuth | RSA 2048 | – | RSA client |
| `client-other.pem` / `.der` / `.key` | client from another PKI | other-root-ca (directly) | good | CN=client-other; no SAN; clientAuth | ECDSA P-256 | – | client not trusted by root-ca (`unable to get local issuer certificate`); trusted via `all-roots.pem` |
| `client-serverauth-only.pem` / `.der` / `.key` | client with wrong EKU | intermediate | good | CN=client-wrong-eku; no SAN; EKU **serverAuth** only | ECDSA P-256 | – | wrong purpose for a client |
| `client-revoked.pem` / `.der` / `.key` | client, revoked (serial 2105) | intermediate | good | CN=client-revoked; `email:revoked@example.com`; clientAuth | ECDSA P-256 | – | listed in `intermediate-crl.pem` (keyCompromise): IIS 403.13, Apache `certificate revoked` |

## CRLs

| file | role | issuer | validity | contents | what it tests |
|---|---|---|---|---|---|
| `intermediate-crl.pem` | CRL v2, CRL number 0x1000, AKI | intermediate | lastUpdate 2025-01-01T00:00:00Z, nextUpdate 2035-01-01T00:00:00Z | revokes serials 200C (`server-revoked`) and 2105 (`client-revoked`), reason keyCompromise | revocation checking |
| `root-crl.pem` | CRL v2, CRL number 0x1000, AKI | root | same | no revoked certificates | full-chain CRL checking (`-crl_check_all`) |
| `crls.pem` | intermediate-crl + root-crl concatenated | – | – | – | `openssl verify -crl_check[_all] -CRLfile crls.pem` rejects `server-revoked`, accepts `server` |

CRL dates were set with `openssl ca -gencrl -crl_lastupdate/-crl_nextupdate` (supported in 3.0).

## Other bundles

| file | contents | what it tests |
|---|---|---|
| `bundle-with-text.pem` | `server`, `intermediate-ca`, `root-ca`, each preceded by its `openssl x509 -text -noout` dump | PEM parsing that skips text between blocks |

## keys/

Standalone keys (they do **not** belong to any certificate). `rsa-*` files are all the **same**
RSA-2048 key; `ec-p256-*` files (and `ec-p256.der`) are all the **same** P-256 key.

| file | format | password | notes |
|---|---|---|---|
| `keys/rsa-pkcs1.pem` | PKCS#1 PEM, `BEGIN RSA PRIVATE KEY` | – | same RSA key |
| `keys/rsa-pkcs1.der` | PKCS#1 DER | – | same RSA key |
| `keys/rsa-pkcs8.pem` | PKCS#8 PEM, `BEGIN PRIVATE KEY` | – | same RSA key |
| `keys/rsa-pkcs8.der` | PKCS#8 DER | – | same RSA key |
| `keys/rsa-pkcs8-encrypted.pem` | encrypted PKCS#8, `BEGIN ENCRYPTED PRIVATE KEY`, PBES2/PBKDF2-HMAC-SHA256/AES-256-CBC | `secret` | same RSA key |
| `keys/rsa-traditional-encrypted.pem` | legacy PEM encryption, `BEGIN RSA PRIVATE KEY` + `Proc-Type: 4,ENCRYPTED`, `DEK-Info: AES-128-CBC` | `secret` | same RSA key |
| `keys/rsa-public.pem` | SubjectPublicKeyInfo PEM, `BEGIN PUBLIC KEY` | – | public half of the RSA key |
| `keys/ec-p256-sec1.pem` | SEC1 PEM, `BEGIN EC PRIVATE KEY` | – | same P-256 key |
| `keys/ec-p256-pkcs8.pem` | PKCS#8 PEM | – | same P-256 key |
| `keys/ec-p256.der` | PKCS#8 DER | – | same P-256 key |
| `keys/ec-p256-public.pem` | SubjectPublicKeyInfo PEM | – | public half of the P-256 key |
| `keys/ec-p384-sec1.pem` | SEC1 PEM, `BEGIN EC PRIVATE KEY` | – | standalone P-384 key |
| `keys/ed25519-pkcs8.pem` | PKCS#8 PEM | – | standalone Ed25519 key |
| `keys/backup.key` | PKCS#8 PEM, ECDSA P-256 | – | fresh key not used by any certificate ("backup pin") |
| `keys/backup.csr` | PKCS#10 CSR for `backup.key`, CN=mtls backup key | – | compute a backup SPKI pin from a CSR |

Key ↔ certificate map: each certificate's key is the `.key` with the same basename in the top
directory (e.g. `server.pem` ↔ `server.key`, `client-alice.pem` ↔ `client-alice.key`).
No file in `keys/` matches any certificate.

## p12/

Friendly name (`-name`) is `alice` for the client-alice files, `server` for `server.p12`, `bob`
for `client-bob-rsa.p12`; `certs-only.p12` has none. "chain" = intermediate + root via `-certfile`.

| file | contents | password | how it was made | what it tests |
|---|---|---|---|---|
| `p12/client-alice-modern.p12` | client-alice key + cert + chain (3 certs) | `mtls` | OpenSSL 3 defaults | normal import |
| `p12/client-alice-legacy-rc2.p12` | key + cert + chain | `mtls` | `-legacy` | RC2-40 cert bag: OpenSSL 3 needs the legacy provider (`-legacy`); without it reading fails with `unsupported` (RC2-40-CBC) |
| `p12/client-alice-3des.p12` | key + cert + chain | `mtls` | `-certpbe PBE-SHA1-3DES -keypbe PBE-SHA1-3DES -macalg sha1` | Windows-style 3DES export |
| `p12/client-alice-nochain.p12` | key + leaf only | `mtls` | OpenSSL 3 defaults | identity without chain |
| `p12/client-alice-emptypass.p12` | key + cert + chain | empty string | OpenSSL 3 defaults, `-passout pass:` | empty password |
| `p12/client-alice-nopass.p12` | key + cert + chain | none (read with empty password) | `-keypbe NONE -certpbe NONE -nomac -passout pass:` | no encryption and no MAC |
| `p12/certs-only.p12` | intermediate + root certs, no key | `mtls` | `-nokeys` | "PKCS#12 has no private key" |
| `p12/server.p12` | server key + cert + chain | `mtls` | OpenSSL 3 defaults | server identity from PKCS#12 |
| `p12/client-bob-rsa.p12` | client-bob RSA key + leaf | `mtls` | OpenSSL 3 defaults | RSA client identity |

## bad/

| file | contents | what it tests |
|---|---|---|
| `bad/empty.pem` | 0 bytes | empty input |
| `bad/truncated.der` | first half of `server.der` | truncated DER |
| `bad/broken-base64.pem` | `server.pem` with 8 characters in the middle of the 3rd base64 line replaced by `!@#$%^&*` | corrupt base64 inside a PEM block |
| `bad/garbage.bin` | 4096 pseudo-random bytes (fixed seed, first byte 0xFF so it is never DER) | unrecognisable binary |
| `bad/key-as-cert.pem` | copy of `server.key` | a private key where a certificate is expected |
| `bad/corrupt-mac.p12` | `p12/client-alice-modern.p12` with one byte flipped in the middle of the MAC digest (MacData → DigestInfo → digest OCTET STRING, located by parsing the DER) | `openssl pkcs12 -info` fails with `Mac verify error: invalid password?`, not a parse error |
| `bad/truncated.p12` | first 200 bytes of `p12/client-alice-modern.p12` | truncated PKCS#12 (ASN.1 parse error) |
| `bad/not-a-cert.txt` | two lines of plain text | non-PEM text input |
| `bad/no-certs-bundle.pem` | a line of text + `intermediate-crl.pem` (a CRL, no certificates) | PEM bundle with no certificate in it |
README
}

p12info() {
  # <file> <passin> [extra]
  ossl pkcs12 "${@:3}" -info -noout -in "$OUT/p12/$1" -passin "$2" 2>&1 \
    | grep -E '^(MAC|PKCS7|Shrouded|Key bag|Certificate bag|Warning)' | sed 's/^/    /' || true
}
{
  readme_static
  echo
  echo "## PKCS#12 algorithms (output of \`openssl pkcs12 -info -noout\`, OpenSSL $("$OPENSSL" version | awk '{print $2}'))"
  echo
  for spec in "client-alice-modern.p12|pass:mtls" "client-alice-legacy-rc2.p12|pass:mtls|-legacy" \
              "client-alice-3des.p12|pass:mtls" "client-alice-nochain.p12|pass:mtls" \
              "client-alice-emptypass.p12|pass:" "client-alice-nopass.p12|pass:" "certs-only.p12|pass:mtls" \
              "server.p12|pass:mtls" "client-bob-rsa.p12|pass:mtls"; do
    IFS='|' read -r f pw extra <<<"$spec"
    echo "- \`p12/$f\`$( [ -n "${extra:-}" ] && echo " (read with \`$extra\`)" ):"
    echo
    echo '```'
    if [ -n "${extra:-}" ]; then p12info "$f" "$pw" "$extra"; else p12info "$f" "$pw"; fi | sed 's/^    //'
    echo '```'
    echo
  done
  echo "## Serial numbers and fingerprints (this generation)"
  echo
  echo "| file | serial | SHA-256 fingerprint (DER) |"
  echo "|---|---|---|"
  for d in "$OUT"/*.der; do
    n=$(basename "$d")
    s=$(ossl x509 -in "$d" -inform DER -noout -serial | cut -d= -f2)
    h=$(sha256sum "$d" | cut -d' ' -f1)
    echo "| \`$n\` | \`$s\` | \`$h\` |"
  done
} >"$OUT/README.md"

# TestCerts/deep/ (the 100-deep chain) has its own script; the wipe above removed it.
"$(dirname "$0")/make-deep-chain.sh"
"$(dirname "$0")/make-platform-certs.sh"  # TestCerts/platform/ (platform rule fixtures)
"$(dirname "$0")/make-hostile-cert.sh" >/dev/null  # TestCerts/hostile/ (markup in the subject, for the HTML reports)
# TestCerts/rules/ (a violating and a compliant chain per rule of docs/TRUST-RULES.md), likewise.
"$(dirname "$0")/make-trust-rule-certs.sh"
"$(dirname "$0")/make-dsa-inherited.sh"  # TestCerts/dsa-inherited/ (a DSA key inheriting its parameters)

echo "TestCerts regenerated and verified in $OUT"
exit 0
