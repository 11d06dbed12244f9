import MTLSTrust

/// The settings of this module that hints name (the trust settings are `MTLSTrust`'s), each with
/// the API that changes it.
extension Setting {
    /// The settings `MTLSHTTP`'s hints name.
    public static let httpSettings: [Setting] = [
        .timeout, .maximumTLSVersion, .minimumTLSVersion, .clientIdentity, .pkcs12IdentitySelection, .legacyRenegotiation, .connectTo, .listeningPort, .authOrigins,
        .maximumRedirects, .bodyDestination,
    ]

    /// How long a connection may take.
    public static let timeout = Setting(name: "timeout", apiName: "TLSClientConfiguration.timeouts")
    /// The newest TLS version offered.
    public static let maximumTLSVersion = Setting(name: "maximumTLSVersion", apiName: "TLSClientConfiguration.maximumVersion")
    /// The oldest TLS version accepted.
    public static let minimumTLSVersion = Setting(name: "minimumTLSVersion", apiName: "TLSClientConfiguration.minimumVersion")
    /// The client certificate and key.
    public static let clientIdentity = Setting(name: "clientIdentity", apiName: "TLSClientConfiguration.identities")
    /// One identity of a PKCS#12 file that holds several, by friendly name or position.
    public static let pkcs12IdentitySelection = Setting(name: "pkcs12IdentitySelection", apiName: "PKCS12Bundle.identities")
    /// Renegotiation with servers that lack RFC 5746.
    public static let legacyRenegotiation = Setting(name: "legacyRenegotiation", apiName: "TLSClientConfiguration.allowsLegacyRenegotiation")
    /// Where connections for a host go instead of its DNS address.
    public static let connectTo = Setting(name: "connectTo", apiName: "HTTPSClient.connectTo")
    /// The port a server listens on.
    public static let listeningPort = Setting(name: "listeningPort", apiName: "TCP.listen(address:port:)")
    /// Origins that may receive credentials.
    public static let authOrigins = Setting(name: "authOrigins", apiName: "LoginOptions.authOrigins")
    /// How many redirects a login follows.
    public static let maximumRedirects = Setting(name: "maximumRedirects", apiName: "LoginOptions.maximumRedirects")
    /// Where a response body goes instead of memory.
    public static let bodyDestination = Setting(name: "bodyDestination", apiName: "a body sink")
}
