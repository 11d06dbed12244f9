import Foundation
import MTLSHTTP
import MTLSTrust
import XCTest

/// The initialisers a library user reaches for first: an identity from a bundle already read, and a
/// Foundation `URL` as a request target.
final class LibraryAPITests: XCTestCase {
    func testAnIdentityFromAReadBundleIsTheOneThePathReaderMakes() throws {
        let path = HTTPFixtures.path("p12/client-alice-modern.p12")
        let bundle = try PKCS12Bundle(derBytes: try CertificateLoader.readFile(path), password: "mtls")
        let fromBundle = try ClientIdentity(bundle, label: "alice")
        let fromPath = try ClientIdentity.pkcs12(path: path, password: "mtls")
        XCTAssertEqual(fromBundle.certificate, fromPath.certificate)
        XCTAssertTrue(fromBundle.privateKey.matches(fromBundle.certificate))
        XCTAssertEqual(fromBundle.chain, fromPath.chain)
        XCTAssertEqual(fromBundle.label, "alice")
        XCTAssertFalse(fromBundle.chain.contains { $0.isSelfSigned }, "a root is never sent with the identity")
        XCTAssertEqual(try ClientIdentity(bundle).label, bundle.leaf?.certificate.displayName)
    }

    func testABundleWithoutAKeyIsNoIdentityAndTheErrorSaysWhichBundle() throws {
        let path = HTTPFixtures.path("p12/certs-only.p12")
        let bundle = try PKCS12Bundle(derBytes: try CertificateLoader.readFile(path), password: "mtls")
        XCTAssertThrowsError(try ClientIdentity(bundle, label: "certs-only.p12")) { error in
            let error = error as? MTLSTrustError
            XCTAssertEqual(error?.reason, .wrongObjectKind)
            XCTAssertEqual(error?.message.hasPrefix("certs-only.p12 holds no identity"), true, error?.message ?? "")
        }
    }

    func testAFoundationURLParsesLikeItsText() throws {
        let text = "https://user:secret@Example.COM:8443/a/b?q=1#frag"
        let fromURL = try HTTPSURL(try XCTUnwrap(URL(string: text)))
        XCTAssertEqual(fromURL, try HTTPSURL(text))
        XCTAssertEqual(fromURL.host, "example.com")
        XCTAssertEqual(fromURL.port, 8443)
        XCTAssertEqual(fromURL.target, "/a/b?q=1")
        XCTAssertEqual(try HTTPSURL(try XCTUnwrap(URL(string: "https://[::1]/"))).host, "::1")
        XCTAssertThrowsError(try HTTPSURL(try XCTUnwrap(URL(string: "ftp://example.com/")))) { error in
            XCTAssertTrue("\(error)".contains("ftp://"), "\(error)")
        }
    }
}
