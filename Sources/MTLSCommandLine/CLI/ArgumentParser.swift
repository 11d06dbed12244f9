// A small, dependency-free command-line parser for `mtls`, modelled on the
// behaviour of apple/swift-argument-parser (which this package cannot use).

/// What an option's value or a positional argument is: documented in `--help`, `docs/CLI.md` and
/// the man page, and the source of the shell completions' behaviour.
enum ValueKind: Sendable, Equatable {
    /// Free text; shells complete nothing.
    case text
    /// A whole number.
    case integer
    /// A number, fractions allowed.
    case number
    /// A path to a file; shells complete file names.
    case file
    /// A path to a directory; shells complete directory names.
    case directory
    /// A host name or `host:port`; shells complete known host names.
    case host
    /// A URL.
    case url
    /// A time (RFC 3339, a date or Unix seconds).
    case time
    /// A password spec (`pass:`, `env:`, `file:`, `fd:`, `stdin`).
    case secret
    /// One of these words; shells complete them.
    case choice([String])

    /// What the shells complete for a value of this kind.
    var completion: CompletionKind {
        switch self {
        case .file: .file
        case .directory: .directory
        case .host: .host
        case .choice(let values): .values(values)
        case .text, .integer, .number, .url, .time, .secret: .none
        }
    }

    /// The kind a value name implies when none is declared: `FILE` a file, `DIR` a directory,
    /// `N` an integer, and so on. `key` (the option's key) tells password specs from pin specs.
    static func inferred(valueName: String, key: String) -> ValueKind {
        switch valueName {
        case "DIR": return .directory
        case "N": return .integer
        case "SECONDS": return .number
        case "TIME": return .time
        case "URL", "ORIGIN": return .url
        case "HOST:PORT": return .host
        case "NAME" where key == "host" || key == "servername": return .host
        case "SPEC" where key.contains("password"): return .secret
        default:
            let alternatives = valueName.split(separator: "|")
            if alternatives.count == 1, valueName.hasSuffix("FILE") || valueName == "P12" || valueName.hasPrefix("FILE") {
                return .file
            }
            return .text
        }
    }

    /// A short name of the kind for reference documentation, e.g. `file` or `pem | der`.
    var documentationName: String {
        switch self {
        case .text: "text"
        case .integer: "integer"
        case .number: "number"
        case .file: "file"
        case .directory: "directory"
        case .host: "host"
        case .url: "URL"
        case .time: "time"
        case .secret: "password spec"
        case .choice(let values): values.joined(separator: " | ")
        }
    }
}

/// How a shell completes a value.
enum CompletionKind: Sendable, Equatable {
    /// Nothing to offer.
    case none
    /// File names.
    case file
    /// Directory names.
    case directory
    /// Known host names.
    case host
    /// These words.
    case values([String])
}

/// Describes one named option or flag of a command: the single declaration from which the
/// parser, `--help`, `docs/CLI.md`, the man page and the bash, zsh and fish completions are made.
struct OptionSpec: Sendable {
    /// Every spelling of the option, e.g. `["-X", "--method"]`.
    var names: [String]
    /// The placeholder of the option's value, e.g. `"FILE"`; `nil` makes the option a flag.
    var valueName: String?
    /// Whether the option may be given more than once (flags always may).
    var repeatable: Bool = false
    /// One line of help shown in the `OPTIONS:` section.
    var help: String
    /// Hidden options are accepted but never listed in help, usage or suggestions.
    var hidden: Bool = false
    /// What the value is; `nil` infers it from `valueName` (see `ValueKind.inferred`).
    var kind: ValueKind? = nil
    /// The value used when the option is not given, as documented (the command applies it).
    var defaultValue: String? = nil
    /// Whether the command cannot run without this option; the parser refuses a command line
    /// without it and usage lines show it outside brackets.
    var required: Bool = false

    /// Declares the option read as `key`: spelled `--` + its name, and `short` (e.g. `"-X"`) if given.
    init(
        _ key: OptionKey, short: String? = nil, valueName: String? = nil, repeatable: Bool = false, help: String,
        hidden: Bool = false, kind: ValueKind? = nil, defaultValue: String? = nil, required: Bool = false
    ) {
        self.init(
            names: (short.map { [$0] } ?? []) + [key.description], valueName: valueName, repeatable: repeatable,
            help: help, hidden: hidden, kind: kind, defaultValue: defaultValue, required: required)
    }

    /// Creates an option specification from its spellings (tests declare options of their own this way).
    init(
        names: [String], valueName: String? = nil, repeatable: Bool = false, help: String, hidden: Bool = false,
        kind: ValueKind? = nil, defaultValue: String? = nil, required: Bool = false
    ) {
        self.names = names
        self.valueName = valueName
        self.repeatable = repeatable
        self.help = help
        self.hidden = hidden
        self.kind = kind
        self.defaultValue = defaultValue
        self.required = required
    }

    /// The kind of the value: the declared one, or the one its value name implies; `nil` for a flag.
    var valueKind: ValueKind? {
        guard let valueName else { return nil }
        return kind ?? ValueKind.inferred(valueName: valueName, key: key.rawValue)
    }

    /// The key under which parsed values are stored: the first long name
    /// without its dashes (`"method"`), or the letter of a short-only option.
    var key: OptionKey {
        if let long = names.first(where: { $0.hasPrefix("--") }) {
            return OptionKey(String(long.dropFirst(2)))
        }
        guard let first = names.first else { return OptionKey("") }
        return OptionKey(String(first.drop(while: { $0 == "-" })))
    }

    /// Whether the option is a flag, i.e. takes no value.
    var isFlag: Bool { valueName == nil }

    /// The name shown in usage lines and error messages: the first long name if any.
    var preferredName: String {
        names.first(where: { $0.hasPrefix("--") }) ?? names.first ?? key.description
    }

    /// The long names of the option (those starting with `--`).
    var longNames: [String] { names.filter { $0.hasPrefix("--") } }
}

/// Describes one positional argument of a command.
struct ArgumentSpec: Sendable {
    /// The placeholder shown in usage and help, without angle brackets, e.g. `"CERT"`.
    var name: String
    /// One line of help shown in the `ARGUMENTS:` section.
    var help: String
    /// Whether the argument may be left out.
    var optional: Bool = false
    /// Whether the argument swallows all remaining positionals (only meaningful last).
    var variadic: Bool = false
    /// What the argument is; `nil` means a file, or a URL when it is named `URL`.
    var kind: ValueKind? = nil

    /// Creates an argument specification.
    init(name: String, help: String, optional: Bool = false, variadic: Bool = false, kind: ValueKind? = nil) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
        self.kind = kind
    }

    /// The declared kind, or the one the name implies.
    var valueKind: ValueKind {
        kind ?? (name == "URL" ? .url : .file)
    }
}

/// Describes a command: its documentation, arguments, options and subcommands.
struct CommandSpec: Sendable {
    /// The name the command is invoked by, e.g. `"verify"` (or `"mtls"` for the root).
    var name: String
    /// A one-line summary, shown after `OVERVIEW:` and in the parent's `SUBCOMMANDS:` list.
    var abstract: String
    /// Longer free text shown under the overview.
    var discussion: String? = nil
    /// A verbatim replacement for the generated usage line (without the `USAGE: ` prefix).
    var usage: String? = nil
    /// The positional arguments, in order.
    var arguments: [ArgumentSpec] = []
    /// The options and flags (`-h`/`--help` is implicit).
    var options: [OptionSpec] = []
    /// The subcommands, each made when asked for; only the root command has any.
    var subcommandList: [Subcommand] = []
    /// Example invocations listed under `EXAMPLES:`.
    var examples: [String] = []
    /// Hidden subcommands run but are not listed in help, documentation or completions.
    var hidden: Bool = false

    /// Creates a command specification.
    init(
        name: String,
        abstract: String,
        discussion: String? = nil,
        usage: String? = nil,
        arguments: [ArgumentSpec] = [],
        options: [OptionSpec] = [],
        subcommands: [Subcommand] = [],
        examples: [String] = [],
        hidden: Bool = false
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.usage = usage
        self.arguments = arguments
        self.options = options
        self.subcommandList = subcommands
        self.examples = examples
        self.hidden = hidden
    }

    /// A subcommand as its parent lists it: its name, and its specification, made when asked for.
    /// A run needs its own command's declarations only (each is a static built on first use, with
    /// its option tables, help text and metadata); help, documentation and completions ask for
    /// every subcommand's.
    struct Subcommand: Sendable {
        let name: String
        let spec: @Sendable () -> CommandSpec

        init(name: String, spec: @escaping @Sendable () -> CommandSpec) {
            self.name = name
            self.spec = spec
        }

        /// A subcommand whose specification is already made.
        init(_ spec: CommandSpec) {
            self.init(name: spec.name) { spec }
        }
    }

    /// Whether the command has subcommands, without making their specifications.
    var hasSubcommands: Bool { !subcommandList.isEmpty }

    /// Every subcommand's specification.
    var subcommands: [CommandSpec] { subcommandList.map { $0.spec() } }

    /// The subcommands listed in help, documentation and completions.
    var visibleSubcommands: [CommandSpec] { subcommands.filter { !$0.hidden } }

    /// The options listed in help and documentation: the declared visible ones and `-h, --help`.
    var visibleOptions: [OptionSpec] { effectiveOptions.filter { !$0.hidden } }

    /// The subcommand with the given name, if any.
    func subcommand(named name: String) -> CommandSpec? {
        subcommandList.first { $0.name == name }?.spec()
    }

    /// The implicit `-h, --help` flag.
    static let helpOption = OptionSpec(.help, short: "-h", help: "Show help information.")

    /// The declared options followed by the implicit help flag, unless the
    /// command declares `-h` or `--help` itself.
    var effectiveOptions: [OptionSpec] {
        let declared = Set(options.flatMap(\.names))
        let helpNames = Self.helpOption.names.filter { !declared.contains($0) }
        guard !helpNames.isEmpty else { return options }
        var help = Self.helpOption
        help.names = helpNames
        return options + [help]
    }

    /// The option spelled exactly `name`, e.g. `"-X"` or `"--method"`.
    func option(named name: String) -> OptionSpec? {
        effectiveOptions.first { $0.names.contains(name) }
    }

    /// The option spelled `name` or whose key is `name` (used when rendering errors).
    func option(matching name: String) -> OptionSpec? {
        option(named: name) ?? effectiveOptions.first { $0.key.rawValue == name }
    }
}

/// The result of parsing one command's arguments.
struct ParsedArguments: Sendable {
    /// The positional arguments in order. For a command with subcommands this is
    /// the subcommand's name followed by its still unparsed arguments.
    var positionals: [String]
    /// Whether `-h` or `--help` appeared (before any `--`).
    var wantsHelp: Bool
    /// For a command with subcommands, the name of the selected subcommand.
    var subcommand: String?
    /// Values of value-taking options by key, in the order given.
    private var valuesByKey: [OptionKey: [String]]
    /// Number of occurrences of each option or flag by key.
    private var countsByKey: [OptionKey: Int]
    /// The keys the parsed command declares, when the parser made this result: reading any other
    /// key is a programming error (a shared helper reading an option its caller does not declare),
    /// caught by an assertion in debug builds and the tests.
    var declaredKeys: Set<OptionKey>? = nil

    /// Creates a parse result; mostly useful to tests and to the parser itself.
    init(
        positionals: [String] = [],
        wantsHelp: Bool = false,
        subcommand: String? = nil,
        values: [OptionKey: [String]] = [:],
        counts: [OptionKey: Int] = [:]
    ) {
        self.positionals = positionals
        self.wantsHelp = wantsHelp
        self.subcommand = subcommand
        self.valuesByKey = values
        self.countsByKey = counts
    }

    /// Whether the flag (or option) with this key was given at least once.
    func flag(_ key: OptionKey) -> Bool { count(key) > 0 }

    /// The value of the last occurrence of the option with this key.
    func value(_ key: OptionKey) -> String? { values(key).last }

    /// The values of all occurrences of the option with this key, in order.
    func values(_ key: OptionKey) -> [String] {
        assertDeclared(key)
        return valuesByKey[key] ?? []
    }

    /// How many times the flag or option with this key was given (e.g. `-v -v` → 2).
    func count(_ key: OptionKey) -> Int {
        assertDeclared(key)
        return countsByKey[key] ?? 0
    }

    /// Whether the command declares `key`: for code every command shares, such as error output in JSON.
    func declares(_ key: OptionKey) -> Bool { declaredKeys?.contains(key) ?? true }

    private func assertDeclared(_ key: OptionKey) {
        assert(declaredKeys?.contains(key) ?? true, "\(key) is read but not declared by this command")
    }

    /// Records one occurrence of `option`, with its value if it takes one.
    mutating func record(_ option: OptionSpec, value: String?) {
        countsByKey[option.key, default: 0] += 1
        if let value {
            valuesByKey[option.key, default: []].append(value)
        }
    }
}

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
    ///   `-`, unless that token names a known option (then `missingValue`).
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
        if attached == nil { attached = try takeValue(for: name) }
        try recordValue(option, name: name, value: attached)
    }

    /// Parses `-X`, `-Xvalue` or a group of flags such as `-vk`.
    private mutating func parseShort(_ token: String) throws(ArgumentError) {
        if let option = self.option(named: token) {
            if option.isFlag {
                record(option, value: nil)
            } else {
                try recordValue(option, name: token, value: try takeValue(for: token))
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

    /// Consumes the token after a value-taking option, refusing known option names.
    private mutating func takeValue(for name: String) throws(ArgumentError) -> String {
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
