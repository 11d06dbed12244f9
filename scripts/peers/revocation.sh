#!/usr/bin/env bash
# A revocation bed shaped like an AD CS hierarchy, on loopback: a root, issuing CAs whose
# certificates carry CDP and AIA URLs, CRLs (and a delta CRL) and CA certificates over plain HTTP,
# OCSP answered by `openssl ocsp`, a URL that stalls and a port that refuses.
#
#   revocation.sh start [--dir DIR]
#   revocation.sh stop   --dir DIR [--keep]
#   revocation.sh status --dir DIR
#
# start prints only KEY=value lines: HTTP_PORT= REFUSED_PORT= DIR= PID= ROOT= (DIR/root.pem).
# The certificates are made at start, valid from an hour ago for 30 days, so a check runs at now.
# Every leaf is DIR/leaf-CLASS.pem (+ .key), its issuer DIR/CA.pem; DIR/chain-CLASS.pem holds the
# leaf then its issuing CA. Classes (what `mtls verify --revocation hard` must find):
#   good                 CRL and OCSP say good
#   revoked              revoked (keyCompromise) in the CRL and by OCSP
#   revoked-ca           the leaf is fine; its issuing CA is revoked (cACompromise) in the root's CRL
#   stale-crl            its CRL's nextUpdate has passed; no OCSP
#   unreachable-cdp      its only CDP is a loopback port where nothing listens
#   stalled-cdp          its only CDP accepts and never answers
#   ocsp-unknown         OCSP only; the responder does not know the serial
#   ocsp-unauthorized    OCSP only; the answer is signed by a self-signed responder the CA never
#                        delegated to (RFC 6960 4.2.2.2)
#   delta-revoked        the base CRL says good; the delta CRL (freshestCRL) revokes it
#   no-revocation-info   neither CDP nor AIA
#   indirect-good        its CDP names indirect.crl with cRLIssuer "Corp Indirect CRL Issuer" (under the
#                        root): an indirect CRL (RFC 5280 5.2.5) that does not list it
#   indirect-revoked     the same; the indirect CRL lists it (certificateIssuer: the issuing CA)
#   indirect-unauthorized the same CRL, but its CDP names no cRLIssuer: the CRL's signer is not authorised
#   indirect-other-scope its CDP (indirect-copy.crl) serves that CRL, whose issuingDistributionPoint
#                        names indirect.crl: it covers another distribution point
#   scope-ca-only        its CDP serves the issuing CA's CRL with issuingDistributionPoint onlyContainsCACerts:
#                        a CRL of CA certificates says nothing of a leaf (RFC 5280 6.3.3 (b)(2))
#   scope-other-dp       its CDP serves a CRL whose issuingDistributionPoint names another URL
#   indirect-revoked-issuer its CDP names "Corp Revoked CRL Issuer", whose indirect CRL does not list it,
#                        but the root has revoked that CRL issuer: its CRL cannot be relied on
# URLs: http://127.0.0.1:HTTP_PORT/{root.crl,issuing.crl,issuing-delta.crl,revoked-ca.crl,stale.crl,
# root.crt,issuing.crt,indirect.crl,indirect-copy.crl,crl-issuer.crt}, /ocsp/issuing and /ocsp/rogue (POST, or GET /ocsp/NAME/BASE64), /stall/….
# DIR/staple-good.der and DIR/staple-revoked.der are the issuing CA's OCSP answers for those
# leaves, for `openssl s_server -status_file` (OCSP stapling; `curl --cert-status` judges).
# The server is scripts/peers/revocation/server.py (python3; log in DIR/server.log).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PEER_USAGE_LINES=6,9
PEER_PROCESSES=("PID:revocation/server.py:5")

ossl() { openssl "$@" >>"$D/openssl.log" 2>&1 || { tail -n 20 "$D/openssl.log" >&2; die "openssl $1 failed"; }; }

# ca_dir NAME: the openssl ca database of CA NAME (DIR/NAME.pem, DIR/NAME.key).
ca_dir() {
  local name=$1 c=$D/db-$1
  mkdir -p "$c"
  : >"$c/index.txt"
  echo 01 >"$c/crlnumber"
  cat >"$c/ca.cnf" <<CNF
[ ca ]
default_ca = CA_default
[ CA_default ]
database = $c/index.txt
crlnumber = $c/crlnumber
certificate = $D/$name.pem
private_key = $D/$name.key
new_certs_dir = $c
default_md = sha256
default_crl_days = 7
unique_subject = no
crl_extensions = crl_ext
[ crl_ext ]
authorityKeyIdentifier = keyid:always
[ idp_ca_only ]
authorityKeyIdentifier = keyid:always
issuingDistributionPoint = critical, @idp_ca_only_point
[ idp_ca_only_point ]
fullname = URI:$u/issuing-ca-only.crl
onlyCA = TRUE
[ idp_other_dp ]
authorityKeyIdentifier = keyid:always
issuingDistributionPoint = critical, @idp_other_dp_point
[ idp_other_dp_point ]
fullname = URI:$u/somewhere-else.crl
[ delta_ext ]
authorityKeyIdentifier = keyid:always
# deltaCRLIndicator (2.5.29.27) = BaseCRLNumber 1; the openssl config has no name for it
2.5.29.27 = critical, DER:02:01:01
CNF
}

# issue NAME SUBJECT ISSUER SERIAL EXTENSIONS: key + certificate DIR/NAME.{key,pem}.
issue() {
  local name=$1 subject=$2 issuer=$3 serial=$4 extensions=$5
  ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$D/$name.key"
  printf '[ ext ]\n%s\n' "$extensions" >"$D/$name.ext"
  ossl req -new -key "$D/$name.key" -subj "$subject" -out "$D/$name.csr"
  if [[ $issuer == self ]]; then
    ossl x509 -req -in "$D/$name.csr" -signkey "$D/$name.key" -set_serial "$serial" -days 30 \
      -extfile "$D/$name.ext" -extensions ext -sha256 -out "$D/$name.pem"
  else
    ossl x509 -req -in "$D/$name.csr" -CA "$D/$issuer.pem" -CAkey "$D/$issuer.key" -set_serial "$serial" -days 30 \
      -extfile "$D/$name.ext" -extensions ext -sha256 -out "$D/$name.pem"
  fi
  rm -f "$D/$name.csr" "$D/$name.ext"
}

make_pki() {
  local u="http://127.0.0.1:$HTTP_PORT" r="http://127.0.0.1:$REFUSED_PORT"
  NOT_BEFORE=$(date -u -d '-1 hour' +%Y%m%d%H%M%SZ)
  NOT_AFTER=$(date -u -d '+30 days' +%Y%m%d%H%M%SZ)
  mkdir -p "$D/www"
  local ca="basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always"
  issue root "/DC=test/DC=corp/CN=Corp Root CA" self 0x01 "$ca"
  local sub="$ca
crlDistributionPoints = URI:$u/root.crl
authorityInfoAccess = caIssuers;URI:$u/root.crt"
  issue issuing "/DC=test/DC=corp/CN=Corp Issuing CA 1" root 0x11 "$sub"
  issue revoked-ca "/DC=test/DC=corp/CN=Corp Issuing CA 2 (revoked)" root 0x12 "$sub"
  issue stale-ca "/DC=test/DC=corp/CN=Corp Issuing CA 3 (stale CRL)" root 0x13 "$sub"
  # A responder certificate nobody delegated to: self-signed, with id-kp-OCSPSigning.
  issue rogue "/CN=Rogue OCSP Responder" self 0x66 "basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = OCSPSigning"
  for n in root issuing revoked-ca stale-ca; do ca_dir "$n"; done

  local leaf="basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
subjectAltName = DNS:localhost, IP:127.0.0.1"
  local issuing_urls="crlDistributionPoints = URI:$u/issuing.crl
authorityInfoAccess = OCSP;URI:$u/ocsp/issuing, caIssuers;URI:$u/issuing.crt"
  issue leaf-good "/CN=good.corp.test" issuing 0x1001 "$leaf
$issuing_urls"
  issue leaf-revoked "/CN=revoked.corp.test" issuing 0x1002 "$leaf
$issuing_urls"
  issue leaf-revoked-ca "/CN=under-revoked-ca.corp.test" revoked-ca 0x1003 "$leaf
crlDistributionPoints = URI:$u/revoked-ca.crl"
  issue leaf-stale-crl "/CN=stale-crl.corp.test" stale-ca 0x1004 "$leaf
crlDistributionPoints = URI:$u/stale.crl"
  issue leaf-unreachable-cdp "/CN=unreachable-cdp.corp.test" issuing 0x1005 "$leaf
crlDistributionPoints = URI:$r/issuing.crl"
  issue leaf-stalled-cdp "/CN=stalled-cdp.corp.test" issuing 0x1006 "$leaf
crlDistributionPoints = URI:$u/stall/issuing.crl"
  issue leaf-ocsp-unknown "/CN=ocsp-unknown.corp.test" issuing 0x1007 "$leaf
authorityInfoAccess = OCSP;URI:$u/ocsp/issuing"
  issue leaf-ocsp-unauthorized "/CN=ocsp-unauthorized.corp.test" issuing 0x1008 "$leaf
authorityInfoAccess = OCSP;URI:$u/ocsp/rogue"
  issue leaf-delta-revoked "/CN=delta-revoked.corp.test" issuing 0x1009 "$leaf
crlDistributionPoints = URI:$u/issuing.crl
freshestCRL = URI:$u/issuing-delta.crl"
  issue leaf-no-revocation-info "/CN=no-revocation-info.corp.test" issuing 0x100A "$leaf"
  issue leaf-scope-ca-only "/CN=scope-ca-only.corp.test" issuing 0x1010 "$leaf
crlDistributionPoints = URI:$u/issuing-ca-only.crl"
  issue leaf-scope-other-dp "/CN=scope-other-dp.corp.test" issuing 0x1011 "$leaf
crlDistributionPoints = URI:$u/issuing-other-dp.crl"
  # Indirect CRL (RFC 5280 5.2.5, 6.3.3): the issuing CA's certificates are revoked on a CRL that a
  # separate authority under the root signs; the distribution point names it as cRLIssuer.
  issue crl-issuer "/CN=Corp Indirect CRL Issuer" root 0x14 "basicConstraints = critical, CA:FALSE
keyUsage = critical, cRLSign, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
crlDistributionPoints = URI:$u/root.crl"
  local indirect_dp="crlDistributionPoints = dp_indirect
[ dp_indirect ]
fullname = URI:$u/indirect.crl
CRLissuer = dirName:dn_crl_issuer
[ dn_crl_issuer ]
CN = Corp Indirect CRL Issuer"
  issue leaf-indirect-good "/CN=indirect-good.corp.test" issuing 0x100B "$leaf
$indirect_dp"
  issue leaf-indirect-revoked "/CN=indirect-revoked.corp.test" issuing 0x100C "$leaf
$indirect_dp"
  # The CRL issuer named, but the CRL served (a copy of indirect.crl) covers another distribution point.
  issue leaf-indirect-other-scope "/CN=indirect-other-scope.corp.test" issuing 0x100E "$leaf
${indirect_dp//indirect.crl/indirect-copy.crl}"
  # An indirect CRL whose issuer the root has revoked.
  issue crl-issuer-revoked "/CN=Corp Revoked CRL Issuer" root 0x15 "basicConstraints = critical, CA:FALSE
keyUsage = critical, cRLSign, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
crlDistributionPoints = URI:$u/root.crl"
  local revoked_issuer_dp=${indirect_dp//indirect.crl/indirect-revoked-issuer.crl}
  issue leaf-indirect-revoked-issuer "/CN=indirect-revoked-issuer.corp.test" issuing 0x100F "$leaf
${revoked_issuer_dp//Corp Indirect CRL Issuer/Corp Revoked CRL Issuer}"
  # The same CRL, but this certificate's distribution point does not name the CRL issuer.
  issue leaf-indirect-unauthorized "/CN=indirect-unauthorized.corp.test" issuing 0x100D "$leaf
crlDistributionPoints = URI:$u/indirect.crl"

  # The databases: what each CA has issued and revoked.
  local db="$D/db-issuing/ca.cnf"
  for n in good ocsp-unauthorized delta-revoked unreachable-cdp stalled-cdp no-revocation-info; do ossl ca -config "$db" -valid "$D/leaf-$n.pem"; done
  ossl ca -config "$db" -revoke "$D/leaf-revoked.pem" -crl_reason keyCompromise
  ossl ca -config "$D/db-root/ca.cnf" -valid "$D/issuing.pem"
  ossl ca -config "$D/db-root/ca.cnf" -valid "$D/stale-ca.pem"
  ossl ca -config "$D/db-root/ca.cnf" -valid "$D/crl-issuer.pem"
  ossl ca -config "$D/db-root/ca.cnf" -revoke "$D/crl-issuer-revoked.pem" -crl_reason keyCompromise
  ossl ca -config "$D/db-root/ca.cnf" -revoke "$D/revoked-ca.pem" -crl_reason cACompromise
  ossl ca -config "$D/db-revoked-ca/ca.cnf" -valid "$D/leaf-revoked-ca.pem"
  ossl ca -config "$D/db-stale-ca/ca.cnf" -valid "$D/leaf-stale-crl.pem"

  # CRLs: the issuing CA's base CRL (number 1), then the delta (number 2, base 1) after one more revocation.
  ossl ca -config "$D/db-root/ca.cnf" -gencrl -out "$D/www/root.pem.crl"
  ossl ca -config "$db" -gencrl -out "$D/www/issuing.pem.crl"
  ossl ca -config "$db" -gencrl -crlexts idp_ca_only -out "$D/www/issuing-ca-only.pem.crl"
  ossl ca -config "$db" -gencrl -crlexts idp_other_dp -out "$D/www/issuing-other-dp.pem.crl"
  ossl ca -config "$db" -revoke "$D/leaf-delta-revoked.pem" -crl_reason superseded
  ossl ca -config "$db" -gencrl -crlexts delta_ext -out "$D/www/issuing-delta.pem.crl"
  ossl ca -config "$D/db-revoked-ca/ca.cnf" -gencrl -out "$D/www/revoked-ca.pem.crl"
  ossl ca -config "$D/db-stale-ca/ca.cnf" -gencrl -crl_lastupdate "$(date -u -d '-20 days' +%Y%m%d%H%M%SZ)" \
    -crl_nextupdate "$(date -u -d '-10 days' +%Y%m%d%H%M%SZ)" -out "$D/www/stale.pem.crl"
  local f
  for f in "$D"/www/*.pem.crl; do ossl crl -in "$f" -outform DER -out "${f%.pem.crl}.crl"; rm -f "$f"; done
  ossl x509 -in "$D/root.pem" -outform DER -out "$D/www/root.crt"
  make_indirect_crl "$u"
  make_indirect_crl "$u" indirect-revoked-issuer crl-issuer-revoked "Corp Revoked CRL Issuer"
  cp "$D/www/indirect.crl" "$D/www/indirect-copy.crl"
  ossl x509 -in "$D/issuing.pem" -outform DER -out "$D/www/issuing.crt"
  # The delta CRL revokes delta-revoked; the responder must not know it yet (it answers from the
  # database as it stood at the base CRL, so that only the delta CRL tells).
  sed -i '/\t1009\t/ s/^R\t\([^\t]*\)\t[^\t]*\t/V\t\1\t\t/' "$D/db-issuing/index.txt"

  # OCSP responders (openssl ocsp one-shot mode, run by server.py per request).
  printf '%s\n' -index "$D/db-issuing/index.txt" -CA "$D/issuing.pem" -rsigner "$D/issuing.pem" -rkey "$D/issuing.key" -nmin 60 >"$D/ocsp-issuing.args"
  printf '%s\n' -index "$D/db-issuing/index.txt" -CA "$D/issuing.pem" -rsigner "$D/rogue.pem" -rkey "$D/rogue.key" -nmin 60 >"$D/ocsp-rogue.args"
  # Staples for `openssl s_server -status_file` (the tests serve leaf-good / leaf-revoked with them).
  for n in good revoked; do
    ossl ocsp -issuer "$D/issuing.pem" -cert "$D/leaf-$n.pem" -no_nonce -reqout "$D/ocsp-request-$n.der"
    ossl ocsp -index "$D/db-issuing/index.txt" -CA "$D/issuing.pem" -rsigner "$D/issuing.pem" -rkey "$D/issuing.key" -nmin 60 \
      -reqin "$D/ocsp-request-$n.der" -respout "$D/staple-$n.der"
  done
  for n in good revoked unreachable-cdp stalled-cdp ocsp-unknown ocsp-unauthorized delta-revoked no-revocation-info \
    indirect-good indirect-revoked indirect-unauthorized indirect-other-scope indirect-revoked-issuer scope-ca-only scope-other-dp; do
    cat "$D/leaf-$n.pem" "$D/issuing.pem" >"$D/chain-$n.pem"
  done
  cat "$D/leaf-revoked-ca.pem" "$D/revoked-ca.pem" >"$D/chain-revoked-ca.pem"
  cat "$D/leaf-stale-crl.pem" "$D/stale-ca.pem" >"$D/chain-stale-crl.pem"
}

# make_indirect_crl BASE_URL: DIR/www/indirect.crl, signed by the CRL issuer, with
# issuingDistributionPoint indirectCRL TRUE, an authorityInfoAccess caIssuers URL for the CRL
# issuer's certificate (RFC 5280 5.2.7), and one entry (indirect-revoked, keyCompromise) whose
# certificateIssuer extension (5.3.3) names the issuing CA. `openssl ca` writes no
# certificateIssuer, so the TBSCertList is described for `openssl asn1parse -genconf`, signed with
# `openssl dgst -sign`, and described again with its signature.
make_indirect_crl() {
  local u=$1 name=${2:-indirect} signer=${3:-crl-issuer} signer_cn=${4:-Corp Indirect CRL Issuer} g=$D/indirect-crl.cnf
  local this next
  this=$(date -u -d '-1 hour' +%y%m%d%H%M%SZ)
  next=$(date -u -d '+7 days' +%y%m%d%H%M%SZ)
  cat >"$g" <<CNF
[ tbs ]
version = INTEGER:1
signature = SEQUENCE:ecdsa_sha256
issuer = SEQUENCE:crl_issuer_name
thisUpdate = UTCTIME:$this
nextUpdate = UTCTIME:$next
revoked = SEQUENCE:revoked
extensions = EXPLICIT:0,SEQUENCE:crl_extensions
[ ecdsa_sha256 ]
algorithm = OID:ecdsa-with-SHA256
[ crl_issuer_name ]
cn = SET:cn_crl_issuer
[ cn_crl_issuer ]
attribute = SEQUENCE:cn_crl_issuer_value
[ cn_crl_issuer_value ]
type = OID:commonName
value = UTF8:$signer_cn
[ issuing_name ]
dc1 = SET:dc_test
dc2 = SET:dc_corp
cn = SET:cn_issuing
[ dc_test ]
attribute = SEQUENCE:dc_test_value
[ dc_test_value ]
type = OID:domainComponent
value = IA5:test
[ dc_corp ]
attribute = SEQUENCE:dc_corp_value
[ dc_corp_value ]
type = OID:domainComponent
value = IA5:corp
[ cn_issuing ]
attribute = SEQUENCE:cn_issuing_value
[ cn_issuing_value ]
type = OID:commonName
value = UTF8:Corp Issuing CA 1
[ revoked ]
entry1 = SEQUENCE:revoked_indirect
[ revoked_indirect ]
serial = INTEGER:0x100C
date = UTCTIME:$this
extensions = SEQUENCE:revoked_indirect_extensions
[ revoked_indirect_extensions ]
reason = SEQUENCE:reason_key_compromise
issuer = SEQUENCE:certificate_issuer
[ reason_key_compromise ]
id = OID:CRLReason
value = OCTWRAP,ENUMERATED:1
[ certificate_issuer ]
id = OID:certificateIssuer
critical = BOOLEAN:TRUE
value = OCTWRAP,SEQUENCE:certificate_issuer_names
[ certificate_issuer_names ]
directoryName = EXPLICIT:4,SEQUENCE:issuing_name
[ crl_extensions ]
number = SEQUENCE:crl_number
idp = SEQUENCE:idp
aia = SEQUENCE:crl_aia
[ crl_number ]
id = OID:crlNumber
value = OCTWRAP,INTEGER:1
[ idp ]
id = OID:issuingDistributionPoint
critical = BOOLEAN:TRUE
value = OCTWRAP,SEQUENCE:idp_value
[ idp_value ]
distributionPoint = IMPLICIT:0,SEQUENCE:idp_name
indirectCRL = IMPLICIT:4,BOOLEAN:TRUE
[ idp_name ]
fullName = IMPLICIT:0,SEQUENCE:idp_full_name
[ idp_full_name ]
uri = IMPLICIT:6,IA5:$u/$name.crl
[ crl_aia ]
id = OID:authorityInfoAccess
value = OCTWRAP,SEQUENCE:crl_aia_value
[ crl_aia_value ]
caIssuers = SEQUENCE:crl_aia_ca_issuers
[ crl_aia_ca_issuers ]
method = OID:caIssuers
location = IMPLICIT:6,IA5:$u/$signer.crt
CNF
  { echo 'asn1 = SEQUENCE:tbs'; cat "$g"; } >"$g.tbs"
  ossl asn1parse -genconf "$g.tbs" -noout -out "$D/indirect-tbs.der"
  ossl dgst -sha256 -sign "$D/$signer.key" -out "$D/indirect-sig.der" "$D/indirect-tbs.der"
  { echo 'asn1 = SEQUENCE:crl'; echo '[ crl ]'; echo 'tbs = SEQUENCE:tbs'; echo 'algorithm = SEQUENCE:ecdsa_sha256'
    echo "signature = FORMAT:HEX,BITSTRING:$(od -An -v -tx1 "$D/indirect-sig.der" | tr -d ' \n')"; cat "$g"; } >"$g.crl"
  ossl asn1parse -genconf "$g.crl" -noout -out "$D/www/$name.crl"
  ossl crl -inform DER -in "$D/www/$name.crl" -noout -verify -CAfile "$D/$signer.pem"
  ossl x509 -in "$D/$signer.pem" -outform DER -out "$D/www/$signer.crt"
  rm -f "$g" "$g.tbs" "$g.crl" "$D/indirect-tbs.der" "$D/indirect-sig.der"
}

peer_start() {
  make_instance_dir revocation "$DIR"
  D=$INST_DIR
  if read_env "$D" && pid_alive "${ENV_PID:-}" "revocation/server.py"; then
    die "an instance is already running in $D (pid $ENV_PID); stop it first"
  fi
  local base attempt pid
  for attempt in 1 2 3 4 5; do
    base=$(free_base 2)
    HTTP_PORT=$base REFUSED_PORT=$((base + 1))
    make_pki
    (exec setsid python3 "$PEERS_DIR/revocation/server.py" "$D" "$HTTP_PORT" </dev/null >"$D/server.log" 2>&1) &
    pid=$!
    if wait_ready 10 "$pid" "revocation/server.py" "$HTTP_PORT"; then
      { echo "HTTP_PORT=$HTTP_PORT"; echo "REFUSED_PORT=$REFUSED_PORT"; echo "DIR=$D"; echo "PID=$pid"; echo "ROOT=$D/root.pem"; } | tee "$D/instance.env"
      return 0
    fi
    stop_pid "$pid" "revocation/server.py" 3
    grep -qi 'in use' "$D/server.log" 2>/dev/null && { note "port $HTTP_PORT busy, retrying"; continue; }
    break
  done
  note "the revocation server failed to start; see $D/server.log"
  tail -n 20 "$D/server.log" >&2 || true
  exit 1
}

peer_main "$@"
