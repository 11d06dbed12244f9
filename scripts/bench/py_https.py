"""Python's ssl + http.client (OpenSSL underneath): the same requests as c_https.

    py_https.py keepalive|full|resumed|download PORT CAFILE PATH N [OUTFILE]
"""
import http.client
import socket
import ssl
import sys

from py_common import now, result


def get_raw(context, port, path, session):
    """One connection, one GET with Connection: close, read to the end. Returns the TLS socket."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    tls = context.wrap_socket(sock, server_hostname="localhost", session=session)
    tls.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: python\r\nAccept: */*\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while True:
        chunk = tls.recv(65536)
        if not chunk:
            break
        data += chunk
    if not data.startswith(b"HTTP/1.1 200"):
        sys.exit("bad status")
    return tls


def main():
    mode, port, cafile, path, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
    context = ssl.create_default_context(cafile=cafile)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    start = now()
    if mode == "keepalive":
        conn = http.client.HTTPSConnection("localhost", port, context=context)
        for _ in range(n):
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                sys.exit("bad status")
        conn.close()
        elapsed = now() - start
        result(rate=n / elapsed, n=n, seconds=elapsed)
    elif mode in ("full", "resumed"):
        session, resumed = None, 0
        for _ in range(n):
            tls = get_raw(context, port, path, session if mode == "resumed" else None)
            resumed += tls.session_reused
            if mode == "resumed":
                session = tls.session
            tls.close()
        elapsed = now() - start
        result(rate=n / elapsed, n=n, resumed=resumed, seconds=elapsed)
    elif mode == "download":
        conn = http.client.HTTPSConnection("localhost", port, context=context)
        conn.request("GET", path, headers={"Connection": "close"})
        response = conn.getresponse()
        total = 0
        with open(sys.argv[6], "wb") as out:
            while True:
                chunk = response.read(65536)
                if not chunk:
                    break
                out.write(chunk)
                total += len(chunk)
        conn.close()
        elapsed = now() - start
        result(mb_s=total / elapsed / 1e6, bytes=total, seconds=elapsed)


main()
