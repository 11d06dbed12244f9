// A small, dependency-free command-line parser for `mtls`, modelled on the
// behaviour of apple/swift-argument-parser (which this package cannot use).

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
