#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `multipart/form-data` body (RFC 7578).
public struct MultipartFormData: Sendable {
    /// One part.
    public struct Part: Sendable {
        /// The field name.
        public var name: String
        /// The file name, for file parts.
        public var filename: String?
        /// The part's media type; nil sends none (text fields).
        public var contentType: String?
        /// The content.
        public var data: [UInt8]

        /// Creates a part.
        public init(name: String, filename: String? = nil, contentType: String? = nil, data: [UInt8]) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.data = data
        }
    }

    /// The boundary: random, and checked not to occur in any part.
    public private(set) var boundary: String
    /// The parts, in order.
    public var parts: [Part] = []

    /// Creates an empty body with a random boundary (or a given one, for tests).
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? "mtls-" + AuthHash.hex(AuthHash.random(12))
    }

    /// Adds a text field (UTF-8).
    public mutating func add(name: String, value: String) { parts.append(Part(name: name, data: Array(value.utf8))) }

    /// Adds a file.
    public mutating func add(name: String, filename: String, contentType: String = "application/octet-stream", data: [UInt8]) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, data: data))
    }

    /// The `Content-Type` value, with the boundary.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The encoded body. A new random boundary is drawn when the current one occurs in a part.
    public mutating func encode() -> [UInt8] {
        while parts.contains(where: { $0.data.contains(subsequence: Array(boundary.utf8)) }) {
            boundary = "mtls-" + AuthHash.hex(AuthHash.random(12))
        }
        var body: [UInt8] = []
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(part.name))\""
            if let filename = part.filename { head += "; filename=\"\(Self.escape(filename))\"" }
            head += "\r\n"
            if let type = part.contentType { head += "Content-Type: \(type)\r\n" }
            head += "\r\n"
            body += Array(head.utf8) + part.data + Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return body
    }

    /// Escapes a name as the HTML standard does: `"` → `%22`, CR → `%0D`, LF → `%0A`.
    static func escape(_ text: String) -> String {
        text.replacingAll("\"", with: "%22").replacingAll("\r", with: "%0D").replacingAll("\n", with: "%0A")
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        for start in 0...(count - subsequence.count) where self[start] == subsequence[0] {
            if self[start..<(start + subsequence.count)].elementsEqual(subsequence) { return true }
        }
        return false
    }
}
