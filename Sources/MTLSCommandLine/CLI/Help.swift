#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
// Help, usage and error text in the format of apple/swift-argument-parser.

extension ArgumentParser {
    /// The column at which help text starts in the ARGUMENTS/OPTIONS/SUBCOMMANDS lists.
    static let helpColumn = 26
    /// The indentation of list entries.
    static let helpIndent = 2
    /// The width help text is wrapped to.
    static let screenWidth = 80
    /// Above this many visible options, usage lines show `[<options>]` instead.
    static let maximumOptionsInUsage = 6

    /// The full help text for `spec`, reached as `commandPath` (e.g. `["mtls", "verify"]`),
    /// without a trailing newline. Sections without content are omitted.
    static func helpText(for spec: CommandSpec, commandPath: [String]) -> String {
        var sections: [String] = []
        if !spec.abstract.isEmpty {
            sections.append(wrap("OVERVIEW: \(spec.abstract)", indent: 0))
        }
        if let discussion = spec.discussion, !discussion.isEmpty {
            sections.append(wrap(discussion, indent: 0))
        }
        sections.append("USAGE: \(usageLine(for: spec, commandPath: commandPath))")

        let arguments = spec.arguments.map { (label: "<\($0.name)>", help: $0.help) }
        if !arguments.isEmpty {
            sections.append(section("ARGUMENTS:", arguments))
        }
        let options = spec.visibleOptions.map { option in
            (label: optionLabel(option), help: helpLine(option))
        }
        sections.append(section("OPTIONS:", options))
        let subcommands = spec.visibleSubcommands.map { (label: $0.name, help: $0.abstract) }
        if !subcommands.isEmpty {
            sections.append(section("SUBCOMMANDS:", subcommands))
        }
        if !spec.examples.isEmpty {
            let lines = spec.examples.map { String(repeating: " ", count: helpIndent) + $0 }
            sections.append((["EXAMPLES:"] + lines).joined(separator: "\n"))
        }
        return sections.joined(separator: "\n\n")
    }

    /// The usage line without the `USAGE: ` prefix, e.g.
    /// `mtls verify <CERT> ... [--anchors <FILE> ...] [--json]`.
    ///
    /// `spec.usage` replaces it verbatim. A command with subcommands shows
    /// `mtls <subcommand>`. Positionals come first, then the visible options in
    /// brackets, or `[<options>]` when there are more than `maximumOptionsInUsage`. Required
    /// options are always shown, without brackets.
    static func usageLine(for spec: CommandSpec, commandPath: [String]) -> String {
        if let usage = spec.usage { return usage }
        var parts = [commandPath.joined(separator: " ")]
        if spec.hasSubcommands {
            parts.append("<subcommand>")
            return parts.joined(separator: " ")
        }
        for argument in spec.arguments {
            var synopsis = "<\(argument.name)>"
            if argument.variadic { synopsis += " ..." }
            parts.append(argument.optional ? "[\(synopsis)]" : synopsis)
        }
        let options = spec.options.filter { !$0.hidden }
        let listsAll = options.count <= maximumOptionsInUsage
        for option in options where option.required || listsAll {
            parts.append(option.required ? optionSynopsis(option) : "[\(optionSynopsis(option))]")
        }
        if !listsAll { parts.append("[<options>]") }
        return parts.joined(separator: " ")
    }

    /// `--anchors <FILE> ...`: the preferred name, the value and whether it repeats.
    static func optionSynopsis(_ option: OptionSpec) -> String {
        var synopsis = option.preferredName
        synopsis += option.valueSynopsis
        if option.repeatable { synopsis += " ..." }
        return synopsis
    }

    /// The option's help with what the declaration adds: `(required)` and `(default: VALUE)`.
    static func helpLine(_ option: OptionSpec) -> String {
        var help = option.help
        if option.required { help += " (required)" }
        if let value = option.defaultValue { help += " (default: \(value))" }
        help += implicitValueNote(option)
        return help
    }

    /// The error message for `error`, followed by the usage line and a pointer to
    /// `--help`, without a trailing newline:
    ///
    ///     Error: Unknown option '--fo'. Did you mean '--foo'?
    ///     Usage: mtls verify <CERT> ... [<options>]
    ///       See 'mtls verify --help' for more information.
    static func errorText(_ error: ArgumentError, spec: CommandSpec, commandPath: [String]) -> String {
        let command = commandPath.joined(separator: " ")
        return [
            "Error: \(message(for: error, spec: spec))",
            "Usage: \(usageLine(for: spec, commandPath: commandPath))",
            "  See '\(command) --help' for more information.",
        ].joined(separator: "\n")
    }

    /// The one-line description of `error` (without the `Error: ` prefix).
    static func message(for error: ArgumentError, spec: CommandSpec) -> String {
        switch error {
        case let .unknownOption(name, suggestion):
            return "Unknown option '\(name)'." + didYouMean(suggestion)
        case let .missingValue(option):
            return "Missing value for '\(optionWithValue(option, spec: spec))'"
        case let .missingArgument(name):
            return "Missing expected argument '<\(name)>'"
        case let .missingOption(name):
            return "Missing expected argument '\(optionWithValue(name, spec: spec))'"
        case let .unexpectedArgument(value):
            // A stray argument may be a password typed without its option or form: it is shown
            // only when it names a file or looks like an option, which a secret would not.
            if value.hasPrefix("-") || access(value, F_OK) == 0 { return "Unexpected argument '\(value)'" }
            return "Unexpected argument (not shown: it names no file and may be a secret given by mistake)"
        case let .unexpectedValue(option, _):
            // Not repeated: `--flag=VALUE` may carry a secret meant for another option.
            return "The option '\(option)' does not take any value, but a value was specified."
        case let .duplicateOption(option):
            return "Option '\(option)' cannot be repeated"
        case let .invalidValue(option, value, reason):
            return "The value '\(value)' is invalid for '\(optionWithValue(option, spec: spec))': \(reason)"
        case let .unknownSubcommand(name, suggestion):
            return "Unknown subcommand '\(name)'." + didYouMean(suggestion)
        case .missingSubcommand:
            return "Missing subcommand"
        }
    }

    private static func didYouMean(_ suggestion: String?) -> String {
        suggestion.map { " Did you mean '\($0)'?" } ?? ""
    }

    /// ` (alone: hard; only hard or soft is taken as its value, …)` for an option whose value may be
    /// left out; empty for the others.
    static func implicitValueNote(_ option: OptionSpec) -> String {
        guard let value = option.implicitValue else { return "" }
        let words = if case .choice(let words)? = option.valueKind { words.joined(separator: " or ") } else { "" }
        return " (alone: \(value); only \(words.isEmpty ? "a value given with =" : words) is taken as its value, any other next word is an argument)"
    }

    /// `--at <TIME>` for an option given by name or key; the name as given when it
    /// is typed (`-X <METHOD>`), otherwise the option's preferred name.
    private static func optionWithValue(_ option: String, spec: CommandSpec) -> String {
        guard let found = spec.option(matching: option) else { return option }
        let name = found.names.contains(option) ? option : found.preferredName
        return name + found.valueSynopsis
    }

    /// `-X, --method <METHOD>`.
    static func optionLabel(_ option: OptionSpec) -> String {
        let names = option.names.joined(separator: ", ")
        return names + option.valueSynopsis
    }

    /// A titled list whose help column starts at `helpColumn`; a label too long
    /// for the column puts its help on the next line.
    private static func section(_ title: String, _ entries: [(label: String, help: String)]) -> String {
        var lines = [title]
        let indent = String(repeating: " ", count: helpIndent)
        for entry in entries {
            let label = indent + entry.label
            let help = wrap(entry.help, indent: helpColumn)
            if help.isEmpty {
                lines.append(label)
            } else if label.count < helpColumn {
                lines.append(label + help.dropFirst(label.count))
            } else {
                lines.append(label)
                lines.append(help)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Word-wraps `text` to `screenWidth`, every line (the first included)
    /// indented by `indent` spaces. Existing line breaks are kept; a word longer
    /// than the available width stays whole on its own line.
    static func wrap(_ text: String, indent: Int, width: Int = screenWidth) -> String {
        let padding = String(repeating: " ", count: indent)
        var output: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ") {
                if line.isEmpty {
                    line = padding + word
                } else if line.count + 1 + word.count <= width {
                    line += " " + word
                } else {
                    output.append(line)
                    line = padding + word
                }
            }
            output.append(line)
        }
        return output.joined(separator: "\n")
    }
}
