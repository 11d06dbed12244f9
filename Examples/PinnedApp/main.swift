// PinnedApp: an example target of PinSetPlugin. At build time the plugin ran
//   mtls pin pins/api-chain.pem pins/backup.csr --host localhost --expires 2030-01-01 --format swift --offline
// and compiled the result (PinnedKeys) into this executable; nothing here reads a file or the network.
//
//   PinnedApp                 lists the pins
//   PinnedApp sha256/BASE64   exits 0 when that key is pinned, 1 when it is not

import Foundation

let arguments = CommandLine.arguments.dropFirst()
if let candidate = arguments.first {
    let digest = candidate.hasPrefix("sha256/") ? String(candidate.dropFirst("sha256/".count)) : candidate
    if PinnedKeys.spkiSHA256.contains(digest) {
        print("pinned: \(candidate)")
    } else {
        print("not pinned: \(candidate)")
        exit(1)
    }
} else {
    print("Pins for \(PinnedKeys.hosts.joined(separator: ", "))\(PinnedKeys.includesSubdomains ? " and subdomains" : ""), enforced through \(PinnedKeys.expires ?? "(no expiry)"):")
    for pin in PinnedKeys.pins {
        print("\(pin.pin)  [\(pin.level)] \(pin.subject)")
    }
}
