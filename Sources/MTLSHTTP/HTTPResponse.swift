/// A response, with what the TLS layer observed while it was exchanged.
public struct HTTPResponse: Sendable {
    /// The URL that answered.
    public var url: HTTPSURL
    public var head: HTTPResponseHead
    /// The body, decoded from gzip/deflate (empty when it was streamed to a sink).
    public var body: [UInt8]
    /// Body bytes as received on the wire.
    public var wireBodyLength: Int
    /// The TLS record of the connection, up to the end of this response.
    public var tls: TLSSessionReport
    /// True when the request went over a kept-alive connection.
    public var reusedConnection: Bool
    /// Informational statuses seen before the final one (100, 103 …).
    public var informational: [Int]

    public var status: Int { head.status }
    public var headers: HTTPHeaders { head.headers }
}
