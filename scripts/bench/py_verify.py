"""Python `cryptography` (Rust X.509 verifier): the same chains as c_verify and mtls-bench verify.

    py_verify.py ROOT.pem INT.pem DER_LIST UNIX_TIME HOST

Root and intermediate parsed once, each leaf parsed from DER and verified as a TLS server for HOST.
"""
import datetime
import sys

from cryptography import x509
from cryptography.x509.verification import PolicyBuilder, Store

from py_common import lines, now, result


def main():
    root_path, int_path, list_path, at, host = sys.argv[1:6]
    root = x509.load_pem_x509_certificate(open(root_path, "rb").read())
    inter = x509.load_pem_x509_certificate(open(int_path, "rb").read())
    ders = [open(p, "rb").read() for p in lines(list_path)]
    when = datetime.datetime.fromtimestamp(int(at), tz=datetime.timezone.utc)
    verifier = PolicyBuilder().store(Store([root])).time(when).build_server_verifier(x509.DNSName(host))
    ok = 0
    start = now()
    for der in ders:
        leaf = x509.load_der_x509_certificate(der)
        chain = verifier.verify(leaf, [inter])
        ok += len(chain) == 3
    elapsed = now() - start
    if ok != len(ders):
        sys.exit(f"{ok} of {len(ders)} verified")
    result(rate=len(ders) / elapsed, n=len(ders), ok=ok, seconds=elapsed)


main()
