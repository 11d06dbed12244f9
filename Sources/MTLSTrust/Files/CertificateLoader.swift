#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Loads certificates from any file a user may hold: PEM (one or many blocks), DER, or PKCS#12,
/// detected from content rather than from the file name.
public enum CertificateLoader {
    /// The most bytes any input is read to: files, standard input and FIFOs alike. No
    /// certificate, key, PKCS#12 or pin file comes near it; an endless source stops here.
    public static let maximumInputSize = 64 << 20

    /// How long a FIFO, socket or character device may stay silent (no writer yet, or a writer
    /// that sends nothing) before reading it is given up: such a file never hangs a command.
    public static let silentInputTimeout: Double = 10

    /// Reads a file's bytes with an error that names the file.
    ///
    /// Regular files are read to their end, up to `maximumSize`. A FIFO, socket or device is
    /// opened without blocking (opening a FIFO waits for a writer otherwise) and read with a
    /// deadline of ``silentInputTimeout`` seconds between pieces of data, so a FIFO no one
    /// writes fails after that time with a message instead of hanging.
    ///
    /// - Throws: `.unreadableFile` for a missing file, a directory, no permission or a silent
    ///   FIFO; `.malformedInput` above `maximumSize`.
    public static func readFile(_ path: String, maximumSize: Int = maximumInputSize) throws(MTLSTrustError) -> [UInt8] {
        // open/fstat/read into one array: no FileManager, FileHandle or Data, whose buffer would be
        // one more copy (of a key, perhaps) freed without being cleared.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            switch errno {
            case ENOENT, ENOTDIR: throw MTLSTrustError(.unreadableFile, "\(path): no such file", source: path)
            case EACCES, EPERM: throw MTLSTrustError(.unreadableFile, "\(path) cannot be read (permission denied?)", source: path)
            case ENXIO: throw MTLSTrustError(.unreadableFile, "\(path) cannot be read: it is a socket or a device with nothing behind it", source: path)
            default: throw MTLSTrustError(.unreadableFile, "\(path) cannot be read: \(String(cString: strerror(errno)))", source: path)
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw MTLSTrustError(.unreadableFile, "\(path) cannot be read: \(String(cString: strerror(errno)))", source: path)
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            throw MTLSTrustError(.unreadableFile, "\(path) is a directory, not a file", source: path)
        }
        let regular = info.st_mode & S_IFMT == S_IFREG
        if regular {
            // Regular files never block: back to blocking reads, so EAGAIN cannot appear.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        }
        return try readDescriptor(
            fd, name: path, sizeHint: regular ? Int(info.st_size) : nil, maximumSize: maximumSize,
            silentTimeout: regular ? nil : silentInputTimeout)
    }

    /// Reads `fd` to its end, up to `maximumSize` bytes (one more shows the input is too large),
    /// waiting at most `silentTimeout` seconds for each piece of data when given (the descriptor
    /// may then be non-blocking). The one reader behind files, FIFOs and standard input.
    ///
    /// - Throws: `.unreadableFile` on a read error or silence; `.malformedInput` above the size.
    public static func readDescriptor(_ fd: Int32, name: String, sizeHint: Int? = nil, maximumSize: Int = maximumInputSize, silentTimeout: Double? = nil) throws(MTLSTrustError)
        -> [UInt8]
    {
        // A regular file is read into an array of its size (one more byte shows growth); pipes and
        // devices grow the array as they go, up to the limit.
        var capacity = sizeHint.map { min(max($0, 0), maximumSize) + 1 } ?? 65536
        var bytes = [UInt8](repeating: 0, count: capacity)
        var count = 0
        while true {
            if count == capacity {
                guard capacity <= maximumSize else { break }
                capacity = min(capacity * 2, maximumSize + 1)
                bytes += [UInt8](repeating: 0, count: capacity - bytes.count)
            }
            if let silentTimeout {
                // Poll before reading: a FIFO no writer has opened yet reads as at its end, while
                // poll waits for the writer (Linux reports POLLHUP only once a writer has gone).
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                var ready: Int32
                repeat { ready = poll(&poller, 1, Int32(silentTimeout * 1000)) } while ready < 0 && errno == EINTR
                if ready == 0 {
                    Secret.wipe(&bytes)
                    throw MTLSTrustError(
                        .unreadableFile,
                        "\(name) cannot be read: nothing came for \(Int(silentTimeout)) s (a FIFO with no writer, or a writer that sends nothing)", source: name)
                }
            }
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, capacity - count) }
            if n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) { continue }
            if n < 0 {
                Secret.wipe(&bytes)
                throw MTLSTrustError(.unreadableFile, "\(name) cannot be read: \(String(cString: strerror(errno)))", source: name)
            }
            if n == 0 { break }
            count += n
        }
        if count > maximumSize {
            Secret.wipe(&bytes)
            throw MTLSTrustError(.malformedInput, "\(name) is larger than \(maximumSize >> 20) MiB: not a certificate, key or PKCS#12 file", source: name)
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// What a certificate input turned out to be.
    public enum Format: String, Sendable { case pem = "PEM", der = "DER", pkcs12 = "PKCS#12", pkcs7 = "PKCS#7" }

    /// Parses certificates from bytes.
    ///
    /// - Parameters:
    ///   - bytes: The content.
    ///   - password: Used when the content is PKCS#12.
    ///   - source: The file name, for messages.
    /// - Returns: The certificates (for PKCS#12: the leaf first, then the chain) and the format found.
    public static func certificates(from bytes: [UInt8], password: Secret? = nil, source: String) throws(MTLSTrustError) -> (certificates: [Certificate], format: Format) {
        do throws(MTLSTrustError) {
            if bytes.isEmpty { throw MTLSTrustError(.emptyInput, "the file is empty") }
            if PEM.looksLikePEM(bytes) {
                // Files of CERTIFICATE blocks only (nearly all) skip the general PEM reader, which cost
                // as much as d2i_X509 over a batch of leaves; the same certificates either way.
                if let ders = CertificateSummaryReader.certificateDERs(ofFile: bytes),
                    let certificates = try? ders.map({ der throws(MTLSTrustError) in try Certificate(derBytes: der) })
                {
                    return (certificates, .pem)
                }
                return (try Certificate.fromPEM(bytes), .pem)
            }
            switch DER.shape(of: bytes) {
            case .certificate: return ([try Certificate(derBytes: bytes)], .der)
            case .pkcs12:
                let bundle = try PKCS12Bundle(derBytes: bytes, password: password)
                if bundle.allCertificates.isEmpty { throw MTLSTrustError(.wrongObjectKind, "the PKCS#12 file holds no certificate") }
                return (bundle.allCertificates, .pkcs12)
            case .pkcs7: return (try Certificate.fromPKCS7(derBytes: bytes), .pkcs7)
            case .privateKey, .encryptedPrivateKey: throw MTLSTrustError(.wrongObjectKind, "it holds a private key, not a certificate")
            case .publicKey: throw MTLSTrustError(.wrongObjectKind, "it holds a public key, not a certificate")
            case .crl: throw MTLSTrustError(.wrongObjectKind, "it holds a CRL, not a certificate")
            case .unknown:
                if bytes.first == 0x30 {
                    // Looks like DER but is damaged or truncated: let OpenSSL say why.
                    return ([try Certificate(derBytes: bytes)], .der)
                }
                if let java = DER.javaKeyStoreRefusal(bytes) { throw MTLSTrustError(.wrongObjectKind, java) }
                throw notACertificate(bytes)
            }
        } catch {
            throw error.attributed(to: source)
        }
    }

    /// The one way every command says that bytes are not a certificate at all (neither PEM, DER,
    /// PKCS#7 nor PKCS#12): text without a PEM block, or something else.
    public static func notACertificate(_ bytes: [UInt8]) -> MTLSTrustError {
        let printable = bytes.prefix(512).allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || (32..<127).contains($0) }
        return MTLSTrustError(.malformedInput, printable ? "it is text without a PEM certificate block" : "it is not a certificate in PEM, DER or PKCS#12 form")
    }

    /// Reads and parses a certificate file.
    public static func certificates(atPath path: String, password: Secret? = nil) throws(MTLSTrustError) -> [Certificate] {
        let bytes = try readFile(path)
        return try certificates(from: bytes, password: password, source: path).certificates
    }

    /// True when `path` names a directory (through symbolic links).
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// The certificates of a directory, as OpenSSL's CApath and curl's `--capath` take it
    /// (`/etc/ssl/certs`): the files named `*.pem`, `*.crt`, `*.cer` or `*.der`, and OpenSSL's hash
    /// links (`5ed36f99.0`), symbolic links followed, each certificate once, in name order.
    /// Subdirectories and other files are left alone.
    ///
    /// - Throws: the error of a file that does not read (naming it), or `.malformedInput` when the
    ///   directory holds no such file.
    public static func certificates(inDirectory path: String) throws(MTLSTrustError) -> [Certificate] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw MTLSTrustError(.unreadableFile, "\(path) cannot be read as a directory", source: path)
        }
        let names = entries.filter { name in
            if ["cer", "der", "crt", "pem"].contains(PathText.pathExtension(name).lowercased()) { return true }
            // OpenSSL's c_rehash names: eight hex digits, a dot, a counter (`.r0` … are CRLs).
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit) && !parts[1].isEmpty && parts[1].allSatisfy { $0.isASCII && $0.isNumber }
        }.sorted()
        var certificates: [Certificate] = []
        var seen = Set<Certificate>()
        for name in names {
            let file = PathText.appending(path, name)
            if isDirectory(file) { continue }
            do throws(MTLSTrustError) {
                for certificate in try CertificateLoader.certificates(atPath: file) where seen.insert(certificate).inserted { certificates.append(certificate) }
            } catch {
                throw error.attributed(to: file)
            }
        }
        if certificates.isEmpty {
            throw MTLSTrustError(
                .malformedInput, "\(path) holds no certificate file (*.pem, *.crt, *.cer, *.der, or OpenSSL hash links such as 5ed36f99.0)", source: path)
        }
        return certificates
    }

    /// Reads a CRL file (PEM bundle or DER).
    public static func crls(atPath path: String) throws(MTLSTrustError) -> [CertificateRevocationList] {
        let bytes = try readFile(path)
        do throws(MTLSTrustError) {
            return try CertificateRevocationList.load(bytes)
        } catch {
            throw error.attributed(to: path)
        }
    }

    /// The usual locations of the system's CA bundle on Linux distributions and macOS (Homebrew).
    public static let systemBundlePaths = [
        "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Alpine, Arch
        "/etc/pki/tls/certs/ca-bundle.crt",  // Fedora, RHEL, CentOS
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL 7+
        "/etc/ssl/ca-bundle.pem",  // openSUSE
        "/etc/ssl/cert.pem",  // Alpine, macOS, BSDs
        "/opt/homebrew/etc/ca-certificates/cert.pem", "/usr/local/etc/ca-certificates/cert.pem",
    ]

    /// The system's trusted roots: the first bundle found (`SSL_CERT_FILE` first), and the
    /// certificates of the directories in `SSL_CERT_DIR` (colon-separated), as OpenSSL's default
    /// paths take both.
    public static func systemRoots() throws(MTLSTrustError) -> [Certificate] {
        var paths = systemBundlePaths
        if let override = ProcessInfo.processInfo.environment["SSL_CERT_FILE"], !override.isEmpty { paths.insert(override, at: 0) }
        var roots: [Certificate] = []
        for path in paths where FileManager.default.isReadableFile(atPath: path) && !isDirectory(path) {
            if let certificates = try? certificates(atPath: path), !certificates.isEmpty {
                roots = certificates
                break
            }
        }
        if let directories = ProcessInfo.processInfo.environment["SSL_CERT_DIR"], !directories.isEmpty {
            var seen = Set(roots)
            for directory in directories.split(separator: ":").map(String.init) where isDirectory(directory) {
                for certificate in (try? certificates(inDirectory: directory)) ?? [] where seen.insert(certificate).inserted { roots.append(certificate) }
            }
        }
        if !roots.isEmpty { return roots }
        throw MTLSTrustError(
            .unreadableFile, "no system CA bundle was found (looked in \(paths.joined(separator: ", ")))",
            hint: "install ca-certificates, or give the CAs to trust with \(setting: .anchors)")
    }
}

extension CertificateLoader {
    /// What pins need of every certificate in a file — SPKI digest, subject, expiry, CA flag, and
    /// whether it is self-signed — by the strict DER walk where it applies (no `d2i_X509`, whose
    /// public-key decoding is most of a certificate's cost), else by the full parse.
    ///
    /// In what this returns, ``CertificateSummary/mayBeSelfSigned`` is exact: a file with a
    /// certificate the walk cannot rule out as self-signed is read with the full parse, which checks
    /// the signature.
    ///
    /// - Throws: `MTLSTrustError`, as ``certificates(atPath:password:)`` does (PKCS#12 files need that
    ///   function's password).
    public static func summaries(atPath path: String) throws(MTLSTrustError) -> [CertificateSummary] {
        var bytes = try readFile(path)
        // The file may be an unencrypted key: its bytes are wiped, and a key block never reaches the
        // general PEM reader (which would copy its text into Strings).
        defer { Secret.wipe(&bytes) }
        if let summaries = CertificateSummaryReader.summaries(ofFile: bytes), !summaries.contains(where: \.mayBeSelfSigned) {
            return summaries
        }
        if PEM.occurrences(of: "PRIVATE KEY-----", in: bytes) > 0 {
            throw MTLSTrustError(.wrongObjectKind, "\(path) holds a private key, not only certificates", source: path)
        }
        return try certificates(from: bytes, source: path).certificates.map { certificate in
            CertificateSummary(
                spkiSHA256: certificate.spkiSHA256, subject: certificate.subject, notAfter: certificate.notAfter,
                isCA: certificate.basicConstraints?.isCA ?? false, mayBeSelfSigned: certificate.isSelfSigned)
        }
    }
}
