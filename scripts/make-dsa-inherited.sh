#!/usr/bin/env bash
# Makes TestCerts/dsa-inherited/: a DSA leaf certificate whose subjectPublicKeyInfo leaves the
# domain parameters out (RFC 5280 4.1.2.7, RFC 3279 2.3.2: inherited from the issuer, as in NIST
# PKITS DSAParametersInheritedCACert), with its private key (which has them) and the RSA CA that
# signed it. OpenSSL's CLI cannot write such a certificate, so the TBSCertificate of an ordinary
# one is rewritten without the parameters and signed again with the CA's key.
#
#   ca.pem ca.key        RSA CA, CN=DSA inherited CA
#   leaf.pem leaf.key    DSA 2048 leaf, CN=dsa-inherited, public key without parameters
#   other.key            another DSA key with the same parameters (matches no certificate)
set -euo pipefail
ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT_DIR/TestCerts/dsa-inherited"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export OPENSSL_CONF="$WORK/empty.cnf"
: >"$OPENSSL_CONF"
mkdir -p "$OUT"
cd "$WORK"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -subj "/CN=DSA inherited CA" -outform DER -out ca-now.der \
  -days 7300 -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
openssl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:2048 -out params.pem 2>/dev/null
openssl genpkey -paramfile params.pem -out leaf.key
openssl genpkey -paramfile params.pem -out other.key
openssl req -new -key leaf.key -subj "/CN=dsa-inherited" -out leaf.csr
openssl x509 -inform DER -in ca-now.der -out ca-now.pem
openssl x509 -req -in leaf.csr -CA ca-now.pem -CAkey ca.key -set_serial 0x4453 -days 3650 -extfile <(printf "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n") -outform DER -out full.der 2>/dev/null
# Each TBSCertificate is rewritten (fixed validity 2025-01-01 – 2035-01-01 for the tests' fixed
# time; the leaf's key without parameters) and signed again with the CA's key.
cat >resign.py <<'PY'
import subprocess, sys

def header(b, i):
    tag, length = b[i], b[i + 1]
    i += 2
    if length & 0x80:
        n = length & 0x7F
        length = int.from_bytes(b[i:i + n], "big")
        i += n
    return tag, i, length

def encode(tag, content):
    n = len(content)
    size = bytes([n]) if n < 128 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag]) + size + content

def children(b):
    _, i, length = header(b, 0)
    out, end = [], i + length
    while i < end:
        _, start, size = header(b, i)
        out.append(b[i:start + size])
        i = start + size
    return out

tbs, signature_algorithm, _ = children(open(sys.argv[1], "rb").read())
fields = children(tbs)                        # [version,] serial, signature, issuer, validity, subject, SPKI …
v = 1 if fields[0][0] == 0xA0 else 0
fields[3 + v] = encode(0x30, encode(0x17, b"250101000000Z") + encode(0x17, b"350101000000Z"))
if sys.argv[4] == "strip":
    algorithm, key = children(fields[5 + v])
    fields[5 + v] = encode(0x30, encode(0x30, children(algorithm)[0]) + key)   # the DSA OID alone
tbs = encode(0x30, b"".join(fields))
open("tbs.der", "wb").write(tbs)
signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", sys.argv[2], "tbs.der"], capture_output=True, check=True).stdout
open(sys.argv[3], "wb").write(encode(0x30, tbs + signature_algorithm + encode(0x03, b"\x00" + signature)))
PY
python3 resign.py ca-now.der ca.key ca.der keep
python3 resign.py full.der ca.key leaf.der strip
openssl x509 -inform DER -in ca.der -out ca.pem
openssl x509 -inform DER -in leaf.der -out "$OUT/leaf.pem"
# (OpenSSL 3.0 cannot decode such a key, so `openssl verify` cannot check the leaf.)
cp ca.pem "$OUT/ca.pem"
openssl pkey -in ca.key -out "$OUT/ca.key"
openssl pkey -in leaf.key -out "$OUT/leaf.key"
openssl pkey -in other.key -out "$OUT/other.key"
chmod 600 "$OUT"/*.key
# The fixture list, between markers in TestCerts/README.md (replaced on every run), before the
# rules/ section (which runs to the end of the file).
python3 - "$ROOT_DIR/TestCerts/README.md" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read() if __import__("os").path.exists(path) else ""
text = re.sub(r"<!-- dsa-inherited:begin -->.*?<!-- dsa-inherited:end -->\n*", "", text, flags=re.S)
section = """<!-- dsa-inherited:begin -->
## dsa-inherited/ (scripts/make-dsa-inherited.sh)

| file | what it is |
|---|---|
| `ca.pem`, `ca.key` | RSA 2048 CA, `CN=DSA inherited CA`, 2025-01-01 – 2035-01-01 |
| `leaf.pem`, `leaf.key` | DSA 2048 leaf, `CN=dsa-inherited`, signed by the CA; its subjectPublicKeyInfo names DSA **without the domain parameters** (RFC 3279 2.3.2: inherited from the issuer, as NIST PKITS `DSAParametersInheritedCACert`). OpenSSL 3.0 cannot decode that public key alone; `PrivateKey.matches` pairs the key with it by algorithm and public value (PrivateKeyTests) |
| `other.key` | another DSA key with the same parameters: matches no certificate |
<!-- dsa-inherited:end -->

"""
at = text.find("## rules/ (scripts/make-trust-rule-certs.sh)")
text = text[:at] + section + text[at:] if at >= 0 else text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
PY
echo "make-dsa-inherited: $OUT" >&2
