#!/usr/bin/env bash
# Makes TestCerts/deep/: a valid chain of 100 intermediate CAs in a line under a trusted root, for
# DeepChainTests (issue #9, "a valid 100-deep chain from a trusted root"), then checks it with
# `openssl verify`.
#
# "Depth" is OpenSSL's verify depth (`-verify_depth`, X509_VERIFY_PARAM_set_depth): the number of
# intermediate CA certificates between the leaf and the trust anchor; neither the leaf nor the
# anchor counts. OpenSSL's default limit is 100, so
#   leaf.pem      -> 100 intermediates -> root   (102 certificates) is the longest chain accepted
#                                                  by default;
#   leaf-101.pem  -> 101 intermediates -> root   (103 certificates) is one too many.
#
# Requires: OpenSSL 3.0+ CLI. Usage: scripts/make-deep-chain.sh
#
# The dates are explicit (`openssl ca -startdate/-enddate`), so the fixtures are valid at the fixed
# evaluation time of the tests, 2026-06-01T00:00:00Z (unix 1780272000), whenever they are made. Keys
# are fresh on every run (and not kept): signatures differ between runs; names, serial numbers,
# dates and extensions do not.
#
# scripts/make-test-certs.sh wipes all of TestCerts/, this folder included, and then runs this
# script again.
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT_DIR/TestCerts/deep"
ATTIME=1780272000
COUNT=101 # intermediates made: 100 for leaf.pem, one more for leaf-101.pem

OPENSSL="${OPENSSL:-openssl}"
ossl() { "$OPENSSL" "$@"; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export OPENSSL_CONF="$WORK/empty.cnf"
: >"$OPENSSL_CONF"

ROOT_START=20250101000000Z
ROOT_END=20450101000000Z
GOOD_START=20250101000000Z
GOOD_END=20350101000000Z
SUBJ_PREFIX="/C=US/O=mtls test"

rm -rf "$OUT"
mkdir -p "$OUT" "$WORK/db/newcerts" "$WORK/keys"
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
commonName             = optional

[ ca_deep ]
dir              = $WORK/db
database         = $WORK/db/index.txt
new_certs_dir    = $WORK/db/newcerts
serial           = $WORK/db/serial
default_md       = sha256
policy           = policy_anything
unique_subject   = no
copy_extensions  = none
email_in_dn      = no

[ ca_ext ]
basicConstraints       = critical,CA:TRUE
keyUsage               = critical,keyCertSign,cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid:always

[ leaf_ext ]
basicConstraints       = critical,CA:FALSE
keyUsage               = critical,digitalSignature
extendedKeyUsage       = serverAuth
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid:always
subjectAltName         = DNS:\${ENV::LEAF_NAME}
EOF

genkey() { ossl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:named_curve -out "$1"; }

# issue <out.pem> <CN> <serial-hex> <start> <end> <extensions> <issuer-cert|self> <issuer-key> <subject-key>
issue() {
  local out="$1" cn="$2" serial="$3" start="$4" end="$5" ext="$6" issuer="$7" issuerKey="$8" key="$9"
  local csr="$WORK/req.csr"
  ossl req -new -config "$CNF" -key "$key" -subj "$SUBJ_PREFIX/CN=$cn" -out "$csr"
  echo "$serial" >"$WORK/db/serial"
  local args=(ca -batch -config "$CNF" -name ca_deep -notext -md sha256 -preserveDN -in "$csr" -out "$out"
              -startdate "$start" -enddate "$end" -extfile "$CNF" -extensions "$ext" -keyfile "$issuerKey")
  if [[ "$issuer" == self ]]; then args+=(-selfsign); else args+=(-cert "$issuer"); fi
  ossl "${args[@]}" 2>"$WORK/ca.log" || { cat "$WORK/ca.log" >&2; exit 1; }
}

export LEAF_NAME=unused
genkey "$WORK/keys/root.key"
issue "$OUT/root.pem" "mtls Deep Root CA" 5000 "$ROOT_START" "$ROOT_END" ca_ext self "$WORK/keys/root.key" "$WORK/keys/root.key"

issuer="$OUT/root.pem"
issuerKey="$WORK/keys/root.key"
for i in $(seq 1 "$COUNT"); do
  n=$(printf '%03d' "$i")
  genkey "$WORK/keys/int-$n.key"
  issue "$WORK/int-$n.pem" "mtls Deep Intermediate $n" "$(printf '5%03X' "$i")" "$GOOD_START" "$GOOD_END" ca_ext \
    "$issuer" "$issuerKey" "$WORK/keys/int-$n.key"
  issuer="$WORK/int-$n.pem"
  issuerKey="$WORK/keys/int-$n.key"
done

# leaf.pem under intermediate 100; leaf-101.pem under intermediate 101.
genkey "$WORK/keys/leaf.key"
LEAF_NAME=deep.example.com issue "$OUT/leaf.pem" deep.example.com 6000 "$GOOD_START" "$GOOD_END" leaf_ext \
  "$WORK/int-100.pem" "$WORK/keys/int-100.key" "$WORK/keys/leaf.key"
genkey "$WORK/keys/leaf-101.key"
LEAF_NAME=deeper.example.com issue "$OUT/leaf-101.pem" deeper.example.com 6001 "$GOOD_START" "$GOOD_END" leaf_ext \
  "$WORK/int-101.pem" "$WORK/keys/int-101.key" "$WORK/keys/leaf-101.key"

# Bundles in the order a server sends them: nearest the leaf first.
: >"$OUT/intermediates.pem"
for i in $(seq 100 -1 1); do cat "$WORK/int-$(printf '%03d' "$i").pem" >>"$OUT/intermediates.pem"; done
cp "$WORK/int-101.pem" "$OUT/intermediate-101.pem"
cat "$OUT/leaf.pem" "$OUT/intermediates.pem" >"$OUT/chain.pem"

# --------------------------------------------------------------------------
# Checks: the openssl CLI is the judge.
# --------------------------------------------------------------------------
check() { # check <expected: OK|text> <openssl verify args...>
  local expected="$1"; shift
  local got
  got="$(ossl verify -attime "$ATTIME" "$@" 2>&1 || true)"
  if [[ "$expected" == OK ]]; then
    [[ "$got" == *": OK" ]] || { echo "expected OK from openssl verify $*, got: $got" >&2; exit 1; }
  else
    [[ "$got" == *"$expected"* ]] || { echo "expected '$expected' from openssl verify $*, got: $got" >&2; exit 1; }
  fi
}
cd "$OUT"
check OK -x509_strict -purpose sslserver -verify_hostname deep.example.com -CAfile root.pem -untrusted intermediates.pem leaf.pem
check "certificate chain too long" -CAfile root.pem -untrusted intermediates.pem -untrusted intermediate-101.pem leaf-101.pem
check OK -verify_depth 101 -CAfile root.pem -untrusted intermediates.pem -untrusted intermediate-101.pem leaf-101.pem
check "certificate chain too long" -verify_depth 99 -CAfile root.pem -untrusted intermediates.pem leaf.pem
[[ "$(grep -c 'BEGIN CERTIFICATE' intermediates.pem)" == 100 ]] || { echo "intermediates.pem should hold 100 certificates" >&2; exit 1; }

cat >README.md <<'EOF'
# TestCerts/deep

A chain of 100 intermediate CAs in a line under a trusted root, for
`Tests/MTLSTrustTests/DeepChainTests.swift`. **Do not edit by hand**: made by
`scripts/make-deep-chain.sh` (which `scripts/make-test-certs.sh` does not call; it wipes this folder,
so run this one after it).

"Depth" is OpenSSL's verify depth: the number of intermediate CAs between the leaf and the trust
anchor (neither counts). OpenSSL's default limit is 100.

| file | what | issuer | validity | names |
|---|---|---|---|---|
| `root.pem` | trust anchor, serial 5000 | self | 2025-01-01 → 2045-01-01 | CN=mtls Deep Root CA |
| `intermediates.pem` | 100 intermediates, nearest the leaf first (`Intermediate 100` … `001`), serials 5001–5064 | root → 001 → … → 100 | 2025-01-01 → 2035-01-01 | CN=mtls Deep Intermediate NNN |
| `intermediate-101.pem` | one more, serial 5065 | Intermediate 100 | 2025-01-01 → 2035-01-01 | CN=mtls Deep Intermediate 101 |
| `leaf.pem` | server leaf at depth 100 (chain of 102 certificates), serial 6000 | Intermediate 100 | 2025-01-01 → 2035-01-01 | CN=deep.example.com, DNS:deep.example.com |
| `leaf-101.pem` | server leaf at depth 101 (chain of 103), serial 6001 | Intermediate 101 | 2025-01-01 → 2035-01-01 | CN=deeper.example.com, DNS:deeper.example.com |
| `chain.pem` | `leaf.pem` + `intermediates.pem`, as a server sends it | – | – | – |

All keys are ECDSA P-256 and are not kept. CAs: `basicConstraints` critical `CA:TRUE` (no path
length), `keyUsage` critical `keyCertSign, cRLSign`, SKI + AKI. Leaves: `basicConstraints` critical
`CA:FALSE`, `keyUsage` critical `digitalSignature`, EKU `serverAuth`, SKI + AKI, SAN.

Checked by the script at 2026-06-01T00:00:00Z (`-attime 1780272000`):
`openssl verify -CAfile root.pem -untrusted intermediates.pem leaf.pem` is OK (also with
`-x509_strict`); `leaf-101.pem` fails with "certificate chain too long" unless `-verify_depth 101`;
`leaf.pem` with `-verify_depth 99` fails the same way.
EOF
echo "TestCerts/deep: root, 101 intermediates, 2 leaves; openssl verify checks passed"
