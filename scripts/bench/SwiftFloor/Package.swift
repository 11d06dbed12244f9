// swift-tools-version:6.0
// The floor of one verification per process for a Swift program: the OpenSSL calls
// `openssl verify -CAfile R -untrusted I -attime T -purpose sslserver -x509_strict -verify_hostname H LEAF`
// makes, from Swift, with nothing else — once as it is (`swift-floor`) and once with
// FoundationEssentials linked and used for one line of output (`swift-floor-foundation`), as every
// mtls module does. scripts/bench/run_all.sh builds both with the release flags of mtls
// (scripts/release-flags.sh) and runs them beside `mtls verify` and `openssl verify`, one process per
// leaf; docs/BENCHMARKS.md ("The floor of a Swift process") reads the figures.
import PackageDescription

let package = Package(
    name: "SwiftFloor",
    targets: [
        .target(name: "CFloorOpenSSL", linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        .target(name: "FloorVerify", dependencies: ["CFloorOpenSSL"]),
        .executableTarget(name: "swift-floor", dependencies: ["FloorVerify"]),
        .executableTarget(name: "swift-floor-foundation", dependencies: ["FloorVerify"]),
    ]
)
