import MTLSHTTP
import XCTest

/// `AuthChallenge.parse` against the challenge cases of Julian Reschke's HTTP authentication test
/// suite (http://test.greenbytes.de/tech/tc/httpauth/, the cases browsers and HTTP libraries —
/// Firefox's `test_authentication.js`, Qt's `tst_qauthenticator` — check their
/// `WWW-Authenticate` parsing against). Names and field values are the suite's; each expected
/// result is what RFC 9110 §11 gives, and where the suite calls a field invalid, the lenient
/// reading of curl and browsers is expected instead and said so beside the case.
final class AuthChallengeSuiteTests: XCTestCase {
    private struct Expected: Equatable, CustomStringConvertible {
        var scheme: String
        var parameters: [String]  // "name=value"
        var token68: String?

        init(_ scheme: String, _ parameters: [String] = [], token68: String? = nil) {
            self.scheme = scheme
            self.parameters = parameters
            self.token68 = token68
        }

        init(_ challenge: AuthChallenge) {
            scheme = challenge.scheme
            parameters = challenge.parameters.map { "\($0.name)=\($0.value)" }
            token68 = challenge.token68
        }

        var description: String { "\(scheme) \(token68 ?? "") \(parameters)" }
    }

    private let cases: [(name: String, fields: [String], expected: [Expected])] = [
        ("simplebasic", [#"Basic realm="foo""#], [Expected("Basic", ["realm=foo"])]),
        // The field as the response parser hands it on after replacing the obs-fold with a space.
        ("simplebasiclf", [#"Basic  realm="foo""#], [Expected("Basic", ["realm=foo"])]),
        ("simplebasicucase", [#"BASIC REALM="foo""#], [Expected("BASIC", ["REALM=foo"])]),
        // RFC 2617 asked for a quoted realm; RFC 9110 allows a token, and so do browsers.
        ("simplebasictok", [#"Basic realm=foo"#], [Expected("Basic", ["realm=foo"])]),
        // Backslashes escape only inside quotes; a value not in quotes is taken as it stands, as curl takes it.
        ("simplebasictokbs", [#"Basic realm=\f\o\o"#], [Expected("Basic", [#"realm=\f\o\o"#])]),
        // A single quote is a token character.
        ("simplebasicsq", [#"Basic realm='foo'"#], [Expected("Basic", ["realm='foo'"])]),
        ("simplebasicpct", [#"Basic realm="foo%20bar""#], [Expected("Basic", ["realm=foo%20bar"])]),
        // An empty list element before the first parameter.
        ("simplebasiccomma", [#"Basic , realm="foo""#], [Expected("Basic", ["realm=foo"])]),
        // No space after the scheme: the challenge ends at the comma, and `realm="foo"` is no challenge.
        ("simplebasiccomma2", [#"Basic, realm="foo""#], [Expected("Basic")]),
        ("simplebasicnorealm", ["Basic"], [Expected("Basic")]),
        // A repeated parameter is invalid; both are kept and the first is the one looked up, as in browsers.
        ("simplebasic2realms", [#"Basic realm="foo", realm="bar""#], [Expected("Basic", ["realm=foo", "realm=bar"])]),
        ("simplebasicwsrealm", [#"Basic realm = "foo""#], [Expected("Basic", ["realm=foo"])]),
        ("simplebasicrealmsqc", [#"Basic realm="\f\o\o""#], [Expected("Basic", ["realm=foo"])]),
        ("simplebasicrealmsqc2", [#"Basic realm="\"foo\"""#], [Expected("Basic", [#"realm="foo""#])]),
        ("simplebasicnewparam1", [#"Basic realm="foo", bar="xyz",, a=b,,,c=d"#], [Expected("Basic", ["realm=foo", "bar=xyz", "a=b", "c=d"])]),
        ("simplebasicnewparam2", [#"Basic bar="xyz", realm="foo""#], [Expected("Basic", ["bar=xyz", "realm=foo"])]),
        ("simplebasicrealmrfc2047", [#"Basic realm="=?ISO-8859-1?Q?foo-=E4?=""#], [Expected("Basic", ["realm==?ISO-8859-1?Q?foo-=E4?="])]),
        ("multibasicunknown", [#"Basic realm="basic", Newauth realm="newauth""#], [Expected("Basic", ["realm=basic"]), Expected("Newauth", ["realm=newauth"])]),
        ("multibasicunknownnoparam", [#"Basic realm="basic", Newauth"#], [Expected("Basic", ["realm=basic"]), Expected("Newauth")]),
        ("multibasicunknown2", [#"Newauth realm="newauth", Basic realm="basic""#], [Expected("Newauth", ["realm=newauth"]), Expected("Basic", ["realm=basic"])]),
        ("multibasicunknown2np", [#"Newauth, Basic realm="basic""#], [Expected("Newauth"), Expected("Basic", ["realm=basic"])]),
        ("multibasicunknown2mf", [#"Newauth realm="newauth""#, #"Basic realm="basic""#], [Expected("Newauth", ["realm=newauth"]), Expected("Basic", ["realm=basic"])]),
        ("multibasicempty", [#",Basic realm="basic""#], [Expected("Basic", ["realm=basic"])]),
        (
            "multibasicqs", [#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#],
            [Expected("Newauth", ["realm=apps", "type=1", #"title=Login to "apps""#]), Expected("Basic", ["realm=simple"])]
        ),
        // `basic=foo` is a parameter of Newauth, not a Basic challenge.
        (
            "multidisgscheme", [#"Newauth realm="Newauth Realm", basic=foo, Basic realm="Basic Realm""#],
            [Expected("Newauth", ["realm=Newauth Realm", "basic=foo"]), Expected("Basic", ["realm=Basic Realm"])]
        ),
        ("unknown", [#"Newauth param="value""#], [Expected("Newauth", ["param=value"])]),
        ("parametersnotrequired", ["A, B"], [Expected("A"), Expected("B")]),
        ("disguisedrealm", [#"Basic foo="realm=nottherealm", realm="basic""#], [Expected("Basic", ["foo=realm=nottherealm", "realm=basic"])]),
        ("disguisedrealm2", [#"Basic nottherealm="nottherealm", realm="basic""#], [Expected("Basic", ["nottherealm=nottherealm", "realm=basic"])]),
        // Invalid (no closing quote); browsers take the value to the end of the field.
        ("missingquote", [#"Basic realm="basic"#], [Expected("Basic", ["realm=basic"])]),
    ]

    func testGreenbytesChallengeCases() {
        for item in cases {
            let parsed = AuthChallenge.parse(item.fields).map(Expected.init)
            XCTAssertEqual(parsed, item.expected, item.name)
        }
        XCTAssertEqual(cases.count, 30)
    }

    /// The realm each case gives the prompt of a user agent that picks Basic, where it has one.
    func testTheRealmLookedUpIsTheFirst() {
        XCTAssertEqual(AuthChallenge.parse(value: #"Basic realm="foo", realm="bar""#).first?.realm, "foo")
        XCTAssertEqual(AuthChallenge.parse(value: #"Basic foo="realm=nottherealm", realm="basic""#).first?.realm, "basic")
    }

    /// What servers send beyond the suite: token68 (IIS's Negotiate and NTLM), a token68 beside
    /// parameter-style challenges, Digest with white space instead of commas between parameters
    /// and a base64 value left unquoted, which is no token (both read as curl reads them).
    func testServerForms() {
        XCTAssertEqual(
            AuthChallenge.parse(["Negotiate", "NTLM TlRMTVNTUAACAAAADAAMADgAAAA=", #"Basic realm="iis.example""#]).map(Expected.init),
            [Expected("Negotiate"), Expected("NTLM", token68: "TlRMTVNTUAACAAAADAAMADgAAAA="), Expected("Basic", ["realm=iis.example"])])
        XCTAssertEqual(
            AuthChallenge.parse(value: #"Negotiate abc==, Basic realm="x""#).map(Expected.init),
            [Expected("Negotiate", token68: "abc=="), Expected("Basic", ["realm=x"])])
        XCTAssertEqual(
            AuthChallenge.parse(value: #"Digest realm="secret", domain="/",  qop=auth,algorithm=MD5, nonce="6f93" opaque="1234""#).map(Expected.init),
            [Expected("Digest", ["realm=secret", "domain=/", "qop=auth", "algorithm=MD5", "nonce=6f93", "opaque=1234"])])
        XCTAssertEqual(
            AuthChallenge.parse(value: #"Digest realm="r", nonce=MTIz==, qop="auth""#).map(Expected.init),
            [Expected("Digest", ["realm=r", "nonce=MTIz==", "qop=auth"])])
        XCTAssertEqual(AuthChallenge.parse(value: #"realm="x", =junk,, Bearer"#).map(Expected.init), [Expected("Bearer")])
    }
}
