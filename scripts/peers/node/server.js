// Node.js HTTPS peer for the interop matrix (started by scripts/peers/node.sh).
//   RENEG_PORT: TLS 1.2 only, default session options (tickets and the session cache on, so a
//     client offering its session in a renegotiation gets it resumed). `/secure` asks for the
//     client certificate per path with req.socket.renegotiate({requestCert: true}) and answers 200
//     when it is trusted, 403 otherwise; `/` needs none.
//   HANDSHAKE_PORT: TLS 1.2 and 1.3, requestCert + rejectUnauthorized in the handshake.
// Usage: node server.js CERTDIR RENEG_PORT HANDSHAKE_PORT
'use strict';
const https = require('https');
const fs = require('fs');
const [certDir, renegPort, handshakePort] = process.argv.slice(2);
const key = fs.readFileSync(`${certDir}/server.key`);
const cert = fs.readFileSync(`${certDir}/chain.pem`);
const ca = fs.readFileSync(`${certDir}/client-ca.pem`);

function answer(res, status, text) {
  res.writeHead(status, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function describe(socket) {
  const peer = socket.getPeerCertificate();
  return peer && peer.subject ? `client certificate: CN=${peer.subject.CN}\n` : 'no client certificate\n';
}

const reneg = https.createServer({ key, cert, ca, maxVersion: 'TLSv1.2' }, (req, res) => {
  if (req.url !== '/secure') return answer(res, 200, 'no client certificate needed\n');
  req.socket.renegotiate({ requestCert: true, rejectUnauthorized: false }, (err) => {
    if (err) return answer(res, 500, `renegotiation failed: ${err.message}\n`);
    if (!req.socket.authorized) return answer(res, 403, `client certificate refused: ${req.socket.authorizationError || 'none sent'}\n`);
    answer(res, 200, describe(req.socket));
  });
});
reneg.listen(Number(renegPort), '127.0.0.1');

const handshake = https.createServer({ key, cert, ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
  answer(res, 200, describe(req.socket));
});
handshake.listen(Number(handshakePort), '127.0.0.1');
for (const server of [reneg, handshake]) server.on('error', (e) => { console.error(e.message); process.exit(1); });
process.on('SIGTERM', () => process.exit(0));
