import Foundation
import MTLSTrust

enum PKCS12Fuzz {
    static func read(_ bytes: [UInt8], password: Secret?) {
        guard let bundle = try? PKCS12Bundle(derBytes: bytes, password: password) else { return }
        _ = bundle.leaf?.friendlyName
        _ = bundle.privateKey?.algorithm.description
        _ = bundle.keyFriendlyName
        _ = bundle.neededLegacyProvider
        _ = bundle.inspection.algorithms.map(\.description)
        _ = bundle.inspection.compatibility
        _ = bundle.inspection.usesLegacyAlgorithms
        for certificate in bundle.allCertificates.prefix(8) { Exercise.certificate(certificate) }
    }
}
