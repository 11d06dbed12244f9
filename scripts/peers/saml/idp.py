#!/usr/bin/python3
"""A small SAML 2.0 identity provider for tests, on Debian's python3-pysaml2 + xmlsec1.

    idp.py metadata --base URL --dir DIR            writes DIR/idp-metadata.xml (for the SP)
    idp.py serve --base URL --port N --dir DIR      serves HTTPS on 127.0.0.1:N

SSO endpoints: BASE/sso/redirect (HTTP-Redirect binding) and BASE/sso/post (HTTP-POST binding),
both behind HTTP Basic authentication (realm "mtls idp", users from DIR/idp-users: "user:password"
lines, UTF-8). A valid login answers with a signed <Response> holding a signed <Assertion>, in an
auto-submitting HTML form whose action attribute is entity-encoded (as Shibboleth IdP writes it).
Wrong or missing credentials: 401 with the challenge again. Logs go to DIR/idp.log.
Files used from DIR: idp.key / idp.pem (signing), sp-metadata.xml, tls.pem / tls.key (HTTPS).
"""
import argparse
import base64
import html
import http.server
import logging
import os
import ssl
import sys
import urllib.parse

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.config import IdPConfig
from saml2.metadata import create_metadata_string
from saml2.saml import NAMEID_FORMAT_PERSISTENT, NAMEID_FORMAT_TRANSIENT, NAME_FORMAT_URI
from saml2.server import Server

REALM = "mtls idp"
PASSWORD_CLASS = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"


def config(base, d):
    conf = {
        "entityid": base + "/idp",
        "name": "mtls test IdP",
        "service": {
            "idp": {
                "name": "mtls test IdP",
                "endpoints": {
                    "single_sign_on_service": [
                        (base + "/sso/redirect", BINDING_HTTP_REDIRECT),
                        (base + "/sso/post", BINDING_HTTP_POST),
                    ],
                },
                "policy": {"default": {"lifetime": {"minutes": 15}, "name_form": NAME_FORMAT_URI}},
                "name_id_format": [NAMEID_FORMAT_TRANSIENT, NAMEID_FORMAT_PERSISTENT],
                "want_authn_requests_signed": False,
            }
        },
        "key_file": os.path.join(d, "idp.key"),
        "cert_file": os.path.join(d, "idp.pem"),
        "xmlsec_binary": "/usr/bin/xmlsec1",
        "delete_tmpfiles": True,
    }
    sp_metadata = os.path.join(d, "sp-metadata.xml")
    if os.path.exists(sp_metadata):
        conf["metadata"] = {"local": [sp_metadata]}
    c = IdPConfig()
    c.load(conf)
    return c


def load_users(d):
    users = {}
    with open(os.path.join(d, "idp-users"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if ":" in line:
                user, password = line.split(":", 1)
                users[user] = password
    return users


def entity_encode(text):
    """Encodes every character but letters and digits as &#xNN; (what Shibboleth's encoder does)."""
    return "".join(c if c.isalnum() and c.isascii() else "&#x%x;" % ord(c) for c in text)


def make_handler(idp, users, base):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "mtls-test-idp"

        def log_message(self, fmt, *args):
            logging.info("%s %s", self.address_string(), fmt % args)

        def send_text(self, status, text, headers=()):
            body = text.encode("utf-8")
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def authenticated_user(self):
            header = self.headers.get("Authorization", "")
            if not header.lower().startswith("basic "):
                return None
            try:
                user, _, password = base64.b64decode(header[6:].strip()).decode("utf-8").partition(":")
            except Exception:
                return None
            return user if users.get(user) == password else None

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/health":
                return self.send_text(200, "ok\n")
            if url.path != "/sso/redirect":
                return self.send_text(404, "not found\n")
            self.sso(urllib.parse.parse_qs(url.query), BINDING_HTTP_REDIRECT)

        def do_POST(self):
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("ascii", "replace")
            if url.path != "/sso/post":
                return self.send_text(404, "not found\n")
            self.sso(urllib.parse.parse_qs(body), BINDING_HTTP_POST)

        def sso(self, params, binding):
            if "SAMLRequest" not in params:
                return self.send_text(400, "no SAMLRequest\n")
            user = self.authenticated_user()
            if user is None:
                logging.info("401: no or wrong credentials")
                return self.send_text(401, "login required\n", [("WWW-Authenticate", 'Basic realm="%s", charset="UTF-8"' % REALM)])
            try:
                request = idp.parse_authn_request(params["SAMLRequest"][0], binding)
                args = idp.response_args(request.message, [BINDING_HTTP_POST])
                identity = {"uid": [user], "mail": [user + "@example.test"], "cn": ["Test User " + user]}
                response = idp.create_authn_response(
                    identity,
                    userid=user,
                    authn={"class_ref": PASSWORD_CLASS, "authn_auth": base + "/idp"},
                    sign_response=True,
                    sign_assertion=True,
                    sign_alg="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
                    digest_alg="http://www.w3.org/2001/04/xmlenc#sha256",
                    **args,
                )
            except Exception as error:  # a test peer: report, don't crash
                logging.exception("SSO failed")
                return self.send_text(500, "SSO failed: %s\n" % error)
            saml_response = base64.b64encode(str(response).encode("utf-8")).decode("ascii")
            relay_state = params.get("RelayState", [""])[0]
            page = (
                '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Continue</title></head>\n'
                '<body onload="document.forms[0].submit()">\n'
                "<noscript><p>Your browser does not run scripts: press Continue.</p></noscript>\n"
                '<form action="%s" method="post">\n<div>\n'
                '<input type="hidden" name="SAMLResponse" value="%s"/>\n'
                '<input type="hidden" name="RelayState" value="%s"/>\n'
                "</div>\n"
                '<noscript><div><input type="submit" value="Continue"/></div></noscript>\n'
                "</form>\n</body></html>\n"
            ) % (entity_encode(args["destination"]), html.escape(saml_response), html.escape(relay_state))
            body = page.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            logging.info("SSO for %s -> %s", user, args["destination"])

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["metadata", "serve"])
    parser.add_argument("--base", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port", type=int)
    a = parser.parse_args()
    if a.command == "metadata":
        with open(os.path.join(a.dir, "idp-metadata.xml"), "wb") as f:
            data = create_metadata_string(None, config=config(a.base, a.dir), valid=24 * 365)
            f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        return
    logging.basicConfig(filename=os.path.join(a.dir, "idp.log"), level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("saml2").setLevel(logging.WARNING)
    idp = Server(config=config(a.base, a.dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(idp, load_users(a.dir), a.base))
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(a.dir, "tls.pem"), os.path.join(a.dir, "tls.key"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    logging.info("listening on %s", a.port)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
