internal import COpenSSL
internal import COpenSSLShims

/// One entry drained from OpenSSL's thread-local error queue (`package`: MTLSHTTP drains it too).
package struct OpenSSLErrorEntry: Sendable, Equatable {
    /// The packed error code (`ERR_get_error`).
    package var code: UInt
    /// The library name, e.g. `"digital envelope routines"`.
    package var library: String
    /// The reason text, e.g. `"unsupported"`.
    package var reason: String
    /// Extra data attached by OpenSSL (algorithm names and the like).
    package var data: String

    /// The library number (`ERR_GET_LIB`).
    package var libraryCode: Int32 { Int32((code >> 23) & 0xFF) }
    /// The reason number (`ERR_GET_REASON`).
    package var reasonCode: Int32 { Int32(code & 0x7FFFFF) }

    /// `error:0308010C:digital envelope routines::unsupported` in the raw form OpenSSL prints.
    package var raw: String {
        let hex = String(code, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 8 - hex.count)) + hex
        return "error:\(padded):\(library)::\(reason)"
    }
}

/// Scoped access to OpenSSL's error queue: cleared before each C sequence, drained after.
package enum OpenSSLErrorQueue {
    /// Clears the queue, so that the next drain shows only errors of the coming call sequence.
    /// An empty queue is left alone: `ERR_clear_error` resets every slot, and the TLS transport
    /// clears before every read and write.
    package static func clear() { if ERR_peek_error() != 0 { ERR_clear_error() } }

    /// Removes and returns every queued error, oldest first.
    package static func drain() -> [OpenSSLErrorEntry] {
        var entries: [OpenSSLErrorEntry] = []
        while true {
            var data: UnsafePointer<CChar>? = nil
            var flags: Int32 = 0
            let code = mtls_ERR_get_error_all(nil, nil, nil, &data, &flags)
            if code == 0 { break }
            let library = ERR_lib_error_string(code).map { String(cString: $0) } ?? "unknown library"
            let reason = ERR_reason_error_string(code).map { String(cString: $0) } ?? "reason \(code & 0x7FFFFF)"
            var extra = ""
            if let data, (flags & ERR_TXT_STRING) != 0 { extra = String(cString: data) }
            entries.append(OpenSSLErrorEntry(code: code, library: library, reason: reason, data: extra))
            if entries.count > 64 {
                ERR_clear_error()
                break
            }
        }
        return entries
    }

    /// A plain-words translation of the queued errors, for messages that must not show raw codes.
    package static func describe(_ entries: [OpenSSLErrorEntry]) -> String {
        guard let first = entries.first(where: { !$0.reason.isEmpty }) ?? entries.first else {
            return "OpenSSL reported no detail"
        }
        let reason = first.reason
        switch reason {
        case "unsupported" where first.libraryCode == ERR_LIB_OSSL_DECODER || first.libraryCode == ERR_LIB_OSSL_STORE:
            return "the bytes are not a key or certificate OpenSSL can decode (or were decrypted with a wrong password)"
        case "unsupported":
            let algorithm = entries.map(\.data).first(where: { !$0.isEmpty }).map { " (\($0))" } ?? ""
            return "an algorithm the loaded OpenSSL providers do not support\(algorithm)"
        case "bad decrypt": return "decryption failed (wrong password or damaged data)"
        case "mac verify failure": return "the integrity check (MAC) failed: wrong password or a damaged file"
        case "wrong tag", "nested asn1 error", "too long", "header too long", "not enough data", "asn1 parse error":
            return "the data is not well-formed DER (\(reason))"
        case "mstring not universal", "mstring wrong tag":
            return "a value in a name (or another string field) is not encoded as one of the string types X.509 allows there (\(reason))"
        case "invalid utf8string": return "a UTF8String in it is not valid UTF-8"
        case "invalid bmpstring", "invalid universalstring": return "a \(reason.dropFirst(8)) in it is not a valid sequence of characters"
        case "no start line": return "no PEM block was found"
        case "bad base64 decode": return "the PEM block's base64 text is damaged"
        default: return reason
        }
    }

    /// True when OpenSSL could not fetch or does not know an algorithm the input names: a cipher,
    /// digest, PBE scheme, KDF or PRF. Only the EVP and PKCS12 libraries say this about an
    /// *algorithm*; the decoder and store libraries also report "unsupported", but there it means
    /// "no decoder accepted these bytes" — which is what a wrong password gives whenever the
    /// garbage it decrypts to happens to end in valid CBC padding (about 1 time in 256).
    static func namesUnavailableAlgorithm(_ entries: [OpenSSLErrorEntry]) -> Bool {
        entries.contains { entry in
            switch entry.libraryCode {
            case ERR_LIB_EVP: entry.reason.hasPrefix("unsupported") || entry.reason.hasPrefix("unknown")
            case ERR_LIB_PKCS12: entry.reason == "unknown digest algorithm" || entry.reason == "unsupported pkcs12 mode"
            default: false
            }
        }
    }
}
