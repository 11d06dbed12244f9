import MTLSTrust
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The network of a revocation check (MTLSTrust's `RevocationFetching`): CRLs and OCSP over
/// plain `http://` as RFC 5280 and RFC 6960 intend, through the same bounded exchange as
/// ``IssuerFetch`` — one request, no redirect followed (a 3xx is reported, not chased), the
/// whole exchange within the per-URL timeout, the answer within `maximumBytes`.
///
/// One instance caches every answer for its lifetime (one run), so that a fleet of leaves under
/// the same CA fetches its CRL once; failures are cached too, so an offline URL costs its timeout
/// once per run, not once per certificate.
public final class RevocationFetch: RevocationFetching, Sendable {
    /// The largest answer accepted (a CRL of a big CA runs to megabytes; default 16 MiB).
    public let maximumBytes: Int
    private let cache = Locked<[RevocationRequest: RevocationResponse]>([:])

    /// Creates a fetcher with an empty cache.
    public init(maximumBytes: Int = 16 * 1024 * 1024) {
        self.maximumBytes = maximumBytes
    }

    public func fetch(_ request: RevocationRequest, timeout: Double) -> RevocationResponse {
        if var cached = cache.withLock({ $0[request] }) {
            cached.cached = true
            cached.seconds = 0
            return cached
        }
        let start = Deadline.now
        var response: RevocationResponse
        do throws(HTTPSError) {
            // The trust evaluation that asks is synchronous: the exchange runs on the engine, driven
            // by this thread until it ends (Engine.blocking).
            let maximumBytes = maximumBytes
            let answer = try Engine.blocking { () async throws(HTTPSError) in
                try await IssuerFetch.exchange(
                    request.url, method: request.method, body: request.body, contentType: request.contentType, timeout: timeout,
                    maximumBytes: maximumBytes, purpose: "a revocation location")
            }
            response = RevocationResponse(status: answer.status, body: answer.body)
        } catch {
            let text = error.phase == .timeout ? "timed out after \(RevocationFetch.seconds(timeout)) s (\(error.message))" : error.message
            response = RevocationResponse(status: nil, failure: text)
        }
        response.seconds = Double(Deadline.now.nanoseconds - start.nanoseconds) / 1e9
        let stored = response
        cache.withLock { $0[request] = stored }
        return response
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(Double(Int(value * 10)) / 10)
    }
}
