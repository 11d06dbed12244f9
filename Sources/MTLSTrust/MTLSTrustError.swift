/// The one error type of `MTLSTrust`: what went wrong, with which input, and what to do about it.
///
/// `description` is one sentence that names the file or certificate involved, suitable for a
/// command-line error. Raw OpenSSL codes are translated into words; the raw form is kept in
/// ``openSSLDetail`` for `--verbose`.
public struct MTLSTrustError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of failure.
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        /// The file could not be read (missing, a directory, no permission).
        case unreadableFile
        /// The input is empty.
        case emptyInput
        /// The input is not in any format this kind of object can have.
        case malformedInput
        /// The input holds a different kind of object than expected (a key where a certificate is expected).
        case wrongObjectKind
        /// The password is wrong.
        case wrongPassword
        /// A password is needed and none was given.
        case passwordRequired
        /// The input uses an algorithm that cannot be used here.
        case unsupportedAlgorithm
        /// The input's integrity check failed for a reason other than the password.
        case corruptInput
        /// The input ends before its structure does (a truncated download or copy).
        case truncatedInput
        /// The private key does not belong to the certificate.
        case keyMismatch
        /// An argument given to the library is invalid (a time, a host name, a pin).
        case invalidArgument
        /// An output file could not be written.
        case outputFailure
        /// OpenSSL failed in a way that is not the input's fault.
        case internalFailure
    }

    /// The kind of failure.
    public var reason: Reason
    /// The sentence shown to a person.
    public var message: String
    /// The file path or label the failure concerns, when there is one.
    public var source: String?
    /// The raw OpenSSL error strings, for verbose output.
    public var openSSLDetail: [String]
    /// What to do, when it is a setting the caller can change; the `mtls` command line names
    /// the settings by their options, a library user by their API names.
    public var hint: Hint?

    /// Creates an error.
    public init(_ reason: Reason, _ message: String, source: String? = nil, openSSLDetail: [String] = [], hint: Hint? = nil) {
        self.reason = reason
        self.message = message
        self.source = source
        self.openSSLDetail = openSSLDetail
        self.hint = hint
    }

    public var description: String { message }

    /// Returns the same error with its message prefixed by the source it concerns, when the
    /// message does not already name it.
    public func attributed(to source: String) -> MTLSTrustError {
        var copy = self
        copy.source = source
        if !message.contains(source) { copy.message = "\(source): \(message)" }
        return copy
    }
}
