// swift-tools-version:6.0
// Packages that use mtls the way an outside project does: by depending on it by path.
// Kept out of the root package so that building `mtls` compiles each module once (a build-tool
// plugin in the root package made SwiftPM build `mtls` a second time, as a host tool).
//
//   swift build --package-path Examples                  builds both examples
//   Examples/.build/debug/MTLSConsumer --help            the library consumer
//   Examples/.build/debug/PinnedApp                      the PinSetPlugin example
//   Examples/.build/debug/MTLSFanOut --help              the async fan-out and cancellation
import PackageDescription

let package = Package(
    name: "mtls-examples",
    dependencies: [.package(name: "mtls", path: "..")],
    targets: [
        // A program written only against the public API of MTLSTrust and MTLSHTTP: trust a
        // self-signed server, log in with a .p12, pin a host. scripts/test.sh runs it against `mtls serve`.
        .executableTarget(
            name: "MTLSConsumer",
            dependencies: [.product(name: "MTLSTrust", package: "mtls"), .product(name: "MTLSHTTP", package: "mtls")],
            path: "Consumer"
        ),
        // A library user's fan-out: concurrent `await client.send` in a task group, and a cancelled
        // send. scripts/examples.sh runs it against `mtls serve`.
        .executableTarget(
            name: "MTLSFanOut",
            dependencies: [.product(name: "MTLSTrust", package: "mtls"), .product(name: "MTLSHTTP", package: "mtls")],
            path: "FanOut"
        ),
        // PinSetPlugin: the certificate files in PinnedApp/pins become a generated pin set at build time.
        .executableTarget(name: "PinnedApp", path: "PinnedApp", plugins: [.plugin(name: "PinSetPlugin", package: "mtls")]),
    ],
    swiftLanguageModes: [.v6]
)
