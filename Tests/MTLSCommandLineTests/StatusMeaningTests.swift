import XCTest

@testable import MTLSCommandLine

/// The IIS substatus read from a detailed error page, whatever the server's language and charset.
final class StatusMeaningTests: XCTestCase {
    /// The heading and title of IIS 10's detailed error page, as its language packs write them.
    func testSubstatusIsReadFromTheDetailedErrorPageInEachLanguage() {
        let pages: [(String, String)] = [
            ("en", "<title>IIS 10.0 Detailed Error - 403.7 - Forbidden</title></head><body><h3>HTTP Error 403.7 - Forbidden</h3>"),
            ("de", "<title>IIS 10.0 Detaillierter Fehler - 403.7 - Forbidden</title></head><body><h3>HTTP-Fehler 403.7 - Forbidden</h3>"),
            ("fr", "<h3>Erreur HTTP 403.7 - Forbidden</h3>"),
            ("title only", "<title>IIS 10.0 Detailed Error - 403.7 - Forbidden</title>"),
        ]
        for (language, page) in pages {
            XCTAssertEqual(StatusMeaning.substatus(status: 403, page: Array(page.utf8)), 7, language)
        }
        // Japanese in Shift_JIS: "HTTP エラー 403.16 - Forbidden"; the non-ASCII bytes around the code do not matter.
        let shiftJIS: [UInt8] = Array("<h3>HTTP ".utf8) + [0x83, 0x47, 0x83, 0x89, 0x81, 0x5B] + Array(" 403.16 - Forbidden</h3>".utf8)
        XCTAssertEqual(StatusMeaning.substatus(status: 403, page: shiftJIS), 16)
        XCTAssertEqual(StatusMeaning.substatus(status: 401, page: Array("<h3>HTTP Error 401.2 - Unauthorized</h3>".utf8)), 2)
    }

    func testOtherNumbersAreNotTakenForASubstatus() {
        let pages = [
            "<p>IIS 10.403.7 - build</p>",  // the tail of a longer number
            "<h3>HTTP Error 403.7</h3>",  // no " - " after the code
            "<h3>HTTP Error 403.7000 - Forbidden</h3>",  // more than three digits
            "<h3>HTTP Error 403. - Forbidden</h3>",  // no digits
            "<h3>HTTP Error 404.3 - Not Found</h3>",  // another status than the response's
            "403 - Forbidden: Access is denied.",  // IIS's page for remote clients carries no substatus
        ]
        for page in pages {
            XCTAssertNil(StatusMeaning.substatus(status: 403, page: Array(page.utf8)), page)
        }
    }
}
