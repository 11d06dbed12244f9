"""Merges PKCS#12 files made with -keypbe NONE -certpbe NONE -nomac into one MAC-less file whose
AuthenticatedSafe holds all their safes, the first file's twice: several identities and repeated
bags, as merged keystores hold them (the openssl CLI writes one key per file).

usage: make-pkcs12-two-identities.py OUT IN1 IN2 ...
"""
import sys


def element(data, offset):
    """(tag, content start, end) of the DER element at offset."""
    tag, first = data[offset], data[offset + 1]
    cursor = offset + 2
    length = first
    if first & 0x80:
        count = first & 0x7F
        length = int.from_bytes(data[cursor:cursor + count], "big")
        cursor += count
    return tag, cursor, cursor + length


def tlv(tag, content):
    n = len(content)
    if n < 0x80:
        header = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        header = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + header + content


def safes(pfx):
    _, start, end = element(pfx, 0)            # PFX
    _, _, version_end = element(pfx, start)    # version
    _, info, _ = element(pfx, version_end)     # authSafe ContentInfo
    _, _, oid_end = element(pfx, info)         # contentType data
    _, explicit, _ = element(pfx, oid_end)     # [0]
    _, octets, _ = element(pfx, explicit)      # OCTET STRING
    _, safe_start, safe_end = element(pfx, octets)  # AuthenticatedSafe
    return pfx[safe_start:safe_end]


inputs = [safes(open(path, "rb").read()) for path in sys.argv[2:]]
data_oid = bytes.fromhex("06092a864886f70d010701")
auth_safe = tlv(0x30, b"".join(inputs) + inputs[0])
pfx = tlv(0x30, bytes.fromhex("020103") + tlv(0x30, data_oid + tlv(0xA0, tlv(0x04, auth_safe))))
open(sys.argv[1], "wb").write(pfx)
