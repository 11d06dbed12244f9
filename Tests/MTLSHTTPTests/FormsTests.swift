import Foundation
import MTLSHTTP
import XCTest

final class FormsTests: XCTestCase {
    private let page = try! HTTPSURL("https://idp.example:8443/idp/profile/SAML2/Redirect/SSO?execution=e1s1")

    // MARK: application/x-www-form-urlencoded

    func testALiteralPlusBecomesPercent2BAndASpaceBecomesPlus() {
        XCTAssertEqual(FormURLEncoding.encode([("q", "a+b c")]), "q=a%2Bb+c")
    }

    func testBase64ValuesAreFullyEscaped() {
        // A SAMLResponse is base64: '+', '/' and '=' must all be escaped, no hand-made fix-ups.
        XCTAssertEqual(FormURLEncoding.encode([("SAMLResponse", "PD94+bWw/ZXI=")]), "SAMLResponse=PD94%2BbWw%2FZXI%3D")
    }

    func testOnlyUnreservedCharactersStayAsTheyAre() {
        XCTAssertEqual(FormURLEncoding.percentEncode("AZaz09-._~!*'()&=;:@/?#[]"), "AZaz09-._~%21%2A%27%28%29%26%3D%3B%3A%40%2F%3F%23%5B%5D")
        // A form body is serialized as browsers serialize it (the URL Standard's urlencoded
        // serializer): `*` stays, `~` is encoded; every other byte as above.
        XCTAssertEqual(FormURLEncoding.encode([("AZaz09-._~!*'()", "&=;:@/?#[] ")]), "AZaz09-._%7E%21*%27%28%29=%26%3D%3B%3A%40%2F%3F%23%5B%5D+")
        for byte in UInt8.min...UInt8.max {
            let kept = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || [0x2A, 0x2D, 0x2E, 0x5F].contains(byte)
            let expected = kept ? String(UnicodeScalar(byte)) : byte == 0x20 ? "+" : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            XCTAssertEqual(FormURLEncoding.encode(bytes: [([byte], [])]), expected + "=", "byte \(byte)")
        }
        XCTAssertEqual(FormURLEncoding.percentEncode("ü€"), "%C3%BC%E2%82%AC")
        XCTAssertEqual(FormURLEncoding.percentEncode("a b", spaceAsPlus: false), "a%20b")
    }

    func testDecodingRoundTripsEveryCharacter() {
        let fields = [(name: "na me", value: "a+b=c&d/é ü"), (name: "empty", value: "")]
        let decoded = FormURLEncoding.decode(FormURLEncoding.encode(fields))
        XCTAssertEqual(decoded.map(\.name), fields.map(\.name))
        XCTAssertEqual(decoded.map(\.value), fields.map(\.value))
        XCTAssertEqual(FormURLEncoding.percentDecode("100%zz+x"), "100%zz x", "invalid escapes stay literal")
    }

    // MARK: multipart/form-data

    func testMultipartBodyHasPartsBoundaryAndEscapedNames() {
        var form = MultipartFormData(boundary: "XyZ")
        form.add(name: "field", value: "välue")
        form.add(name: "up\"load", filename: "a\r\nb.txt", contentType: "text/plain", data: Array("hello".utf8))
        let body = String(decoding: form.encode(), as: UTF8.self)
        XCTAssertEqual(form.contentType, "multipart/form-data; boundary=XyZ")
        XCTAssertEqual(
            body,
            "--XyZ\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvälue\r\n--XyZ\r\nContent-Disposition: form-data; name=\"up%22load\"; filename=\"a%0D%0Ab.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XyZ--\r\n"
        )
    }

    func testMultipartDrawsANewBoundaryWhenTheContentContainsIt() {
        var form = MultipartFormData(boundary: "abc")
        form.add(name: "f", value: "xx--abcxx")
        let body = String(decoding: form.encode(), as: UTF8.self)
        XCTAssertNotEqual(form.boundary, "abc")
        XCTAssertTrue(body.hasPrefix("--\(form.boundary)\r\n"))
    }

    // MARK: HTML forms with libxml2

    func testShibbolethStylePostBindingFormWithEntityEncodedActionIsFound() throws {
        let html = """
            <!DOCTYPE html><html><head><meta charset="utf-8"/></head>
            <body onload="document.forms[0].submit()">
            <noscript><p><strong>Note:</strong> press Continue.</p></noscript>
            <form action="https&#x3a;&#x2f;&#x2f;sp.example&#x2f;Shibboleth.sso&#x2f;SAML2&#x2f;POST" method="post">
            <div>
            <input type="hidden" name="RelayState" value="ss&#x3a;mem&#x3a;5f0c"/>
            <input type="hidden" name="SAMLResponse" value="PHNhbWxwOlJlc3BvbnNl+/=="/>
            </div>
            <noscript><div><input type="submit" value="Continue"/></div></noscript>
            </form></body></html>
            """
        let forms = HTMLForm.forms(in: html, baseURL: page)
        XCTAssertEqual(forms.count, 1)
        let form = forms[0]
        XCTAssertEqual(form.postBinding, .samlResponse)
        XCTAssertEqual(form.action.description, "https://sp.example/Shibboleth.sso/SAML2/POST")
        XCTAssertEqual(form.fields.map(\.name), ["RelayState", "SAMLResponse"], "the submit button is not an entry")
        XCTAssertEqual(form["RelayState"], "ss:mem:5f0c")
        let request = try form.submission(origin: page.origin)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.headers["Content-Type"], "application/x-www-form-urlencoded")
        XCTAssertEqual(request.headers["Origin"], "https://idp.example:8443")
        XCTAssertEqual(String(decoding: request.body ?? [], as: UTF8.self), "RelayState=ss%3Amem%3A5f0c&SAMLResponse=PHNhbWxwOlJlc3BvbnNl%2B%2F%3D%3D")
    }

    func testWSFederationFormAndSAMLRequestFormAreRecognised() {
        let wsfed = """
            <html><body><form method="POST" name="hiddenform" action="https://rp.example/wsfed/">
            <input type="hidden" name="wa" value="wsignin1.0" /><input type="hidden" name="wresult" value="&lt;t:RequestSecurityTokenResponse/&gt;" />
            <input type="hidden" name="wctx" value="rm=0&amp;id=passive" /></form></body></html>
            """
        let form = HTMLForm.forms(in: wsfed, baseURL: page)[0]
        XCTAssertEqual(form.postBinding, .wsFederation)
        XCTAssertEqual(form["wresult"], "<t:RequestSecurityTokenResponse/>")
        XCTAssertEqual(form["wctx"], "rm=0&id=passive")

        let request = "<form method=post action=/sso><input type=hidden name=SAMLRequest value=abc></form>"
        let saml = HTMLForm.forms(in: request, baseURL: page)[0]
        XCTAssertEqual(saml.postBinding, .samlRequest)
        XCTAssertEqual(saml.action.description, "https://idp.example:8443/sso")
    }

    func testAGetFormOrAFormWithoutSAMLFieldsIsNoPostBinding() {
        let html = """
            <form action="/search"><input name="SAMLResponse" value="x"></form>
            <form method="post" action="/login"><input name="user"><input type="password" name="pw"></form>
            """
        let forms = HTMLForm.forms(in: html, baseURL: page)
        XCTAssertEqual(forms.count, 2)
        XCTAssertNil(forms[0].postBinding, "method GET")
        XCTAssertNil(forms[1].postBinding)
        XCTAssertEqual(forms[1].fields.map(\.name), ["user", "pw"])
    }

    func testEntriesFollowTheHTMLStandard() throws {
        let html = """
            <form method="post" action="next">
              <input name="t" value="text">
              <input name="dis" value="x" disabled>
              <input type="checkbox" name="c1" checked>
              <input type="checkbox" name="c2" value="v2">
              <input type="radio" name="r" value="a"><input type="radio" name="r" value="b" checked>
              <input type="submit" name="go" value="Go">
              <input type="image" name="img">
              <select name="s"><option>first</option><option value="2" selected>second</option></select>
              <select name="s0"><option> one  two </option></select>
              <select name="m" multiple><option value="x" selected>x</option><option value="y" selected>y</option></select>
              <textarea name="ta">
            line1
            line2</textarea>
              <input name="">
            </form>
            """
        let form = try XCTUnwrap(HTMLForm.forms(in: html, baseURL: page).first)
        XCTAssertEqual(form.fields.map { "\($0.name)=\($0.value)" }, ["t=text", "c1=on", "r=b", "s=2", "s0=one two", "m=x", "m=y", "ta=line1\r\nline2"])
        XCTAssertEqual(form.action.description, "https://idp.example:8443/idp/profile/SAML2/Redirect/next")
    }

    func testBaseHrefAndEmptyActionAndScriptActions() {
        let html = """
            <html><head><base href="https://other.example/base/"></head><body>
            <form method="post" action="post"><input type="hidden" name="SAMLResponse" value="a"></form>
            <form method="post"><input type="hidden" name="SAMLResponse" value="b"></form>
            <form method="post" action="javascript:alert(1)"><input type="hidden" name="SAMLResponse" value="c"></form>
            </body></html>
            """
        let forms = HTMLForm.forms(in: html, baseURL: page)
        XCTAssertEqual(forms.map(\.action.description), ["https://other.example/base/post", page.description], "a javascript: action is never submitted")
    }

    func testBrokenHTMLIsRecoveredByTheParser() {
        let html = "<html><body><form method=post action='/acs'><div><input type=hidden name=SAMLResponse value='x+y'><p>unclosed<td>junk</form"
        let form = HTMLForm.forms(in: html, baseURL: page).first
        XCTAssertEqual(form?["SAMLResponse"], "x+y")
    }

    func testGetSubmissionPutsTheEntriesInTheQuery() throws {
        let form = HTMLForm.forms(in: "<form action='/s?old=1'><input name=q value='a b+c'></form>", baseURL: page)[0]
        let request = try form.submission()
        XCTAssertEqual(request.method, "GET")
        XCTAssertEqual(request.url.target, "/s?q=a+b%2Bc")
        XCTAssertNil(request.body)
    }

    func testAShiftJISPageSubmitsInShiftJIS() throws {
        let html = "<form method=post action=/p><input name=n value='日本'></form>"
        let form = HTMLForm.forms(in: html, baseURL: page, charset: .shiftJIS)[0]
        let body = String(decoding: try form.submission().body ?? [], as: UTF8.self)
        XCTAssertEqual(body, "n=%93%FA%96%7B")
    }

    func testMultipartEnctypeIsHonoured() throws {
        let html = "<form method=post enctype='multipart/form-data' action=/u><input type=hidden name=SAMLResponse value=abc></form>"
        let request = try HTMLForm.forms(in: html, baseURL: page)[0].submission()
        XCTAssertTrue(request.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") ?? false)
        XCTAssertTrue(String(decoding: request.body ?? [], as: UTF8.self).contains("name=\"SAMLResponse\"\r\n\r\nabc\r\n"))
    }
}
