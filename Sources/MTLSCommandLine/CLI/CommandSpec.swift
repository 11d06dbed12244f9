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
    /// The value the option takes when given without one (`--revocation` alone means `hard`).
    /// Such an option takes the next word as its value only if it is one of its ``ValueKind/choice``
    /// words (or is attached with `=`), so `--revocation leaf.pem` leaves `leaf.pem` a positional.
    var implicitValue: String? = nil

    /// The option with ``implicitValue`` set.
    func withImplicitValue(_ value: String) -> OptionSpec {
        var copy = self
        copy.implicitValue = value
        return copy
    }

    /// ` <MODE>`, or ` [<MODE>]` for an option whose value may be left out.
    var valueSynopsis: String {
        guard let valueName else { return "" }
        return implicitValue == nil ? " <\(valueName)>" : " [<\(valueName)>]"
    }

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
