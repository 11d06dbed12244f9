import Foundation
import MTLSTrust
import XCTest

@testable import MTLSHTTP

/// The cookie jar is written by the one output writer: private from birth, never through a link.
final class HostileOutputTests: XCTestCase {
    private func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-jar-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testTheCookieJarIsPrivateWhateverTheUmask() throws {
        let directory = try temporaryDirectory()
        let old = umask(0)
        defer { umask(old) }
        let jar = CookieJar()
        let path = directory + "/jar.txt"
        try jar.save(toPath: path)
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        // Saved again over itself (a regular file): still 0600, no temporary file left.
        try jar.save(toPath: path)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["jar.txt"])
    }

    /// A link at the jar's path (the user's own) is replaced by the jar, never written through;
    /// a FIFO there is refused without being opened.
    func testTheCookieJarIsNotWrittenThroughALink() throws {
        let directory = try temporaryDirectory()
        let target = directory + "/elsewhere.txt"
        XCTAssertTrue(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
        let link = directory + "/jar.txt"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try CookieJar().save(toPath: link)
        XCTAssertEqual(FileManager.default.contents(atPath: target), Data("keep".utf8))
        XCTAssertNil(try? FileManager.default.destinationOfSymbolicLink(atPath: link), "the link itself was replaced")
        let dangling = directory + "/dangling.txt"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: directory + "/nowhere.txt")
        try CookieJar().save(toPath: dangling)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/nowhere.txt"))
        let fifo = directory + "/fifo.txt"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        XCTAssertThrowsError(try CookieJar().save(toPath: fifo))
    }

    func testTheRequestParserBoundsBlankLinesBeforeTheRequestLine() {
        var parser = HTTPRequestParser()
        XCTAssertThrowsError(try parser.feed(Array(String(repeating: "\r\n", count: HTTPRequestParser.maximumBlankLines + 1).utf8)[...]))
        var tolerant = HTTPRequestParser()
        XCTAssertNoThrow(try tolerant.feed(Array("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)[...]))
        XCTAssertNotNil(tolerant.head)
    }
}
