#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// Every output of `mtls pin --format`, with the facts the rules need about its target.
enum PinFormat: String, CaseIterable, Sendable {
    /// `sha256/BASE64  # subject [level]`, one a line (the default).
    case spki
    /// `cert-sha256/BASE64`: SHA-256 of the whole DER certificate (AFNetworking/Alamofire certificate mode).
    case cert
    /// One JSON object: hosts, expiry and the pins with subject, level and notAfter.
    case json
    /// `sha256//A;sha256//B` for `curl --pinnedpubkey` (leaf only).
    case curl
    /// The `Public-Key-Pins` header (RFC 7469).
    case hpkp
    /// TrustKit (iOS/macOS) configuration as a Swift dictionary.
    case trustkit
    /// TrustKit configuration as an Objective-C dictionary literal.
    case trustkitObjC = "trustkit-objc"
    /// TrustKit configuration as the Info.plist `TSKConfiguration` dictionary.
    case trustkitPlist = "trustkit-plist"
    /// Android network security config (`res/xml/network_security_config.xml`) with a `<pin-set>`.
    case android
    /// The same XML with TrustKit-Android's `<trustkit-config>`.
    case androidTrustKit = "android-trustkit"
    /// OkHttp `CertificatePinner.Builder` in Kotlin.
    case okhttp
    /// OkHttp `CertificatePinner.Builder` in Java.
    case okhttpJava = "okhttp-java"
    /// App Transport Security `NSPinnedDomains` (Info.plist), CA and leaf identities apart.
    case ats
    /// A Swift source file with the pin set as a constant (no dependencies).
    case swift
    /// DER `.cer` files for an app bundle (Alamofire/AFNetworking), written into `--out DIR`.
    case der

    /// The names accepted by `--format`, for help and errors.
    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// Accepts the names above and a few spellings people type (`trustkit-swift`, `okhttp-kotlin`, `nsc`).
    init?(name: String) {
        let aliases: [String: PinFormat] = [
            "trustkit-swift": .trustkit, "trustkit-objective-c": .trustkitObjC, "trustkit-infoplist": .trustkitPlist,
            "trustkit-info-plist": .trustkitPlist, "okhttp-kotlin": .okhttp, "kotlin": .okhttp, "java": .okhttpJava,
            "android-nsc": .android, "nsc": .android, "trustkit-android": .androidTrustKit, "info-plist": .ats,
            "nspinneddomains": .ats, "cer": .der, "sha256": .spki, "pin-sha256": .hpkp,
        ]
        let lower = name.lowercased()
        guard let format = PinFormat(rawValue: lower) ?? aliases[lower] else { return nil }
        self = format
    }

    /// Formats that name the hosts they pin, and so need `--host` (or a live source's host).
    var needsHost: Bool {
        switch self {
        case .trustkit, .trustkitObjC, .trustkitPlist, .android, .androidTrustKit, .okhttp, .okhttpJava, .ats: true
        default: false
        }
    }

    /// Formats that can say when the pins stop being enforced.
    var carriesExpiry: Bool {
        switch self {
        case .spki, .json, .swift, .trustkit, .trustkitObjC, .trustkitPlist, .android, .androidTrustKit, .hpkp: true
        default: false
        }
    }

    /// TrustKit (iOS and Android) refuses to start with fewer than two pins when it enforces them.
    var isTrustKit: Bool { self == .trustkit || self == .trustkitObjC || self == .trustkitPlist || self == .androidTrustKit }

    /// Pins of whole certificates rather than keys.
    var pinsCertificates: Bool { self == .cert || self == .der }

    /// The platform, for messages.
    var platform: String {
        switch self {
        case .spki: "SPKI pin list"
        case .cert: "certificate pin list"
        case .json: "JSON pin set"
        case .curl: "curl --pinnedpubkey"
        case .hpkp: "HPKP header"
        case .trustkit: "TrustKit (Swift)"
        case .trustkitObjC: "TrustKit (Objective-C)"
        case .trustkitPlist: "TrustKit (Info.plist)"
        case .android: "Android network security config"
        case .androidTrustKit: "TrustKit-Android"
        case .okhttp: "OkHttp CertificatePinner (Kotlin)"
        case .okhttpJava: "OkHttp CertificatePinner (Java)"
        case .ats: "App Transport Security NSPinnedDomains"
        case .swift: "Swift pin-set source"
        case .der: "DER certificates for an app bundle"
        }
    }
}

/// What the writers need besides the pins.
struct PinOutputOptions: Sendable {
    /// The hosts the pins apply to.
    var hosts: [PinHost] = []
    /// The last day the pins are enforced (TrustKit `kTSKExpirationDate`, Android `expiration`).
    var expires: Date?
    /// TrustKit `enforcePinning`; false is report-only (also HPKP `-Report-Only`).
    var enforce: Bool = true
    /// TrustKit report URIs.
    var reportURIs: [String] = []
    /// The type, class or variable name of code outputs.
    var name: String?
    /// The OkHttp major version the code is for (3 or 4; 4 covers 4.x and 5.x).
    var okhttpVersion: Int = 4
    /// The command that regenerates the output, for the header comment.
    var commandLine: String = "mtls pin"
    /// "Now", for HPKP max-age.
    var now: Date = Date()

    /// `YYYY-MM-DD` of the expiry.
    var expiresText: String? { expires.map(PinDates.string) }
}

/// What a writer produced.
enum PinOutput {
    /// Text for stdout or `--out FILE`.
    case text(String)
    /// Files for `--out DIR` (name, bytes).
    case files([(name: String, bytes: [UInt8])])
}

/// Turns pins into each platform's format.
enum PinWriter {
    /// Writes `entries` in `format`. Rules (pin counts, scopes) are checked before, by ``PinRules``.
    static func write(_ entries: [PinEntry], format: PinFormat, options: PinOutputOptions) -> PinOutput {
        switch format {
        case .spki, .cert: return .text(TextPinFormats.lines(entries, options: options))
        case .json: return .text(TextPinFormats.json(entries, options: options))
        case .curl: return .text(TextPinFormats.curl(entries))
        case .hpkp: return .text(TextPinFormats.hpkp(entries, options: options))
        case .trustkit: return .text(TrustKitFormat.swift(entries, options: options))
        case .trustkitObjC: return .text(TrustKitFormat.objectiveC(entries, options: options))
        case .trustkitPlist: return .text(TrustKitFormat.plist(entries, options: options))
        case .android: return .text(AndroidFormat.xml(entries, options: options, trustKit: false))
        case .androidTrustKit: return .text(AndroidFormat.xml(entries, options: options, trustKit: true))
        case .okhttp: return .text(OkHttpFormat.kotlin(entries, options: options))
        case .okhttpJava: return .text(OkHttpFormat.java(entries, options: options))
        case .ats: return .text(ATSFormat.plist(entries, options: options))
        case .swift: return .text(SwiftSourceFormat.source(entries, options: options))
        case .der: return .files(DERFormat.files(entries))
        }
    }

    /// A label safe inside any comment syntax: one line, no comment terminator, no character a
    /// terminal or an editor would act on (a bidirectional override in a comment makes the code read
    /// differently from how it compiles, CVE-2021-42574), and no `\u` that Java would decode before
    /// it reads the comment.
    static func commentSafe(_ text: String) -> String {
        // The common label (printable ASCII without `\` or `*`) needs nothing: one pass over bytes.
        let isPlain: (UInt8) -> Bool = { $0 >= 0x20 && $0 < 0x7F && $0 != 0x5C && $0 != 0x2A }
        if text.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(isPlain) }) ?? text.utf8.allSatisfy(isPlain) { return text }
        var out = ""
        var backslashes = 0
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                backslashes += 1
                continue
            }
            // Java decodes `\u` where the backslash follows an even run of backslashes, in comments too:
            // doubling a run that precedes `u` leaves none eligible.
            out += String(repeating: "\\", count: scalar == "u" ? 2 * backslashes : backslashes)
            backslashes = 0
            if DisplayText.isUnsafe(scalar) {
                out += scalar == "\n" || scalar == "\r" ? " " : String(cFormat: "<U+%04X>", scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        out += String(repeating: "\\", count: backslashes)
        return out.replacingAll("*/", with: "* /")
    }

    /// "CN=localhost,O=mtls test,C=US [leaf] notAfter 2035-01-01".
    static func describe(_ entry: PinEntry) -> String {
        var text = "\(entry.label) [\(entry.role.rawValue)]"
        if let notAfter = entry.notAfter { text += " notAfter \(PinDates.string(notAfter))" }
        return commentSafe(text)
    }

    /// The string-literal syntaxes of the generated sources.
    enum LiteralSyntax {
        case swift
        case javaKotlin
        case objectiveC
    }

    /// A string literal: `\` and `"` escaped alike in all four languages, and every character
    /// ``DisplayText/isUnsafe(_:)`` names written as that language's escape, so that the source
    /// shows the value and compiles to it exactly. Swift's is ``DisplayText/quoted(_:)`` itself.
    static func quoted(_ text: String, _ syntax: LiteralSyntax = .swift) -> String {
        switch syntax {
        case .swift: DisplayText.quoted(text)
        case .javaKotlin: "\"" + TextEscaping.escape(text, .javaKotlin) + "\""
        case .objectiveC: "\"" + TextEscaping.escape(text, .objectiveC) + "\""
        }
    }

    /// The deduplicated SPKI digests, in order.
    static func uniqueBase64(_ entries: [PinEntry]) -> [String] {
        var seen = Set<String>()
        return entries.compactMap { seen.insert($0.base64).inserted ? $0.base64 : nil }
    }

    /// Entries with duplicate pins removed (the first label wins).
    static func unique(_ entries: [PinEntry]) -> [PinEntry] {
        var seen = Set<Pin>()
        return entries.filter { seen.insert($0.pin).inserted }
    }
}
