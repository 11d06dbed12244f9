// `mtls completion SHELL` and the hidden `mtls generate-docs FORMAT`: what the command
// specifications make besides the parser and `--help`.

enum CompletionCommand {
    static let spec = CommandSpec(
        name: "completion",
        abstract: "Print the shell completion script for bash, zsh or fish.",
        discussion: """
            bash: `source <(mtls completion bash)` in ~/.bashrc, or save it as \
            /usr/share/bash-completion/completions/mtls. zsh: save it as _mtls in a directory on $fpath. \
            fish: save it as ~/.config/fish/completions/mtls.fish. The .deb installs all three.
            """,
        arguments: [ArgumentSpec(name: "SHELL", help: "bash, zsh or fish.", kind: .choice(CompletionShell.allCases.map(\.rawValue)))],
        examples: ["mtls completion bash > ~/.local/share/bash-completion/completions/mtls", "mtls completion fish > ~/.config/fish/completions/mtls.fish"])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        let name = arguments.positionals.first ?? ""
        guard let shell = CompletionShell(rawValue: name) else {
            throw CommandFailure.usage("'\(name)' is not a shell mtls completes: use bash, zsh or fish", command: "completion")
        }
        console.write(CompletionScript.script(for: shell, root: MTLSCommand.rootSpec))
        return ExitCode.success
    }
}

enum GenerateDocsCommand {
    static let spec = CommandSpec(
        name: "generate-docs",
        abstract: "Print the command-line reference (docs/CLI.md) or the man page (docs/mtls.1).",
        arguments: [ArgumentSpec(name: "FORMAT", help: "markdown or man.", kind: .choice(ReferenceFormat.allCases.map(\.rawValue)))],
        hidden: true)

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        let name = arguments.positionals.first ?? ""
        guard let format = ReferenceFormat(rawValue: name) else {
            throw CommandFailure.usage("'\(name)' is not a reference format: use markdown or man", command: "generate-docs")
        }
        console.write(ReferenceDocs.text(format, root: MTLSCommand.rootSpec, version: MTLSCommand.version))
        return ExitCode.success
    }
}
