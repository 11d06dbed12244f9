"""Reads a PKCS#12 file with pyca `cryptography` and prints one JSON line: what it holds.

usage: pkcs12-pyca.py FILE   (the password comes from $P12_PASSWORD; unset means None)
"""
import json
import os
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

data = open(sys.argv[1], "rb").read()
password = os.environb.get(b"P12_PASSWORD")
try:
    p12 = pkcs12.load_pkcs12(data, password)
except Exception as error:  # every refusal is an answer here, with its words
    print(json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}"}))
    sys.exit(0)
der = serialization.Encoding.DER
spki = serialization.PublicFormat.SubjectPublicKeyInfo
out = {
    "ok": True,
    "leaf": p12.cert.certificate.public_bytes(der).hex() if p12.cert else None,
    "keySPKI": p12.key.public_key().public_bytes(der, spki).hex() if p12.key else None,
    "certificates": [c.certificate.public_bytes(der).hex() for c in ([p12.cert] if p12.cert else []) + p12.additional_certs],
}
print(json.dumps(out))
