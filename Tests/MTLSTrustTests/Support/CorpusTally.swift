import XCTest

@testable import MTLSTrust

/// How a corpus of third-party files compares with another reader's record of it (the pyca vector
/// tests: `MANIFEST.tsv` and `EXPECTED.tsv` beside the files). Each file ends as agreed, differing
/// in named fields, or refused by both; a difference not named as deliberate fails where it is
/// found, and the counts are asserted at the end.
struct CorpusTally {
    /// The files read differently on purpose: the fields that differ, and why.
    typealias Deliberate = [String: (fields: Set<String>, reason: String)]

    let deliberate: Deliberate
    var agreed: [String] = []
    var differing: [String: Set<String>] = [:]
    var refusedByBoth: [String] = []

    init(deliberate: Deliberate) { self.deliberate = deliberate }

    /// The fields of `comparisons` (field, mtls, openssl) that disagree; one not named as
    /// deliberate for `file` fails, labelled `label` (the file, or a certificate of it).
    func differences(in comparisons: [(String, String, String)], of file: String, label: String? = nil) -> Set<String> {
        var fields = Set<String>()
        for (field, ours, theirs) in comparisons where ours != theirs {
            fields.insert(field)
            if deliberate[file]?.fields.contains(field) != true {
                XCTFail("\(label ?? file) \(field): mtls \(ours.debugDescription), openssl \(theirs.debugDescription)")
            }
        }
        return fields
    }

    /// A file both read: agreed, or differing in `fields`.
    mutating func record(_ file: String, fields: Set<String>) {
        if fields.isEmpty { agreed.append(file) } else { differing[file] = fields }
    }

    /// Every deliberate difference shows as named, and the counts are the expected ones.
    func assertCounts(agreed expectedAgreed: Int, refusedByBoth expectedRefused: Int, of total: Int) {
        for (file, difference) in deliberate {
            XCTAssertEqual(differing[file], difference.fields, "\(file): the deliberate difference (\(difference.reason)) no longer shows as named")
        }
        XCTAssertEqual(agreed.count, expectedAgreed, "files agreed")
        XCTAssertEqual(differing.count, deliberate.count, "files that differ on purpose: \(differing)")
        XCTAssertEqual(refusedByBoth.count, expectedRefused, "files both refuse: \(refusedByBoth)")
        XCTAssertEqual(agreed.count + differing.count + refusedByBoth.count, total)
    }

    /// The rows of `corpus/MANIFEST.tsv` (path, release, …, sha256 in the fourth column), comments left out.
    static func manifest(_ corpus: String) throws -> [[String]] {
        let text = String(decoding: try TestCertificates.bytes("\(corpus)/MANIFEST.tsv"), as: UTF8.self)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    /// `corpus/EXPECTED.tsv` of `FILE FIELD VALUE` lines, by file and field.
    static func fieldsByFile(_ corpus: String) throws -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for line in String(decoding: try TestCertificates.bytes("\(corpus)/EXPECTED.tsv"), as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let columns = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard columns.count == 3 else {
                XCTFail("EXPECTED.tsv: a line not of the form FILE FIELD VALUE: \(line)")
                continue
            }
            result[columns[0], default: [:]][columns[1]] = columns[2]
        }
        return result
    }
}
