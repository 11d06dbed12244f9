#!/usr/bin/env bash
# Makes TestCerts/rules/: for every rule of docs/TRUST-RULES.md that has one, a violating chain
# (bad.pem) and its compliant twin (good.pem), for TrustRuleFixtureTests.
#
# Each TestCerts/rules/<rule-id>/ holds:
#   bad.pem, good.pem        the leaf first, then the intermediates offered
#   anchors.pem              the trust anchors (bad-anchors.pem / good-anchors.pem when they differ)
#   host                     (optional) the host name to check
#   key-usage                (optional) the --key-usage requirement
#   email                    (optional) the --email requirement
#   bad-crls.pem, good-crls.pem  (optional) CRLs to check revocation against
# The test evaluates both at 2026-06-01T00:00:00Z under the rule's first profile, with
# --partial-chain when an anchor is not self-issued (as x509-limbo's runner does): bad.pem must be
# refused with the rule's code, good.pem accepted.
#
# Called at the end of scripts/make-test-certs.sh; appends its listing to TestCerts/README.md.
# Requires: OpenSSL 3.0+ CLI. Usage: scripts/make-trust-rule-certs.sh
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT_DIR/TestCerts/rules"
OPENSSL="${OPENSSL:-openssl}"
ossl() { "$OPENSSL" "$@"; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export OPENSSL_CONF="$WORK/empty.cnf"
: >"$OPENSSL_CONF"

START=20250101000000Z
END=20350101000000Z
ROOT_END=20450101000000Z

rm -rf "$OUT"
mkdir -p "$OUT" "$WORK/db/newcerts"
: >"$WORK/db/index.txt"

CNF="$WORK/ca.cnf"
cat >"$CNF" <<EOF
[ req ]
distinguished_name = req_dn
prompt             = no
[ req_dn ]
CN = placeholder

[ policy_anything ]
countryName            = optional
organizationName       = optional
organizationalUnitName = optional
commonName             = optional
emailAddress           = optional

[ ca_rules ]
dir              = $WORK/db
database         = $WORK/db/index.txt
new_certs_dir    = $WORK/db/newcerts
serial           = $WORK/db/serial
default_md       = sha256
policy           = policy_anything
unique_subject   = no
copy_extensions  = none
email_in_dn      = no
EOF

SERIAL=$((0x5000))

# key <out> [type]: a P-256 key (or secp256k1 / explicit / rsa2048)
key() {
  case "${2:-p256}" in
    p256) ossl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:named_curve -out "$1" ;;
    secp256k1) ossl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:secp256k1 -pkeyopt ec_param_enc:named_curve -out "$1" ;;
    explicit) ossl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:explicit -out "$1" ;;
    rsa2048) ossl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" ;;
  esac
}

# cert <out.pem> <subject> <key> <issuer-stem|self> <extensions> [serial-hex] [md] [end]
# Issues with `openssl ca` at fixed dates. The issuer stem names <stem>.pem and <stem>.key.
cert() {
  local out="$1" subj="$2" k="$3" issuer="$4" ext="$5" serial="${6:-}" md="${7:-sha256}" end="${8:-$END}"
  if [ -z "$serial" ]; then SERIAL=$((SERIAL + 1)); serial=$(printf '%X' "$SERIAL"); fi
  printf '%s\n' "$serial" >"$WORK/db/serial"
  printf '[ ext ]\n%b\n' "$ext" >"$WORK/ext.cnf"
  ossl req -new -config "$CNF" -key "$k" -subj "$subj" -multivalue-rdn -out "$WORK/req.csr"
  local args=(ca -batch -config "$CNF" -name ca_rules -notext -md "$md" -preserveDN -in "$WORK/req.csr" -out "$out"
              -startdate "$START" -enddate "$end" -extfile "$WORK/ext.cnf" -extensions ext)
  if [ "$issuer" = self ]; then args+=(-selfsign -keyfile "$k"); else args+=(-cert "$issuer.pem" -keyfile "$issuer.key"); fi
  ossl "${args[@]}" 2>"$WORK/ca.log" || { cat "$WORK/ca.log" >&2; echo "make-trust-rule-certs: cannot issue $out" >&2; exit 1; }
  ossl x509 -in "$out" -out "$out.tmp" && mv "$out.tmp" "$out"  # PEM only, no text
}

CA_EXT='basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always'
ROOT_EXT='basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash'
# The compliant leaf: every rule of both profiles holds for it.
LEAF_BC='basicConstraints = critical,CA:FALSE'
LEAF_KU='keyUsage = critical,digitalSignature'
LEAF_EKU='extendedKeyUsage = serverAuth'
LEAF_IDS='subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always'
LEAF_SAN='subjectAltName = DNS:rules.example'
LEAF_EXT="$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\n$LEAF_SAN"
LEAF_SUBJ='/O=mtls rules/CN=rules.example'

# The shared hierarchy: root -> intermediate.
C="$WORK/common"; mkdir -p "$C"
key "$C/root.key"
cert "$C/root.pem" "/O=mtls rules/CN=mtls Rules Root CA" "$C/root.key" self "$ROOT_EXT" 1000 sha256 "$ROOT_END"
key "$C/int.key"
cert "$C/int.pem" "/O=mtls rules/CN=mtls Rules Intermediate CA" "$C/int.key" "$C/root" "$CA_EXT" 1001
key "$C/leaf.key"

# pair <rule-id> <bad-leaf-extensions> [good-leaf-extensions]: a leaf pair under the shared intermediate.
# LEAF_KEY, BAD_KEY, BAD_SUBJ, GOOD_SUBJ, BAD_SERIAL, BAD_MD override the defaults for the bad leaf.
pair() {
  local id="$1" bad="$2" good="${3:-$LEAF_EXT}" d="$OUT/$1"
  mkdir -p "$d"
  local badkey="${BAD_KEY:-$C/leaf.key}"
  cert "$WORK/bad.pem" "${BAD_SUBJ:-$LEAF_SUBJ}" "$badkey" "$C/int" "$bad" "${BAD_SERIAL:-}" "${BAD_MD:-sha256}"
  cert "$WORK/good.pem" "${GOOD_SUBJ:-$LEAF_SUBJ}" "$C/leaf.key" "$C/int" "$good"
  cat "$WORK/bad.pem" "$C/int.pem" >"$d/bad.pem"
  cat "$WORK/good.pem" "$C/int.pem" >"$d/good.pem"
  cp "$C/root.pem" "$d/anchors.pem"
}

# ca_pair <rule-id> <bad-intermediate-extensions> [good-intermediate-extensions]: the rule is about
# the intermediate; the leaves are alike (CA_PAIR_LEAF), unless the bad intermediate cannot issue
# that leaf (CA_PAIR_BAD_LEAF).
ca_pair() {
  local id="$1" bad="$2" good="${3:-$CA_EXT}" d="$OUT/$1"
  mkdir -p "$d" "$WORK/$id"
  local w="$WORK/$id"
  key "$w/bad-int.key"; key "$w/good-int.key"
  cert "$w/bad-int.pem" "/O=mtls rules/CN=mtls Rules Bad Intermediate" "$w/bad-int.key" "$C/root" "$bad"
  cert "$w/good-int.pem" "/O=mtls rules/CN=mtls Rules Good Intermediate" "$w/good-int.key" "$C/root" "$good"
  cert "$w/bad-leaf.pem" "$LEAF_SUBJ" "$C/leaf.key" "$w/bad-int" "${CA_PAIR_BAD_LEAF:-${CA_PAIR_LEAF:-$LEAF_EXT}}"
  cert "$w/good-leaf.pem" "$LEAF_SUBJ" "$C/leaf.key" "$w/good-int" "${CA_PAIR_LEAF:-$LEAF_EXT}"
  cat "$w/bad-leaf.pem" "$w/bad-int.pem" >"$d/bad.pem"
  cat "$w/good-leaf.pem" "$w/good-int.pem" >"$d/good.pem"
  cp "$C/root.pem" "$d/anchors.pem"
}

# root_pair <rule-id> <bad-root-extensions> [good-root-extensions]: the rule is about the anchor.
root_pair() {
  local id="$1" bad="$2" good="${3:-$ROOT_EXT}" d="$OUT/$1"
  mkdir -p "$d" "$WORK/$id"
  local w="$WORK/$id"
  key "$w/bad-root.key"; key "$w/good-root.key"
  cert "$w/bad-root.pem" "/O=mtls rules/CN=mtls Rules Bad Root" "$w/bad-root.key" self "$bad" "" sha256 "$ROOT_END"
  cert "$w/good-root.pem" "/O=mtls rules/CN=mtls Rules Good Root" "$w/good-root.key" self "$good" "" sha256 "$ROOT_END"
  cert "$w/bad-leaf.pem" "$LEAF_SUBJ" "$C/leaf.key" "$w/bad-root" "$LEAF_EXT"
  cert "$w/good-leaf.pem" "$LEAF_SUBJ" "$C/leaf.key" "$w/good-root" "$LEAF_EXT"
  cp "$w/bad-leaf.pem" "$d/bad.pem"; cp "$w/good-leaf.pem" "$d/good.pem"
  cp "$w/bad-root.pem" "$d/bad-anchors.pem"; cp "$w/good-root.pem" "$d/good-anchors.pem"
}

# A few encodings the openssl CLI will not write: the compliant leaf's TBSCertificate is re-encoded
# (python3, stdlib only) and signed again by the intermediate with `openssl dgst -sign`.
cat >"$WORK/der-patch.py" <<'PY'
# der-patch.py OP IN.der TBS.out | assemble IN.der TBS SIG OUT.der
import sys
def parse(b, i=0):
    tag=b[i]; l=b[i+1]; j=i+2
    if l & 0x80:
        n=l&0x7f; l=int.from_bytes(b[j:j+n],'big'); j+=n
    return tag, b[j:j+l], j+l
def enc(tag, content):
    n=len(content)
    h=bytes([n]) if n<0x80 else (lambda lb: bytes([0x80|len(lb)])+lb)(n.to_bytes((n.bit_length()+7)//8,'big'))
    return bytes([tag])+h+content
def children(c):
    out=[];i=0
    while i<len(c):
        t,v,e=parse(c,i); out.append((t,v)); i=e
    return out
op=sys.argv[1]
_,cert,_=parse(open(sys.argv[2],'rb').read())
parts=children(cert)
if op=='assemble':
    tbs=open(sys.argv[3],'rb').read(); sig=open(sys.argv[4],'rb').read()
    open(sys.argv[5],'wb').write(enc(0x30, tbs+enc(*parts[1])+enc(0x03, b'\0'+sig)))
    sys.exit(0)
tbs=children(parts[0][1])
if op=='generalized-notafter':
    vi=[k for k,(t,v) in enumerate(tbs) if t==0x30][2]
    nb,na=children(tbs[vi][1])
    assert na[0]==0x17
    tbs[vi]=(0x30, enc(*nb)+enc(0x18, (b'20' if int(na[1][:2])<50 else b'19')+na[1]))
elif op=='issuer-printable':
    ii=[k for k,(t,v) in enumerate(tbs) if t==0x30][1]
    sets=[]
    for st,sv in children(tbs[ii][1]):
        atvs=[]
        for at,av in children(sv):
            oid,val=children(av)
            if val[0]==0x0c: val=(0x13,val[1])
            atvs.append(enc(at, enc(*oid)+enc(*val)))
        sets.append(enc(st, b''.join(atvs)))
    tbs[ii]=(0x30, b''.join(sets))
elif op=='v1':
    assert tbs[0][0]==0xA0; tbs=tbs[1:]
open(sys.argv[3],'wb').write(enc(0x30, b''.join(enc(t,v) for t,v in tbs)))
PY

# patched_pair <rule-id> <generalized-notafter|v1|issuer-printable>: bad.pem is good.pem with that
# change (issuer-printable: the issuer name's UTF8Strings re-encoded as PrintableStrings).
patched_pair() {
  local id="$1" op="$2" d="$OUT/$1"
  pair "$id" "$LEAF_EXT"
  ossl x509 -in "$d/good.pem" -outform DER -out "$WORK/leaf.der"
  python3 "$WORK/der-patch.py" "$op" "$WORK/leaf.der" "$WORK/tbs.der"
  ossl dgst -sha256 -sign "$C/int.key" -out "$WORK/sig.bin" "$WORK/tbs.der"
  python3 "$WORK/der-patch.py" assemble "$WORK/leaf.der" "$WORK/tbs.der" "$WORK/sig.bin" "$WORK/bad.der"
  ossl x509 -in "$WORK/bad.der" -inform DER -out "$WORK/bad.pem"
  cat "$WORK/bad.pem" "$C/int.pem" >"$d/bad.pem"
}

# --------------------------------------------------------------------------------------------
# RFC 5280 (both profiles)
# --------------------------------------------------------------------------------------------
BAD_SERIAL=00 pair rfc5280.serial "$LEAF_EXT"
patched_pair rfc5280.validity-encoding generalized-notafter
pair rfc5280.unknown-critical-extension "$LEAF_EXT\n1.3.6.1.4.1.55555.1 = critical,DER:0500" "$LEAF_EXT\n1.3.6.1.4.1.55555.1 = DER:0500"
pair rfc5280.aki-missing "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = none\n$LEAF_SAN"
pair rfc5280.aki-critical "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = critical,keyid:always\n$LEAF_SAN"
CA_PAIR_BAD_LEAF="$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = issuer\n$LEAF_SAN" ca_pair rfc5280.ski-missing 'basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = none\nauthorityKeyIdentifier = keyid:always'
ca_pair rfc5280.ski-critical 'basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = critical,hash\nauthorityKeyIdentifier = keyid:always'
ca_pair rfc5280.ca-ku-missing 'basicConstraints = critical,CA:TRUE\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always'
pair rfc5280.ku-certsign-non-ca "$LEAF_BC\nkeyUsage = critical,digitalSignature,keyCertSign\n$LEAF_EKU\n$LEAF_IDS\n$LEAF_SAN"
pair rfc5280.key-usage-required "$LEAF_EXT" "$LEAF_BC\nkeyUsage = critical,digitalSignature,keyAgreement\n$LEAF_EKU\n$LEAF_IDS\n$LEAF_SAN"
echo "digitalSignature,keyAgreement" >"$OUT/rfc5280.key-usage-required/key-usage"
pair rfc5280.ku-empty "$LEAF_BC\nkeyUsage = DER:030100\n$LEAF_EKU\n$LEAF_IDS\n$LEAF_SAN"
pair rfc5280.policies-syntax "$LEAF_EXT\ncertificatePolicies = 2.23.140.1.2.1, 2.23.140.1.2.1" "$LEAF_EXT\ncertificatePolicies = 2.23.140.1.2.1"
pair rfc5280.san-empty "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DER:3000"
pair rfc5280.san-dns-syntax "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DNS:rules.example, DNS:bad_name.rules.example"
pair rfc5280.san-email-syntax "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DNS:rules.example, email:not-a-mailbox" \
  "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DNS:rules.example, email:user@rules.example"
ca_pair rfc5280.bc-not-critical 'basicConstraints = CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always'
root_pair rfc5280.anchor-bc-not-critical 'basicConstraints = CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash'
ca_pair rfc5280.ca-bit-missing 'basicConstraints = critical,CA:FALSE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always'
pair rfc5280.pathlen-non-ca "basicConstraints = critical,DER:3003020100\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\n$LEAF_SAN"
pair rfc5280.eku-purpose "$LEAF_BC\n$LEAF_KU\nextendedKeyUsage = clientAuth\n$LEAF_IDS\n$LEAF_SAN"
pair rfc5280.eku-syntax "$LEAF_BC\n$LEAF_KU\nextendedKeyUsage = DER:3000\n$LEAF_IDS\n$LEAF_SAN"
pair rfc5280.crldp-syntax "$LEAF_EXT\ncrlDistributionPoints = DER:3000" "$LEAF_EXT\ncrlDistributionPoints = URI:http://crl.rules.example/int.crl"
pair rfc5280.aia-critical "$LEAF_EXT\nauthorityInfoAccess = critical,OCSP;URI:http://ocsp.rules.example/" "$LEAF_EXT\nauthorityInfoAccess = OCSP;URI:http://ocsp.rules.example/"
pair rfc5280.aia-syntax "$LEAF_EXT\nauthorityInfoAccess = DER:3000" "$LEAF_EXT\nauthorityInfoAccess = caIssuers;URI:http://rules.example/int.cer"
key "$WORK/explicit.key" explicit
BAD_KEY="$WORK/explicit.key" pair rfc5280.explicit-curve "$LEAF_EXT"
pair rfc5280.email "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DNS:rules.example, email:other@rules.example" \
  "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DNS:rules.example, email:user@rules.example"
echo "user@rules.example" >"$OUT/rfc5280.email/email"

# CRLs: with --crl every certificate must be covered; the intermediate's CRL lacks CRLNumber in the
# violating set. (`openssl ca -gencrl` writes CRLNumber only when the CA has a crlnumber file.)
d="$OUT/rfc5280.crl-number"; pair rfc5280.crl-number "$LEAF_EXT"; cp "$d/good.pem" "$d/bad.pem"
crl() {  # crl <issuer-stem> <out> <with-number: yes|no>
  if [ "$3" = yes ]; then echo 01 >"$WORK/db/crlnumber"; sed 's|^serial .*|&\ncrlnumber        = '"$WORK"'/db/crlnumber|' "$CNF" >"$WORK/crl.cnf"
  else cp "$CNF" "$WORK/crl.cnf"; fi
  printf '[ crl_ext ]\nauthorityKeyIdentifier = keyid:always\n' >>"$WORK/crl.cnf"
  ossl ca -gencrl -batch -config "$WORK/crl.cnf" -name ca_rules -cert "$1.pem" -keyfile "$1.key" -md sha256 -crlexts crl_ext \
    -crl_lastupdate "$START" -crl_nextupdate "$END" -out "$2" 2>"$WORK/ca.log" || { cat "$WORK/ca.log" >&2; exit 1; }
}
crl "$C/root" "$WORK/root.crl" yes
crl "$C/int" "$WORK/int-numbered.crl" yes
crl "$C/int" "$WORK/int-unnumbered.crl" no
cat "$WORK/root.crl" "$WORK/int-unnumbered.crl" >"$d/bad-crls.pem"
cat "$WORK/root.crl" "$WORK/int-numbered.crl" >"$d/good-crls.pem"

# Name and policy constraints live in the intermediate.
CA_BASE='basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always'
ca_pair rfc5280.nc-not-critical "$CA_BASE\nnameConstraints = permitted;DNS:rules.example" "$CA_BASE\nnameConstraints = critical,permitted;DNS:rules.example"
ca_pair rfc5280.nc-empty "$CA_BASE\nnameConstraints = critical,DER:3000" "$CA_BASE\nnameConstraints = critical,excluded;DNS:other.example"
ca_pair rfc5280.nc-dns-syntax "$CA_BASE\nnameConstraints = critical,permitted;DNS:.rules.example" "$CA_BASE\nnameConstraints = critical,permitted;DNS:rules.example"
ca_pair rfc5280.nc-address-syntax "$CA_BASE\nnameConstraints = critical,excluded;IP:10.0.0.0/255.0.255.0" "$CA_BASE\nnameConstraints = critical,excluded;IP:10.0.0.0/255.0.0.0"
ca_pair rfc5280.nc-violation "$CA_BASE\nnameConstraints = critical,permitted;DNS:other.example" "$CA_BASE\nnameConstraints = critical,permitted;DNS:rules.example"
CA_PAIR_LEAF="$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DNS:*.rules.example" \
  ca_pair rfc5280.nc-wildcard-excluded "$CA_BASE\nnameConstraints = critical,excluded;DNS:secret.rules.example" "$CA_BASE\nnameConstraints = critical,excluded;DNS:other.example"
ca_pair rfc5280.pc-not-critical "$CA_BASE\npolicyConstraints = inhibitPolicyMapping:1" "$CA_BASE\npolicyConstraints = critical,inhibitPolicyMapping:1"
# Certificate policies (RFC 5280 6.1 from {anyPolicy}; the anchor's own extensions, RFC 5937), and
# a critical certificatePolicies with a qualifier RFC 5280 does not define (policy 1.2.3, qualifier
# 1.2.3.4 "hi", the value of Chromium's unknown-critical-policy-qualifier case).
CA_PAIR_LEAF="$LEAF_EXT\ncertificatePolicies = 1.3.6.1.4.1.55555.2.2" \
  ca_pair rfc5280.policy-processing "$CA_BASE\ncertificatePolicies = 1.3.6.1.4.1.55555.2.1\npolicyConstraints = critical,requireExplicitPolicy:0" \
  "$CA_BASE\ncertificatePolicies = 1.3.6.1.4.1.55555.2.2\npolicyConstraints = critical,requireExplicitPolicy:0"
root_pair rfc5280.anchor-policy-constraints "$ROOT_EXT\npolicyConstraints = critical,requireExplicitPolicy:0"
pair rfc5280.policies-critical-qualifier "$LEAF_EXT\ncertificatePolicies = critical,DER:3013301106022A03300B300906032A03040C026869" "$LEAF_EXT\ncertificatePolicies = critical,1.2.3"
pair rfc5280.eku-sgc-not-server "$LEAF_BC\n$LEAF_KU\nextendedKeyUsage = nsSGC, msSGC\n$LEAF_IDS\n$LEAF_SAN"

# A leaf in the nc-in-ee pair carries name constraints itself.
pair rfc5280.nc-in-ee "$LEAF_EXT\nnameConstraints = critical,permitted;DNS:rules.example"

# path length: root -> int (pathlen:0) -> int2 -> leaf, against root -> int (pathlen:1) -> int2 -> leaf.
d="$OUT/rfc5280.path-length"; mkdir -p "$d"; w="$WORK/pathlen"; mkdir -p "$w"
for n in 0 1; do
  key "$w/int$n.key"; key "$w/sub$n.key"
  cert "$w/int$n.pem" "/O=mtls rules/CN=mtls Rules Pathlen $n CA" "$w/int$n.key" "$C/root" "basicConstraints = critical,CA:TRUE,pathlen:$n\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always"
  cert "$w/sub$n.pem" "/O=mtls rules/CN=mtls Rules Pathlen $n Sub CA" "$w/sub$n.key" "$w/int$n" "$CA_EXT"
  cert "$w/leaf$n.pem" "$LEAF_SUBJ" "$C/leaf.key" "$w/sub$n" "$LEAF_EXT"
done
cat "$w/leaf0.pem" "$w/sub0.pem" "$w/int0.pem" >"$d/bad.pem"
cat "$w/leaf1.pem" "$w/sub1.pem" "$w/int1.pem" >"$d/good.pem"
cp "$C/root.pem" "$d/anchors.pem"

# The anchor is the intermediate itself (x509-limbo's "every trusted certificate is an anchor"):
# without an authorityKeyIdentifier it is refused even with --partial-chain.
d="$OUT/rfc5280.anchor-aki-missing"; mkdir -p "$d"; w="$WORK/anchor-aki"; mkdir -p "$w"
key "$w/bad-int.key"; key "$w/good-int.key"
cert "$w/bad-int.pem" "/O=mtls rules/CN=mtls Rules Cross-signed CA" "$w/bad-int.key" "$C/root" 'basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = none'
cert "$w/good-int.pem" "/O=mtls rules/CN=mtls Rules Cross-signed CA" "$w/good-int.key" "$C/root" "$CA_EXT"
cert "$w/bad-leaf.pem" "$LEAF_SUBJ" "$C/leaf.key" "$w/bad-int" "$LEAF_EXT"
cert "$w/good-leaf.pem" "$LEAF_SUBJ" "$C/leaf.key" "$w/good-int" "$LEAF_EXT"
cp "$w/bad-leaf.pem" "$d/bad.pem"; cp "$w/good-leaf.pem" "$d/good.pem"
cp "$w/bad-int.pem" "$d/bad-anchors.pem"; cp "$w/good-int.pem" "$d/good-anchors.pem"

# --------------------------------------------------------------------------------------------
# Web PKI (CA/Browser Forum Baseline Requirements)
# --------------------------------------------------------------------------------------------
patched_pair webpki.version v1
patched_pair webpki.issuer-name issuer-printable
key "$WORK/k1.key" secp256k1
BAD_KEY="$WORK/k1.key" pair webpki.key-algorithm "$LEAF_EXT"
BAD_MD=sha224 pair webpki.signature-algorithm "$LEAF_EXT"
pair webpki.ee.eku-missing "$LEAF_BC\n$LEAF_KU\n$LEAF_IDS\n$LEAF_SAN"
pair webpki.ee.eku-any "$LEAF_BC\n$LEAF_KU\nextendedKeyUsage = serverAuth, anyExtendedKeyUsage\n$LEAF_IDS\n$LEAF_SAN"
pair webpki.ee.eku-forbidden "$LEAF_BC\n$LEAF_KU\nextendedKeyUsage = serverAuth, codeSigning\n$LEAF_IDS\n$LEAF_SAN" "$LEAF_BC\n$LEAF_KU\nextendedKeyUsage = serverAuth, clientAuth\n$LEAF_IDS\n$LEAF_SAN"
pair webpki.ee.eku-critical "$LEAF_BC\n$LEAF_KU\nextendedKeyUsage = critical,serverAuth\n$LEAF_IDS\n$LEAF_SAN"
ca_pair webpki.ca.eku-forbidden "$CA_BASE\nextendedKeyUsage = serverAuth, emailProtection" "$CA_BASE\nextendedKeyUsage = serverAuth, clientAuth"
root_pair webpki.root.eku "$ROOT_EXT\nextendedKeyUsage = serverAuth"
pair webpki.ee.is-ca "basicConstraints = critical,CA:TRUE\nkeyUsage = critical,digitalSignature,keyCertSign\n$LEAF_EKU\n$LEAF_IDS\n$LEAF_SAN"
pair webpki.ee.key-usage "$LEAF_BC\nkeyUsage = critical,digitalSignature,keyEncipherment\n$LEAF_EKU\n$LEAF_IDS\n$LEAF_SAN"
ca_pair webpki.ca.key-usage 'basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign,keyEncipherment\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always'
pair webpki.ee.san-missing "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS"
pair webpki.ee.san-type "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DNS:rules.example, URI:https://rules.example/"
pair webpki.ee.san-critical "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = critical,DNS:rules.example"
BAD_SUBJ='/O=mtls rules/CN=other.rules.example' pair webpki.ee.cn "$LEAF_EXT"
BAD_SUBJ='/O=mtls rules/CN=rules.co.uk' GOOD_SUBJ='/O=mtls rules/CN=rules.co.uk' \
  pair webpki.ee.public-suffix-wildcard "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DNS:*.co.uk" \
  "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\n$LEAF_IDS\nsubjectAltName = DNS:rules.co.uk"
echo "rules.co.uk" >"$OUT/webpki.ee.public-suffix-wildcard/host"
pair webpki.aki.key-id "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = issuer:always\n$LEAF_SAN"
pair webpki.aki.content "$LEAF_BC\n$LEAF_KU\n$LEAF_EKU\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always, issuer:always\n$LEAF_SAN"
pair webpki.aia.content "$LEAF_EXT\nauthorityInfoAccess = OCSP;URI:ldap://ocsp.rules.example/" "$LEAF_EXT\nauthorityInfoAccess = OCSP;URI:http://ocsp.rules.example/"
pair webpki.crldp.content "$LEAF_EXT\ncrlDistributionPoints = critical,URI:http://crl.rules.example/int.crl" "$LEAF_EXT\ncrlDistributionPoints = URI:http://crl.rules.example/int.crl"
pair webpki.policies.content "$LEAF_EXT\ncertificatePolicies = 2.5.29.32.0" "$LEAF_EXT\ncertificatePolicies = 2.23.140.1.2.1"
BAD_SUBJ='/O=mtls rules+OU=rules/CN=rules.example' pair webpki.subject-encoding "$LEAF_EXT"

count=$(find "$OUT" -mindepth 1 -maxdepth 1 -type d | wc -l)

if [ -f "$ROOT_DIR/TestCerts/README.md" ]; then
  # Run alone, the script replaces its own section (make-test-certs.sh writes a fresh README).
  sed -i '/^## rules\/ (scripts\/make-trust-rule-certs.sh)$/,$d' "$ROOT_DIR/TestCerts/README.md"
  sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$ROOT_DIR/TestCerts/README.md"
  {
    echo
    echo "## rules/ (scripts/make-trust-rule-certs.sh)"
    echo
    echo "One directory per rule of docs/TRUST-RULES.md that has a fixture pair ($count): \`bad.pem\` (violates"
    echo "the rule; leaf first, then intermediates), \`good.pem\` (its compliant twin), \`anchors.pem\` or"
    echo "\`bad-anchors.pem\`/\`good-anchors.pem\`, and optionally \`host\`, \`email\`, \`key-usage\`. Checked by"
    echo "TrustRuleFixtureTests at 2026-06-01T00:00:00Z."
    echo
    for d in "$OUT"/*/; do echo "- \`rules/$(basename "$d")/\`: $(cd "$d" && ls | tr '\n' ' ')"; done
  } >>"$ROOT_DIR/TestCerts/README.md"
fi
echo "TestCerts/rules: $count rule fixture pairs in $OUT"
