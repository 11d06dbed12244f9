// A small, dependency-free command-line parser for `mtls`, modelled on the
// behaviour of apple/swift-argument-parser (which this package cannot use).

/// A problem with the command line, rendered by `ArgumentParser.errorText`.
enum ArgumentError: Error, Equatable, Sendable {
    /// An option that the command does not know, with the closest long name.
    case unknownOption(String, suggestion: String?)
    /// A value-taking option at the end of the input or followed by another option.
    case missingValue(option: String)
    /// A required positional argument (its spec name, e.g. `"CERT"`) was not given.
    case missingArgument(String)
    /// A required option (its preferred name, e.g. `"--to"`) was not given.
    case missingOption(String)
    /// A positional argument beyond those the command accepts.
    case unexpectedArgument(String)
    /// `--flag=value` on a flag.
    case unexpectedValue(option: String, value: String)
    /// A non-repeatable option given twice.
    case duplicateOption(String)
    /// A value rejected by the command's own validation; `option` is a name or key.
    case invalidValue(option: String, value: String, reason: String)
    /// A subcommand name that does not exist, with the closest existing name.
    case unknownSubcommand(String, suggestion: String?)
    /// A command with subcommands was invoked without one.
    case missingSubcommand
}

/// Parses command lines and renders help, usage and error text.
enum ArgumentParser {
    /// Parses `args` (which exclude the command name(s)) against `spec`.
    ///
    /// - Options may be given as `--opt value`, `--opt=value`, `-X value` or
    ///   `-Xvalue`; flags may be combined (`-vk`). `--` ends option parsing and a
    ///   lone `-` is a positional.
    /// - A value-taking option consumes the next token even if it starts with
    ///   `-`, unless that token names a known option (then `missingValue`). An
    ///   option with an implicit value (`--revocation`, alone `hard`) takes the
    ///   next token only if it is one of its choice words.
    /// - If `-h`/`--help` appears before `--`, no error is thrown and the result
    ///   has `wantsHelp` set.
    /// - For a command with subcommands, parsing stops at the first positional,
    ///   which must name a subcommand; it and everything after it are returned
    ///   in `positionals`, and `subcommand` is set.
    static func parse(_ args: [String], spec: CommandSpec) throws(ArgumentError) -> ParsedArguments {
        var parser = ArgumentTokenParser(spec: spec, args: args)
        do {
            return try parser.run()
        } catch {
            if helpRequested(in: args, spec: spec) {
                var partial = parser.result
                partial.wantsHelp = true
                return partial
            }
            throw error
        }
    }

    /// Whether `-h`/`--help` occurs among the tokens that belong to `spec`: up to
    /// `--`, and for a command with subcommands only before its first positional.
    private static func helpRequested(in args: [String], spec: CommandSpec) -> Bool {
        let helpNames = Set(CommandSpec.helpOption.names).intersection(
            spec.effectiveOptions.filter { $0.key == .help }.flatMap(\.names))
        for token in args {
            if token == "--" { return false }
            if helpNames.contains(token) { return true }
            if spec.hasSubcommands, !token.hasPrefix("-") { return false }
        }
        return false
    }

    /// The outcome of resolving a whole command line against a root command.
    enum Invocation: Sendable {
        /// Run `spec` (reached through `commandPath`) with `arguments`.
        case run(commandPath: [String], spec: CommandSpec, arguments: ParsedArguments)
        /// Print this help text to standard output and exit successfully.
        case help(String)
        /// Print this error text to standard error and exit with status 64 (EX_USAGE).
        case failure(String)
    }

    /// Parses a full command line (without the executable name) against `root`,
    /// selecting a subcommand when the root has any, and turns help requests and
    /// errors into ready-to-print text.
    ///
    /// `mtls help [SUBCOMMAND]` is accepted as a synonym of `--help` unless the
    /// root declares a `help` subcommand itself.
    static func resolve(_ args: [String], root: CommandSpec) -> Invocation {
        let rootPath = [root.name]
        let parsed: ParsedArguments
        do {
            parsed = try parse(args, spec: root)
        } catch {
            if case .unknownSubcommand("help", _) = error {
                return helpSubcommand(Array(args.drop(while: { $0 != "help" }).dropFirst()), root: root)
            }
            return .failure(errorText(error, spec: root, commandPath: rootPath))
        }
        if parsed.wantsHelp {
            return .help(helpText(for: root, commandPath: rootPath))
        }
        guard let name = parsed.subcommand, let sub = root.subcommand(named: name) else {
            return .run(commandPath: rootPath, spec: root, arguments: parsed)
        }
        let path = rootPath + [sub.name]
        do {
            let subParsed = try parse(Array(parsed.positionals.dropFirst()), spec: sub)
            if subParsed.wantsHelp {
                return .help(helpText(for: sub, commandPath: path))
            }
            return .run(commandPath: path, spec: sub, arguments: subParsed)
        } catch {
            return .failure(errorText(error, spec: sub, commandPath: path))
        }
    }

    /// Handles `mtls help [SUBCOMMAND]`.
    private static func helpSubcommand(_ rest: [String], root: CommandSpec) -> Invocation {
        let rootPath = [root.name]
        guard let name = rest.first else {
            return .help(helpText(for: root, commandPath: rootPath))
        }
        guard let sub = root.subcommand(named: name) else {
            let error = ArgumentError.unknownSubcommand(
                name, suggestion: suggestion(for: name, among: root.visibleSubcommands.map(\.name)))
            return .failure(errorText(error, spec: root, commandPath: rootPath))
        }
        return .help(helpText(for: sub, commandPath: rootPath + [sub.name]))
    }
}

/// The mutable state of one parse.
private struct ArgumentTokenParser {
    let spec: CommandSpec
    let args: [String]
    /// `spec.effectiveOptions`, worked out once for the whole parse.
    let options: [OptionSpec]
    /// Everything parsed so far; returned as is when help suppresses an error.
    var result = ParsedArguments()
    private var index = 0

    init(spec: CommandSpec, args: [String]) {
        self.spec = spec
        self.args = args
        options = spec.effectiveOptions
        result.declaredKeys = Set(options.map(\.key))
    }

    /// The option spelled exactly `name` (``CommandSpec/option(named:)``).
    private func option(named name: String) -> OptionSpec? {
        options.first { $0.names.contains(name) }
    }

    /// Parses all tokens, then validates the positionals.
    mutating func run() throws(ArgumentError) -> ParsedArguments {
        while index < args.count {
            let token = args[index]
            index += 1
            if token == "--" {
                if spec.hasSubcommands, index < args.count {
                    try selectSubcommand(args[index])
                }
                result.positionals.append(contentsOf: args[index...])
                index = args.count
            } else if token.hasPrefix("--") {
                try parseLong(token)
            } else if token.hasPrefix("-"), token.count > 1 {
                try parseShort(token)
            } else if spec.hasSubcommands {
                try selectSubcommand(token)
                result.positionals.append(token)
                result.positionals.append(contentsOf: args[index...])
                index = args.count
            } else {
                result.positionals.append(token)
            }
        }
        if result.wantsHelp { return result }
        try validatePositionals()
        return result
    }

    /// Checks that `name` is a subcommand and records it.
    private mutating func selectSubcommand(_ name: String) throws(ArgumentError) {
        guard spec.subcommandList.contains(where: { $0.name == name }) else {
            throw .unknownSubcommand(
                name, suggestion: ArgumentParser.suggestion(for: name, among: spec.visibleSubcommands.map(\.name)))
        }
        result.subcommand = name
    }

    /// Parses `--name` or `--name=value`.
    private mutating func parseLong(_ token: String) throws(ArgumentError) {
        let name: String
        var attached: String?
        if let equals = token.firstIndex(of: "=") {
            name = String(token[..<equals])
            attached = String(token[token.index(after: equals)...])
        } else {
            name = token
        }
        guard let option = self.option(named: name) else {
            throw .unknownOption(name, suggestion: suggestOption(for: name))
        }
        if option.isFlag {
            if let attached { throw .unexpectedValue(option: name, value: attached) }
            record(option, value: nil)
            return
        }
        if attached == nil { attached = try takeValue(for: name, option: option) }
        try recordValue(option, name: name, value: attached)
    }

    /// Parses `-X`, `-Xvalue` or a group of flags such as `-vk`.
    private mutating func parseShort(_ token: String) throws(ArgumentError) {
        if let option = self.option(named: token) {
            if option.isFlag {
                record(option, value: nil)
            } else {
                try recordValue(option, name: token, value: try takeValue(for: token, option: option))
            }
            return
        }
        let letters = Array(token.dropFirst())
        guard let first = letters.first, let firstOption = self.option(named: "-\(first)") else {
            throw .unknownOption(token, suggestion: suggestOption(for: token))
        }
        if !firstOption.isFlag {
            // `-XPOST`: the rest of the token is the value.
            try recordValue(firstOption, name: "-\(first)", value: String(letters.dropFirst()))
            return
        }
        var group: [OptionSpec] = []
        for letter in letters {
            guard let option = self.option(named: "-\(letter)"), option.isFlag else {
                throw .unknownOption(token, suggestion: suggestOption(for: token))
            }
            group.append(option)
        }
        for option in group { record(option, value: nil) }
    }

    /// Consumes the token after a value-taking option, refusing known option names. An option
    /// with an implicit value takes the next token only when it is one of its choice words
    /// (case-insensitive), as `--color[=WHEN]` in GNU tools: anything else stays an argument.
    private mutating func takeValue(for name: String, option: OptionSpec) throws(ArgumentError) -> String {
        if let implicit = option.implicitValue {
            guard index < args.count, case .choice(let words)? = option.valueKind, words.contains(where: { $0.lowercased() == args[index].lowercased() }) else {
                return implicit
            }
            defer { index += 1 }
            return args[index]
        }
        guard index < args.count, !isKnownOption(args[index]) else {
            throw .missingValue(option: name)
        }
        defer { index += 1 }
        return args[index]
    }

    /// Whether `token` would be parsed as one of the command's options (or is `--`).
    private func isKnownOption(_ token: String) -> Bool {
        if token == "--" { return true }
        if token.hasPrefix("--") {
            let name = token.split(separator: "=", maxSplits: 1).first.map(String.init) ?? token
            return self.option(named: name) != nil
        }
        guard token.hasPrefix("-"), token.count > 1 else { return false }
        if self.option(named: token) != nil { return true }
        guard let first = token.dropFirst().first else { return false }
        return self.option(named: "-\(first)") != nil
    }

    /// Records a value, enforcing that non-repeatable options appear once.
    private mutating func recordValue(_ option: OptionSpec, name: String, value: String?) throws(ArgumentError) {
        if !option.repeatable, result.count(option.key) > 0 {
            throw .duplicateOption(name)
        }
        record(option, value: value)
    }

    private mutating func record(_ option: OptionSpec, value: String?) {
        result.record(option, value: value)
        if option.key == .help, CommandSpec.helpOption.names.contains(where: option.names.contains) {
            result.wantsHelp = true
        }
    }

    /// The closest visible long option name to an unknown `name`. Single-dash
    /// input is compared as if it had two dashes, so `-host` suggests `--host`;
    /// a single unknown letter gets no suggestion.
    private func suggestOption(for name: String) -> String? {
        let body = name.drop(while: { $0 == "-" })
        guard body.count > 1 else { return nil }
        let candidates = options.filter { !$0.hidden }.flatMap(\.longNames)
        return ArgumentParser.suggestion(for: "--\(body)", among: candidates)
    }

    /// Checks the number of positionals against the argument specifications.
    private func validatePositionals() throws(ArgumentError) {
        if spec.hasSubcommands {
            if result.subcommand == nil { throw .missingSubcommand }
            return
        }
        let arguments = spec.arguments
        let acceptsAny = arguments.last?.variadic ?? false
        if !acceptsAny, result.positionals.count > arguments.count {
            throw .unexpectedArgument(result.positionals[arguments.count])
        }
        for (position, argument) in arguments.enumerated()
        where !argument.optional && position >= result.positionals.count {
            throw .missingArgument(argument.name)
        }
        for option in spec.options where option.required && result.count(option.key) == 0 {
            throw .missingOption(option.preferredName)
        }
    }
}
