// URLs and redirect targets: HTTPSURL parsing and Location resolution (a server chooses Location),
// with the hosts' UTS 46 processing (IDNA).
import Foundation
import MTLSHTTP
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let fields = input.fields()
        let text = FuzzedData.text(fields.first ?? [])
        let base = (try? HTTPSURL(text)) ?? (try! HTTPSURL("https://example.com:8443/a/b?c=d"))
        // What goes on the request line is printable ASCII: the parser percent-encodes the rest
        // and drops tabs and line breaks (the WHATWG URL Standard).
        let sendable = { (target: String) in target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
        check(sendable(base.target), "target \(base.target.debugDescription) is not printable ASCII")
        check(base.host.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "host \(base.host.debugDescription) is not printable ASCII")
        // UTS 46 is idempotent on what it accepts: an xn-- host reads back to itself through what it spells.
        if let unicode = IDNA.unicodeForm(of: base.host) {
            let again = try? IDNA.toASCII(unicode)
            check(again == base.host, "host \(base.host.debugDescription) spells \(unicode.debugDescription), which gives \(again.debugDescription)")
        }
        _ = base.origin
        _ = base.hostHeader
        _ = base.path
        _ = base.description
        if let round = try? HTTPSURL(base.description) {
            check(
                round == base,
                "\(base.description.debugDescription) [\(base.host.debugDescription) \(base.port) \(base.target.debugDescription)] does not round-trip: [\(round.host.debugDescription) \(round.port) \(round.target.debugDescription)]"
            )
        }
        for location in fields.dropFirst().prefix(4) {
            if let next = try? base.resolving(FuzzedData.text(location)) {
                check(next.target.utf8.first == UInt8(ascii: "/"), "resolved target '\(next.target)' does not start with /")
                check(sendable(next.target), "resolved target \(next.target.debugDescription) is not printable ASCII")
                _ = next.description
            }
        }
    }
}
