import Foundation
import MTLSHTTP
import XCTest
import MTLSTestSupport

final class CookieJarTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_780_272_000)  // 2026-06-01T00:00:00Z
    private func url(_ text: String) throws -> HTTPSURL { try HTTPSURL(text) }

    func testHostOnlyCookieGoesOnlyToItsExactHost() throws {
        let jar = CookieJar()
        jar.store("a=1", from: try url("https://www.example.org/"), now: now)
        XCTAssertEqual(jar.cookieHeader(for: try url("https://www.example.org/x"), now: now), "a=1")
        XCTAssertNil(jar.cookieHeader(for: try url("https://sub.www.example.org/"), now: now))
        XCTAssertNil(jar.cookieHeader(for: try url("https://example.org/"), now: now))
        XCTAssertTrue(jar.all[0].hostOnly)
    }

    func testDomainCookieGoesToSubdomainsAndTheLeadingDotIsIgnored() throws {
        let jar = CookieJar()
        jar.store("a=1; Domain=.Example.ORG", from: try url("https://www.example.org/"), now: now)
        XCTAssertEqual(jar.cookieHeader(for: try url("https://example.org/"), now: now), "a=1")
        XCTAssertEqual(jar.cookieHeader(for: try url("https://deep.www.example.org/"), now: now), "a=1")
        XCTAssertNil(jar.cookieHeader(for: try url("https://badexample.org/"), now: now))
        XCTAssertEqual(jar.all[0].domain, "example.org")
        XCTAssertFalse(jar.all[0].hostOnly)
    }

    /// A `Domain` in Unicode is compared in the host's form, the UTS 46 ASCII one (as browsers do).
    func testAnInternationalisedDomainIsComparedInItsASCIIForm() throws {
        let jar = CookieJar()
        jar.store("a=1; Domain=BÜCHER.example", from: try url("https://www.bücher.example/"), now: now)
        XCTAssertEqual(jar.all.first?.domain, "xn--bcher-kva.example")
        XCTAssertEqual(jar.cookieHeader(for: try url("https://xn--bcher-kva.example/"), now: now), "a=1")
        let decision = jar.store("b=1; Domain=a\u{2488}.example", from: try url("https://www.example.org/"), now: now)
        guard case .rejected(_, let reason) = decision else { return XCTFail("\(decision)") }
        XCTAssertTrue(reason.contains("is not a valid domain name"), reason)
    }

    func testDomainOfAnotherSiteIsRejected() throws {
        let jar = CookieJar()
        let decision = jar.store("a=1; Domain=evil.example", from: try url("https://www.example.org/"), now: now)
        guard case .rejected(_, let reason) = decision else { return XCTFail("\(decision)") }
        XCTAssertTrue(reason.contains("does not cover"), reason)
        XCTAssertTrue(jar.all.isEmpty)
    }

    func testSingleLabelDomainLikeComIsRejected() throws {
        let jar = CookieJar()
        let decision = jar.store("a=1; Domain=com", from: try url("https://www.example.com/"), now: now)
        guard case .rejected(_, let reason) = decision else { return XCTFail("\(decision)") }
        XCTAssertTrue(reason.contains("single-label"), reason)
        // Domain naming the single-label host itself is a host-only cookie.
        jar.store("b=2; Domain=localhost", from: try url("https://localhost:8443/"), now: now)
        XCTAssertEqual(jar.all.map(\.name), ["b"])
        XCTAssertTrue(jar.all[0].hostOnly)
    }

    func testIPHostCookiesMatchOnlyTheIdenticalAddress() throws {
        let jar = CookieJar()
        guard case .stored = jar.store("a=1; Domain=127.0.0.1", from: try url("https://127.0.0.1:8443/"), now: now) else { return XCTFail("Domain equal to the IP host") }
        guard case .rejected = jar.store("b=2; Domain=0.0.1", from: try url("https://127.0.0.1/"), now: now) else { return XCTFail("a suffix of an IP address is not a domain") }
        XCTAssertEqual(jar.cookieHeader(for: try url("https://127.0.0.1:9999/"), now: now), "a=1", "cookies ignore the port")
        XCTAssertNil(jar.cookieHeader(for: try url("https://127.0.0.2/"), now: now))
    }

    func testPathDefaultsToTheRequestDirectoryAndMatchesOnSegmentBoundaries() throws {
        let jar = CookieJar()
        jar.store("d=1", from: try url("https://h.example/app/login"), now: now)
        jar.store("p=2; Path=/app/api", from: try url("https://h.example/"), now: now)
        XCTAssertEqual(jar.all.first { $0.name == "d" }?.path, "/app")
        XCTAssertEqual(jar.cookieHeader(for: try url("https://h.example/app/api/x"), now: now), "p=2; d=1", "longer path first")
        XCTAssertEqual(jar.cookieHeader(for: try url("https://h.example/app"), now: now), "d=1")
        XCTAssertNil(jar.cookieHeader(for: try url("https://h.example/application"), now: now))
        XCTAssertEqual(jar.cookieHeader(for: try url("https://h.example/app/apix"), now: now), "d=1")
    }

    func testSecureCookiesGoOnlyOverHTTPS() throws {
        let jar = CookieJar()
        jar.store("s=1; Secure", from: try url("https://h.example/"), now: now)
        XCTAssertEqual(jar.cookieHeader(for: try url("https://h.example/"), now: now), "s=1")
        XCTAssertNil(jar.cookieHeader(for: try url("http://h.example/"), now: now))
        guard case .rejected = jar.store("t=1; Secure", from: try url("http://h.example/"), now: now) else { return XCTFail("Secure over http") }
    }

    func testMaxAgeWinsOverExpiresAndZeroDeletes() throws {
        let jar = CookieJar()
        jar.store("a=1; Expires=Wed, 01 Jan 2020 00:00:00 GMT; Max-Age=60", from: try url("https://h.example/"), now: now)
        XCTAssertEqual(jar.all.first?.expires, now.addingTimeInterval(60))
        XCTAssertEqual(jar.cookieHeader(for: try url("https://h.example/"), now: now.addingTimeInterval(30)), "a=1")
        XCTAssertNil(jar.cookieHeader(for: try url("https://h.example/"), now: now.addingTimeInterval(61)))
        jar.store("b=2", from: try url("https://h.example/"), now: now)
        guard case .deleted = jar.store("b=x; Max-Age=0", from: try url("https://h.example/"), now: now) else { return XCTFail("Max-Age=0 deletes") }
        XCTAssertTrue(jar.all.allSatisfy { $0.name != "b" })
    }

    func testCookieDatesInTheFormatsServersSendAreParsed() throws {
        let jar = CookieJar()
        let expected = Date(timeIntervalSince1970: 1_623_233_894)  // 2021-06-09T10:18:14Z
        for value in ["Wed, 09 Jun 2021 10:18:14 GMT", "Wednesday, 09-Jun-21 10:18:14 GMT", "Wed Jun  9 10:18:14 2021", "09 Jun 2021 10:18:14"] {
            jar.removeAll()
            jar.store("a=1; Expires=\(value)", from: try url("https://h.example/"), now: Date(timeIntervalSince1970: 1_600_000_000))
            XCTAssertEqual(jar.all.first?.expires, expected, value)
        }
        jar.removeAll()
        jar.store("a=1; Expires=not a date", from: try url("https://h.example/"), now: now)
        XCTAssertTrue(jar.all.first?.isSessionCookie ?? false, "an unparsable Expires is ignored")
    }

    func testSameSiteStrictAndLaxOnCrossSiteNavigations() throws {
        let jar = CookieJar()
        let site = try url("https://sp.example/")
        jar.store("strict=1; SameSite=Strict; Secure", from: site, now: now)
        jar.store("lax=2; SameSite=Lax", from: site, now: now)
        jar.store("none=3; SameSite=None; Secure", from: site, now: now)
        jar.store("plain=4", from: site, now: now)
        func names(_ context: CookieJar.SiteContext) -> [String] { jar.cookies(for: site, context: context, now: now).map(\.name).sorted() }
        XCTAssertEqual(names(.sameSite), ["lax", "none", "plain", "strict"])
        XCTAssertEqual(names(.crossSiteNavigation(method: "GET")), ["lax", "none", "plain"])
        XCTAssertEqual(names(.crossSiteNavigation(method: "POST")), ["none", "plain"], "a cross-site form POST (a SAML response) carries no Lax cookie")
    }

    func testHostAndSecurePrefixesAreEnforced() throws {
        let jar = CookieJar()
        let site = try url("https://h.example/a/b")
        guard case .rejected = jar.store("__Secure-a=1", from: site, now: now) else { return XCTFail("__Secure- without Secure") }
        guard case .rejected = jar.store("__Host-b=1; Secure; Path=/; Domain=h.example", from: site, now: now) else { return XCTFail("__Host- with Domain") }
        guard case .stored = jar.store("__Host-c=1; Secure; Path=/", from: site, now: now) else { return XCTFail("a valid __Host- cookie") }
    }

    func testReplacingACookieKeepsItsCreationTime() throws {
        let jar = CookieJar()
        jar.store("a=1", from: try url("https://h.example/"), now: now)
        jar.store("a=2", from: try url("https://h.example/"), now: now.addingTimeInterval(10))
        XCTAssertEqual(jar.all.count, 1)
        XCTAssertEqual(jar.all[0].value, "2")
        XCTAssertEqual(jar.all[0].creation, now)
    }

    func testMalformedSetCookieIsRejectedNotFatal() throws {
        let jar = CookieJar()
        guard case .rejected = jar.store("novalue", from: try url("https://h.example/"), now: now) else { return XCTFail() }
        guard case .rejected = jar.store("=v", from: try url("https://h.example/"), now: now) else { return XCTFail() }
        XCTAssertTrue(jar.all.isEmpty)
    }

    // MARK: Netscape format

    func testNetscapeFormatRoundTripsWithHttpOnlyPrefixAndSessionCookies() throws {
        let jar = CookieJar()
        jar.store("sid=abc; Path=/; Secure; HttpOnly", from: try url("https://sp.example/"), now: now)
        jar.store("pref=x y; Domain=example.org; Path=/app; Max-Age=3600", from: try url("https://www.example.org/"), now: now)
        let text = jar.netscapeFormat(now: now)
        XCTAssertTrue(text.hasPrefix("# Netscape HTTP Cookie File\n"))
        XCTAssertTrue(text.contains("#HttpOnly_sp.example\tFALSE\t/\tTRUE\t0\tsid\tabc\n"), text)
        XCTAssertTrue(text.contains(".example.org\tTRUE\t/app\tFALSE\t\(Int(now.timeIntervalSince1970) + 3600)\tpref\tx y\n"), text)

        let loaded = CookieJar()
        XCTAssertEqual(loaded.load(netscapeFormat: text, now: now), 2)
        let sid = try XCTUnwrap(loaded.all.first { $0.name == "sid" })
        XCTAssertTrue(sid.httpOnly && sid.secure && sid.hostOnly && sid.isSessionCookie)
        let pref = try XCTUnwrap(loaded.all.first { $0.name == "pref" })
        XCTAssertEqual(pref.domain, "example.org")
        XCTAssertFalse(pref.hostOnly)
        XCTAssertEqual(pref.expires, now.addingTimeInterval(3600))
        XCTAssertEqual(loaded.cookieHeader(for: try url("https://www.example.org/app/x"), now: now), "pref=x y")
    }

    func testCurlWrittenCookieFileIsRead() throws {
        // As curl -c writes it (an expired line, a comment and an empty value included).
        let text = """
            # Netscape HTTP Cookie File
            # https://curl.se/docs/http-cookies.html
            # This file was generated by libcurl! Edit at your own risk.

            #HttpOnly_127.0.0.1\tFALSE\t/\tTRUE\t0\tmellon-cookie\tcookietest
            .example.com\tTRUE\t/\tFALSE\t1\told\tgone
            example.net\tFALSE\t/\tFALSE\t0\tempty\t
            """
        let jar = CookieJar()
        XCTAssertEqual(jar.load(netscapeFormat: text, now: now), 2)
        XCTAssertEqual(jar.cookieHeader(for: try url("https://127.0.0.1:1234/mellon/x"), now: now), "mellon-cookie=cookietest")
        XCTAssertEqual(jar.cookieHeader(for: try url("https://example.net/"), now: now), "empty=")
    }

    func testSaveWritesAPrivateFileAndLoadReadsIt() throws {
        let jar = CookieJar()
        jar.store("a=1; Max-Age=600", from: try url("https://h.example/"), now: Date())
        let path = NSTemporaryDirectory() + "mtls-cookies-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try jar.save(toPath: path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let loaded = CookieJar()
        XCTAssertEqual(try loaded.load(fromPath: path), 1)
        XCTAssertThrowsError(try loaded.load(fromPath: path + ".missing")) { error in
            XCTAssertEqual((error as? HTTPSError)?.phase, .io)
        }
    }

    // MARK: Live: Set-Cookie from a real server

    func testApacheCookieIsStoredAndSentBack() throws {
        let apache = try LoginPeers.shared.apache()
        let session = try LoginFixtures.session()
        let set = try session.get("https://127.0.0.1:\(apache.port)/cookie")
        XCTAssertEqual(set.status, 200)
        let cookie = try XCTUnwrap(session.cookies.all.first { $0.name == "session" })
        XCTAssertTrue(cookie.secure && cookie.httpOnly && cookie.hostOnly)
        let echo = try session.get("https://127.0.0.1:\(apache.port)/whoami")
        XCTAssertEqual(LoginFixtures.fields(echo.text.text)["cookie"], "session=abc")
        XCTAssertEqual(echo.hops.first?.cookiesSent, ["session"])
    }

    func testServerCookiesFollowDomainPathAndExpiryRules() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session()
        let set = try session.get("https://127.0.0.1:\(saml["SP_PORT"])/set-cookies")
        let decisions = set.hops[0].cookieDecisions.map(\.description)
        XCTAssertTrue(decisions.contains { $0.hasPrefix("rejected tld") }, decisions.joined(separator: "\n"))
        XCTAssertTrue(decisions.contains { $0.hasPrefix("rejected foreign") }, decisions.joined(separator: "\n"))
        XCTAssertTrue(decisions.contains { $0.hasPrefix("deleted expired") }, decisions.joined(separator: "\n"))
        XCTAssertEqual(Set(session.cookies.all.map(\.name)), ["hostonly", "domainip", "echoonly", "persistent", "strict"])

        let echo = try session.get("https://127.0.0.1:\(saml["SP_PORT"])/echo")
        let sent = Set((LoginFixtures.fields(echo.text.text)["cookie"] ?? "").components(separatedBy: "; "))
        XCTAssertEqual(sent, ["hostonly=1", "domainip=2", "echoonly=3", "persistent=4", "strict=6"])
        // Another domain (localhost) gets none of 127.0.0.1's cookies.
        let other = try session.get("https://localhost:\(saml["OTHER_PORT"])/echo")
        XCTAssertEqual(LoginFixtures.fields(other.text.text)["cookie"], "")
        // /set-cookies is outside Path=/echo.
        let outside = try session.get("https://127.0.0.1:\(saml["SP_PORT"])/r302")
        XCTAssertFalse(outside.hops[0].cookiesSent.contains("echoonly"))
        XCTAssertTrue(outside.hops[1].cookiesSent.contains("echoonly"))
    }
}
