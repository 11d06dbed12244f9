import MTLSTrust
import MTLSHTTP

extension Setting {
    /// The `mtls` option that changes this setting, as a hint names it.
    var commandLineName: String {
        switch self {
        case .anchors: "--anchors"
        case .systemRoots: "--system-roots"
        case .intermediates: "--intermediates"
        case .evaluationTime: "--at"
        case .hostnameCheck: "--no-hostname-check"
        case .maximumDepth: "--max-depth"
        case .crls: "--crl"
        case .revocation: "--revocation"
        case .requiredKeyUsage: "--key-usage"
        case .profile: "--profile"
        case .purpose: "--purpose"
        case .timeout: "--timeout"
        case .maximumTLSVersion: "--tls-max"
        case .minimumTLSVersion: "--tls-min"
        case .clientIdentity: "--p12 or --cert/--key"
        case .pkcs12Identity: "--p12"
        case .pkcs12Contents: "`mtls import FILE --out-dir DIR`"
        case .pkcs12IdentitySelection: "`mtls import --name` or `--index`"
        case .legacyRenegotiation: "--legacy-renegotiation"
        case .connectTo: "--connect-to"
        case .listeningPort: "--port"
        case .authOrigins: "--auth-origin"
        case .maximumRedirects: "--max-redirects"
        case .bodyDestination: "--output"
        }
    }
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
