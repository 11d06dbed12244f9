// The NTLM type 2 message a server sends (MS-NLMP §2.2.1.2) and the type 3 answer built from it.
import Foundation
import MTLSHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let bytes = input.all
        guard let challenge = try? NTLM.Challenge(bytes: bytes, host: "fuzz") else { return }
        _ = challenge.targetName
        for id in UInt16(0)...UInt16(10) { _ = challenge.avPair(id) }
        _ = try? NTLM.authenticateMessage(
            challenge: challenge, credentials: Credentials(user: "alice", password: "secret", domain: "CORP"), workstation: "WS", clientChallenge: Array(repeating: 7, count: 8),
            timestamp: Array(repeating: 1, count: 8), host: "fuzz")
    }
}
