#!/usr/bin/env bash
# Records what the openssl CLI reads in every certificate of TestCerts/third-party/pyca-x509 (the
# files listed in its MANIFEST.tsv), into TestCerts/third-party/pyca-x509/EXPECTED.tsv, which
# PycaX509VectorsTests (Tests/MTLSTrustTests) compares the library's reading with. Only the openssl
# CLI judges: the test needs no openssl at run time, and no mtls code is involved here.
#
# EXPECTED.tsv: one line per fact, `FILE<TAB>INDEX<TAB>FIELD<TAB>VALUE`, INDEX counting the
# certificates of a file from 1 (PEM files are split into their CERTIFICATE / X509 CERTIFICATE
# blocks, each read by `openssl x509`). Values are openssl's own text: backslash, tab and newline
# are written as \\, \t and \n. FIELD is one of
#   refused      openssl x509 would not read the certificate; VALUE is its last error line
#   subject      -subject -nameopt RFC2253,-esc_msb (what Certificate.subject promises)
#   issuer       -issuer, the same way
#   serial       -serial
#   notBefore    -dates -dateopt iso_8601
#   notAfter
#   sigalg       the first "Signature Algorithm:" of -text (the TBSCertificate's)
#   sigalgOuter  the last one (the certificate's signatureAlgorithm, what the signature is made with)
#   keyalg       "Public Key Algorithm:" of -text
#   keybits      "Public-Key: (N bit)" (RSA, EC, DSA), or "-" when -text shows none
#   curve        "NIST CURVE:" or else "ASN1 OID:" of -text (EC keys only), or "explicit"
#   spki         base64 SHA-256 of the SubjectPublicKeyInfo bytes in the certificate (located with
#                openssl asn1parse): the SPKI pin
#   pubkey       base64 SHA-256 of -pubkey as DER (openssl pkey -pubin -outform DER), or
#                "unreadable" when openssl x509 -pubkey cannot give the key
#   san          the value lines of -ext subjectAltName, or "-" when absent
#   bc           the value of -ext basicConstraints, or "-"
#   ku           the value of -ext keyUsage, or "-"
#   eku          the value of -ext extendedKeyUsage, or "-"
# An extension that openssl cannot decode shows as its hex dump, as openssl prints it.
#
# Requires: OpenSSL 3.0+ CLI. Usage: scripts/gen-pyca-x509-expected.sh
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/pyca-expected-setup.sh" pyca-x509

escape() { sed -e 's/\\/\\\\/g' -e 's/\t/\\t/g' | awk 'NR > 1 { printf "\\n" } { printf "%s", $0 }'; }

emit() {  # FILE INDEX FIELD VALUE
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(printf '%s' "$4" | escape)"
}

# The value lines of one extension as `openssl x509 -ext NAME` prints it, joined; "-" when absent.
extension() {  # CERTFILE FORM NAME
  local text
  text="$("$OPENSSL" x509 -in "$1" -inform "$2" -noout -ext "$3" 2>/dev/null || true)"
  if [ -z "$text" ] || [ "$text" = "No extensions in certificate" ]; then
    printf -- '-'
    return
  fi
  printf '%s\n' "$text" | sed -n '2,$p' | sed -e 's/^ *//' | awk 'NR > 1 { printf "\n" } { printf "%s", $0 }'
}

one() {  # NAME INDEX CERTFILE FORM
  local name="$1" index="$2" cert="$3" form="$4" err text pubkey
  if ! "$OPENSSL" x509 -in "$cert" -inform "$form" -noout 2>"$WORK/err"; then
    # The last line ("Unable to load certificate"): the first names a temporary file.
    err="$(grep -v '^ *$' "$WORK/err" | tail -1)"
    emit "$name" "$index" refused "${err:-openssl x509 failed}"
    return
  fi
  x() { "$OPENSSL" x509 -in "$cert" -inform "$form" -noout "$@" 2>/dev/null; }
  emit "$name" "$index" subject "$(x -subject -nameopt RFC2253,-esc_msb | sed -e '1s/^subject=//')"
  emit "$name" "$index" issuer "$(x -issuer -nameopt RFC2253,-esc_msb | sed -e '1s/^issuer=//')"
  emit "$name" "$index" serial "$(x -serial | sed -e 's/^serial=//')"
  emit "$name" "$index" notBefore "$(x -dates -dateopt iso_8601 | sed -n 's/^notBefore=//p')"
  emit "$name" "$index" notAfter "$(x -dates -dateopt iso_8601 | sed -n 's/^notAfter=//p')"
  text="$(x -text || true)"
  emit "$name" "$index" sigalg "$(printf '%s\n' "$text" | sed -n 's/^ *Signature Algorithm: *//p' | head -1 | sed -e 's/[[:space:]]*$//')"
  emit "$name" "$index" sigalgOuter "$(printf '%s\n' "$text" | sed -n 's/^ *Signature Algorithm: *//p' | tail -1 | sed -e 's/[[:space:]]*$//')"
  emit "$name" "$index" keyalg "$(printf '%s\n' "$text" | sed -n 's/^ *Public Key Algorithm: *//p' | head -1 | sed -e 's/[[:space:]]*$//')"
  local bits
  bits="$(printf '%s\n' "$text" | sed -n 's/^ *\(RSA \)\{0,1\}Public-Key: (\([0-9]*\) bit).*/\2/p' | head -1)"
  emit "$name" "$index" keybits "${bits:--}"
  local curve
  curve="$(printf '%s\n' "$text" | sed -n 's/^ *NIST CURVE: *//p' | head -1)"
  [ -n "$curve" ] || curve="$(printf '%s\n' "$text" | sed -n 's/^ *ASN1 OID: *//p' | head -1)"
  if [ -z "$curve" ] && printf '%s\n' "$text" | grep -q '^ *Field Type:'; then curve=explicit; fi
  emit "$name" "$index" curve "${curve:--}"
  # The SubjectPublicKeyInfo as the certificate carries it: the seventh element of the
  # TBSCertificate (the sixth without a version), found by openssl asn1parse, cut out with dd.
  "$OPENSSL" x509 -in "$cert" -inform "$form" -outform DER -out "$WORK/cert.der" 2>/dev/null
  local offset header length
  read -r offset header length <<<"$("$OPENSSL" asn1parse -inform DER -in "$WORK/cert.der" 2>/dev/null | awk '
    /:d=2 / {
      n++
      if (n == 1 && /cont \[ 0 \]/) skip = 1
      if (n == 6 + skip) {
        match($0, /^ *[0-9]+/); offset = substr($0, RSTART, RLENGTH) + 0
        match($0, /hl= *[0-9]+/); header = substr($0, RSTART + 3, RLENGTH - 3) + 0
        match($0, / l= *[0-9]+/); length_ = substr($0, RSTART + 3, RLENGTH - 3) + 0
        print offset, header, length_
        exit
      }
    }')"
  dd if="$WORK/cert.der" of="$WORK/spki.der" bs=1 skip="$offset" count=$((header + length)) status=none
  emit "$name" "$index" spki "$("$OPENSSL" dgst -sha256 -binary "$WORK/spki.der" | "$OPENSSL" base64 -A)"
  # The key as openssl x509 -pubkey re-encodes it, or "unreadable" when openssl cannot decode it.
  if pubkey="$(x -pubkey)" && [ -n "$pubkey" ] \
    && printf '%s\n' "$pubkey" | "$OPENSSL" pkey -pubin -outform DER -out "$WORK/pubkey.der" 2>/dev/null; then
    emit "$name" "$index" pubkey "$("$OPENSSL" dgst -sha256 -binary "$WORK/pubkey.der" | "$OPENSSL" base64 -A)"
  else
    emit "$name" "$index" pubkey unreadable
  fi
  emit "$name" "$index" san "$(extension "$cert" "$form" subjectAltName)"
  emit "$name" "$index" bc "$(extension "$cert" "$form" basicConstraints)"
  emit "$name" "$index" ku "$(extension "$cert" "$form" keyUsage)"
  emit "$name" "$index" eku "$(extension "$cert" "$form" extendedKeyUsage)"
}

{
  printf '# Generated by scripts/gen-pyca-x509-expected.sh with %s. Do not edit.\n' "$("$OPENSSL" version | cut -d' ' -f1-2)"
  grep -v '^#' "$CORPUS/MANIFEST.tsv" | cut -f1 | while read -r name; do
    file="$CORPUS/$name"
    if grep -q -- '-----BEGIN ' "$file" 2>/dev/null; then
      # Each CERTIFICATE / X509 CERTIFICATE block on its own, headers and all, as openssl reads it.
      rm -f "$WORK"/block.*
      awk -v dir="$WORK" '
        /^-----BEGIN (X509 )?CERTIFICATE-----/ { n++; inside = 1 }
        inside { print > (dir "/block." n) }
        /^-----END (X509 )?CERTIFICATE-----/ { inside = 0; close(dir "/block." n) }
      ' "$file"
      index=0
      for block in $(ls "$WORK"/block.* 2>/dev/null | sort -t. -k2 -n); do
        index=$((index + 1))
        one "$name" "$index" "$block" PEM
      done
      [ "$index" -gt 0 ] || emit "$name" 1 refused "no certificate block"
    else
      one "$name" 1 "$file" DER
    fi
  done
} >"$OUT"
echo "wrote $OUT ($(grep -vc '^#' "$OUT") lines)"
