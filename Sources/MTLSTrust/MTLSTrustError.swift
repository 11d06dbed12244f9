/// The one error type of `MTLSTrust`: what went wrong, with which input, and what to do about it.
///
/// `description` is one sentence that names the file or certificate involved, suitable for a
/// command-line error. Raw OpenSSL codes are translated into words; the raw form is kept in
/// ``openSSLDetail`` for `--verbose`.
public struct MTLSTrustError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of failure: a code that can grow. New kinds are added as static members, so a
    /// `switch` over it has a `default` and keeps compiling when one is added (as
    /// swift-certificates' and swift-nio-ssl's error codes do).
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name (`wrongPassword`), stable across releases; JSON output uses it.
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file could not be read (missing, a directory, no permission).
        public static let unreadableFile = Reason(rawValue: "unreadableFile")
        /// The input is empty.
        public static let emptyInput = Reason(rawValue: "emptyInput")
        /// The input is not in any format this kind of object can have.
        public static let malformedInput = Reason(rawValue: "malformedInput")
        /// The input holds a different kind of object than expected (a key where a certificate is expected).
        public static let wrongObjectKind = Reason(rawValue: "wrongObjectKind")
        /// The password is wrong.
        public static let wrongPassword = Reason(rawValue: "wrongPassword")
        /// A password is needed and none was given.
        public static let passwordRequired = Reason(rawValue: "passwordRequired")
        /// The input uses an algorithm that cannot be used here.
        public static let unsupportedAlgorithm = Reason(rawValue: "unsupportedAlgorithm")
        /// The input's integrity check failed for a reason other than the password.
        public static let corruptInput = Reason(rawValue: "corruptInput")
        /// The input ends before its structure does (a truncated download or copy).
        public static let truncatedInput = Reason(rawValue: "truncatedInput")
        /// The private key does not belong to the certificate.
        public static let keyMismatch = Reason(rawValue: "keyMismatch")
        /// An argument given to the library is invalid (a time, a host name, a pin).
        public static let invalidArgument = Reason(rawValue: "invalidArgument")
        /// An output file could not be written.
        public static let outputFailure = Reason(rawValue: "outputFailure")
        /// OpenSSL failed in a way that is not the input's fault.
        public static let internalFailure = Reason(rawValue: "internalFailure")

        /// Every kind this release knows.
        public static let allCases: [Reason] = [
            .unreadableFile, .emptyInput, .malformedInput, .wrongObjectKind, .wrongPassword, .passwordRequired, .unsupportedAlgorithm, .corruptInput, .truncatedInput, .keyMismatch,
            .invalidArgument, .outputFailure, .internalFailure,
        ]
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
