import Foundation
import XCTest

@testable import MTLSTrust

final class SecretTests: XCTestCase {
    private func bytes(_ secret: Secret) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    /// Watches secrets being freed: every byte of each must be zero by then.
    private func freedMemory(of make: () -> Void) -> [[UInt8]] {
        let seen = LockedList()
        Secret.deallocationObserver.set { memory in seen.append(Array(memory)) }
        defer { Secret.deallocationObserver.set(nil) }
        make()
        return seen.items
    }

    func testASecretsMemoryIsAllZerosWhenItIsFreed() {
        let freed = freedMemory {
            let secret = Secret(bytes: Array("correct horse battery staple".utf8))
            XCTAssertEqual(bytes(secret), Array("correct horse battery staple".utf8))
        }
        XCTAssertEqual(freed.count, 1, "the secret was freed once, at the end of its scope")
        XCTAssertEqual(freed.first?.count, 29, "its bytes and the terminating NUL")
        XCTAssertEqual(freed.first, [UInt8](repeating: 0, count: 29), "wiped before being freed")
    }

    func testEverySecretMadeWhileAPKCS12FileIsReadIsWiped() throws {
        // PKCS12Bundle tries "" itself when a file without a MAC is given no password; those
        // temporary secrets are wiped too.
        let file = try TestCertificates.bytes("p12/client-alice-modern.p12")
        let freed = freedMemory {
            let password = Secret(bytes: Array("mtls".utf8))
            XCTAssertNotNil(try? PKCS12Bundle(derBytes: file, password: password), "the file opens")
        }
        XCTAssertFalse(freed.isEmpty)
        for memory in freed { XCTAssertTrue(memory.allSatisfy { $0 == 0 }, "\(memory)") }
    }

    func testASecretLivesInPagesOfItsOwnKeptOutOfCoreDumpsAndLockedWhereAllowed() throws {
        let secret = Secret("in its own pages")
        let flags = try XCTUnwrap(secret.pageFlags, "the secret's pages are a mapping of their own in /proc/self/smaps")
        XCTAssertTrue(flags.excludedFromCoreDumps, "MADV_DONTDUMP (VmFlags dd)")
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit)
        // The sanitizer runtimes intercept mlock and do nothing (they cannot lock their shadow).
        let runtimes: [String] = ["__asan_init", "__tsan_init", "__msan_init"]
        let sanitized = runtimes.contains { name in dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) != nil }
        if limit.rlim_cur >= 65536 && !sanitized {
            XCTAssertTrue(flags.locked, "mlock (VmFlags lo) with RLIMIT_MEMLOCK \(limit.rlim_cur)")
        }
        XCTAssertEqual(bytes(secret), Array("in its own pages".utf8))
        // Many secrets at once: each its own mapping, each readable.
        let many = (0..<200).map { Secret("secret \($0)") }
        for (index, one) in many.enumerated() { XCTAssertEqual(bytes(one), Array("secret \(index)".utf8)) }
        let large = Secret(bytes: [UInt8](repeating: 0x41, count: 10_000))
        XCTAssertEqual(bytes(large).count, 10_000, "a secret larger than a page")
    }

    func testTheFirstLineOfAFileOrDescriptorIsReadWithoutItsLineEnding() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (content, expected) in [("pw\r\nsecond\n", "pw"), ("pw\nsecond", "pw"), ("no newline", "no newline"), ("", ""), ("\n", ""), ("pässwörd\n", "pässwörd")] {
            let file = directory.appendingPathComponent("p.txt")
            try Data(content.utf8).write(to: file)
            XCTAssertEqual(bytes(try Secret.readFirstLine(ofFileAt: file.path)), Array(expected.utf8), content.debugDescription)
        }
        for path in [directory.appendingPathComponent("missing").path, directory.path] {
            XCTAssertThrowsError(try Secret.readFirstLine(ofFileAt: path)) { error in
                XCTAssertEqual((error as? MTLSTrustError)?.reason, .unreadableFile)
                XCTAssertTrue("\(error)".contains(path), "the error names the file: \(error)")
            }
        }
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        _ = Array("from a pipe\nrest".utf8).withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        XCTAssertEqual(Secret.readFirstLine(from: ends[0]).map(bytes), Array("from a pipe".utf8))
        close(ends[0])
        XCTAssertNil(Secret.readFirstLine(from: -1), "a descriptor that cannot be read")
    }

    func testInitWipingZeroesTheCallersBufferInPlace() {
        var source = Array("hunter2".utf8)
        let address = source.withUnsafeBufferPointer { $0.baseAddress }
        let secret = Secret(wiping: &source)
        XCTAssertEqual(bytes(secret), Array("hunter2".utf8))
        XCTAssertEqual(source, [UInt8](repeating: 0, count: 7))
        XCTAssertEqual(source.withUnsafeBufferPointer { $0.baseAddress }, address, "wiped in place, not a copy")
    }

    func testASecretNeverPrintsItsBytes() {
        let secret: Secret = "hunter2"
        var dumped = ""
        dump(secret, to: &dumped)
        for text in ["\(secret)", String(describing: secret), String(reflecting: secret), dumped, "\([secret])", "\(Optional(secret) as Any)"] {
            XCTAssertFalse(text.contains("hunter2"), text)
            XCTAssertTrue(text.contains("<redacted>") || text.contains("Secret"), text)
        }
    }

    func testCStringIsTerminatedAndLiteralsAndStringsGiveTheUTF8() {
        let literal: Secret = "pässwörd"
        XCTAssertEqual(bytes(literal), Array("pässwörd".utf8))
        XCTAssertEqual(bytes(Secret("pässwörd")), Array("pässwörd".utf8))
        XCTAssertEqual(literal.count, 10)
        XCTAssertEqual(literal.withCString { strlen($0) }, 10)
        XCTAssertEqual(literal.withCString { String(cString: $0) }, "pässwörd")
        let empty: Secret = ""
        XCTAssertTrue(empty.isEmpty)
        XCTAssertEqual(empty.withCString { $0[0] }, 0)
    }

    func testUTF16LittleEndianMatchesSwiftsOwnTranscoding() {
        for text in ["", "Password", "pässwörd", "日本語のパスワード", "emoji 😀 and €", "SecREt01"] {
            let expected = text.utf16.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
            XCTAssertEqual(Secret(text).withUTF16LittleEndian { Array($0) }, expected, text)
        }
        // Invalid UTF-8 becomes U+FFFD, as String(decoding:as:) does.
        let invalid: [UInt8] = [0x61, 0xFF, 0x62, 0xC3]
        let expected = String(decoding: invalid, as: UTF8.self).utf16.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
        XCTAssertEqual(Secret(bytes: invalid).withUTF16LittleEndian { Array($0) }, expected)
        XCTAssertFalse(Secret(bytes: invalid).isValidUTF8)
        XCTAssertTrue(Secret("日本語").isValidUTF8)
    }

    func testJoinedBuildsPrefixSecretSuffixAndWipesItsWorkingCopy() {
        let freed = freedMemory {
            let joined = Secret("pw").joined(after: Array("alice:realm:".utf8), before: Array("!".utf8))
            XCTAssertEqual(bytes(joined), Array("alice:realm:pw!".utf8))
        }
        XCTAssertEqual(freed.count, 2, "the source secret and the joined one")
        for memory in freed { XCTAssertTrue(memory.allSatisfy { $0 == 0 }) }
    }

    func testWipeZeroesAnArrayInPlace() {
        var buffer: [UInt8] = [1, 2, 3, 4]
        Secret.wipe(&buffer)
        XCTAssertEqual(buffer, [0, 0, 0, 0])
        var empty: [UInt8] = []
        Secret.wipe(&empty)
        XCTAssertEqual(empty, [])
    }

    func testASecretIsUsableFromManyThreadsAtOnce() {
        let secret = Secret("shared across threads")
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            XCTAssertEqual(secret.withUnsafeBytes { Array($0) }, Array("shared across threads".utf8))
        }
    }
}

/// A list appended to from the deallocation observer.
private final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [[UInt8]] = []
    func append(_ item: [UInt8]) { lock.withLock { list.append(item) } }
    var items: [[UInt8]] { lock.withLock { list } }
}
