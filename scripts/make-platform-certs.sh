#!/usr/bin/env bash
# Regenerates TestCerts/platform/: for every platform rule of
# Sources/MTLSTrust/Platform/PlatformRules.swift a certificate that breaks it and a
# compliant twin, issued by a private root (root-ca) or a stand-in for a publicly
# trusted root (public-root-ca; tests tell the evaluator it is public). Then appends
# the fixture list to TestCerts/README.md (between the platform-fixtures markers).
#
# Requires: OpenSSL 3.0+ CLI, coreutils (GNU date).
# Usage:    scripts/make-platform-certs.sh   (also run by scripts/make-test-certs.sh)
#
# Every fixture is valid at the suite's fixed time 2026-06-01T00:00:00Z. Leaves
# start at 2026-01-01T00:00:00Z unless the table says otherwise; validity is exact
# (notAfter - notBefore = N * 86400 s), set with openssl ca -startdate/-enddate.
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT_DIR/TestCerts/platform"
OPENSSL="${OPENSSL:-openssl}"
ossl() { "$OPENSSL" "$@"; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export OPENSSL_CONF="$WORK/empty.cnf"
: >"$OPENSSL_CONF"

rm -rf "$OUT"
mkdir -p "$OUT"

START=20260101000000Z
# plus_days <YYYYMMDD> <days> -> YYYYMMDDHHMMSSZ
plus_days() { date -u -d "$1 +$2 days" +%Y%m%d000000Z; }

CNF="$WORK/ca.cnf"
{
  cat <<'EOF2'
[ req ]
distinguished_name = req_dn
prompt             = no
[ req_dn ]
CN = placeholder
[ policy_anything ]
commonName             = optional
organizationName       = optional
countryName            = optional
EOF2
  for ca in root public; do
    d="$WORK/db/$ca"
    mkdir -p "$d/newcerts"
    : >"$d/index.txt"
    echo 1000 >"$d/serial"
    cat <<EOF2

[ ca_$ca ]
dir              = $d
database         = $d/index.txt
new_certs_dir    = $d/newcerts
serial           = $d/serial
default_md       = sha256
policy           = policy_anything
unique_subject   = no
copy_extensions  = none
email_in_dn      = no
EOF2
  done
} >"$CNF"

# genkey <rsa BITS|ec CURVE> <out>
genkey() {
  case "$1" in
    rsa) ossl genpkey -quiet -algorithm RSA -pkeyopt "rsa_keygen_bits:$2" -out "$3" ;;
    ec)  ossl genpkey -quiet -algorithm EC -pkeyopt "ec_paramgen_curve:$2" -pkeyopt ec_param_enc:named_curve -out "$3" ;;
  esac
  chmod 600 "$3"
}

# ext <file> <ca|leaf> <eku|-> <san|-> <keyUsage>
ext() {
  {
    echo "[ ext ]"
    if [ "$2" = ca ]; then
      echo "basicConstraints = critical,CA:TRUE"
      echo "keyUsage = critical,keyCertSign,cRLSign"
    else
      echo "basicConstraints = critical,CA:FALSE"
      echo "keyUsage = critical,$5"
      echo "authorityKeyIdentifier = keyid:always"
    fi
    echo "subjectKeyIdentifier = hash"
    [ "$3" != "-" ] && echo "extendedKeyUsage = $3"
    [ "$4" != "-" ] && echo "subjectAltName = $4"
    true
  } >"$1"
}

# root <name> <CN>
root() {
  genkey rsa 2048 "$OUT/$1.key"
  ext "$WORK/$1.ext" ca - - -
  ossl req -new -config "$CNF" -key "$OUT/$1.key" -subj "/O=mtls test/CN=$2" -out "$WORK/$1.csr"
  ossl ca -batch -config "$CNF" -name "ca_$3" -notext -md sha256 -preserveDN -selfsign -keyfile "$OUT/$1.key" \
    -in "$WORK/$1.csr" -out "$OUT/$1.pem" -startdate 20250101000000Z -enddate 20450101000000Z \
    -extfile "$WORK/$1.ext" -extensions ext 2>"$WORK/ca.log" || { cat "$WORK/ca.log" >&2; exit 1; }
}

# leaf <name> <issuer:root|public> <keytype> <keyarg> <md> <start> <days> <eku|-> <san|->
leaf() {
  local name="$1" ca="$2" kt="$3" ka="$4" md="$5" start="$6" days="$7" eku="$8" san="$9"
  local ku="digitalSignature,keyEncipherment"
  [ "$kt" = ec ] && ku="digitalSignature"
  genkey "$kt" "$ka" "$OUT/$name.key"
  ext "$WORK/$name.ext" leaf "$eku" "$san" "$ku"
  local end
  end="$(plus_days "${start:0:8}" "$days")"
  local issuer=root-ca
  [ "$ca" = public ] && issuer=public-root-ca
  ossl req -new -config "$CNF" -key "$OUT/$name.key" -subj "/O=mtls test/CN=platform.test" -out "$WORK/$name.csr"
  ossl ca -batch -config "$CNF" -name "ca_$ca" -notext -md "$md" -preserveDN -cert "$OUT/$issuer.pem" -keyfile "$OUT/$issuer.key" \
    -in "$WORK/$name.csr" -out "$OUT/$name.pem" -startdate "$start" -enddate "$end" \
    -extfile "$WORK/$name.ext" -extensions ext 2>"$WORK/ca.log" || { cat "$WORK/ca.log" >&2; exit 1; }
}

SAN="DNS:platform.test"
root root-ca "mtls platform private root" root
root public-root-ca "mtls platform public root (stand-in)" public

#    name          issuer  key      md      start           days eku         san
leaf compliant     root    rsa 2048 sha256  $START           825 serverAuth  $SAN
leaf days-826      root    rsa 2048 sha256  $START           826 serverAuth  $SAN
leaf rsa1024       root    rsa 1024 sha256  $START           365 serverAuth  $SAN
leaf rsa768        root    rsa 768  sha256  $START           365 serverAuth  $SAN
leaf sha1          root    rsa 2048 sha1    $START           365 serverAuth  $SAN
leaf md5           root    rsa 2048 md5     $START           365 serverAuth  $SAN
leaf sha224        root    rsa 2048 sha224  $START           365 serverAuth  $SAN
leaf cn-only       root    rsa 2048 sha256  $START           365 serverAuth  -
leaf no-eku        root    rsa 2048 sha256  $START           365 -           $SAN
leaf no-eku-2019   root    rsa 2048 sha256  20190630000000Z 3653 -           $SAN
leaf ec-p256       root    ec P-256 sha256  $START           365 serverAuth  $SAN
leaf ec-p224       root    ec P-224 sha256  $START           365 serverAuth  $SAN
leaf ec-p192       root    ec P-192 sha256  $START           365 serverAuth  $SAN
leaf public-398    public  rsa 2048 sha256  $START           398 serverAuth  $SAN
leaf public-399    public  rsa 2048 sha256  $START           399 serverAuth  $SAN

# Every leaf must validate under its root at the fixed time (the platform rules are on top).
for f in "$OUT"/*.pem; do
  n=$(basename "$f" .pem)
  case "$n" in root-ca|public-root-ca) continue ;; esac
  anchor="$OUT/root-ca.pem"
  case "$n" in public-*) anchor="$OUT/public-root-ca.pem" ;; esac
  ossl verify -attime 1780272000 -CAfile "$anchor" "$f" >/dev/null
done

# The fixture list, between markers in TestCerts/README.md (replaced on every run).
README="$ROOT_DIR/TestCerts/README.md"
if [ -f "$README" ]; then
  sed -i '/<!-- platform-fixtures:begin -->/,/<!-- platform-fixtures:end -->/d' "$README"
fi
{
  echo "<!-- platform-fixtures:begin -->"
  echo "## platform/ — platform rule fixtures (scripts/make-platform-certs.sh)"
  echo
  echo "Each violates one rule of Sources/MTLSTrust/Platform/PlatformRules.swift or is the compliant twin."
  echo "Subject CN=platform.test, SAN DNS:platform.test unless noted; issued by \`root-ca.pem\` (a private"
  echo "root) or \`public-root-ca.pem\` (a stand-in that tests declare publicly trusted). Keys: \`NAME.key\`"
  echo "(unencrypted). Valid at 2026-06-01T00:00:00Z. Tested by PlatformVerdictTests, PlatformCommandTests and"
  echo "JDKJudgeTests (the JDK's own PKIX trust manager must agree with the Java verdict on every fixture)."
  echo
  echo "| file | issuer | key | signature | notBefore | days | EKU | SAN | breaks |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for f in "$OUT"/*.pem; do
    n=$(basename "$f" .pem)
    case "$n" in root-ca|public-root-ca) continue ;; esac
    text=$(ossl x509 -in "$f" -noout -text)
    key=$(echo "$text" | sed -n 's/.*Public-Key: (\(.*\))/\1/p' | head -1)
    curve=$(echo "$text" | sed -n 's/.*NIST CURVE: \(.*\)/\1/p' | head -1)
    sig=$(echo "$text" | sed -n 's/.*Signature Algorithm: \(.*\)/\1/p' | head -1)
    nb=$(ossl x509 -in "$f" -noout -startdate | cut -d= -f2)
    eku=$(echo "$text" | grep -q "TLS Web Server Authentication" && echo serverAuth || echo none)
    san=$(echo "$text" | grep -q "DNS:platform.test" && echo yes || echo none)
    issuer=root-ca; case "$n" in public-*) issuer=public-root-ca ;; esac
    s=$(date -u -d "$(ossl x509 -in "$f" -noout -startdate | cut -d= -f2)" +%s)
    e=$(date -u -d "$(ossl x509 -in "$f" -noout -enddate | cut -d= -f2)" +%s)
    days=$(( (e - s) / 86400 ))
    case "$n" in
      compliant) breaks="nothing (825 days: the longest Apple accepts)" ;;
      days-826) breaks="Apple 825-day limit" ;;
      rsa1024) breaks="Apple RSA 2048" ;;
      rsa768) breaks="Apple RSA 2048; Android, Java, Chrome RSA 1024" ;;
      sha1) breaks="Apple SHA-2, Android, Chrome (Java only under a cacerts root)" ;;
      md5) breaks="Apple SHA-2, Android, Java, Chrome" ;;
      sha224) breaks="Apple ATS SHA-256+" ;;
      cn-only) breaks="Apple and Chrome SAN-only names" ;;
      no-eku) breaks="Apple EKU serverAuth (issued after 2019-07-01)" ;;
      no-eku-2019) breaks="nothing: issued 2019-06-30, before Apple's EKU and 825-day rules" ;;
      ec-p256) breaks="nothing" ;;
      ec-p224) breaks="Apple ATS ECC 256+ (Java accepts: its limit is EC keySize < 224)" ;;
      ec-p192) breaks="Apple ATS; Java EC keySize < 224" ;;
      public-398) breaks="nothing (398 days under a public root)" ;;
      public-399) breaks="Apple and Chrome 398-day limit for public roots" ;;
      *) breaks="" ;;
    esac
    keycol="RSA $key"; [ -n "$curve" ] && keycol="EC $curve"
    echo "| \`platform/$n.pem\` | $issuer | $keycol | $sig | $nb | $days | $eku | $san | $breaks |"
  done
  echo
  echo "<!-- platform-fixtures:end -->"
} >>"$README"

echo "TestCerts/platform regenerated and verified in $OUT"
