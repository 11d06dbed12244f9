import MTLSTrust

/// The HTTPS/1.1 client and server over OpenSSL BIO sockets (being built; see the issues).
public enum MTLSHTTPVersion {
    /// The module's version.
    public static let string = "0.1.0"
}
