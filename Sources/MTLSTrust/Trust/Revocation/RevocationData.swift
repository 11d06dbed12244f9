internal import COpenSSL
internal import COpenSSLShims
#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a certificate says its revocation status is published.
struct RevocationLocations {
    /// cRLDistributionPoints fullName `http://` URIs.
    var crls: [String] = []
    /// freshestCRL (delta CRL) `http://` URIs.
    var deltaCRLs: [String] = []
    /// authorityInfoAccess id-ad-ocsp `http://` URIs.
    var ocsp: [String] = []
    /// Any location at all, http or not (an ldap:// CDP counts as revocation information that
    /// cannot be fetched here).
    var otherSchemes: [String] = []
    /// The cRLIssuer directoryNames (DER Names) of the distribution point each CRL URL came from:
    /// the authorities allowed to sign an indirect CRL for the certificate (RFC 5280 4.2.1.13).
    var crlIssuers: [String: [[UInt8]]] = [:]

    init(_ certificate: Certificate) {
        let facts = CertificateFacts(certificate)
        func uris(_ oid: String) -> [String] {
            guard let raw = facts.extension(oid), let points = CertificateFacts.distributionPoints(raw.value) else { return [] }
            return points.flatMap { point -> [String] in
                guard let name = point[0xA0], let full = DER.element(in: raw.value, at: name.contentStart, limit: name.contentEnd), full.tag == 0xA0 else { return [] }
                return CertificateFacts.generalNames(raw.value, from: full.contentStart, to: full.contentEnd).compactMap { general in
                    guard case .uri(let bytes) = general else { return nil }
                    return String(decoding: bytes, as: UTF8.self)
                }
            }
        }
        for uri in uris(CertificateFacts.OID.crlDistributionPoints) { RevocationLocations.isHTTP(uri) ? crls.append(uri) : otherSchemes.append(uri) }
        if let raw = facts.extension(CertificateFacts.OID.crlDistributionPoints), let points = CertificateFacts.distributionPoints(raw.value) {
            for point in points {
                guard let field = point[0xA2], let name = point[0xA0],
                    let full = DER.element(in: raw.value, at: name.contentStart, limit: name.contentEnd), full.tag == 0xA0
                else { continue }
                let names = CertificateFacts.generalNames(raw.value, from: field.contentStart, to: field.contentEnd).compactMap { general -> [UInt8]? in
                    if case .directoryName(let bytes) = general { bytes } else { nil }
                }
                for general in CertificateFacts.generalNames(raw.value, from: full.contentStart, to: full.contentEnd) {
                    guard case .uri(let bytes) = general else { continue }
                    crlIssuers[String(decoding: bytes, as: UTF8.self), default: []] += names
                }
            }
        }
        for uri in uris("2.5.29.46") { RevocationLocations.isHTTP(uri) ? deltaCRLs.append(uri) : otherSchemes.append(uri) }
        if let raw = facts.extension(CertificateFacts.OID.authorityInfoAccess), let entries = CertificateFacts.accessDescriptions(raw.value) {
            for entry in entries where entry.method == CertificateFacts.OID.ocsp {
                guard case .uri(let bytes) = entry.location else { continue }
                let uri = String(decoding: bytes, as: UTF8.self)
                RevocationLocations.isHTTP(uri) ? ocsp.append(uri) : otherSchemes.append(uri)
            }
        }
    }

    var isEmpty: Bool { crls.isEmpty && deltaCRLs.isEmpty && ocsp.isEmpty && otherSchemes.isEmpty }

    static func isHTTP(_ uri: String) -> Bool {
        uri.lowercased().hasPrefix("http://") && uri.utf8.count > 7 && uri.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

/// What one CRL says about one certificate, once its signer and times are checked.
struct CRLVerdict {
    var status: RevocationStatus
    var thisUpdate: Date?
    var nextUpdate: Date?
    var isDelta: Bool
    var number: Int?
    var baseNumber: Int?
    var outcome: String
}

/// The RFC 5280 5.3.1 reason names, by code.
enum RevocationReasons {
    static let names = [
        0: "unspecified", 1: "keyCompromise", 2: "cACompromise", 3: "affiliationChanged", 4: "superseded", 5: "cessationOfOperation",
        6: "certificateHold", 8: "removeFromCRL", 9: "privilegeWithdrawn", 10: "aACompromise",
    ]
    static func name(_ code: Int32) -> String? { code < 0 ? nil : (names[Int(code)] ?? "reason \(code)") }
}

enum RevocationData {
    /// Judges `crl` for `certificate` issued by `issuer` at `time` (RFC 5280 6.3.3): the CRL must
    /// name the issuer, be signed by the issuer's key (or, for an indirect CRL that
    /// `RevocationChecker` has authorised, by `signer`), the signer's
    /// keyUsage (when present) must allow cRLSign, and nextUpdate must not be past.
    ///
    /// `distributionPoints` are the URLs the CRL was fetched for (the certificate's CDP and
    /// freshestCRL URLs); nil for a CRL the user gave, whose distribution point is not checked.
    static func judge(
        crl: CertificateRevocationList, certificate: Certificate, issuer: Certificate, at time: Date, signer indirectSigner: Certificate? = nil,
        distributionPoints: [String]? = nil
    ) -> CRLVerdict {
        // An indirect CRL (checked by RevocationChecker.judgeIndirect) is signed by its own issuer.
        let signer = indirectSigner ?? issuer
        let pointer = crl.reference.pointer
        let thisUpdate = X509_CRL_get0_lastUpdate(pointer).map { Certificate.date($0) }
        let nextUpdate = X509_CRL_get0_nextUpdate(pointer).map { Certificate.date($0) }
        let isDelta = X509_CRL_get_ext_by_NID(pointer, NID_delta_crl, -1) >= 0
        let number = integerExtension(pointer, NID_crl_number)
        let baseNumber = integerExtension(pointer, NID_delta_crl)
        func verdict(_ status: RevocationStatus, _ outcome: String) -> CRLVerdict {
            CRLVerdict(status: status, thisUpdate: thisUpdate, nextUpdate: nextUpdate, isDelta: isDelta, number: number, baseNumber: baseNumber, outcome: outcome)
        }
        guard X509_NAME_cmp(X509_CRL_get_issuer(pointer), X509_get_subject_name(signer.reference.pointer)) == 0 else {
            let message = "the CRL is issued by \(crl.issuer), not by the certificate's issuer \(issuer.subject) (and it is not an indirect CRL this certificate authorises)"
            return verdict(.invalidData(message), message)
        }
        OpenSSLErrorQueue.clear()
        guard let key = X509_get0_pubkey(signer.reference.pointer), X509_CRL_verify(pointer, key) == 1 else {
            OpenSSLErrorQueue.clear()
            let message =
                "the CRL's signature does not verify with the key of \(signer.displayName): it was not signed by \(indirectSigner == nil ? "the certificate's issuer" : "its issuer")"
            return verdict(.invalidData(message), message)
        }
        if let usage = signer.keyUsage, !usage.contains(.cRLSign) {
            let message = "\(signer.displayName) signed the CRL, but its keyUsage lacks cRLSign (RFC 5280 6.3.3 (f))"
            return verdict(.invalidData(message), message)
        }
        if let thisUpdate, thisUpdate > time.addingTimeInterval(300) {
            let message = "the CRL's thisUpdate \(RFC3339.string(thisUpdate)) is after the evaluation time"
            return verdict(.cannotCheck(message), message)
        }
        if let nextUpdate, nextUpdate < time {
            let message = "the CRL is stale: its nextUpdate \(RFC3339.string(nextUpdate)) has passed (the CA stopped publishing?)"
            return verdict(.cannotCheck(message), message)
        }
        let scope = scopeProblem(crl, certificate: certificate, distributionPoints: distributionPoints)
        var entry: OpaquePointer?
        // On an indirect CRL an entry counts only when its certificateIssuer (RFC 5280 5.3.3, inherited
        // from the entry before) is the certificate's issuer: OpenSSL's lookup by certificate checks that.
        let found =
            indirectSigner == nil
            ? X509_CRL_get0_by_serial(pointer, &entry, X509_get0_serialNumber(certificate.reference.pointer))
            : X509_CRL_get0_by_cert(pointer, &entry, certificate.reference.pointer)
        guard found == 1, let entry, scope?.coversCertificate != false else {
            if let scope { return verdict(.cannotCheck(scope.message), scope.message) }
            // 2: listed with removeFromCRL (a delta CRL lifting a hold).
            return verdict(.good, found == 2 ? "good (removed from the CRL)" : "good (not listed)")
        }
        let date = X509_REVOKED_get0_revocationDate(entry).map { Certificate.date($0) }
        var reason: String?
        if let value = X509_REVOKED_get_ext_d2i(entry, NID_crl_reason, nil, nil) {
            let enumerated = value.assumingMemoryBound(to: ASN1_ENUMERATED.self)
            reason = RevocationReasons.name(Int32(truncatingIfNeeded: ASN1_ENUMERATED_get(enumerated)))
            ASN1_ENUMERATED_free(enumerated)
        }
        return verdict(.revoked(reason: reason, date: date), "revoked" + (reason.map { " (\($0))" } ?? "") + (date.map { " on \(RFC3339.string($0))" } ?? ""))
    }

    /// Why the CRL's issuingDistributionPoint (RFC 5280 5.2.5) keeps it from deciding `certificate`
    /// (6.3.3 (b)(2)), or nil when it covers it: a CRL of CA certificates only, of end-entity
    /// certificates only or of attribute certificates says nothing of another kind; one for another
    /// distribution point says nothing of this one (`coversCertificate` false for these); one for
    /// some reasons only can revoke, but its silence leaves the other reasons open.
    static func scopeProblem(_ crl: CertificateRevocationList, certificate: Certificate, distributionPoints: [String]?) -> (message: String, coversCertificate: Bool)? {
        guard let scope = crl.scope else { return nil }
        let isCA = certificate.basicConstraints?.isCA ?? false
        let fix = "; the CA must publish a CRL that covers it at the certificate's distribution point"
        if scope.onlyCACertificates && !isCA {
            return ("the CRL covers only CA certificates (issuingDistributionPoint onlyContainsCACerts), not this end-entity certificate" + fix, false)
        }
        if scope.onlyUserCertificates && isCA {
            return ("the CRL covers only end-entity certificates (issuingDistributionPoint onlyContainsUserCerts), not this CA certificate" + fix, false)
        }
        if scope.onlyAttributeCertificates {
            return ("the CRL covers only attribute certificates (issuingDistributionPoint onlyContainsAttributeCerts)" + fix, false)
        }
        if let distributionPoints, !scope.coversAny(of: distributionPoints) {
            return (
                "the CRL covers another distribution point (its issuingDistributionPoint names \(scope.distributionPoints.joined(separator: ", "))), not this certificate's" + fix,
                false
            )
        }
        if scope.onlySomeReasons {
            return ("the CRL covers only some revocation reasons (issuingDistributionPoint onlySomeReasons), and no CRL for the others was found" + fix, true)
        }
        return nil
    }

    /// True when the CRL's issuer is `certificate`'s subject.
    static func sameName(_ crl: CertificateRevocationList, _ certificate: Certificate) -> Bool {
        X509_NAME_cmp(X509_CRL_get_issuer(crl.reference.pointer), X509_get_subject_name(certificate.reference.pointer)) == 0
    }

    /// True when one of `names` (DER Names, a distribution point's cRLIssuer) is the CRL's issuer.
    static func names(_ names: [[UInt8]], contain crl: CertificateRevocationList) -> Bool {
        names.contains { bytes in
            var parsed: OpaquePointer?
            bytes.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                parsed = d2i_X509_NAME(nil, &cursor, buffer.count)
            }
            guard let parsed else {
                OpenSSLErrorQueue.clear()
                return false
            }
            defer { X509_NAME_free(parsed) }
            return X509_NAME_cmp(parsed, X509_CRL_get_issuer(crl.reference.pointer)) == 0
        }
    }

    /// The CRL's authorityInfoAccess caIssuers `http://` URLs (RFC 5280 5.2.7).
    static func caIssuersURLs(_ crl: CertificateRevocationList) -> [String] {
        guard let value = CRLScope.extensionValue(crl.reference.pointer, NID_info_access), let entries = CertificateFacts.accessDescriptions(value) else { return [] }
        return entries.compactMap { entry in
            guard entry.method == CertificateFacts.OID.caIssuers, case .uri(let bytes) = entry.location else { return nil }
            let uri = String(decoding: bytes, as: UTF8.self)
            return RevocationLocations.isHTTP(uri) ? uri : nil
        }
    }

    /// True when `certificate`'s key verifies the CRL's signature.
    static func verifies(_ crl: CertificateRevocationList, with certificate: Certificate) -> Bool {
        defer { OpenSSLErrorQueue.clear() }
        guard let key = X509_get0_pubkey(certificate.reference.pointer) else { return false }
        return X509_CRL_verify(crl.reference.pointer, key) == 1
    }

    /// True when `issuer` issued `certificate`: names chain, the signature verifies, and the issuer's
    /// keyUsage (when present) allows keyCertSign.
    static func issued(_ certificate: Certificate, by issuer: Certificate) -> Bool {
        defer { OpenSSLErrorQueue.clear() }
        guard X509_NAME_cmp(X509_get_issuer_name(certificate.reference.pointer), X509_get_subject_name(issuer.reference.pointer)) == 0,
            let key = X509_get0_pubkey(issuer.reference.pointer), X509_verify(certificate.reference.pointer, key) == 1
        else { return false }
        if let usage = issuer.keyUsage, !usage.contains(.keyCertSign) { return false }
        return true
    }

    private static func integerExtension(_ crl: OpaquePointer, _ nid: Int32) -> Int? {
        guard let value = X509_CRL_get_ext_d2i(crl, nid, nil, nil) else { return nil }
        let integer = value.assumingMemoryBound(to: ASN1_INTEGER.self)
        defer { ASN1_INTEGER_free(integer) }
        let number = ASN1_INTEGER_get(integer)
        return number < 0 ? nil : Int(number)
    }

    // MARK: OCSP

    /// An OCSP request (RFC 6960 4.1) for `certificate` issued by `issuer`, DER, without a nonce
    /// (as Windows sends it, so that GET answers may be cached).
    static func ocspRequest(certificate: Certificate, issuer: Certificate) -> [UInt8]? {
        guard let id = OCSP_cert_to_id(nil, certificate.reference.pointer, issuer.reference.pointer) else { return nil }
        guard let request = OCSP_REQUEST_new() else {
            OCSP_CERTID_free(id)
            return nil
        }
        defer { OCSP_REQUEST_free(request) }
        guard OCSP_request_add0_id(request, id) != nil else {
            OCSP_CERTID_free(id)
            return nil
        }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_OCSP_REQUEST(request, &out)
        guard length > 0, let out else { return nil }
        defer { mtls_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// The URL of an OCSP GET (RFC 6960 A.1): the base64 request, percent-encoded, after a `/`.
    static func ocspGetURL(_ base: String, request: [UInt8]) -> String {
        let encoded = Data(request).base64EncodedString().utf8.map { byte -> String in
            switch byte {
            case UInt8(ascii: "+"): "%2B"
            case UInt8(ascii: "/"): "%2F"
            case UInt8(ascii: "="): "%3D"
            default: String(UnicodeScalar(byte))
            }
        }.joined()
        return (base.hasSuffix("/") ? base : base + "/") + encoded
    }

    struct OCSPVerdict {
        var status: RevocationStatus?
        var responderStatus: String?
        var producedAt: Date?
        var thisUpdate: Date?
        var nextUpdate: Date?
        var outcome: String
    }

    static let responderStatusNames = [0: "successful", 1: "malformedRequest", 2: "internalError", 3: "tryLater", 5: "sigRequired", 6: "unauthorized"]

    /// Judges an OCSP response for `certificate` issued by `issuer` at `time` (RFC 6960 3.2,
    /// 4.2.2.2): signed by the issuer itself or by a responder certificate that the issuer signed
    /// with id-kp-OCSPSigning; thisUpdate not in the future, nextUpdate not past.
    static func judge(ocsp bytes: [UInt8], certificate: Certificate, issuer: Certificate, at time: Date) -> OCSPVerdict {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        var parsed: OpaquePointer?
        bytes.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            parsed = d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
        }
        guard let response = parsed else {
            return OCSPVerdict(outcome: "the answer (\(bytes.count) bytes) is not an OCSP response")
        }
        defer { OCSP_RESPONSE_free(response) }
        let code = OCSP_response_status(response)
        let statusName = responderStatusNames[Int(code)] ?? "status \(code)"
        guard code == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            return OCSPVerdict(status: nil, responderStatus: statusName, outcome: "the responder answered \(statusName)")
        }
        guard let basic = OCSP_response_get1_basic(response) else {
            return OCSPVerdict(responderStatus: statusName, outcome: "the response is not a basic OCSP response")
        }
        defer { OCSP_BASICRESP_free(basic) }
        let producedAt = OCSP_resp_get0_produced_at(basic).map { Certificate.date($0) }
        guard let issuerStack = X509StackReference([issuer]), let store = X509StoreReference(anchors: [], crls: []) else {
            return OCSPVerdict(responderStatus: statusName, producedAt: producedAt, outcome: "out of memory")
        }
        var signerPointer: OpaquePointer?
        guard OCSP_resp_get0_signer(basic, &signerPointer, issuerStack.pointer) == 1, let signerPointer else {
            let message = "the response names a responder whose certificate is neither the issuer's nor included in the response"
            return OCSPVerdict(status: .invalidData(message), responderStatus: statusName, producedAt: producedAt, outcome: message)
        }
        // The signature, with the signer's key only (OCSP_NOVERIFY: the authorisation is judged below).
        guard OCSP_basic_verify(basic, issuerStack.pointer, store.pointer, UInt(OCSP_NOVERIFY)) == 1 else {
            let message = "the response's signature does not verify"
            return OCSPVerdict(status: .invalidData(message), responderStatus: statusName, producedAt: producedAt, outcome: message)
        }
        let signer = Certificate(borrowing: signerPointer)
        if signer.derBytes != issuer.derBytes {
            let issuedByIssuer =
                X509_NAME_cmp(X509_get_issuer_name(signerPointer), X509_get_subject_name(issuer.reference.pointer)) == 0
                && X509_get0_pubkey(issuer.reference.pointer).map { X509_verify(signerPointer, $0) == 1 } == true
            let delegated = signer.extendedKeyUsage?.contains("1.3.6.1.5.5.7.3.9") == true
            OpenSSLErrorQueue.clear()
            guard issuedByIssuer && delegated && signer.isValid(at: time) else {
                let why =
                    !issuedByIssuer
                    ? "which \(issuer.displayName) did not issue" : !delegated ? "which lacks id-kp-OCSPSigning" : "which is not valid at the evaluation time"
                let message =
                    "the response is signed by \(signer.displayName), \(why): not authorised for this issuer (RFC 6960 4.2.2.2 allows the CA itself or a certificate it issued with id-kp-OCSPSigning)"
                return OCSPVerdict(status: .invalidData(message), responderStatus: statusName, producedAt: producedAt, outcome: message)
            }
        }
        guard let id = OCSP_cert_to_id(nil, certificate.reference.pointer, issuer.reference.pointer) else {
            return OCSPVerdict(responderStatus: statusName, producedAt: producedAt, outcome: "out of memory")
        }
        defer { OCSP_CERTID_free(id) }
        var status: Int32 = -1
        var reason: Int32 = -1
        var revoked: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var thisPointer: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextPointer: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard OCSP_resp_find_status(basic, id, &status, &reason, &revoked, &thisPointer, &nextPointer) == 1 else {
            let message = "the response does not answer for this certificate"
            return OCSPVerdict(status: .invalidData(message), responderStatus: statusName, producedAt: producedAt, outcome: message)
        }
        let thisUpdate = thisPointer.map { Certificate.date(UnsafePointer($0)) }
        let nextUpdate = nextPointer.map { Certificate.date(UnsafePointer($0)) }
        var verdict = OCSPVerdict(responderStatus: statusName, producedAt: producedAt, thisUpdate: thisUpdate, nextUpdate: nextUpdate, outcome: "")
        if let thisUpdate, thisUpdate > time.addingTimeInterval(300) {
            verdict.outcome = "the response's thisUpdate \(RFC3339.string(thisUpdate)) is after the evaluation time"
            verdict.status = .cannotCheck(verdict.outcome)
        } else if let nextUpdate, nextUpdate < time {
            verdict.outcome = "the response is stale: its nextUpdate \(RFC3339.string(nextUpdate)) has passed"
            verdict.status = .cannotCheck(verdict.outcome)
        } else {
            switch status {
            case V_OCSP_CERTSTATUS_GOOD:
                verdict.status = .good
                verdict.outcome = "good"
            case V_OCSP_CERTSTATUS_REVOKED:
                let date = revoked.map { Certificate.date(UnsafePointer($0)) }
                let name = RevocationReasons.name(reason)
                verdict.status = .revoked(reason: name, date: date)
                verdict.outcome = "revoked" + (name.map { " (\($0))" } ?? "") + (date.map { " on \(RFC3339.string($0))" } ?? "")
            default:
                verdict.status = .unknown
                verdict.outcome = "unknown: the responder does not know this certificate"
            }
        }
        return verdict
    }
}
