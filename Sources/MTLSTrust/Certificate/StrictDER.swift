internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The primitives of the strict DER walks (``CertificateSummaryReader``, ``CertificateLayout``):
/// each accepts only the one DER form of what it reads, checked the way `d2i_X509` checks it, and
/// gives nil for anything else, so that a caller can leave everything outside the subset to OpenSSL.
enum StrictDER {
    /// One attribute of a plain name: its RDN's index, OpenSSL's short name, and the value's bytes.
    typealias NameEntry = (set: Int, type: String, start: Int, end: Int)

    struct Element: Sendable {
        var tag: UInt8
        var header: Int
        var start: Int
        var end: Int
        var length: Int { end - start }
    }

    /// One DER element at `offset` before `limit`: definite, minimal lengths only.
    @inline(__always)
    static func element(_ p: UnsafePointer<UInt8>, _ offset: Int, _ limit: Int) -> Element? {
        guard limit - offset >= 2 else { return nil }
        let tag = p[offset]
        guard tag & 0x1F != 0x1F else { return nil }
        let first = Int(p[offset + 1])
        var length = 0
        var cursor = offset + 2
        if first < 0x80 {
            length = first
        } else {
            let count = first & 0x7F
            guard count >= 1, count <= 3, limit - cursor >= count, p[cursor] != 0 else { return nil }
            for _ in 0..<count {
                length = (length << 8) | Int(p[cursor])
                cursor += 1
            }
            guard length >= 0x80 else { return nil }
        }
        guard length <= limit - cursor else { return nil }
        return Element(tag: tag, header: offset, start: cursor, end: cursor + length)
    }

    /// `c2i_ASN1_OBJECT`'s checks: content present, no 0x80 starting a subidentifier, last octet final.
    static func validOID(_ p: UnsafePointer<UInt8>, _ e: Element) -> Bool {
        guard e.tag == 0x06, e.length >= 1, p[e.end - 1] & 0x80 == 0 else { return false }
        var previous: UInt8 = 0
        for i in e.start..<e.end {
            if p[i] == 0x80 && (i == e.start || previous & 0x80 == 0) { return false }
            previous = p[i]
        }
        return true
    }

    /// A non-negative, minimally encoded INTEGER (negative serials are left to OpenSSL).
    static func validInteger(_ p: UnsafePointer<UInt8>, _ e: Element) -> Bool {
        guard e.tag == 0x02, e.length >= 1, p[e.start] & 0x80 == 0 else { return false }
        if e.length > 1 && p[e.start] == 0 && p[e.start + 1] & 0x80 == 0 { return false }
        return true
    }

    /// A BIT STRING with no unused bits (keys and signatures).
    static func validBitString(_ p: UnsafePointer<UInt8>, _ e: Element) -> Bool {
        e.tag == 0x03 && e.length >= 1 && p[e.start] == 0
    }

    /// AlgorithmIdentifier: an OID, then nothing, NULL, an OID (EC curves) or a SEQUENCE (RSA-PSS).
    static func validAlgorithm(_ p: UnsafePointer<UInt8>, _ e: Element) -> Bool {
        guard e.tag == 0x30, let oid = element(p, e.start, e.end), validOID(p, oid) else { return false }
        if oid.end == e.end { return true }
        guard let parameters = element(p, oid.end, e.end), parameters.end == e.end else { return false }
        switch parameters.tag {
        case 0x05: return parameters.length == 0
        case 0x06: return validOID(p, parameters)
        case 0x30: return true
        default: return false
        }
    }

    /// UTCTime `YYMMDDHHMMSSZ` or GeneralizedTime `YYYYMMDDHHMMSSZ`, every field in range, as
    /// seconds since 1970 (what `ASN1_TIME_to_tm` + `timegm` give). Other forms are left to OpenSSL.
    static func time(_ p: UnsafePointer<UInt8>, _ e: Element) -> Int? {
        let yearDigits: Int
        switch (e.tag, e.length) {
        case (0x17, 13): yearDigits = 2
        case (0x18, 15): yearDigits = 4
        default: return nil
        }
        guard p[e.end - 1] == 0x5A else { return nil }  // 'Z'
        var digits = [Int](repeating: 0, count: e.length - 1)
        for i in 0..<(e.length - 1) {
            let byte = p[e.start + i]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            digits[i] = Int(byte - 0x30)
        }
        func number(_ at: Int, _ count: Int) -> Int { (at..<(at + count)).reduce(0) { $0 * 10 + digits[$1] } }
        var year = number(0, yearDigits)
        if yearDigits == 2 { year += year < 50 ? 2000 : 1900 }
        let f = yearDigits
        let month = number(f, 2)
        let day = number(f + 2, 2)
        let hour = number(f + 4, 2)
        let minute = number(f + 6, 2)
        let second = number(f + 8, 2)
        guard (1...12).contains(month), hour < 24, minute < 60, second < 60, day >= 1 else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= monthDays[month - 1], year >= 1970 else { return nil }
        // Days from 1970-01-01 to the civil date (proleptic Gregorian, years ≥ 1970 here).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }

    /// Parses one DER name with OpenSSL's own decoder; nil unless it consumes exactly the element.
    static func name(_ p: UnsafePointer<UInt8>, _ e: Element) -> OpaquePointer? {
        var cursor: UnsafePointer<UInt8>? = p + e.header
        guard let parsed = d2i_X509_NAME(nil, &cursor, e.end - e.header) else {
            ERR_clear_error()
            return nil
        }
        guard cursor == p + e.end else {
            X509_NAME_free(parsed)
            return nil
        }
        return parsed
    }

    // MARK: Names in the common form, without OpenSSL

    /// Attribute types whose short names OpenSSL prints (`X509_NAME_print_ex` with `XN_FLAG_FN_SN`),
    /// as (OID content bytes, short name), read from OpenSSL's own object table.
    static let shortNames: [([UInt8], String)] = {
        let nids: [Int32] = [
            NID_commonName, NID_organizationName, NID_organizationalUnitName, NID_countryName, NID_localityName,
            NID_stateOrProvinceName, NID_domainComponent, NID_serialNumber, NID_pkcs9_emailAddress, NID_streetAddress,
            NID_surname, NID_givenName, NID_title, NID_postalCode, NID_userId, NID_organizationIdentifier,
        ]
        return nids.compactMap { nid in
            guard let object = OBJ_nid2obj(nid), let data = OBJ_get0_data(object), let sn = OBJ_nid2sn(nid) else { return nil }
            return (Array(UnsafeBufferPointer(start: data, count: Int(OBJ_length(object)))), String(cString: sn))
        }
    }()

    /// Value bytes printed the same by every RFC 2253 printer: no escaping, quoting or conversion
    /// (letters, digits, and `space . - _ @ : / ( ) ' *`; a space is never first or last).
    static let plainValueByte: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .-_@:/()'*".utf8 { table[Int(byte)] = true }
        return table
    }()

    /// A name whose every attribute is a known type with a PrintableString, UTF8String or
    /// IA5String value of plain ASCII: such a name is always accepted by `d2i_X509_NAME` (its
    /// canonical form exists) and prints as `SN=value` pairs. Returns the entries (RDN index, short
    /// name, value range) in DER order, or nil for any other name (then OpenSSL parses and prints it).
    static func plainName(_ p: UnsafePointer<UInt8>, _ e: Element) -> [NameEntry]? {
        guard e.tag == 0x30 else { return nil }
        var entries: [NameEntry] = []
        var cursor = e.start
        var setIndex = 0
        while cursor < e.end {
            guard let rdn = element(p, cursor, e.end), rdn.tag == 0x31, rdn.length > 0 else { return nil }
            var inner = rdn.start
            while inner < rdn.end {
                guard let attribute = element(p, inner, rdn.end), attribute.tag == 0x30,
                    let oid = element(p, attribute.start, attribute.end), validOID(p, oid),
                    let value = element(p, oid.end, attribute.end), value.end == attribute.end,
                    value.tag == 0x13 || value.tag == 0x0C || value.tag == 0x16, value.length > 0,
                    p[value.start] != 0x20, p[value.end - 1] != 0x20
                else { return nil }
                for i in value.start..<value.end where !plainValueByte[Int(p[i])] { return nil }
                guard let type = shortNames.first(where: { $0.0.count == oid.length && memcmp($0.0, p + oid.start, oid.length) == 0 })?.1 else { return nil }
                entries.append((setIndex, type, value.start, value.end))
                inner = attribute.end
            }
            setIndex += 1
            cursor = rdn.end
        }
        return entries
    }

    /// `X509_NAME_print_ex(XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB)` of a plain name: entries in
    /// reverse order, `,` between RDNs and `+` inside one.
    static func rfc4514(_ p: UnsafePointer<UInt8>, _ entries: [NameEntry]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.reduce(0) { $0 + $1.type.utf8.count + $1.end - $1.start + 2 })
        var previous = -1
        for entry in entries.reversed() {
            if previous != -1 { bytes.append(previous == entry.set ? 0x2B : 0x2C) }
            previous = entry.set
            bytes.append(contentsOf: entry.type.utf8)
            bytes.append(0x3D)
            bytes.append(contentsOf: UnsafeBufferPointer(start: p + entry.start, count: entry.end - entry.start))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// basicConstraints in the forms CAs write; nil for anything else (left to OpenSSL).
    static func basicConstraints(_ p: UnsafePointer<UInt8>, _ value: Element) -> BasicConstraints? {
        guard value.tag == 0x04, let sequence = element(p, value.start, value.end), sequence.tag == 0x30, sequence.end == value.end else { return nil }
        if sequence.length == 0 { return BasicConstraints(isCA: false, pathLengthConstraint: nil) }
        guard let flag = element(p, sequence.start, sequence.end), flag.tag == 0x01, flag.length == 1, p[flag.start] == 0xFF else { return nil }
        if flag.end == sequence.end { return BasicConstraints(isCA: true, pathLengthConstraint: nil) }
        guard let length = element(p, flag.end, sequence.end), length.end == sequence.end, validInteger(p, length), length.length <= 3 else { return nil }
        var value = 0
        for i in length.start..<length.end { value = value << 8 | Int(p[i]) }
        return BasicConstraints(isCA: true, pathLengthConstraint: value)
    }
}
