#!/usr/bin/python3
"""An NTLM-protected HTTPS endpoint for tests: pyspnego as the NTLM acceptor, users from the file
named by NTLM_USER_FILE ("DOMAIN:user:password" lines), behaving like IIS Windows authentication.

    ntlm_server.py --port N --dir DIR        serves https://127.0.0.1:N (DIR/tls.pem, DIR/tls.key)

  /ntlm        401 offering "Negotiate" and "NTLM"; a type 1 message gets a type 2 challenge (401);
               the type 3 message on the SAME connection gets 200 "ntlm ok" + user= + connection=;
               a bad response gets 401 again. A type 3 on a connection that saw no type 1 gets 401
               (the state is per connection, as on IIS).
  /negotiate   the same, offering only "Negotiate" (raw NTLM tokens inside, as IIS accepts)
  /epa         like /ntlm, with Extended Protection (IIS tokenChecking="Require"): the type 3 message
               must carry MsvAvChannelBindings equal to MD5(gss_channel_bindings_struct with
               "tls-server-end-point:" + the hash of this server's certificate, RFC 5929), else 401
  /health      200
With --require-channel-binding HEX (the tls-server-end-point hash of DIR/tls.pem's leaf, computed by
ntlm.sh with openssl), every path checks the binding; without it only /epa does (and needs it).
Logs go to DIR/ntlm.log.
"""
import argparse
import base64
import hashlib
import http.server
import logging
import os
import ssl
import sys

import spnego


END_POINT_HASH = None  # bytes: the RFC 5929 tls-server-end-point hash of our certificate
REQUIRE_EVERYWHERE = False


def expected_channel_bindings():
    """MD5 of gss_channel_bindings_struct (RFC 2744 3.11): no addresses, application data
    "tls-server-end-point:" + hash, as MS-NLMP 2.2.2.1 MsvAvChannelBindings and IIS compute it."""
    data = b"tls-server-end-point:" + END_POINT_HASH
    return hashlib.md5(b"\x00" * 16 + len(data).to_bytes(4, "little") + data).digest()


def sent_channel_bindings(message):
    """The MsvAvChannelBindings value (AV id 10) in the NTLMv2 response of a type 3 message, or None."""
    if len(message) < 28:
        return None
    length = int.from_bytes(message[20:22], "little")
    offset = int.from_bytes(message[24:28], "little")
    nt = message[offset:offset + length]
    # NTProofStr (16) + RespType, HiRespType, Reserved (6), TimeStamp (8), ChallengeFromClient (8), Reserved (4)
    pairs = nt[44:]
    at = 0
    while at + 4 <= len(pairs):
        av_id = int.from_bytes(pairs[at:at + 2], "little")
        av_len = int.from_bytes(pairs[at + 2:at + 4], "little")
        if av_id == 0:
            return None
        if av_id == 10:
            return pairs[at + 4:at + 4 + av_len]
        at += 4 + av_len
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mtls-test-ntlm"

    def setup(self):
        super().setup()
        self.context = None  # the NTLM acceptor of this connection
        self.requests_on_connection = 0

    def log_message(self, fmt, *args):
        logging.info("%s %s", self.address_string(), fmt % args)

    def reply(self, status, text, headers=()):
        body = text.encode("utf-8")
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def challenge(self, schemes, text):
        self.context = None
        self.reply(401, text, [("WWW-Authenticate", s) for s in schemes])

    def do_GET(self):
        self.requests_on_connection += 1
        path = self.path.split("?", 1)[0]
        if path == "/health":
            return self.reply(200, "ok\n")
        if path not in ("/ntlm", "/negotiate", "/epa"):
            return self.reply(404, "not found\n")
        schemes = ["Negotiate"] if path == "/negotiate" else ["Negotiate", "NTLM"]
        requires_binding = path == "/epa" or REQUIRE_EVERYWHERE
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() not in [s.lower() for s in schemes] or not token.strip():
            return self.challenge(schemes, "login required\n")
        try:
            data = base64.b64decode(token.strip())
        except Exception:
            return self.challenge(schemes, "bad token\n")
        if len(data) < 12 or data[:8] != b"NTLMSSP\x00":
            return self.challenge(schemes, "not an NTLM token\n")
        kind = int.from_bytes(data[8:12], "little")
        if kind == 1:
            self.context = spnego.server(protocol="ntlm")
            out = self.context.step(data)
            logging.info("type 1 -> type 2 (connection request %d)", self.requests_on_connection)
            return self.reply(401, "continue\n", [("WWW-Authenticate", "%s %s" % (scheme, base64.b64encode(out).decode()))])
        if kind == 3:
            if self.context is None:
                logging.info("type 3 on a connection without a handshake")
                return self.challenge(schemes, "no NTLM handshake on this connection\n")
            if requires_binding:
                sent = sent_channel_bindings(data)
                if sent is None or sent == b"\x00" * 16:
                    logging.info("type 3 refused: no channel binding (Extended Protection)")
                    return self.challenge(schemes, "refused: the login carries no TLS channel binding (Extended Protection)\n")
                if sent != expected_channel_bindings():
                    logging.info("type 3 refused: channel binding %s, expected %s", sent.hex(), expected_channel_bindings().hex())
                    return self.challenge(schemes, "refused: the TLS channel binding does not match this connection\n")
            try:
                self.context.step(data)
            except Exception as error:
                logging.info("type 3 refused: %s", error)
                return self.challenge(schemes, "refused\n")
            if not self.context.complete:
                return self.challenge(schemes, "incomplete\n")
            user = self.context.client_principal
            logging.info("authenticated %s", user)
            bound = "yes" if sent_channel_bindings(data) == expected_channel_bindings() else "no"
            return self.reply(200, "ntlm ok\nuser=%s\nconnection_requests=%d\nchannel_binding=%s\n" % (user, self.requests_on_connection, bound))
        return self.challenge(schemes, "unexpected message type %d\n" % kind)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--end-point-hash", required=True, help="hex tls-server-end-point hash of the leaf in DIR/tls.pem")
    parser.add_argument("--require-channel-binding", action="store_true", help="every path requires the channel binding")
    a = parser.parse_args()
    global END_POINT_HASH, REQUIRE_EVERYWHERE
    END_POINT_HASH = bytes.fromhex(a.end_point_hash)
    REQUIRE_EVERYWHERE = a.require_channel_binding
    if not os.environ.get("NTLM_USER_FILE"):
        sys.exit("NTLM_USER_FILE is not set")
    logging.basicConfig(filename=os.path.join(a.dir, "ntlm.log"), level=logging.INFO, format="%(asctime)s %(message)s")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(a.dir, "tls.pem"), os.path.join(a.dir, "tls.key"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    logging.info("listening on %s", a.port)
    server.serve_forever()


if __name__ == "__main__":
    main()
