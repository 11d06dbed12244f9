// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "mtls",
    products: [
        .library(name: "MTLSTrust", targets: ["MTLSTrust"]),
        .library(name: "MTLSHTTP", targets: ["MTLSHTTP"]),
        .executable(name: "mtls", targets: ["mtls"]),
        .plugin(name: "PinSetPlugin", targets: ["PinSetPlugin"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // libxml2's HTML parser, loaded with dlopen on first use (see Sources/CLibXML2/include).
        .target(name: "CLibXML2"),
        // MIT krb5's GSSAPI for Negotiate (Kerberos) logins, loaded with dlopen on first use (see Sources/CGSSAPI/include).
        .target(name: "CGSSAPI"),
        .target(name: "COpenSSLShims", dependencies: ["COpenSSL"]),
        .target(name: "MTLSTrust", dependencies: ["COpenSSL", "COpenSSLShims"]),
        .target(name: "MTLSHTTP", dependencies: ["MTLSTrust", "COpenSSL", "COpenSSLShims", "CZlib", "CLibXML2", "CGSSAPI"]),
        // The IIS-like test server of `mtls serve`, `mtls demo` and the tests: not part of the client library.
        .target(name: "MTLSTestServer", dependencies: ["MTLSTrust", "MTLSHTTP", "COpenSSL"]),
        .target(name: "MTLSCommandLine", dependencies: ["MTLSTrust", "MTLSHTTP", "MTLSTestServer"]),
        // Build-tool plugin: the git commit of the build, for `mtls --version`.
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),
        .target(name: "CBuildInfo"),
        .executableTarget(name: "mtls", dependencies: ["MTLSCommandLine", "MTLSTrust", "CBuildInfo"], plugins: ["BuildInfoPlugin"]),
        // Build-tool plugin: certificate files in a target → a generated pin-set Swift file (`mtls pin --format swift --offline`).
        // Its example (and a consumer of the library) is the separate package in Examples/.
        .plugin(name: "PinSetPlugin", capability: .buildTool(), dependencies: ["mtls"]),
        // In-process benchmarks and the DER-walk differential fuzzer of scripts/bench/run_all.sh.
        .executableTarget(name: "mtls-bench", dependencies: ["MTLSTrust", "MTLSHTTP", "MTLSTestServer"], path: "scripts/bench/MTLSBench"),
        // The test processes wipe OpenSSL's frees like `mtls` does; the one load-time constructor
        // left is here, because which test first touches OpenSSL is not known.
        .target(name: "CTestWipingAllocator", dependencies: ["COpenSSLShims"], path: "Tests/CTestWipingAllocator"),
        .target(
            name: "MTLSTestSupport", dependencies: ["MTLSTrust", "MTLSHTTP", "COpenSSL", "COpenSSLShims", "CZlib"], path: "Tests/MTLSTestSupport"),
        .testTarget(name: "MTLSTrustTests", dependencies: ["MTLSTrust", "CTestWipingAllocator"]),
        .testTarget(name: "MTLSHTTPTests", dependencies: ["MTLSHTTP", "MTLSTrust", "MTLSTestServer", "MTLSTestSupport", "CTestWipingAllocator"]),
        .testTarget(
            name: "MTLSCommandLineTests", dependencies: ["MTLSCommandLine", "MTLSTrust", "MTLSHTTP", "MTLSTestServer", "MTLSTestSupport", "CTestWipingAllocator"]),
    ],
    swiftLanguageModes: [.v6]
)
