/// One HTTP/1.1 request and its response on a connection, as states and actions. No I/O: the
/// driver (``HTTPSClient``) writes, reads, parses bytes with ``HTTPResponseParser`` and feeds what
/// happened here as events; each event returns the one action to perform next.
///
/// States and legal transitions:
/// - `idle` → `sendingHead` on `start` (the body goes with the head unless `Expect: 100-continue`
///   holds it back);
/// - `sendingHead` → `waitingForContinue` (body held back) or `awaitingResponse` once written;
/// - `waitingForContinue` → `sendingBody` on a 100 or on the continue timeout (RFC 9110 §10.1.1:
///   a client need not wait forever); → `receiving` with the body unsent when a final head (401,
///   413 …) comes instead;
/// - `sendingBody` → `awaitingResponse`; `awaitingResponse` → `receiving` on the final head;
/// - `receiving` → `finished` on the end of the response, with the keep-alive decision;
/// - any state → `idle` (retry on a fresh connection) or `failed` on a failure.
struct HTTP1ExchangeStateMachine: Sendable {
    enum State: Sendable, Equatable {
        case idle
        case sendingHead
        case waitingForContinue
        case sendingBody
        case awaitingResponse
        case receiving
        case finished
        case failed
    }

    /// How the driver reads next.
    enum ReadMode: Sendable, Equatable {
        /// Until the continue timeout (or the total deadline), without the idle timeout: silence is
        /// the server not answering the `Expect`, not a stalled response.
        case untilContinue
        /// With the idle and total deadlines.
        case response
    }

    /// Which error ends the exchange.
    enum Failure: Sendable, Equatable {
        /// The error the driver just reported.
        case asReported
        /// An earlier write failure (the server refused and closed; nothing better was read).
        case earlierWriteFailure
        /// A kept-alive connection that ended before any byte of an answer.
        case staleConnection
    }

    enum Action: Sendable, Equatable {
        /// Write the head, followed by the body when `includingBody`.
        case writeHead(includingBody: Bool)
        case writeBody
        case read(ReadMode)
        /// Pass body bytes on (decode, sink or collect).
        case deliverBody
        /// The response is complete; keep the connection when `reuseConnection`.
        case finish(reuseConnection: Bool)
        /// Close this connection and start again on a new one.
        case retryOnFreshConnection
        case fail(Failure)
    }

    /// Why a read or write failed.
    enum IOFailure: Sendable, Equatable {
        case timeout
        case cancelled
        /// The stream ended before the response did (or its end was malformed).
        case closed
        /// The TLS layer or socket failed; `alert` when a TLS alert explains it (the alert, not a broken pipe, is the answer).
        case broken(alert: Bool)
    }

    enum Event: Sendable {
        case start(reusedConnection: Bool)
        case headWritten
        case bodyWritten
        case writeFailed(IOFailure)
        /// Bytes arrived (before they are parsed).
        case bytesReceived
        case informational(status: Int)
        case head(HTTPResponseHead)
        case body
        /// The parser saw the end; `readsUntilClose` when the body was framed by the end of stream.
        case end(readsUntilClose: Bool)
        case readFailed(IOFailure)
    }

    let method: String
    let hasBody: Bool
    let expectsContinue: Bool

    private(set) var state: State = .idle
    private(set) var reusedConnection = false
    private(set) var bodySent = false
    private(set) var retried = false
    private(set) var receivedAnyByte = false
    private(set) var earlyWriteFailure = false
    private(set) var head: HTTPResponseHead?
    private(set) var informational: [Int] = []

    /// - Parameters:
    ///   - hasBody: The request carries a non-empty body.
    ///   - expectsContinue: The head asks for `100-continue` (held back bodies only: an empty body
    ///     has nothing to wait for).
    init(method: String, hasBody: Bool, expectsContinue: Bool) {
        self.method = HTTPRequest.canonicalMethod(method)
        self.hasBody = hasBody
        self.expectsContinue = expectsContinue && hasBody
    }

    /// RFC 9110 §9.2.2, for an uppercased method.
    static func isIdempotent(_ method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE": true
        default: false
        }
    }

    mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.idle, .start(let reused)):
            reusedConnection = reused
            receivedAnyByte = false
            earlyWriteFailure = false
            bodySent = !expectsContinue
            head = nil
            informational = []
            state = .sendingHead
            return .writeHead(includingBody: !expectsContinue)

        case (.sendingHead, .headWritten):
            if expectsContinue {
                state = .waitingForContinue
                return .read(.untilContinue)
            }
            state = .awaitingResponse
            return .read(.response)

        case (.sendingBody, .bodyWritten):
            state = .awaitingResponse
            return .read(.response)

        case (.sendingHead, .writeFailed(let failure)), (.sendingBody, .writeFailed(let failure)):
            guard case .broken = failure else { return fail(.asReported) }
            // The server may have answered early (413, 403) and closed: read what it sent. A body
            // held back for 100-continue is not sent after that.
            earlyWriteFailure = true
            state = .awaitingResponse
            return .read(.response)

        case (_, .bytesReceived) where state == .waitingForContinue || state == .awaitingResponse || state == .receiving:
            receivedAnyByte = true
            return .read(state == .waitingForContinue ? .untilContinue : .response)

        case (.waitingForContinue, .informational(let status)), (.awaitingResponse, .informational(let status)):
            informational.append(status)
            if status == 100 && state == .waitingForContinue {
                return sendBody()
            }
            return .read(state == .waitingForContinue ? .untilContinue : .response)

        case (.waitingForContinue, .readFailed(.timeout)):
            // No 100 Continue in time: send the body anyway (RFC 9110 §10.1.1).
            return sendBody()

        case (.waitingForContinue, .head(let final)), (.awaitingResponse, .head(let final)):
            // A final status instead of 100 (401, 413 …): the body stays unsent, as curl does
            // ("stop sending data before everything sent"), and the continue timeout no longer
            // applies: from here on the bytes are the response's.
            head = final
            state = .receiving
            return .read(.response)

        case (.receiving, .body):
            return .deliverBody

        case (.receiving, .end(let readsUntilClose)):
            state = .finished
            return .finish(reuseConnection: reusable(readsUntilClose: readsUntilClose))

        case (_, .readFailed(let failure)) where state == .waitingForContinue || state == .awaitingResponse || state == .receiving:
            return readFailed(failure)

        default:
            preconditionFailure("HTTP1ExchangeStateMachine: \(event) is not valid in state \(state)")
        }
    }

    private mutating func sendBody() -> Action {
        bodySent = true
        state = .sendingBody
        return .writeBody
    }

    private mutating func fail(_ failure: Failure) -> Action {
        state = .failed
        return .fail(failure)
    }

    /// Retry-once, as curl ("Connection died, retrying a fresh connect") and async-http-client do:
    /// only a kept-alive connection that failed before any byte of an answer is stale, and only
    /// once, on a fresh connection. Timeouts and cancellation are never retried (the wait was
    /// spent; a silent server is not a closed one). A request the server may have acted on is
    /// retried only when repeating it is safe: an idempotent method, or a body never sent
    /// (held back for 100-continue), without which the server cannot have acted.
    private mutating func readFailed(_ failure: IOFailure) -> Action {
        if failure == .timeout || failure == .cancelled { return fail(.asReported) }
        if reusedConnection && !receivedAnyByte {
            if !retried && (Self.isIdempotent(method) || !bodySent) {
                retried = true
                state = .idle
                return .retryOnFreshConnection
            }
            return fail(.staleConnection)
        }
        // An alert explains a refusal better than the broken pipe of an earlier write.
        guard case .broken(alert: false) = failure else { return fail(.asReported) }
        return fail(earlyWriteFailure ? .earlierWriteFailure : .asReported)
    }

    /// Keep the connection only when both ends are done with it: the whole request was sent (a body
    /// held back would be read by the server as the next request), the response was framed by
    /// length or chunks (not by the close), HTTP/1.1 without `Connection: close`, not an upgrade.
    private func reusable(readsUntilClose: Bool) -> Bool {
        guard let head, bodySent, !earlyWriteFailure, !readsUntilClose, head.version == "HTTP/1.1", head.status != 101 else { return false }
        return !head.headers.contains("connection", listing: "close")
    }

    /// True when a `Connection` value's comma-separated list holds `close` (any ASCII case, with
    /// optional white space around it).
    static func listNamesClose(_ value: String) -> Bool { HTTPHeaders.list(value, holds: "close") }
}
