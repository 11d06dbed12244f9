import XCTest

@testable import MTLSHTTP

/// The HTTP/1.1 response parser, byte by byte, with no sockets.
final class ResponseParserTests: XCTestCase {
    private func parse(_ text: String, method: String = "GET", chunkSize: Int = .max, finish: Bool = true) throws -> (HTTPResponseHead?, [UInt8], Bool) {
        var parser = HTTPResponseParser(requestMethod: method)
        var body: [UInt8] = []
        var ended = false
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let end = min(bytes.count, index + chunkSize)
            for event in try parser.feed(bytes[index..<end]) {
                if case .body(let chunk) = event { body += chunk }
                if case .end = event { ended = true }
            }
            index = end
        }
        if finish && !ended {
            for event in try parser.finish() {
                if case .end = event { ended = true }
            }
        }
        return (parser.head, body, ended)
    }

    func testContentLengthBodyIsReadExactlyWhateverTheChunkingOfTheInput() throws {
        for size in [1, 2, 7, 1000] {
            let (head, body, ended) = try parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello", chunkSize: size)
            XCTAssertEqual(head?.status, 200)
            XCTAssertEqual(head?.headers["x-a"], "b")
            XCTAssertEqual(String(decoding: body, as: UTF8.self), "hello")
            XCTAssertTrue(ended)
        }
    }

    func testChunkedBodyWithExtensionsAndTrailersIsDecoded() throws {
        let (head, body, ended) = try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n", chunkSize: 3)
        XCTAssertEqual(head?.status, 200)
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "hello world")
        XCTAssertTrue(ended)
    }

    func testBodyWithoutFramingRunsUntilTheConnectionCloses() throws {
        var parser = HTTPResponseParser(requestMethod: "GET")
        _ = try parser.feed(Array("HTTP/1.1 200 OK\r\n\r\nabc".utf8)[...])
        XCTAssertTrue(parser.readsUntilClose)
        XCTAssertEqual(try parser.finish(), [.end])
    }

    func testHeadAnd204And304HaveNoBodyDespiteContentLength() throws {
        XCTAssertTrue(try parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", method: "HEAD", finish: false).2)
        XCTAssertTrue(try parse("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", finish: false).2)
        XCTAssertTrue(try parse("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", finish: false).2)
    }

    func testInformationalResponsesPrecedeTheFinalOne() throws {
        var parser = HTTPResponseParser(requestMethod: "POST")
        let events = try parser.feed(
            Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n".utf8)[...])
        XCTAssertEqual(events, [.informational(status: 100), .informational(status: 103), .head(status: 201), .end])
    }

    func testTwoDifferentContentLengthsAreRefusedAsSmuggling() {
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")) { error in
            XCTAssertEqual(error as? HTTPResponseParser.ParseError, .conflictingContentLength)
        }
        // The same value twice is allowed (RFC 9110 §8.6).
        XCTAssertNoThrow(try parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"))
    }

    func testChunkSizeOverflowIsRefused() {
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n")) { error in
            XCTAssertEqual(error as? HTTPResponseParser.ParseError, .chunkSizeOverflow)
        }
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")) { error in
            guard case .badChunkSize = error as? HTTPResponseParser.ParseError else { return XCTFail("\(error)") }
        }
    }

    func testTruncatedBodiesAreReportedWithWhatWasMissing() {
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")) { error in
            XCTAssertEqual((error as? HTTPResponseParser.ParseError)?.description.contains("7 more body bytes"), true)
        }
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"))
        XCTAssertThrowsError(try parse("")) { error in
            XCTAssertEqual(error as? HTTPResponseParser.ParseError, .truncated(expected: "no response at all"))
        }
    }

    func testBadStatusLinesAndHTTP09AreRefused() {
        for text in [
            "HTTP/2 200 OK\r\n\r\n", "<html>hello</html>\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "SSH-2.0-OpenSSH\r\n", "HTTP/1.1 099 Low\r\n\r\n",
            "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 200OK\r\n\r\n", "HTTP/1.1  200 OK\r\n\r\n", "HTTP/1.1 +20 OK\r\n\r\n", "http/1.1 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n",
        ] {
            XCTAssertThrowsError(try parse(text)) { error in
                guard case .badStatusLine = error as? HTTPResponseParser.ParseError else { return XCTFail("\(text): \(error)") }
            }
        }
    }

    func testStatusLinesKeepVersionStatusAndReasonWhateverTheChunking() throws {
        for size in [1, 2, 5, .max] {
            let bare = try XCTUnwrap(try parse("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", chunkSize: size).0)
            XCTAssertEqual([bare.version, String(bare.status), bare.reason], ["HTTP/1.1", "200", ""])
            let spaced = try XCTUnwrap(try parse("HTTP/1.1 204 \r\n\r\n", chunkSize: size).0)
            XCTAssertEqual([spaced.version, String(spaced.status), spaced.reason], ["HTTP/1.1", "204", ""])
            let old = try XCTUnwrap(try parse("HTTP/1.0 404 Not  Found\r\nContent-Length: 0\r\n\r\n", chunkSize: size).0)
            XCTAssertEqual([old.version, String(old.status), old.reason], ["HTTP/1.0", "404", "Not  Found"])
            let value = try XCTUnwrap(try parse("HTTP/1.1 200 OK\r\nX-A: \t spaced  value \t\r\nX-B:\r\nX-C:   \r\nContent-Length: 0\r\n\r\n", chunkSize: size).0)
            XCTAssertEqual(value.headers.fields.map(\.value), ["spaced  value", "", "", "0"])
        }
    }

    func testHeaderLimitsHold() {
        let longLine = "HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 70_000) + "\r\n\r\n"
        XCTAssertThrowsError(try parse(longLine)) { error in XCTAssertEqual(error as? HTTPResponseParser.ParseError, .lineTooLong(65536)) }
        let many = "HTTP/1.1 200 OK\r\n" + String(repeating: "X: y\r\n", count: 1001) + "\r\n"
        XCTAssertThrowsError(try parse(many)) { error in XCTAssertEqual(error as? HTTPResponseParser.ParseError, .tooManyHeaders(1000)) }
    }

    func testMalformedHeaderNamesAreRefused() {
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nBad Header: b\r\n\r\n"))
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nBad\u{1}: b\r\n\r\n"))
    }

    /// RFC 9112 5.2: a user agent replaces each obs-fold with a space. Read in one piece and byte
    /// by byte; white space around the fold goes, a line of white space adds nothing, an empty
    /// value takes the folded text alone, and a CR or NUL in a folded line is refused as in a value.
    func testObsoleteLineFoldingContinuesThePreviousValue() throws {
        for size in [1, 1000] {
            let (head, body, _) = try parse(
                "HTTP/1.1 200 OK\r\nX-A: b \r\n \t c\r\n\td \r\nX-Empty:\r\n e\r\nX-Blank: f\r\n \r\nContent-Length: 2\r\n\r\nok", chunkSize: size)
            XCTAssertEqual(head?.headers["X-A"], "b c d")
            XCTAssertEqual(head?.headers["X-Empty"], "e")
            XCTAssertEqual(head?.headers["X-Blank"], "f")
            XCTAssertEqual(head?.headers.fields.map(\.name), ["X-A", "X-Empty", "X-Blank", "Content-Length"])
            XCTAssertEqual(body, Array("ok".utf8))
            XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nX-A: b\r\n c\u{0}d\r\n\r\n", chunkSize: size))
        }
        // The challenge of greenbytes' `simplebasiclf`, as a server folds it.
        let (head, _, _) = try parse("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic\r\n realm=\"foo\"\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(AuthChallenge.parse(head?.headers.values("WWW-Authenticate") ?? []).first?.realm, "foo")
    }

    func testRequestSerialisationRefusesHeaderInjection() throws {
        let url = try HTTPSURL("https://example.com/a?b=c")
        var request = HTTPRequest(url: url, headers: ["X-Evil": "a\r\nInjected: yes"])
        XCTAssertThrowsError(try HTTPExchange.serializeHead(request, method: "GET", hostHeader: url.hostHeader, userAgent: "t", bodyLength: nil)) { error in
            XCTAssertEqual((error as? HTTPSError)?.phase, .request)
        }
        request.headers = ["X-Good": "value"]
        let head = String(decoding: try HTTPExchange.serializeHead(request, method: "GET", hostHeader: url.hostHeader, userAgent: "t", bodyLength: 3), as: UTF8.self)
        XCTAssertTrue(head.hasPrefix("GET /a?b=c HTTP/1.1\r\nHost: example.com\r\n"))
        XCTAssertTrue(head.contains("Content-Length: 3\r\n"))
        XCTAssertTrue(head.hasSuffix("\r\n\r\n"))
        // The target is a public field: one set by hand is checked when the head is written.
        // The same rule as the URL parser's: a Unicode space or a C1 control is refused too.
        for target in ["/a HTTP/1.1\r\nInjected: yes", "/a b", "/a\tb", "/a\u{7F}", "/a\u{A0}b", "/a\u{85}"] {
            var bad = request
            bad.url.target = target
            XCTAssertThrowsError(try HTTPExchange.serializeHead(bad, method: "GET", hostHeader: url.hostHeader, userAgent: "t", bodyLength: nil), target) { error in
                XCTAssertEqual((error as? HTTPSError)?.phase, .request)
                XCTAssertTrue((error as? HTTPSError)?.message.contains("white space or control characters") == true, "\(error)")
                let message = (error as? HTTPSError)?.message ?? ""
                XCTAssertFalse(message.unicodeScalars.contains { $0 == "\r" || $0 == "\n" }, "a CR or LF in the target is shown escaped, not as a line break: \(error)")
            }
        }
        var unicode = request
        unicode.url.target = "/caf\u{E9}"
        let unicodeHead = try HTTPExchange.serializeHead(unicode, method: "GET", hostHeader: url.hostHeader, userAgent: "t", bodyLength: nil)
        XCTAssertTrue(String(decoding: unicodeHead, as: UTF8.self).hasPrefix("GET /caf\u{E9} HTTP/1.1\r\n"))
        XCTAssertThrowsError(try HTTPExchange.serializeHead(request, method: "GE T", hostHeader: url.hostHeader, userAgent: "t", bodyLength: nil))
        request.expectsContinue = true
        let continuing = try HTTPExchange.serializeHead(request, method: "PUT", hostHeader: url.hostHeader, userAgent: "t", bodyLength: 3)
        XCTAssertTrue(String(decoding: continuing, as: UTF8.self).hasSuffix("Content-Length: 3\r\nExpect: 100-continue\r\n\r\n"))
    }

    /// The framing fields are told apart by their bytes as each line is read; the outcome must be
    /// the one a search of the finished head by name gives, in any ASCII case and with values
    /// that are lists, padded, repeated, empty or not UTF-8.
    func testFramingFieldsNotedPerLineAgreeWithASearchOfTheHeadByName() throws {
        let cases: [(fields: String, body: String)] = [
            ("Content-Length: 5", "hello"),
            ("CONTENT-LENGTH: 5", "hello"),
            ("content-length:5\r\nContent-Length: 5", "hello"),
            ("Content-Length: 5, 5", "hello"),
            ("Content-Length:  \t5 \t", "hello"),
            ("Content-Length: 5\r\nContent-Encoding: identity", "hello"),
            ("content-encoding: identity\r\nContent-Encoding: gzip\r\nContent-Length: 0", ""),
            ("Transfer-Encoding: chunked", "5\r\nhello\r\n0\r\n\r\n"),
            ("TRANSFER-ENCODING: gzip, CHUNKED", "5\r\nhello\r\n0\r\n\r\n"),
            ("Transfer-Encoding: identity", "hello"),
            ("Content-Lengthy: 3\r\nX-Content-Length: 4", "hello"),
            ("Content-Length:", "hello"),
        ]
        for (fields, body) in cases {
            var parser = HTTPResponseParser(requestMethod: "GET")
            var received: [UInt8] = []
            for event in try parser.feed(ArraySlice(Array("HTTP/1.1 200 OK\r\n\(fields)\r\n\r\n\(body)".utf8))) {
                if case .body(let chunk) = event { received += chunk }
            }
            if !parser.isComplete { _ = try parser.finish() }
            let head = try XCTUnwrap(parser.head, fields)
            XCTAssertEqual(parser.contentCoding, head.headers["Content-Encoding"], fields)
            // The reference: lengths and codings from the finished head, searched by name.
            let lengths = head.headers.values("Content-Length").flatMap { $0.split(separator: ",") }.map { HTTPResponseParser.trimmingWhitespace($0) }
            let codings = head.headers.values("Transfer-Encoding").flatMap { $0.split(separator: ",") }.map { HTTPResponseParser.trimmingWhitespace($0).lowercased() }
            let expected: String
            if let last = codings.last {
                expected = last == "chunked" ? "hello" : body
            } else if let length = lengths.first.flatMap({ Int($0) }) {
                expected = String(body.prefix(length))
            } else {
                expected = body
            }
            XCTAssertEqual(String(decoding: received, as: UTF8.self), expected, fields)
        }
        let (latin1, _, _) = try parse("HTTP/1.1 200 OK\r\nX-Name: caf\u{E9}\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(latin1?.headers["X-Name"], "café")
        var notUTF8 = HTTPResponseParser(requestMethod: "GET")
        _ = try notUTF8.feed(ArraySlice(Array("HTTP/1.1 200 OK\r\nX-Name:  caf".utf8) + [0xE9] + Array(" \r\nContent-Length: 0\r\n\r\n".utf8)))
        XCTAssertEqual(notUTF8.head?.headers["x-name"], "café", "ISO 8859-1, trimmed")
        let (empty, _, _) = try parse("HTTP/1.1 200 OK\r\nX-Empty: \t \r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(empty?.headers["X-Empty"], "")
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nX-A: b\u{0}c\r\n\r\n"))
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nX-A b\r\n\r\n"), "no colon")
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\n: b\r\n\r\n"), "empty name")
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\n\tX-A: b\r\n\r\n"), "leading white space")
    }

    /// A received head keeps its fields as bytes and makes strings when read: every lookup answers
    /// as the same fields kept as strings do, whatever the chunking of the input, and a change
    /// turns them into strings without losing any.
    func testReceivedFieldsAnswerAsTheSameFieldsKeptAsStrings() throws {
        let head =
            "HTTP/1.1 200 OK\r\nServer: nginx\r\nSet-Cookie: a=1\r\nset-cookie:b=2 \r\nX-Empty:\r\nX-UTF8: caf\u{E9}\r\n"
            + "X-Tab:\t v \t\r\nConnection: keep-alive, Upgrade\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok"
        var latin1 = Array(head.utf8)
        latin1.insert(contentsOf: Array("X-Latin1: caf".utf8) + [0xE9] + [0x0D, 0x0A], at: Array(head.utf8).firstIndex(of: 0x0A)! + 1)
        let queries = [
            "server", "SET-COOKIE", "Set-Cookie", "x-empty", "X-UTF8", "x-latin1", "X-Tab", "connection", "Keep-Alive", "content-length",
            "Absent", "Set-Cookies", "Set-Cooki", "", "\u{212A}eep-Alive", "Caf\u{E9}", "x-utf8 ",
        ]
        for input in [Array(head.utf8), latin1] {
            for chunkSize in [1, 3, 1000] {
                var parser = HTTPResponseParser(requestMethod: "GET")
                var index = 0
                while index < input.count {
                    _ = try parser.feed(input[index..<min(input.count, index + chunkSize)])
                    index += chunkSize
                }
                let received = try XCTUnwrap(parser.head).headers
                let strings = HTTPHeaders(received.fields.map { ($0.name, $0.value) })
                XCTAssertEqual(received.fields.count, input == latin1 ? 10 : 9)
                for query in queries {
                    XCTAssertEqual(received[query], strings[query], "\(query), chunks of \(chunkSize)")
                    XCTAssertEqual(received.values(query), strings.values(query), query)
                    XCTAssertEqual(received.contains(query), strings.contains(query), query)
                }
                XCTAssertEqual(received.description, strings.description)
                XCTAssertEqual(received.map(\.name), strings.map(\.name))
                XCTAssertEqual(received["x-utf8"], "caf\u{E9}")
                XCTAssertEqual(received["x-tab"], "v")
                XCTAssertEqual(received["\u{212A}EEP-ALIVE"], "timeout=5", "the Kelvin sign lowercases to k")
                if input == latin1 { XCTAssertEqual(received["X-Latin1"], "caf\u{E9}") }

                var changed = received
                changed.add("X-New", "1")
                changed.remove("set-cookie")
                let server = try XCTUnwrap(changed.fields.firstIndex { $0.name == "Server" })
                changed.fields[server].value = "apache"
                XCTAssertEqual(changed["Server"], "apache")
                XCTAssertEqual(changed.values("Set-Cookie"), [])
                XCTAssertEqual(changed["x-new"], "1")
                XCTAssertEqual(changed.fields.count, received.fields.count - 1)
                XCTAssertEqual(received["Server"], "nginx", "the original is a value: unchanged")
            }
        }
    }

    /// The fields the client adds give way to the request's own in any ASCII case, keep their
    /// order (Host first), and the values the client adds are checked as the request's are.
    func testTheClientsFieldsGiveWayToTheRequestsOwnInAnyCase() throws {
        let url = try HTTPSURL("https://example.com:8443/a")
        let plain = String(
            decoding: try HTTPExchange.serializeHead(HTTPRequest(url: url), method: "GET", hostHeader: url.hostHeader, userAgent: "t/1", bodyLength: nil), as: UTF8.self)
        XCTAssertEqual(plain, "GET /a HTTP/1.1\r\nHost: example.com:8443\r\nUser-Agent: t/1\r\nAccept: */*\r\nAccept-Encoding: gzip, deflate\r\n\r\n")
        let own = HTTPRequest(
            method: "POST", url: url,
            headers: ["HOST": "other", "user-agent": "mine", "ACCEPT": "text/html", "accept-ENCODING": "identity", "TRANSFER-encoding": "chunked", "expect": "100-continue"],
            expectsContinue: true)
        let head = String(decoding: try HTTPExchange.serializeHead(own, method: "POST", hostHeader: url.hostHeader, userAgent: "t/1", bodyLength: 10), as: UTF8.self)
        XCTAssertEqual(
            head.split(separator: "\r\n").count, 7, "the request line and the request's own six fields, nothing added: \(head)")
        XCTAssertFalse(head.contains("Content-Length"), "Transfer-Encoding set by the request: no Content-Length")
        XCTAssertTrue(head.hasPrefix("POST /a HTTP/1.1\r\nHOST: other\r\n"))
        XCTAssertThrowsError(try HTTPExchange.serializeHead(HTTPRequest(url: url), method: "GET", hostHeader: url.hostHeader, userAgent: "t\r\nX-Injected: 1", bodyLength: nil))
        XCTAssertThrowsError(
            try HTTPExchange.serializeHead(HTTPRequest(url: url, headers: ["Bad Name": "v"]), method: "GET", hostHeader: url.hostHeader, userAgent: "t", bodyLength: nil))
        XCTAssertEqual(HTTPRequest.canonicalMethod("get"), "GET")
        XCTAssertEqual(HTTPRequest.canonicalMethod("M-SEARCH"), "M-SEARCH")
        XCTAssertEqual(HTTPRequest.canonicalMethod("pätch"), "pätch".uppercased())
    }

    func testTheHostHeaderFollowsChangesToTheURLsParts() throws {
        var url = try HTTPSURL("https://Example.com/")
        XCTAssertEqual(url.hostHeader, "example.com")
        url.port = 8443
        XCTAssertEqual(url.hostHeader, "example.com:8443")
        url.host = "::1"
        XCTAssertEqual(url.hostHeader, "[::1]:8443")
        url.scheme = "http"
        url.port = 80
        XCTAssertEqual(url.hostHeader, "[::1]")
        XCTAssertEqual(url, try HTTPSURL("http://[::1]/"))
    }

    func testURLsAreParsedStrictly() throws {
        let url = try HTTPSURL("https://user:pw@[::1]:8443/path?q#frag")
        XCTAssertEqual(url.host, "::1")
        XCTAssertEqual(url.port, 8443)
        XCTAssertEqual(url.target, "/path?q")
        XCTAssertEqual(url.hostHeader, "[::1]:8443")
        XCTAssertEqual(try HTTPSURL("example.com").target, "/")
        XCTAssertThrowsError(try HTTPSURL("ftp://example.com/"))
        XCTAssertThrowsError(try HTTPSURL("https://example.com:99999/"))
        XCTAssertThrowsError(try HTTPSURL("https://exa mple.com/"))
        XCTAssertEqual(try url.resolving("/other").description, "https://[::1]:8443/other")
        XCTAssertEqual(try HTTPSURL("https://a.example/dir/page").resolving("next?x=1").target, "/dir/next?x=1")
        XCTAssertEqual(try url.resolving("https://b.example/z").origin, "https://b.example:443")
        // As a browser sends them (the WHATWG URL Standard): non-ASCII letters, spaces of any kind
        // and controls are percent-encoded, tabs and line breaks dropped, so the request line
        // carries the URL's own characters and nothing of its own; also in a resolved Location.
        XCTAssertEqual(try HTTPSURL("https://a.example/ў").target, "/%D1%9E")
        let encoded = [
            "https://a.example/x\u{00A0}#f": "/x%C2%A0", "https://a.example/x\u{200B}y": "/x%E2%80%8By", "https://a.example/\u{3000}x": "/%E3%80%80x",
            "https://a.example/x\u{0085}": "/x%C2%85",
        ]
        for (text, target) in encoded { XCTAssertEqual(try HTTPSURL(text).target, target, text.debugDescription) }
        let locations = ["/a b": "/a%20b", "/a\u{00A0}": "/a%C2%A0", "next\r\n X-Admin": "/next%20X-Admin", "?q=\u{2028}": "/path?q=%E2%80%A8"]
        for (location, target) in locations {
            let resolved = try url.resolving(location)
            XCTAssertEqual(resolved.target, target, location.debugDescription)
            XCTAssertTrue(HTTPSURL.isSendableTarget(resolved.target), location.debugDescription)
        }
        // Without its line break, `next\r\nX-Admin: 1` is a URL of the scheme `nextx-admin:`.
        XCTAssertThrowsError(try url.resolving("next\r\nX-Admin: 1"))
    }

    /// The test server's request parser reads `Content-Length` by the response parser's rule:
    /// ASCII digits only, so no sign, no other script's digits, no spaces inside.
    func testTheRequestParsersContentLengthIsASCIIDigitsOnly() throws {
        func parse(_ length: String) -> Result<[HTTPRequestParser.Event], HTTPRequestParser.ParseError> {
            var parser = HTTPRequestParser()
            let request = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \(length)\r\n\r\nhello"
            do throws(HTTPRequestParser.ParseError) {
                return .success(try parser.feed(ArraySlice(Array(request.utf8))).events)
            } catch {
                return .failure(error)
            }
        }
        XCTAssertEqual(parse("5"), .success([.head, .body(Array("hello".utf8)), .end]))
        XCTAssertEqual(parse(" 5 "), .success([.head, .body(Array("hello".utf8)), .end]))
        XCTAssertEqual(parse("0"), .success([.head, .end]))
        for bad in ["+5", "-5", "5 5", "\u{FF15}", "\u{0665}", "0x5", "1234567890123456", ""] {
            XCTAssertEqual(parse(bad), .failure(.badContentLength), bad)
        }
    }

    func testGzipBodiesAreDecodedAndBombsAreStopped() throws {
        let payload = Array(repeating: UInt8(ascii: "a"), count: 100_000)
        let compressed = try gzip(payload)
        let decoder = try XCTUnwrap(Decompressor(coding: "gzip", limit: 1 << 20))
        XCTAssertEqual(try decoder.decode(compressed), payload)
        let small = try XCTUnwrap(Decompressor(coding: "gzip", limit: 10_000))
        XCTAssertThrowsError(try small.decode(compressed))
    }

    private func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(bytes))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](data)
    }

    /// A CR without LF in the status line (llhttp: "Expected LF after CR"): a reader that ends the
    /// line there sees a Content-Length this parser would have read as part of the reason.
    func testCRWithoutLFInTheStatusLineIsRefused() {
        for text in ["HTTP/1.1 200 OK\rContent-Length: 0\r\n\r\n", "HTTP/1.1 200 OK\r\rContent-Length: 4\r\n\r\nEvil", "HTTP/1.1 200 O\0K\r\n\r\n"] {
            for size in [1, 1000] {
                XCTAssertThrowsError(try parse(text, chunkSize: size)) { error in
                    guard case .badStatusLine(let line) = error as? HTTPResponseParser.ParseError else { return XCTFail("\(text): \(error)") }
                    XCTAssertTrue(line.hasPrefix("HTTP/1.1 200 O"))
                }
            }
        }
        XCTAssertEqual(try parse("HTTP/1.1 200 Oriëntatie\tprobleem\r\nContent-Length: 0\r\n\r\n").0?.reason, "Oriëntatie\tprobleem")
    }

    /// A field line that starts with white space before any field (llhttp: "Unexpected space after
    /// start line"), or that would fold a field framing the body (llhttp: "Invalid OBS fold after
    /// chunked value"), is refused at its first byte, whether or not the rest of the line ever comes.
    func testIndentedFirstFieldLineOrFoldedFramingFieldIsRefusedAtItsFirstByte() {
        for text in [
            "HTTP/1.1 200 OK\r\n Host: foo", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\t3", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n  abc\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n br",
        ] {
            for size in [1, 1000] {
                XCTAssertThrowsError(try parse(text, chunkSize: size, finish: false)) { error in
                    guard case .badHeader = error as? HTTPResponseParser.ParseError else { return XCTFail("\(text): \(error)") }
                }
            }
        }
    }

    /// Trailer fields are checked as header fields are: a CR without LF, a NUL, a name that is not a
    /// token or a folded line is refused.
    func testMalformedTrailerFieldsAreRefused() throws {
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n"
        for trailer in ["X-T: a\rb", "X-T: a\0b", "X T: a", ": a", " X-T: a", "X-T"] {
            for size in [1, 1000] {
                XCTAssertThrowsError(try parse(chunked + trailer + "\r\n\r\n", chunkSize: size)) { error in
                    guard case .badHeader = error as? HTTPResponseParser.ParseError else { return XCTFail("\(trailer): \(error)") }
                }
            }
        }
        XCTAssertEqual(try parse(chunked + "X-T: a\r\nX-U:\r\n\r\n").1, Array("ok".utf8))
    }

    /// Chunk extensions follow RFC 9112 7.1.1 (llhttp: "No extension after semicolon", "Unbalanced
    /// chunk extensions quoting"): a parser that reads a quoted value past the line end, or a
    /// malformed line some other way, frames the body differently.
    func testMalformedChunkExtensionsAreRefused() throws {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        for line in ["2;", "2;;a", "2; =b", "2;a=", "2;a=\"b", "2;a=\"b\\\"", "2;a=b c", "2;a=\"\rb\"", "2;a=\"\0\"", "2 a", " 2", "\t2", "2;a=b;", "2;a=@"] {
            for size in [1, 1000] {
                XCTAssertThrowsError(try parse(head + line + "\r\nok\r\n0\r\n\r\n", chunkSize: size)) { error in
                    guard case .badChunkSize = error as? HTTPResponseParser.ParseError else { return XCTFail("\(line): \(error)") }
                }
            }
        }
        for line in ["2", "002", "2;a", "2 ; a = b ;c", "2;a=\"x;\\\"y\\\\\"", "2;a=\"\"", "2  ", "2\t;a=\"é\"", "2;a=b"] {
            XCTAssertEqual(try parse(head + line + "\r\nok\r\n0\r\n\r\n", chunkSize: 1).1, Array("ok".utf8), line)
        }
        XCTAssertThrowsError(try parse(head + "0000000000001000000000000000\r\n")) { error in
            XCTAssertEqual(error as? HTTPResponseParser.ParseError, .chunkSizeOverflow)
        }
    }

    /// Transfer-Encoding with Content-Length is refused where they frame a body (RFC 9112 6.3: "ought
    /// to be handled as an error"; llhttp refuses it), in either order.
    func testTransferEncodingWithContentLengthIsRefused() throws {
        for fields in ["Transfer-Encoding: chunked\r\nContent-Length: 2", "Content-Length: 2\r\nTransfer-Encoding: chunked", "Content-Length: 2\r\nTransfer-Encoding: identity"] {
            XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\n\(fields)\r\n\r\n2\r\nok\r\n0\r\n\r\n")) { error in
                XCTAssertEqual(error as? HTTPResponseParser.ParseError, .transferEncodingWithContentLength)
            }
            // No body to frame: nothing to disagree about.
            XCTAssertTrue(try parse("HTTP/1.1 304 Not Modified\r\n\(fields)\r\n\r\n", finish: false).2)
            XCTAssertTrue(try parse("HTTP/1.1 200 OK\r\n\(fields)\r\n\r\n", method: "HEAD", finish: false).2)
        }
    }
}
