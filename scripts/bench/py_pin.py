"""Python `cryptography`: SPKI SHA-256 pins of certificate files, one "sha256/B64" line each.

    py_pin.py pem|der LIST

Files are read inside the timed loop, as c_pin and mtls-bench pin do.
"""
import base64
import hashlib
import sys

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from py_common import lines, now, result


def main():
    form, list_path = sys.argv[1:3]
    load = x509.load_pem_x509_certificate if form == "pem" else x509.load_der_x509_certificate
    paths = lines(list_path)
    out = []
    start = now()
    for path in paths:
        with open(path, "rb") as f:
            cert = load(f.read())
        spki = cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        out.append("sha256/" + base64.b64encode(hashlib.sha256(spki).digest()).decode() + "\n")
    sys.stdout.write("".join(out))
    sys.stdout.flush()
    elapsed = now() - start
    result(rate=len(paths) / elapsed, n=len(paths), seconds=elapsed)


main()
