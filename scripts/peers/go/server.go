// Go net/http HTTPS peer for the interop matrix (built and started by scripts/peers/go.sh).
//
//	REQUEST_PORT: tls.RequestClientCert (asked for in the handshake, not verified by TLS); the
//	  handler verifies what was sent against the client CAs, as an application doing its own
//	  check would, and answers 200 or 403.
//	REQUIRE_PORT: tls.RequireAndVerifyClientCert (a missing or untrusted certificate fails the
//	  handshake).
//
// Both TLS 1.3 only (MinVersion). Usage: server CERTDIR REQUEST_PORT REQUIRE_PORT
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log"
	"net/http"
	"os"
)

func main() {
	dir, requestPort, requirePort := os.Args[1], os.Args[2], os.Args[3]
	pair, err := tls.LoadX509KeyPair(dir+"/chain.pem", dir+"/server.key")
	if err != nil {
		log.Fatal(err)
	}
	pem, err := os.ReadFile(dir + "/client-ca.pem")
	if err != nil {
		log.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		certs := r.TLS.PeerCertificates
		if len(certs) == 0 {
			http.Error(w, "no client certificate", http.StatusForbidden)
			return
		}
		intermediates := x509.NewCertPool()
		for _, c := range certs[1:] {
			intermediates.AddCert(c)
		}
		opts := x509.VerifyOptions{Roots: pool, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		if _, err := certs[0].Verify(opts); err != nil {
			http.Error(w, "client certificate refused: "+err.Error(), http.StatusForbidden)
			return
		}
		fmt.Fprintf(w, "client certificate: %s\n", certs[0].Subject)
	})
	serve := func(port string, mode tls.ClientAuthType) {
		server := &http.Server{
			Addr:    "127.0.0.1:" + port,
			Handler: handler,
			TLSConfig: &tls.Config{
				Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: mode, MinVersion: tls.VersionTLS13,
			},
		}
		log.Fatal(server.ListenAndServeTLS("", ""))
	}
	go serve(requestPort, tls.RequestClientCert)
	serve(requirePort, tls.RequireAndVerifyClientCert)
}
