import Foundation
import PackagePlugin

/// Turns the certificate files of a target into a generated pin-set Swift file at build time.
///
/// Every `.pem`, `.crt`, `.cer`, `.der` (certificates: one pin per certificate), `.csr` and `.pub`
/// (backup keys) file among the target's sources becomes a pin, through
///
///     mtls pin FILES… --format swift --offline --out <plugin work dir>/PinSet.swift
///
/// so the app holds `PinnedKeys.pins`, `PinnedKeys.spkiSHA256` and friends as constants. Options
/// for the generator (`--host`, `--include-subdomains`, `--expires`, `--level`, `--name`) go in an
/// optional `pinset.args` file in the target, one or more per line, `#` comments allowed.
///
/// The build never touches the network: `--offline` makes `mtls pin` refuse `https://` sources,
/// and the plugin refuses them in `pinset.args` before that. The output has no timestamps or
/// absolute paths, so it changes only when a certificate or the options do.
@main
struct PinSetPlugin: BuildToolPlugin {
    /// The file name extensions read as pin sources.
    static let sourceExtensions: Set<String> = ["pem", "crt", "cer", "der", "csr", "pub"]
    /// Options the plugin sets itself.
    static let reservedOptions: Set<String> = ["--format", "--out", "--force", "--check", "--offline", "--json"]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let files = module.sourceFiles.map(\.url)
        let sources = files.filter { Self.sourceExtensions.contains($0.pathExtension.lowercased()) }
            .sorted { $0.path < $1.path }
        guard !sources.isEmpty else {
            Diagnostics.warning("PinSetPlugin: \(target.name) has no .pem, .crt, .cer, .der, .csr or .pub file to pin; no pin set generated")
            return []
        }
        var options: [String] = []
        var inputs = sources
        if let argumentsFile = files.first(where: { $0.lastPathComponent == "pinset.args" }) {
            inputs.append(argumentsFile)
            options = try Self.options(in: argumentsFile)
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "PinSet.swift")
        let arguments = ["pin"] + sources.map(\.path) + options + ["--format", "swift", "--offline", "--force", "--out", output.path]
        return [
            .buildCommand(
                displayName: "Generating the pin set of \(target.name) from \(sources.map(\.lastPathComponent).joined(separator: ", "))",
                executable: try context.tool(named: "mtls").url,
                arguments: arguments,
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }

    /// Reads `pinset.args`: whitespace-separated options, `#` comments; no network sources.
    static func options(in file: URL) throws -> [String] {
        let text = try String(contentsOf: file, encoding: .utf8)
        var options: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            options += content.split(whereSeparator: \.isWhitespace).map(String.init)
        }
        for option in options {
            if option.contains("://") {
                throw PluginError("\(file.path): '\(option)' needs the network; the pin set is built from the certificate files in the target only")
            }
            if reservedOptions.contains(option) || reservedOptions.contains(where: { option.hasPrefix($0 + "=") }) {
                throw PluginError("\(file.path): \(option) is set by PinSetPlugin itself; leave it out")
            }
        }
        return options
    }
}

struct PluginError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
