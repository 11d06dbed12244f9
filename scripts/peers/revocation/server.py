#!/usr/bin/env python3
"""The revocation bed's HTTP server (scripts/peers/revocation.sh): CRLs and CA certificates from
DIR/www, OCSP through `openssl ocsp` in one-shot responder mode, and a URL that stalls.

    server.py DIR PORT

GET  /NAME                 a file of DIR/www (CRLs, CA certificates)
POST /ocsp/NAME            an OCSP request (application/ocsp-request), answered by
GET  /ocsp/NAME/BASE64     `openssl ocsp -index DIR/NAME/index.txt -CA … -rsigner … -reqin … -respout …`
                           with the responder of DIR/ocsp-NAME.args (one argument per line)
GET  /stall/…              accepts and never answers (the "stalled CDP" case); the thread sleeps
                           for 120 s, the client's deadline must end it
Binds 127.0.0.1 only; one thread per connection, so a stalled request does not block the others.
"""
import base64, os, subprocess, sys, tempfile, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.abspath(sys.argv[1])
PORT = int(sys.argv[2])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.command, fmt % args))
        sys.stderr.flush()

    def answer(self, status, body, ctype="application/octet-stream"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def ocsp(self, name, request):
        args_file = os.path.join(ROOT, "ocsp-%s.args" % name)
        if "/" in name or not os.path.isfile(args_file):
            return self.answer(404, b"no such responder\n", "text/plain")
        with open(args_file) as f:
            args = [line.rstrip("\n") for line in f if line.strip()]
        with tempfile.TemporaryDirectory() as scratch:
            req = os.path.join(scratch, "req.der")
            resp = os.path.join(scratch, "resp.der")
            with open(req, "wb") as f:
                f.write(request)
            run = subprocess.run(["openssl", "ocsp"] + args + ["-reqin", req, "-respout", resp],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
            sys.stderr.write(run.stdout.decode(errors="replace"))
            if not os.path.exists(resp):
                return self.answer(500, b"the responder failed\n", "text/plain")
            with open(resp, "rb") as f:
                self.answer(200, f.read(), "application/ocsp-response")

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/stall/"):
            time.sleep(120)
            return
        if path.startswith("/ocsp/"):
            parts = path.split("/", 3)
            if len(parts) == 4:
                try:
                    request = base64.b64decode(urllib.parse.unquote(parts[3]), validate=True)
                except Exception:
                    return self.answer(400, b"not base64\n", "text/plain")
                return self.ocsp(parts[2], request)
            return self.answer(400, b"no request\n", "text/plain")
        name = os.path.normpath(path.lstrip("/"))
        full = os.path.join(ROOT, "www", name)
        if name.startswith("..") or not os.path.isfile(full):
            return self.answer(404, b"not found\n", "text/plain")
        with open(full, "rb") as f:
            self.answer(200, f.read(), "application/pkix-crl" if name.endswith(".crl") else "application/pkix-cert")

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, 65536))
        if path.startswith("/ocsp/"):
            return self.ocsp(path.split("/")[2], body)
        self.answer(405, b"POST is for /ocsp/\n", "text/plain")


class Server(ThreadingHTTPServer):
    daemon_threads = True


Server(("127.0.0.1", PORT), Handler).serve_forever()
