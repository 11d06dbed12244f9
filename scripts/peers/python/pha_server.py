#!/usr/bin/python3
"""Python ssl HTTPS peer with TLS 1.3 post-handshake authentication (scripts/peers/python_pha.sh).

    pha_server.py CERTDIR OPTIONAL_PORT REQUIRED_PORT

Both ports are TLS 1.3 only. `/` needs no certificate; `/secure` calls
SSLSocket.verify_client_post_handshake() after reading the request and then waits for the client's
answer (its Finished message, seen through the context's message callback):
  OPTIONAL_PORT: CERT_OPTIONAL - a missing certificate is allowed by TLS, the page answers 403;
                 an untrusted one fails the TLS exchange.
  REQUIRED_PORT: CERT_REQUIRED - a missing or untrusted certificate fails the TLS exchange.
A trusted certificate gets 200 with its subject.
"""
import socket
import ssl
import sys
import threading

CERTS, OPTIONAL_PORT, REQUIRED_PORT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
FINISHED = 20


def make_context(mode):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(f"{CERTS}/chain.pem", f"{CERTS}/server.key")
    context.load_verify_locations(f"{CERTS}/client-ca.pem")
    context.verify_mode = mode
    context.post_handshake_auth = True
    # The client's Finished after our CertificateRequest ends its answer (private CPython hook,
    # 3.8+; there is no public way to learn that an empty Certificate was answered).
    def on_message(conn, direction, version, content_type, msg_type, data):
        if direction == "read" and content_type == ssl._TLSContentType.HANDSHAKE and msg_type == ssl._TLSMessageType.FINISHED:
            conn._mtls_finished = getattr(conn, "_mtls_finished", 0) + 1
    context._msg_callback = on_message
    return context


def respond(conn, status, text):
    body = text.encode()
    reason = {200: "OK", 403: "Forbidden", 404: "Not Found"}[status]
    conn.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (status, reason.encode(), len(body), body))


def handle(raw, context):
    raw.settimeout(10)
    try:
        conn = context.wrap_socket(raw, server_side=True)
    except (ssl.SSLError, OSError):
        raw.close()
        return
    try:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = conn.recv(4096)
            if not chunk:
                return
            request += chunk
        path = request.split(b" ", 2)[1].decode("latin-1") if request.count(b" ") >= 2 else "/"
        if path != "/secure":
            return respond(conn, 200, "no client certificate needed\n")
        before = getattr(conn, "_mtls_finished", 0)
        conn.verify_client_post_handshake()
        conn.write(b"")  # sends the CertificateRequest
        conn.settimeout(0.2)
        for _ in range(50):
            if getattr(conn, "_mtls_finished", 0) > before:
                break
            try:
                conn.recv(1)
            except (socket.timeout, ssl.SSLWantReadError):
                continue
        conn.settimeout(10)
        peer = conn.getpeercert()
        if not peer:
            return respond(conn, 403, "client certificate required\n")
        subject = ", ".join("=".join(pair) for rdn in peer["subject"] for pair in rdn)
        respond(conn, 200, f"client certificate: {subject}\n")
    except (ssl.SSLError, OSError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def serve(port, mode):
    context = make_context(mode)
    listener = socket.create_server(("127.0.0.1", port))
    while True:
        raw, _ = listener.accept()
        threading.Thread(target=handle, args=(raw, context), daemon=True).start()


threading.Thread(target=serve, args=(OPTIONAL_PORT, ssl.CERT_OPTIONAL), daemon=True).start()
serve(REQUIRED_PORT, ssl.CERT_REQUIRED)
