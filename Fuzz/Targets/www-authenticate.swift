// WWW-Authenticate challenges (RFC 9110 §11) and the Digest answer built from them (RFC 7616).
import Foundation
@testable import MTLSHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        // Header values as the response parser delivers them: never CR, LF or NUL.
        let values = input.fields().prefix(8).map { FuzzedData.text($0.filter { $0 != 0x0D && $0 != 0x0A }) }
        let challenges = AuthChallenge.parse(Array(values))
        for challenge in challenges.prefix(16) {
            _ = challenge.description
            _ = challenge.realm
            _ = AuthScheme(challenge: challenge)
            _ = DigestAuthenticator.isStale(challenge)
            if var digest = try? DigestAuthenticator(challenge: challenge, host: "fuzz") {
                let answer = digest.authorization(credentials: Credentials(user: "alice", password: "secret"), method: "GET", uri: "/x", body: [1, 2, 3], clientNonce: "0a4f113b")
                check(!answer.contains("\r") && !answer.contains("\n"), "a Digest answer with CR/LF: \(answer)")
                digest.renew(nonce: challenge["nonce"] ?? "n")
            }
        }
        _ = DigestAuthenticator.preferred(challenges)
    }
}
