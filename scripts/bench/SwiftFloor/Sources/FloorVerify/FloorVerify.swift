import CFloorOpenSSL
import Glibc

/// Arguments: ROOT.pem INTERMEDIATE.pem UNIX-TIME HOST LEAF.pem (the leaf last, for `xargs -n 1`).
/// Verifies LEAF as `openssl verify` does with the same options. Returns the exit status (0 trusted,
/// 2 not trusted, 3 bad input) and the line `openssl verify` would print.
public func floorVerify(_ arguments: [String]) -> (status: Int32, line: String) {
    guard arguments.count == 6, let at = Int(arguments[3]) else {
        return (3, "usage: \(arguments.first ?? "swift-floor") ROOT.pem INTERMEDIATE.pem UNIX-TIME HOST LEAF.pem")
    }
    func load(_ path: String) -> OpaquePointer? {
        guard let bio = BIO_new_file(path, "r") else { return nil }
        defer { BIO_free(bio) }
        return PEM_read_bio_X509(bio, nil, nil, nil)
    }
    var certificates: [OpaquePointer] = []
    defer { certificates.forEach { X509_free($0) } }
    for path in [arguments[1], arguments[2], arguments[5]] {
        guard let certificate = load(path) else { return (3, "\(path): cannot be read as a PEM certificate") }
        certificates.append(certificate)
    }
    let (root, intermediate, leaf) = (certificates[0], certificates[1], certificates[2])
    guard let store = X509_STORE_new(), let untrusted = OPENSSL_sk_new_null(), let context = X509_STORE_CTX_new()
    else { fatalError("OpenSSL is out of memory") }
    defer {
        X509_STORE_CTX_free(context)
        OPENSSL_sk_free(untrusted)
        X509_STORE_free(store)
    }
    X509_STORE_add_cert(store, root)
    OPENSSL_sk_push(untrusted, UnsafeRawPointer(intermediate))
    guard X509_STORE_CTX_init(context, store, leaf, untrusted) == 1, let parameters = X509_STORE_CTX_get0_param(context) else {
        return (3, "\(arguments[5]): cannot set up the verification")
    }
    X509_VERIFY_PARAM_set_time(parameters, time_t(at))
    X509_VERIFY_PARAM_set1_host(parameters, arguments[4], 0)
    X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_X509_STRICT))
    X509_STORE_CTX_set_purpose(context, 2)  // X509_PURPOSE_SSL_SERVER, a macro Swift does not import
    if X509_verify_cert(context) == 1 { return (0, "\(arguments[5]): OK") }
    let error = X509_STORE_CTX_get_error(context)
    return (2, "\(arguments[5]): error \(error): \(String(cString: X509_verify_cert_error_string(Int(error))))")
}

/// The whole program: verifies, prints the line as `openssl verify` would (to standard error when
/// the input was bad) and exits with its status. `decorate` changes the printed line.
public func floorMain(decorate: (String) -> String = { $0 }) -> Never {
    let (status, line) = floorVerify(CommandLine.arguments)
    if status == 0 || status == 2 {
        print(decorate(line))
    } else {
        let message = line + "\n"
        _ = message.withCString { write(2, $0, strlen($0)) }
    }
    exit(status)
}
