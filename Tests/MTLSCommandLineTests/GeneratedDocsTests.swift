import Foundation
import XCTest

@testable import MTLSCommandLine

/// The reference, the man page and the completions are made from the option declarations: the
/// committed files must be exactly what the declarations generate, every `mtls …` line in the
/// README and docs must use options the parser accepts, and the completion scripts must load and
/// complete in real bash, zsh and fish.
final class GeneratedDocsTests: XCTestCase {
    /// The committed generated files and what generates each.
    static let generatedFiles: [(path: String, text: @Sendable () -> String)] = [
        ("docs/CLI.md", { ReferenceDocs.text(.markdown, root: MTLSCommand.rootSpec, version: MTLSCommand.version) }),
        ("docs/mtls.1", { ReferenceDocs.text(.man, root: MTLSCommand.rootSpec, version: MTLSCommand.version) }),
        ("completions/mtls.bash", { CompletionScript.script(for: .bash, root: MTLSCommand.rootSpec) }),
        ("completions/_mtls", { CompletionScript.script(for: .zsh, root: MTLSCommand.rootSpec) }),
        ("completions/mtls.fish", { CompletionScript.script(for: .fish, root: MTLSCommand.rootSpec) }),
    ]

    func testCommittedReferenceManPageAndCompletionsAreWhatTheDeclarationsGenerate() throws {
        for (path, generate) in Self.generatedFiles {
            let url = Fixtures.packageRoot.appendingPathComponent(path)
            guard let committed = try? String(contentsOf: url, encoding: .utf8) else {
                XCTFail("\(path) is missing: run scripts/gen-docs.sh and commit it")
                continue
            }
            let generated = generate()
            if committed != generated {
                let committedLines = committed.split(separator: "\n", omittingEmptySubsequences: false)
                let generatedLines = generated.split(separator: "\n", omittingEmptySubsequences: false)
                let first = zip(committedLines, generatedLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(committedLines.count, generatedLines.count)
                let was = first < committedLines.count ? String(committedLines[first]) : "(end of file)"
                let now = first < generatedLines.count ? String(generatedLines[first]) : "(end of file)"
                XCTFail(
                    "\(path) differs from what the option declarations generate, first at line \(first + 1):\n  committed: \(was)\n  generated: \(now)\nrun scripts/gen-docs.sh and commit the result"
                )
            }
        }
    }

    /// Every `mtls SUBCOMMAND …` line in the README and docs (code blocks and inline) and every
    /// spec example names a subcommand and only options that subcommand accepts.
    func testDocumentedCommandLinesUseOnlyAcceptedOptions() throws {
        var lines: [(source: String, line: String)] = []
        let documents = ["README.md", "docs/PINNING.md", "docs/CONFORMANCE.md", "docs/RELIABILITY.md", "CHANGELOG.md"]
        for document in documents {
            guard let text = try? String(contentsOf: Fixtures.packageRoot.appendingPathComponent(document), encoding: .utf8) else { continue }
            for line in text.split(separator: "\n") {
                for piece in Self.commandLines(in: String(line)) { lines.append((document, piece)) }
            }
        }
        for command in MTLSCommand.rootSpec.subcommands {
            lines += command.examples.map { ("the examples of \(command.name)", $0) }
        }
        XCTAssertGreaterThan(lines.count, 30, "the scan found too few command lines to be checking anything")
        var problems: [String] = []
        for (source, line) in lines {
            var tokens = line.split(separator: " ").map(String.init).dropFirst()
            guard let name = tokens.first else { continue }
            tokens = tokens.dropFirst()
            guard let spec = MTLSCommand.rootSpec.subcommand(named: name) else {
                if name.allSatisfy({ $0.isLetter || $0 == "-" }) && !name.hasPrefix("-") {
                    problems.append("\(source): `\(line)`: no subcommand \(name)")
                }
                continue
            }
            for token in tokens where token.hasPrefix("-") && token.count > 1 && token != "--" {
                let optionName = token.split(separator: "=", maxSplits: 1).first.map(String.init) ?? token
                if spec.option(named: optionName) == nil && !Self.isShortGroup(optionName, of: spec) {
                    problems.append("\(source): `\(line)`: mtls \(name) does not accept \(optionName)")
                }
            }
        }
        XCTAssertEqual(problems, [], "documented options the parser refuses (fix the text or the declaration)")
    }

    /// Options a command's own text (overview, discussion, option help) refers to exist on it.
    func testHelpTextRefersOnlyToOptionsOfItsCommand() throws {
        XCTAssertEqual(Self.optionNames(in: "With --anchors, only (add --system-roots; `--json`) a--b -- x"), ["--anchors", "--system-roots", "--json"])
        var problems: [String] = []
        for command in MTLSCommand.rootSpec.subcommands {
            let texts = [command.abstract, command.discussion ?? ""] + command.options.map(\.help) + command.arguments.map(\.help)
            for text in texts {
                for name in Self.optionNames(in: text) where command.option(named: name) == nil {
                    problems.append("mtls \(command.name): its help mentions \(name), which it does not accept")
                }
            }
        }
        XCTAssertEqual(problems, [])
    }

    /// `--name` words in free text.
    static func optionNames(in text: String) -> [String] {
        var names: [String] = []
        var rest = Substring(text)
        while let range = rest.range(of: "--") {
            let tail = rest[range.upperBound...]
            let word = tail.prefix { $0.isLetter || $0.isNumber || $0 == "-" }
            let before: Character = range.lowerBound == text.startIndex ? " " : text[text.index(before: range.lowerBound)]
            if let first = word.first, first.isLetter, before == " " || before == "(" || before == "`" || before == "/" {
                names.append("--" + word)
            }
            rest = tail.dropFirst(word.count)
        }
        return names
    }

    /// `mtls …` command lines in one line of Markdown: a whole code line, or inline code spans.
    static func commandLines(in line: String) -> [String] {
        var pieces: [String] = []
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("mtls ") || trimmed.hasPrefix("$ mtls ") {
            pieces.append(trimmed.hasPrefix("$ ") ? String(trimmed.dropFirst(2)) : trimmed)
        } else {
            let spans = line.split(separator: "`", omittingEmptySubsequences: false)
            for (index, span) in spans.enumerated() where index % 2 == 1 && span.hasPrefix("mtls ") {
                pieces.append(String(span))
            }
        }
        // A shell comment, a pipe or a redirection ends the mtls part.
        return pieces.map { piece in
            var kept: [Substring] = []
            for token in piece.split(separator: " ") {
                if token.hasPrefix("#") || token == "|" || token == "&&" || token == ">" || token == "2>&1" || token.hasPrefix(">") { break }
                kept.append(token)
            }
            return kept.joined(separator: " ")
        }
    }

    /// `-vk`: a group of single-letter flags the command declares.
    private static func isShortGroup(_ token: String, of spec: CommandSpec) -> Bool {
        guard !token.hasPrefix("--"), token.count > 2 else { return false }
        return token.dropFirst().allSatisfy { spec.option(named: "-\($0)") != nil }
    }

    func testRequiredOptionsAreRequiredInUsageAndByTheParser() throws {
        let convert = try XCTUnwrap(MTLSCommand.rootSpec.subcommand(named: "convert"))
        XCTAssertEqual(
            ArgumentParser.usageLine(for: convert, commandPath: ["mtls", "convert"]), "mtls convert <IN> --to <FORMAT> [--out <FILE>] [--password <SPEC>] [--include-key] [--force]"
        )
        let export = try XCTUnwrap(MTLSCommand.rootSpec.subcommand(named: "export"))
        XCTAssertEqual(
            ArgumentParser.usageLine(for: export, commandPath: ["mtls", "export"]), "mtls export --cert <FILE> --out <FILE> [<options>]")
        let result = mtls(["convert", Fixtures.path("client-alice.der")])
        XCTAssertEqual(result.exitCode, ExitCode.usage, "\(result)")
        XCTAssertContains(result.stderr, "Missing expected argument '--to <FORMAT>'")
        XCTAssertTrue(ArgumentParser.helpText(for: convert, commandPath: ["mtls", "convert"]).contains("pem or der. (required)"))
    }

    func testDefaultsAndKindsReachHelpAndReference() throws {
        let serve = try XCTUnwrap(MTLSCommand.rootSpec.subcommand(named: "serve"))
        XCTAssertTrue(ArgumentParser.helpText(for: serve, commandPath: ["mtls", "serve"]).contains("(default: 8443)"))
        let reference = ReferenceDocs.text(.markdown, root: MTLSCommand.rootSpec, version: MTLSCommand.version)
        XCTAssertTrue(reference.contains("| `--to <FORMAT>` | pem \\| der | required |"), "the reference shows --to's choices and that it is required")
        XCTAssertFalse(reference.contains("## mtls generate-docs"), "hidden commands stay out of the reference")
        let man = ReferenceDocs.text(.man, root: MTLSCommand.rootSpec, version: MTLSCommand.version)
        XCTAssertTrue(man.contains("\\fB\\-\\-anchors\\fR \\fIFILE\\fR"))
    }

    // MARK: The completion scripts in real shells

    /// Terminal output without escape sequences (ESC … final letter) and carriage returns.
    static func withoutTerminalCodes(_ text: String) -> String {
        var result = ""
        var inEscape = false
        for scalar in text.unicodeScalars {
            if inEscape {
                if scalar.properties.isAlphabetic { inEscape = false }
            } else if scalar == "\u{1B}" {
                inEscape = true
            } else if scalar != "\r" && scalar != "\u{08}" {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private func shell(_ name: String) throws -> String {
        for directory in ["/usr/bin", "/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        throw XCTSkip("\(name) is not installed (scripts/install-deps.sh installs it)")
    }

    private func scriptFile(_ shell: CompletionShell) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-completion-\(getpid())-\(shell.rawValue)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        let name = shell == .zsh ? "_mtls" : "mtls.\(shell.rawValue)"
        let path = directory.appendingPathComponent(name).path
        try CompletionScript.script(for: shell, root: MTLSCommand.rootSpec).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// What bash completes for the words (the last one being completed).
    private func bashCompletions(_ script: String, _ words: [String]) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = """
            source '\(script)' || exit 9
            complete -p mtls || exit 8
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            _mtls mtls "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try runProcess(try shell("bash"), ["-c", program])
        XCTAssertEqual(result.status, 0, "bash could not load or run the completion: \(result)")
        XCTAssertEqual(result.stderr, "", "bash printed errors")
        return result.stdoutText.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("complete ") }
    }

    func testBashCompletesSubcommandsOptionsAndValues() throws {
        let script = try scriptFile(.bash)
        XCTAssertEqual(try bashCompletions(script, ["mtls", "ver"]), ["verify"])
        XCTAssertEqual(try bashCompletions(script, ["mtls", "verify", "--anch"]), ["--anchors"])
        XCTAssertEqual(try bashCompletions(script, ["mtls", "convert", "x.pem", "--to", ""]), ["pem", "der"])
        XCTAssertEqual(try bashCompletions(script, ["mtls", "completion", "f"]), ["fish"])
        // A file-valued option completes file names.
        let directory = (script as NSString).deletingLastPathComponent
        XCTAssertEqual(try bashCompletions(script, ["mtls", "verify", "--anchors", directory + "/mtls.b"]), [directory + "/mtls.bash"])
    }

    func testFishCompletesSubcommandsOptionsAndValues() throws {
        let fish = try shell("fish")
        let script = try scriptFile(.fish)
        func complete(_ line: String) throws -> [String] {
            let result = try runProcess(fish, ["--no-config", "-c", "source '\(script)'; or exit 9; complete -C '\(line)'"])
            XCTAssertEqual(result.status, 0, "fish could not load the completion: \(result)")
            XCTAssertEqual(result.stderr, "", "fish printed errors")
            return result.stdoutText.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        XCTAssertEqual(try complete("mtls ver"), ["verify"])
        XCTAssertEqual(try complete("mtls verify --anch"), ["--anchors"])
        XCTAssertEqual(Set(try complete("mtls convert x.pem --to ")), ["pem", "der"])
        XCTAssertTrue(try complete("mtls probe -").contains("-L"))
    }

    func testZshLoadsTheCompletionAndCompletesSubcommandsAndOptions() throws {
        let zsh = try shell("zsh")
        let script = try scriptFile(.zsh)
        let directory = (script as NSString).deletingLastPathComponent
        // zpty runs an interactive zsh whose completion is driven like a user's: the listing of
        // `mtls ver<TAB>` and `mtls verify --anch<TAB>` must show the completed words.
        let program = """
            zmodload zsh/zpty || exit 7
            zpty z zsh -f -i
            # ZLE drops typeahead that arrives before its prompt: each key sequence gets a moment.
            send() { zpty -n -w z "$1"; sleep 0.5; }
            send $'PS1="> "; fpath=(\(directory) $fpath); autoload -Uz compinit && compinit -u -D\\n'
            send $'print LOADED:$_comps[mtls]\\n'
            send $'mtls ver\\t'
            send $'\\C-a\\C-k\\n'
            send $'mtls verify --anch\\t'
            send $'\\C-a\\C-k\\n'
            send $'mtls convert in.pem --to \\t'
            send $'\\C-a\\C-k\\n'
            send $'print DONE\\n'
            zpty -r z out "*"$'\\n'"DONE*"
            zpty -d z
            print -r -- $out
            """
        let result = try runProcess("/usr/bin/timeout", ["120", zsh, "-f", "-c", program])
        let output = Self.withoutTerminalCodes(result.stdoutText)
        XCTAssertTrue(output.contains("LOADED:_mtls"), "compinit did not register _mtls for mtls: \(result)")
        XCTAssertTrue(output.contains("mtls verify "), "zsh did not complete 'mtls ver' to verify: \(output)")
        XCTAssertTrue(output.contains("mtls verify --anchors="), "zsh did not complete 'mtls verify --anch' to --anchors: \(output)")
        XCTAssertTrue(output.contains("der  pem"), "zsh did not list pem and der for --to: \(output)")
        XCTAssertFalse(output.contains("_arguments:") || output.contains("command not found"), "zsh reported errors: \(output)")
    }
}
