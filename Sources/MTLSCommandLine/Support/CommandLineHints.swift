import MTLSTrust
import MTLSHTTP

extension Setting {
    /// The `mtls` option that changes each setting a hint can name.
    static let commandLineNames: [Setting: String] = [
        .anchors: "--anchors",
        .systemRoots: "--system-roots",
        .intermediates: "--intermediates",
        .evaluationTime: "--at",
        .hostnameCheck: "--no-hostname-check",
        .maximumDepth: "--max-depth",
        .crls: "--crl",
        .revocation: "--revocation",
        .requiredKeyUsage: "--key-usage",
        .profile: "--profile",
        .purpose: "--purpose",
        .timeout: "--timeout",
        .maximumTLSVersion: "--tls-max",
        .minimumTLSVersion: "--tls-min",
        .clientIdentity: "--p12 or --cert/--key",
        .pkcs12Identity: "--p12",
        .pkcs12Contents: "`mtls import FILE --out-dir DIR`",
        .pkcs12IdentitySelection: "`mtls import --name` or `--index`",
        .legacyRenegotiation: "--legacy-renegotiation",
        .connectTo: "--connect-to",
        .listeningPort: "--port",
        .authOrigins: "--auth-origin",
        .maximumRedirects: "--max-redirects",
        .bodyDestination: "--output",
    ]

    /// The `mtls` option that changes this setting, as a hint names it (the API name for a
    /// setting the command line has no option for).
    var commandLineName: String { Setting.commandLineNames[self] ?? apiName }
}

extension Hint {
    /// The hint as the command line prints it: each setting named by its option.
    var commandLine: String { rendered { $0.commandLineName } }
}

extension HTTPSError {
    /// ``HTTPSError/description`` with the hint's settings named by their options.
    var commandLineDescription: String {
        var text = "\(host): \(phase.rawValue) failed: \(message)"
        if let hint { text += " (\(hint.commandLine))" }
        return text
    }
}
