#!/usr/bin/python3
"""IIS-ordered Windows authentication: the 401 Negotiate first, the client certificate after it.

    iis_negotiate.py DIR RENEG_PORT PHA_PORT CB_HASH_HEX

Started by scripts/peers/kerberos.sh (KRB5_CONFIG and KRB5RCACHETYPE set there). Apache asks for a
per-path certificate before authentication (mod_ssl's access hook runs before mod_auth_gssapi);
IIS answers the anonymous request with `401 WWW-Authenticate: Negotiate` and asks for the
certificate only on the authenticated request, on the same connection. This server does the latter:

  RENEG_PORT  TLS 1.2 only: the certificate is asked for by renegotiation (HelloRequest, then a full
              handshake with a CertificateRequest), as http.sys does.
  PHA_PORT    TLS 1.3 only: the certificate is asked for by post-handshake auth (IIS cannot; the
              variant shows the same order over TLS 1.3).

Paths: /kerberos-cert (Negotiate, then the certificate: none -> 403.7, untrusted -> 403.16),
/kerberos (Negotiate only), / (200). The login holds for the connection (Persistent-Auth: true, as
IIS's kernel-mode authentication). Kerberos is accepted by MIT GSSAPI (python3-gssapi) with the
peer's keytab DIR/http.keytab and the TLS channel binding (tls-server-end-point, CB_HASH_HEX), so a
token bound to another certificate is refused. TLS is OpenSSL's libssl through ctypes: Python's
ssl module cannot renegotiate on the server side.

Bodies are whoami lines (path, remote_user, auth_type, protocol, verify, subject, order) where
`order` lists this connection's events so far. DIR/iis.log gets one line per event:
`conn N 401 Negotiate`, `conn N CertificateRequest renegotiation`, `conn N 200 alice@MTLS.TEST`.
"""
import base64
import ctypes
import ctypes.util
import select
import socket
import sys
import threading
import time

import gssapi
import gssapi.raw as graw

DIR, RENEG_PORT, PHA_PORT, CB_HASH = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), bytes.fromhex(sys.argv[4])
BINDINGS = graw.ChannelBindings(application_data=b"tls-server-end-point:" + CB_HASH)
TIMEOUT = 15.0

ssl = ctypes.CDLL(ctypes.util.find_library("ssl") or "libssl.so.3")
P, I, L = ctypes.c_void_p, ctypes.c_int, ctypes.c_long
for name, restype, argtypes in [
    ("TLS_server_method", P, []),
    ("SSL_CTX_new", P, [P]),
    ("SSL_CTX_ctrl", L, [P, I, L, P]),
    ("SSL_CTX_set_options", ctypes.c_uint64, [P, ctypes.c_uint64]),
    ("SSL_CTX_use_certificate_chain_file", I, [P, ctypes.c_char_p]),
    ("SSL_CTX_use_PrivateKey_file", I, [P, ctypes.c_char_p, I]),
    ("SSL_CTX_load_verify_locations", I, [P, ctypes.c_char_p, P]),
    ("SSL_load_client_CA_file", P, [ctypes.c_char_p]),
    ("SSL_CTX_set_client_CA_list", None, [P, P]),
    ("SSL_CTX_set_session_id_context", I, [P, ctypes.c_char_p, ctypes.c_uint]),
    ("SSL_CTX_set_msg_callback", None, [P, P]),
    ("SSL_new", P, [P]),
    ("SSL_free", None, [P]),
    ("SSL_set_fd", I, [P, I]),
    ("SSL_accept", I, [P]),
    ("SSL_read", I, [P, P, I]),
    ("SSL_peek", I, [P, P, I]),
    ("SSL_write", I, [P, P, I]),
    ("SSL_shutdown", I, [P]),
    ("SSL_get_error", I, [P, I]),
    ("SSL_set_verify", None, [P, I, P]),
    ("SSL_renegotiate", I, [P]),
    ("SSL_renegotiate_pending", I, [P]),
    ("SSL_do_handshake", I, [P]),
    ("SSL_verify_client_post_handshake", I, [P]),
    ("SSL_get_verify_result", L, [P]),
    ("SSL_get1_peer_certificate", P, [P]),
    ("SSL_get_version", ctypes.c_char_p, [P]),
]:
    function = getattr(ssl, name)
    function.restype, function.argtypes = restype, argtypes
crypto = ctypes.CDLL(ctypes.util.find_library("crypto") or "libcrypto.so.3")
crypto.X509_get_subject_name.restype, crypto.X509_get_subject_name.argtypes = P, [P]
crypto.X509_NAME_oneline.restype, crypto.X509_NAME_oneline.argtypes = P, [P, P, I]
crypto.X509_free.argtypes = [P]
crypto.CRYPTO_free.argtypes = [P, ctypes.c_char_p, I]
crypto.ERR_clear_error.argtypes = []

SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE, SSL_ERROR_ZERO_RETURN = 2, 3, 6
SSL_CTRL_SET_MIN_PROTO_VERSION, SSL_CTRL_SET_MAX_PROTO_VERSION = 123, 124
SSL_VERIFY_PEER, SSL_VERIFY_CLIENT_ONCE = 1, 4
SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION = 0x00010000
FINISHED = 20

# The client's Finished (after our CertificateRequest) ends its answer, whether or not it sent a
# certificate: counted per SSL* by the message callback.
finished = {}
MSG_CALLBACK = ctypes.CFUNCTYPE(None, I, I, I, P, ctypes.c_size_t, P, P)


@MSG_CALLBACK
def on_message(write_p, version, content_type, buf, length, ssl_pointer, arg):
    if not write_p and content_type == 22 and length > 0 and ctypes.cast(buf, ctypes.POINTER(ctypes.c_ubyte))[0] == FINISHED:
        finished[ssl_pointer] = finished.get(ssl_pointer, 0) + 1


# Every chain error is recorded and left to the HTTP layer (403.16, as IIS), not a TLS alert.
VERIFY_CALLBACK = ctypes.CFUNCTYPE(I, I, P)


@VERIFY_CALLBACK
def accept_any(ok, store):
    return 1


log_lock = threading.Lock()


def log(line):
    with log_lock, open(f"{DIR}/iis.log", "a") as f:
        f.write(f"{time.strftime('%H:%M:%S')} {line}\n")


def make_context(version):
    ctx = ssl.SSL_CTX_new(ssl.TLS_server_method())
    ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, version, None)
    ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, version, None)
    # A renegotiation for a certificate must be a full handshake (as http.sys's); mod_ssl sets this too.
    ssl.SSL_CTX_set_options(ctx, SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION)
    certs = f"{DIR}/certs/".encode()
    if ssl.SSL_CTX_use_certificate_chain_file(ctx, certs + b"server-chain.pem") != 1 or ssl.SSL_CTX_use_PrivateKey_file(ctx, certs + b"server.key", 1) != 1:
        sys.exit("iis_negotiate.py: cannot load the server certificate or key")
    ssl.SSL_CTX_load_verify_locations(ctx, certs + b"client-ca.pem", None)
    ssl.SSL_CTX_set_client_CA_list(ctx, ssl.SSL_load_client_CA_file(certs + b"client-ca.pem"))
    ssl.SSL_CTX_set_session_id_context(ctx, b"mtls-iis", 8)
    ssl.SSL_CTX_set_msg_callback(ctx, ctypes.cast(on_message, P))
    return ctx


class Connection:
    """One TLS connection on a non-blocking socket; every call waits with select up to TIMEOUT."""

    def __init__(self, sock, ctx, number):
        self.sock, self.number = sock, number
        sock.setblocking(False)
        self.ssl = ssl.SSL_new(ctx)
        ssl.SSL_set_fd(self.ssl, sock.fileno())
        self.events = []

    def event(self, text):
        self.events.append(text)
        log(f"conn {self.number} {text}")

    def call(self, function, *args, until=None):
        deadline = time.monotonic() + TIMEOUT
        while True:
            crypto.ERR_clear_error()
            result = function(self.ssl, *args)
            if result > 0 or (until is not None and until()):
                return result
            error = ssl.SSL_get_error(self.ssl, result)
            if error not in (SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE):
                raise ConnectionError(f"TLS error {error} in {function.__name__}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(function.__name__)
            fds = [self.sock]
            select.select(fds if error == SSL_ERROR_WANT_READ else [], fds if error == SSL_ERROR_WANT_WRITE else [], [], left)

    def read(self):
        buffer = ctypes.create_string_buffer(16384)
        try:
            n = self.call(ssl.SSL_read, buffer, len(buffer))
        except ConnectionError:
            return b""
        return buffer.raw[:n]

    def write(self, data):
        buffer = ctypes.create_string_buffer(data, len(data))
        self.call(ssl.SSL_write, buffer, len(data))

    def version(self):
        return ssl.SSL_get_version(self.ssl).decode()

    def ask_for_certificate(self):
        """Renegotiation (TLS 1.2) or post-handshake auth (TLS 1.3), then waits for the answer."""
        ssl.SSL_set_verify(self.ssl, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, ctypes.cast(accept_any, P))
        byte = ctypes.create_string_buffer(1)
        if self.version() == "TLSv1.3":
            before = finished.get(self.ssl, 0)
            if ssl.SSL_verify_client_post_handshake(self.ssl) != 1:
                self.event("CertificateRequest refused: the client offers no post-handshake auth")
                return
            self.call(ssl.SSL_do_handshake)
            self.event("CertificateRequest post-handshake")
            self.call(ssl.SSL_peek, byte, 1, until=lambda: finished.get(self.ssl, 0) > before)
        else:
            if ssl.SSL_renegotiate(self.ssl) != 1:
                self.event("CertificateRequest refused: renegotiation not possible")
                return
            self.call(ssl.SSL_do_handshake)
            self.event("CertificateRequest renegotiation")
            self.call(ssl.SSL_peek, byte, 1, until=lambda: ssl.SSL_renegotiate_pending(self.ssl) == 0)

    def peer_subject(self):
        cert = ssl.SSL_get1_peer_certificate(self.ssl)
        if not cert:
            return None
        text = crypto.X509_NAME_oneline(crypto.X509_get_subject_name(cert), None, 0)
        subject = ctypes.string_at(text).decode("utf-8", "replace")
        crypto.CRYPTO_free(text, b"", 0)
        crypto.X509_free(cert)
        return subject

    def close(self):
        try:
            ssl.SSL_shutdown(self.ssl)
        except Exception:
            pass
        ssl.SSL_free(self.ssl)
        finished.pop(self.ssl, None)
        self.sock.close()


def read_request(conn, pending):
    while b"\r\n\r\n" not in pending:
        chunk = conn.read()
        if not chunk:
            return None, b""
        pending += chunk
    head, rest = pending.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    while len(rest) < length:
        chunk = conn.read()
        if not chunk:
            return None, b""
        rest += chunk
    return (parts[0], parts[1] if len(parts) > 1 else "/", headers), rest[length:]


def respond(conn, status, reason, body, headers=()):
    lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: text/plain; charset=utf-8", f"Content-Length: {len(body)}", *headers]
    conn.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)


def handle(sock, ctx, number):
    conn = Connection(sock, ctx, number)
    try:
        conn.call(ssl.SSL_accept)
        server_creds = gssapi.Credentials(usage="accept", store={"keytab": f"{DIR}/http.keytab"})
        user, pending = None, b""
        while True:
            request, pending = read_request(conn, pending)
            if request is None:
                return
            method, path, headers = request
            path = path.split("?", 1)[0].rstrip("/") or "/"
            conn.event(f"{method} {path}")
            if path == "/":
                respond(conn, 200, "OK", b"ok\n")
                continue
            if path not in ("/kerberos", "/kerberos-cert"):
                respond(conn, 404, "Not Found", b"not found\n")
                continue
            final = []
            if user is None:
                scheme, _, token = headers.get("authorization", "").partition(" ")
                if scheme.lower() != "negotiate" or not token:
                    conn.event("401 Negotiate")
                    respond(conn, 401, "Unauthorized", b"401.2 Windows authentication required\n", ["WWW-Authenticate: Negotiate"])
                    continue
                try:
                    context = gssapi.SecurityContext(creds=server_creds, usage="accept", channel_bindings=BINDINGS)
                    out = context.step(base64.b64decode(token))
                except (gssapi.exceptions.GSSError, ValueError) as error:
                    conn.event(f"401 refused: {error}")
                    respond(conn, 401, "Unauthorized", b"401.1 logon failed\n", ["WWW-Authenticate: Negotiate"])
                    continue
                if not context.complete:
                    conn.event("401 Negotiate continue")
                    respond(conn, 401, "Unauthorized", b"", [f"WWW-Authenticate: Negotiate {base64.b64encode(out or b'').decode()}"])
                    continue
                user = str(context.initiator_name)
                conn.event(f"authenticated {user}")
                if out:
                    final.append(f"WWW-Authenticate: Negotiate {base64.b64encode(out).decode()}")
                final.append("Persistent-Auth: true")
            verify, subject = "NONE", ""
            if path == "/kerberos-cert":
                if conn.peer_subject() is None:
                    conn.ask_for_certificate()
                subject = conn.peer_subject()
                if subject is None:
                    conn.event("403.7 no certificate")
                    respond(conn, 403, "Forbidden", b"403.7 client certificate required\n", final)
                    continue
                result = ssl.SSL_get_verify_result(conn.ssl)
                verify = "SUCCESS" if result == 0 else f"FAILED:{result}"
                if result != 0:
                    conn.event(f"403.16 untrusted certificate ({result})")
                    respond(conn, 403, "Forbidden", b"403.16 client certificate untrusted\n", final)
                    continue
            conn.event(f"200 {user}")
            body = (
                f"path={path}\nremote_user={user}\nauth_type=Negotiate\nprotocol={conn.version()}\nverify={verify}\nsubject={subject}\n"
                f"order={','.join(conn.events)}\n"
            )
            respond(conn, 200, "OK", body.encode(), final)
    except (ConnectionError, TimeoutError, OSError) as error:
        log(f"conn {number} closed: {error!r}")
    finally:
        conn.close()


def serve(port, version):
    ctx = make_context(version)
    listener = socket.create_server(("127.0.0.1", port))
    number = 0
    while True:
        sock, _ = listener.accept()
        number += 1
        threading.Thread(target=handle, args=(sock, ctx, f"{port}/{number}"), daemon=True).start()


threading.Thread(target=serve, args=(PHA_PORT, 0x0304), daemon=True).start()
serve(RENEG_PORT, 0x0303)
