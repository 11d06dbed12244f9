// MTLSConsumer: a program that uses mtls as an outside package would, through the public API of
// MTLSTrust and MTLSHTTP only. It does the three things the API guide (Sources/*/*.docc) shows:
//
//   1. trust a self-signed / private-CA server with its CA as the only anchor,
//   2. log in to a path that asks for a client certificate after the request, with a .p12,
//   3. pin the server's key, and see a wrong pin refused.
//
//   MTLSConsumer BASE_URL PKI_DIR        e.g. https://localhost:8443 with the --pki-dir of `mtls serve`
//
// PKI_DIR holds what `mtls serve --pki-dir` writes: ca.pem, server.pem, client.p12 (password "mtls"),
// whose password comes on standard input: never in argv, as a library user would read it.
// Each step prints one line; the exit code is 0 when every step gave the expected answer, 1 otherwise.

import Foundation
import MTLSHTTP
import MTLSTrust

func check(_ step: String, _ ok: Bool, _ detail: String) -> Bool {
    print("\(ok ? "ok  " : "FAIL") \(step): \(detail)")
    return ok
}

func run(base: String, pki: String) async throws -> Bool {
    // 1. Trust: only the private CA, hostname checked (the default).
    let anchors = try CertificateLoader.certificates(atPath: "\(pki)/ca.pem")
    let trusting = try HTTPSClient(configuration: TLSClientConfiguration(trust: TrustPolicy(anchors: anchors)))
    let root = try await trusting.send(HTTPRequest(url: try HTTPSURL("\(base)/")))
    var passed = check("trust", root.status == 200 && root.tls.trust?.isTrusted == true, "GET / → \(root.status), \(root.tls.version ?? "no TLS version")")

    // Without an identity the per-path request ends in IIS's 403.7.
    let anonymous = try await trusting.send(HTTPRequest(url: try HTTPSURL("\(base)/secure")))
    passed = check("no identity", anonymous.status == 403, "GET /secure without a certificate → \(anonymous.status)") && passed

    // 2. Login with a .p12 read once and turned into an identity.
    guard let password = Secret.readFirstLine(from: STDIN_FILENO) else {
        return check("login", false, "no password on standard input (give the .p12 password as its first line)")
    }
    let bundle = try PKCS12Bundle(derBytes: try CertificateLoader.readFile("\(pki)/client.p12"), password: password)
    let identity = try ClientIdentity(bundle, label: "client.p12")
    let login = try HTTPSClient(configuration: TLSClientConfiguration(trust: TrustPolicy(anchors: anchors), identities: [identity]))
    let secure = try await login.send(HTTPRequest(url: try HTTPSURL(URL(string: "\(base)/secure")!)))
    let phases = secure.tls.certificateRequests.map(\.phase.rawValue).joined(separator: ", ")
    passed = check("login", secure.status == 200, "GET /secure with \(identity.label) → \(secure.status), asked by \(phases.isEmpty ? "no request" : phases)") && passed

    // 3. Pins: the server's own key passes; a pin of a key that is not in the chain is refused before
    // the request is sent.
    let serverLeaf = try CertificateLoader.certificates(atPath: "\(pki)/server.pem")[0]
    let pinned = try HTTPSClient(configuration: TLSClientConfiguration(trust: TrustPolicy(anchors: anchors), pins: PinSet(pins: [Pin.publicKey(of: serverLeaf)])))
    let pinnedResponse = try await pinned.send(HTTPRequest(url: try HTTPSURL("\(base)/")))
    passed = check("pin", pinnedResponse.status == 200, "the server's key \(Pin.publicKey(of: serverLeaf)) matched") && passed

    // The client certificate's key is in no certificate of the server's chain.
    let wrong = try HTTPSClient(configuration: TLSClientConfiguration(trust: TrustPolicy(anchors: anchors), pins: PinSet(pins: [Pin.publicKey(of: identity.certificate)])))
    do {
        let response = try await wrong.send(HTTPRequest(url: try HTTPSURL("\(base)/")))
        passed = check("wrong pin", false, "expected a refusal, got \(response.status)") && passed
    } catch {
        passed = check("wrong pin", true, "refused: \(error)") && passed
    }
    return passed
}

// First, before anything uses OpenSSL: its frees are wiped (it frees a copy of .p12 passwords
// without clearing it).
OpenSSLInfo.installWipingAllocator()

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2, !arguments[0].hasPrefix("-") else {
    print("usage: MTLSConsumer BASE_URL PKI_DIR   (the .p12 password on standard input)")
    exit(arguments.first == "--help" ? 0 : 2)
}
do {
    exit(try await run(base: arguments[0], pki: arguments[1]) ? 0 : 1)
} catch {
    print("FAIL \(error)")
    exit(1)
}
