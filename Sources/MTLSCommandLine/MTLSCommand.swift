#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// The `mtls` command line: one entry point that tests call in-process.
public enum MTLSCommand {
    /// The version printed by `mtls --version`.
    public static let version = "0.1.0"

    /// The `--version` line: the version, the git commit the binary was built from (`unknown` when
    /// the build had no git checkout) and the OpenSSL it runs on (the library loaded, not the headers).
    public static func versionText(commit: String?) -> String {
        "mtls \(version) (commit \(commit ?? "unknown"), \(OpenSSLVersion.text))"
    }

    /// Runs the command line against the process's standard streams.
    ///
    /// - Parameter commit: The git commit of the build, for `--version` (the `mtls` executable
    ///   passes the one its build plugin recorded).
    public static func run(arguments: [String], commit: String? = nil) -> Int32 {
        run(arguments: arguments, console: .standard(), commit: commit)
    }

    /// Runs the command line.
    ///
    /// - Parameters:
    ///   - arguments: The arguments without the executable name.
    ///   - console: Where output goes.
    ///   - commit: The git commit of the build, for `--version`.
    /// - Returns: The exit code of the contract (0 yes, 1 no, 2 usage, 3 bad input, 4 network/TLS).
    public static func run(arguments: [String], console: Console, commit: String? = nil) -> Int32 {
        if arguments == ["--version"] || arguments == ["-V"] {
            console.out(versionText(commit: commit))
            return ExitCode.success
        }
        let wantsJSON = arguments.prefix { $0 != "--" }.contains("--json")
        switch ArgumentParser.resolve(arguments, root: rootSpec) {
        case .help(let text):
            console.out(text)
            return ExitCode.success
        case .failure(let text):
            console.err(text)
            if wantsJSON {
                let first = text.split(separator: "\n").first.map(String.init) ?? text
                let message = first.hasPrefix("Error: ") ? String(first.dropFirst(7)) : first
                console.out(JSON.error(code: ExitCode.usage, message: message).serialized())
            }
            return ExitCode.usage
        case .run(let path, _, let parsed):
            guard let name = path.dropFirst().first, let command = commands.first(where: { $0.subcommand.name == name }) else {
                console.out(ArgumentParser.helpText(for: rootSpec, commandPath: ["mtls"]))
                return ExitCode.success
            }
            do throws(CommandFailure) {
                return try command.run(parsed, console)
            } catch {
                console.err("Error: \(error.message)")
                if let hint = error.hint { console.err("  \(hint)") }
                if parsed.declares(.json), parsed.flag(.json) {
                    console.out(JSON.error(code: error.exitCode, message: error.message).serialized())
                }
                return error.exitCode
            }
        }
    }

    /// A subcommand as the root lists it (its specification made on first use: a run makes only
    /// its own) and what runs it. Each name is its specification's name (`ArgumentParserTests`
    /// checks).
    struct Command: Sendable {
        var subcommand: CommandSpec.Subcommand
        var run: @Sendable (ParsedArguments, Console) throws(CommandFailure) -> Int32

        init(_ name: String, spec: @escaping @Sendable () -> CommandSpec, run: @escaping @Sendable (ParsedArguments, Console) throws(CommandFailure) -> Int32) {
            subcommand = CommandSpec.Subcommand(name: name, spec: spec)
            self.run = run
        }
    }

    static let commands: [Command] = [
        Command("verify", spec: { VerifyCommand.spec }, run: VerifyCommand.run),
        Command("pin", spec: { PinCommand.spec }, run: PinCommand.run),
        Command("probe", spec: { ProbeCommand.spec }, run: ProbeCommand.run),
        Command("serve", spec: { ServeCommand.spec }, run: ServeCommand.run),
        Command("demo", spec: { DemoCommand.spec }, run: DemoCommand.run),
        Command("inspect", spec: { InspectCommand.spec }, run: InspectCommand.run),
        Command("convert", spec: { ConvertCommand.spec }, run: ConvertCommand.run),
        Command("import", spec: { ImportCommand.spec }, run: ImportCommand.run),
        Command("export", spec: { ExportCommand.spec }, run: ExportCommand.run),
        Command("report", spec: { ReportCommand.spec }, run: ReportCommand.run),
        Command("completion", spec: { CompletionCommand.spec }, run: CompletionCommand.run),
        Command("generate-docs", spec: { GenerateDocsCommand.spec }, run: GenerateDocsCommand.run),
    ]

    static let rootSpec = CommandSpec(
        name: "mtls",
        abstract: "Mutual TLS toolkit: certificates, trust, pins and client-certificate logins.",
        discussion: "Exit codes: 0 yes, 1 no (not trusted, pin mismatch, login refused), 2 usage error, 3 bad input, 4 network or TLS failure.",
        options: [OptionSpec(.version, help: "Show the version, the git commit it was built from and the OpenSSL in use.")],
        subcommands: commands.map(\.subcommand))
}
