import Foundation
import MTLSTrust

enum PKCS12Fuzz {
    /// Reads with each password in turn until one is not refused as wrong.
    static func read(_ bytes: [UInt8], passwords: [Secret]) {
        for password in passwords where read(bytes, password: password) != .wrongPassword { return }
    }

    /// Reads and touches everything the bundle holds; returns why reading failed, if it did.
    @discardableResult
    static func read(_ bytes: [UInt8], password: Secret?) -> MTLSTrustError.Reason? {
        let bundle: PKCS12Bundle
        do throws(MTLSTrustError) {
            bundle = try PKCS12Bundle(derBytes: bytes, password: password)
        } catch {
            return error.reason
        }
        _ = bundle.leaf?.friendlyName
        _ = bundle.privateKey?.algorithm.description
        _ = bundle.keyFriendlyName
        _ = bundle.neededLegacyProvider
        _ = bundle.inspection.algorithms.map(\.description)
        _ = bundle.inspection.compatibility
        _ = bundle.inspection.usesLegacyAlgorithms
        _ = bundle.duplicatesRemoved
        for (index, identity) in bundle.identities.enumerated().prefix(8) {
            _ = identity.certificate?.certificate.subject
            _ = identity.privateKey.publicKey.spkiDER
            _ = try? bundle.identity(index: index + 1)
            if let name = identity.friendlyName { _ = try? bundle.identity(named: name) }
        }
        for entry in bundle.chain.prefix(8) { _ = entry.localKeyID }
        for certificate in bundle.allCertificates.prefix(8) { Exercise.certificate(certificate) }
        return nil
    }
}
