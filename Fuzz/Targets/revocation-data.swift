// CRLs and OCSP responses as a revocation check meets them: every URL of a fixed chain (a leaf
// naming a CRL distribution point, a delta CRL and an OCSP responder) answers with the input, in
// hard and soft mode, and the input is also read as a CRL; a second chain reads it as an indirect CRL.
import Foundation
import MTLSTrust

/// Answers every request with the fuzz input (the first byte chooses the HTTP status class).
struct InputFetcher: RevocationFetching {
    let bytes: [UInt8]
    func fetch(_ request: RevocationRequest, timeout: Double) -> RevocationResponse {
        RevocationResponse(status: (bytes.first ?? 0) == 0xFF ? 500 : 200, body: bytes)
    }
}

// Made once with the openssl CLI (Fuzz/seeds/revocation-data/ holds a CRL and an OCSP response of
// this CA): the URLs are never contacted.
let fuzzChain: [Certificate] = {
    let pem = """
        -----BEGIN CERTIFICATE-----
        MIIBizCCATGgAwIBAgIUQxsccOberDbI3UJr3OKLSFEe5e4wCgYIKoZIzj0EAwIw
        EjEQMA4GA1UEAwwHRnV6eiBDQTAgFw0yNjEyMDcwMzAwMTdaGA8yMTI2MTExMzAz
        MDAxN1owEjEQMA4GA1UEAwwHRnV6eiBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEH
        A0IABL3pehhDLmOu8YDzfoMgz54etJEl5olFs/gOpbYF86IyQG0xS8qwhGD1bvon
        r3U7BWPrvKX4WWevsH9BjUU9uHijYzBhMB0GA1UdDgQWBBRNyGVjkMhtPvcZvc7H
        TWSULMDiNjAfBgNVHSMEGDAWgBRNyGVjkMhtPvcZvc7HTWSULMDiNjAPBgNVHRMB
        Af8EBTADAQH/MA4GA1UdDwEB/wQEAwIBBjAKBggqhkjOPQQDAgNIADBFAiEA12Da
        at9GxvsxNUMEak5ySwHGob8TSM61Ln8MpwpK0TsCIBAaKIaDclccAReQYHjNr4ST
        Gh+3VH1235jVH9eoAlLU
        -----END CERTIFICATE-----
        """
    let leaf = """
        -----BEGIN CERTIFICATE-----
        MIIB7jCCAZSgAwIBAgICEjQwCgYIKoZIzj0EAwIwEjEQMA4GA1UEAwwHRnV6eiBD
        QTAgFw0yNjEyMDcwMzAwMTdaGA8yMTI2MTExMzAzMDAxN1owFDESMBAGA1UEAwwJ
        ZnV6ei1sZWFmMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE7I2RwR1IKBP7QkTX
        E70t0Qr0lrAEPfiWOVArnIdHWBFLLjC9+sA82zWjd9rtjfYkeYfy/4Vht++PgT/3
        sFhxxqOB1TCB0jAsBgNVHR8EJTAjMCGgH6AdhhtodHRwOi8vMTI3LjAuMC4xOjkv
        YmFzZS5jcmwwLQYDVR0uBCYwJDAioCCgHoYcaHR0cDovLzEyNy4wLjAuMTo5L2Rl
        bHRhLmNybDAzBggrBgEFBQcBAQQnMCUwIwYIKwYBBQUHMAGGF2h0dHA6Ly8xMjcu
        MC4wLjE6OS9vY3NwMB0GA1UdDgQWBBRPmXH/pN/NUcFy0IdzoIwb5pXUKzAfBgNV
        HSMEGDAWgBRNyGVjkMhtPvcZvc7HTWSULMDiNjAKBggqhkjOPQQDAgNIADBFAiEA
        5Qb7Gs5Ohp6Stg90D5I+zwNJjawN8AQA5BgXvjpushICIHpkVaiezMr9z/u9CNMj
        wCt8/j4QhR0kzBs2umQwi7SD
        -----END CERTIFICATE-----
        """
    let issuer = (try? Certificate.fromPEM(Array(pem.utf8))) ?? []
    let subject = (try? Certificate.fromPEM(Array(leaf.utf8))) ?? []
    return subject + issuer
}()

// A second chain whose leaf's distribution point names another authority as cRLIssuer: the input
// is then judged as an indirect CRL (issuingDistributionPoint, cRLIssuer names, the CRL's
// caIssuers fetch answered with the input too, certificateIssuer entries). Made once with the
// openssl CLI; Fuzz/seeds/revocation-data/indirect-crl.der is such a CRL, signed by its issuer.
let fuzzIndirectChain: [Certificate] = {
    let ca = """
        -----BEGIN CERTIFICATE-----
        MIIBiTCCATCgAwIBAgIBATAKBggqhkjOPQQDAjAbMRkwFwYDVQQDDBBGdXp6IElu
        ZGlyZWN0IENBMCAXDTI2MTIwNzA2MzM1MVoYDzIxMjYxMTEzMDYzMzUxWjAbMRkw
        FwYDVQQDDBBGdXp6IEluZGlyZWN0IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcD
        QgAEo+VIaMGF31EUfcurnBkn+TcrBreX3TDV386EH3QKoVI+cydQT3tQpi5tMmC5
        V8pdUfu0tiCa5l4n6L/enGavoKNjMGEwHQYDVR0OBBYEFCL3hTGDuwImvTEnb03Y
        +4guJJVLMB8GA1UdIwQYMBaAFCL3hTGDuwImvTEnb03Y+4guJJVLMA8GA1UdEwEB
        /wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMCA0cAMEQCIE/YjE+f
        fxDSYB97A4YythM0O90eioowdNQJbABCLqF4AiA/6PMnHj0au522LO0SDw5lzCFA
        f2+jrdFG8tEWbJXB0Q==
        -----END CERTIFICATE-----
        """
    let leaf = """
        -----BEGIN CERTIFICATE-----
        MIIBzzCCAXSgAwIBAgICI0UwCgYIKoZIzj0EAwIwGzEZMBcGA1UEAwwQRnV6eiBJ
        bmRpcmVjdCBDQTAgFw0yNjEyMDcwNjMzNTFaGA8yMTI2MTExMzA2MzM1MVowHTEb
        MBkGA1UEAwwSZnV6ei1pbmRpcmVjdC1sZWFmMFkwEwYHKoZIzj0CAQYIKoZIzj0D
        AQcDQgAEHPA9VE5HDwuhPnTLxeW6HOiOnaaKNxtRU5wmxjKmjpJ7J/L72hCWQR5O
        DI7yQiNepg0uqStHBDp0LRj/4dMHc6OBozCBoDAMBgNVHRMBAf8EAjAAMFAGA1Ud
        HwRJMEcwRaAjoCGGH2h0dHA6Ly8xMjcuMC4wLjE6OS9pbmRpcmVjdC5jcmyiHqQc
        MBoxGDAWBgNVBAMMD0Z1enogQ1JMIElzc3VlcjAdBgNVHQ4EFgQUqOvMLLYulEL3
        LUFFbBGlYX6JkygwHwYDVR0jBBgwFoAUIveFMYO7Aia9MSdvTdj7iC4klUswCgYI
        KoZIzj0EAwIDSQAwRgIhAKGi8eJONOsZ62/SIx6+d3oLlE/oqs2mXjY7eietwLUP
        AiEAoST8OwPz6lTwXnOO2SUXMPKxpF5u5amW3sYii4FDI08=
        -----END CERTIFICATE-----
        """
    return ((try? Certificate.fromPEM(Array(leaf.utf8))) ?? []) + ((try? Certificate.fromPEM(Array(ca.utf8))) ?? [])
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let bytes = input.all
        _ = try? CertificateRevocationList.load(bytes)
        guard fuzzChain.count == 2 else { return }
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        for mode in [RevocationMode.hard, .soft] {
            let report = RevocationChecker(mode: mode, fetcher: InputFetcher(bytes: bytes)).check(fuzzChain, at: time)
            let indirect = RevocationChecker(mode: mode, fetcher: InputFetcher(bytes: bytes)).check(fuzzIndirectChain, at: time)
            for entry in indirect.certificates { _ = entry.status.name + entry.attempts.map(\.outcome).joined() }
            for entry in report.certificates {
                _ = entry.status.name
                for attempt in entry.attempts { _ = attempt.outcome.count + attempt.bytes }
            }
        }
    }
}
