import MTLSTrust  // Locked
import XCTest

@testable import MTLSCommandLine

/// Tests of the `mtls` command-line parser, help, usage and error text.
final class ArgumentParserTests: XCTestCase {
    // MARK: - Fixtures

    /// A `verify`-like command with more than six visible options.
    private static let verify = CommandSpec(
        name: "verify",
        abstract: "Evaluate a certificate chain.",
        arguments: [
            ArgumentSpec(name: "CERT", help: "The leaf certificate, then candidate intermediates.", variadic: true)
        ],
        options: [
            OptionSpec(names: ["--anchors"], valueName: "FILE", repeatable: true, help: "Trust only these anchors (repeatable)."),
            OptionSpec(names: ["--host"], valueName: "NAME", help: "The expected host name."),
            OptionSpec(names: ["-X", "--method"], valueName: "METHOD", help: "The HTTP method."),
            OptionSpec(names: ["--at"], valueName: "TIME", help: "Evaluate at this time."),
            OptionSpec(names: ["--data"], valueName: "DATA", help: "The request body."),
            OptionSpec(names: ["--json"], help: "Print one JSON object."),
            OptionSpec(names: ["-v", "--verbose"], help: "Print more."),
            OptionSpec(names: ["-k", "--insecure"], help: "Skip verification."),
            OptionSpec(names: ["-q"], help: "Print less."),
            OptionSpec(names: ["--debug-dump"], valueName: "DIR", help: "Internal.", hidden: true),
        ]
    )

    /// A root command with subcommands.
    private static let root = CommandSpec(
        name: "mtls",
        abstract: "Mutual-TLS tools.",
        subcommands: [
            .init(verify),
            .init(CommandSpec(name: "serve", abstract: "Run a test server.")),
            .init(CommandSpec(name: "request", abstract: "Send one request.")),
        ]
    )

    private func parse(_ args: [String], _ spec: CommandSpec = verify) throws(ArgumentError) -> ParsedArguments {
        try ArgumentParser.parse(args, spec: spec)
    }

    /// Asserts that parsing `args` throws exactly `expected`.
    private func assertParse(
        _ args: [String], _ spec: CommandSpec = verify, throws expected: ArgumentError,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let parsed = try ArgumentParser.parse(args, spec: spec)
            XCTFail("Expected \(expected), parsed \(parsed)", file: file, line: line)
        } catch {
            XCTAssertEqual(error, expected, file: file, line: line)
        }
    }

    // MARK: - Option syntax

    func testLongOptionTakesTheNextTokenAsItsValue() throws {
        let parsed = try parse(["a.pem", "--host", "localhost"])
        XCTAssertEqual(parsed.value(.host), "localhost")
        XCTAssertEqual(parsed.positionals, ["a.pem"])
    }

    func testLongOptionAcceptsAnAttachedValueAfterAnEqualsSign() throws {
        let parsed = try parse(["a.pem", "--host=example.com", "--data=a=b"])
        XCTAssertEqual(parsed.value(.host), "example.com")
        XCTAssertEqual(parsed.value(.data), "a=b")
    }

    func testAnEmptyAttachedValueIsAValue() throws {
        XCTAssertEqual(try parse(["a.pem", "--host="]).value(.host), "")
    }

    func testShortOptionTakesTheNextTokenAsItsValue() throws {
        let parsed = try parse(["-X", "POST", "a.pem"])
        XCTAssertEqual(parsed.value(.method), "POST")
        XCTAssertEqual(parsed.positionals, ["a.pem"])
    }

    func testShortOptionAcceptsAnAttachedValue() throws {
        XCTAssertEqual(try parse(["-XPOST", "a.pem"]).value(.method), "POST")
    }

    func testCombinedShortFlagsSetEachFlag() throws {
        let parsed = try parse(["-vkq", "a.pem"])
        XCTAssertTrue(parsed.flag(.verbose))
        XCTAssertTrue(parsed.flag(.insecure))
        XCTAssertTrue(parsed.flag(OptionKey("q")))
        XCTAssertFalse(parsed.flag(.json))
    }

    func testCombinedShortOptionsAreRejectedUnlessAllAreFlags() {
        assertParse(["-vX", "POST", "a.pem"], throws: .unknownOption("-vX", suggestion: nil))
        assertParse(["-vz", "a.pem"], throws: .unknownOption("-vz", suggestion: nil))
    }

    func testDoubleDashEndsOptionParsing() throws {
        let parsed = try parse(["--json", "--", "--host", "-v", "-"])
        XCTAssertEqual(parsed.positionals, ["--host", "-v", "-"])
        XCTAssertTrue(parsed.flag(.json))
        XCTAssertNil(parsed.value(.host))
        XCTAssertFalse(parsed.flag(.verbose))
    }

    func testALoneDashIsAPositional() throws {
        XCTAssertEqual(try parse(["-", "b.pem"]).positionals, ["-", "b.pem"])
    }

    func testOptionKeyIsTheFirstLongNameOrTheShortLetter() {
        XCTAssertEqual(OptionSpec(names: ["-X", "--method", "--verb"], valueName: "M", help: "").key, .method)
        XCTAssertEqual(OptionSpec(names: ["-q"], help: "").key, OptionKey("q"))
    }

    func testAnOptionDeclaredByItsKeyIsSpelledFromIt() {
        let option = OptionSpec(.maxRedirects, short: "-R", valueName: "N", help: "")
        XCTAssertEqual(option.names, ["-R", "--max-redirects"])
        XCTAssertEqual(option.key, .maxRedirects)
        XCTAssertEqual(option.preferredName, "--max-redirects")
    }

    func testAParseKnowsWhichKeysItsCommandDeclares() throws {
        let parsed = try parse(["a.pem", "--host", "h"])
        XCTAssertTrue(parsed.declares(.host))
        XCTAssertFalse(parsed.declares(.profile), "the test command has no --profile")
        XCTAssertTrue(ParsedArguments().declares(.json), "a result made by hand declares everything")
    }

    /// Every option of every `mtls` command is read through a constant of ``OptionKey`` (the commands
    /// read `arguments.value(.maxDepth)`, so a misspelled key does not compile) and no constant is
    /// left without a declaration.
    func testEveryDeclaredOptionHasItsKeyConstantAndEveryConstantIsDeclared() throws {
        var declared: Set<OptionKey> = []
        func walk(_ spec: CommandSpec) {
            declared.formUnion(spec.effectiveOptions.map(\.key))
            spec.subcommands.forEach(walk)
        }
        walk(MTLSCommand.rootSpec)
        let source = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("Sources/MTLSCommandLine/CLI/OptionKey.swift"), encoding: .utf8)
        let constants = Set(
            source.split(separator: "\n").compactMap { line -> OptionKey? in
                guard line.contains("static let"), let open = line.firstIndex(of: "\""), let close = line.lastIndex(of: "\""), open < close
                else { return nil }
                return OptionKey(String(line[line.index(after: open)..<close]))
            })
        XCTAssertFalse(constants.isEmpty)
        XCTAssertEqual(declared.subtracting(constants).map(\.rawValue).sorted(), [], "declared without a constant")
        XCTAssertEqual(constants.subtracting(declared).map(\.rawValue).sorted(), [], "a constant no command declares")
    }

    // MARK: - Values that look like options

    func testValueMayStartWithADashWhenItIsNotAKnownOption() throws {
        let parsed = try parse(["a.pem", "--data", "-x", "--host", "-"])
        XCTAssertEqual(parsed.value(.data), "-x")
        XCTAssertEqual(parsed.value(.host), "-")
    }

    func testAKnownOptionInPlaceOfAValueIsAMissingValue() {
        assertParse(["a.pem", "--anchors", "--host", "x"], throws: .missingValue(option: "--anchors"))
        assertParse(["a.pem", "--data", "-v"], throws: .missingValue(option: "--data"))
        assertParse(["a.pem", "--data", "-XPOST"], throws: .missingValue(option: "--data"))
        assertParse(["a.pem", "--data", "--json=1"], throws: .missingValue(option: "--data"))
        assertParse(["a.pem", "-X", "--", "b"], throws: .missingValue(option: "-X"))
    }

    func testAnOptionAtTheEndIsAMissingValue() {
        assertParse(["a.pem", "--host"], throws: .missingValue(option: "--host"))
        assertParse(["a.pem", "-X"], throws: .missingValue(option: "-X"))
    }

    // MARK: - Flags, repetition and counts

    func testFlagsMayBeRepeatedAndAreCounted() throws {
        let parsed = try parse(["-v", "a.pem", "--verbose", "-vv"])
        XCTAssertEqual(parsed.count(.verbose), 4)
        XCTAssertEqual(parsed.count(.json), 0)
    }

    func testRepeatableOptionKeepsEveryValueInOrder() throws {
        let parsed = try parse(["a.pem", "--anchors", "1.pem", "--anchors=2.pem"])
        XCTAssertEqual(parsed.values(.anchors), ["1.pem", "2.pem"])
        XCTAssertEqual(parsed.value(.anchors), "2.pem")
        XCTAssertEqual(parsed.count(.anchors), 2)
        XCTAssertEqual(parsed.values(.host), [])
    }

    func testANonRepeatableOptionGivenTwiceIsADuplicate() {
        assertParse(["a.pem", "--host", "a", "--host", "b"], throws: .duplicateOption("--host"))
        assertParse(["a.pem", "--method", "GET", "-XPOST"], throws: .duplicateOption("-X"))
    }

    func testAValueGivenToAFlagIsUnexpected() {
        assertParse(["a.pem", "--json=yes"], throws: .unexpectedValue(option: "--json", value: "yes"))
    }

    func testHiddenOptionsAreStillAccepted() throws {
        XCTAssertEqual(try parse(["a.pem", "--debug-dump", "/tmp"]).value(OptionKey("debug-dump")), "/tmp")
    }

    // MARK: - Unknown options and suggestions

    func testUnknownOptionSuggestsTheClosestLongName() {
        assertParse(["a.pem", "--hots", "x"], throws: .unknownOption("--hots", suggestion: "--host"))
        assertParse(["a.pem", "--jsn"], throws: .unknownOption("--jsn", suggestion: "--json"))
        assertParse(["a.pem", "--anchor", "x"], throws: .unknownOption("--anchor", suggestion: "--anchors"))
    }

    func testUnknownOptionWithoutACloseNameHasNoSuggestion() {
        assertParse(["a.pem", "--colour"], throws: .unknownOption("--colour", suggestion: nil))
        assertParse(["a.pem", "-z"], throws: .unknownOption("-z", suggestion: nil))
    }

    func testUnknownOptionWithASingleDashSuggestsTheLongName() {
        assertParse(["a.pem", "-host", "x"], throws: .unknownOption("-host", suggestion: "--host"))
    }

    func testHiddenOptionsAreNeverSuggested() {
        assertParse(["a.pem", "--debug-dum"], throws: .unknownOption("--debug-dum", suggestion: nil))
    }

    func testSuggestionPicksTheClosestCandidateWithinTheThreshold() {
        XCTAssertEqual(ArgumentParser.suggestion(for: "verfy", among: ["serve", "verify"]), "verify")
        XCTAssertEqual(ArgumentParser.suggestion(for: "--hots", among: ["--json", "--host"]), "--host")
        XCTAssertEqual(ArgumentParser.suggestion(for: "reqeust", among: ["request"]), "request")
        XCTAssertNil(ArgumentParser.suggestion(for: "xyz", among: ["verify", "serve"]))
        XCTAssertNil(ArgumentParser.suggestion(for: "vrfy", among: ["verify"]))
        XCTAssertNil(ArgumentParser.suggestion(for: "x", among: []))
    }

    func testEditDistanceCountsATranspositionAsOneEdit() {
        XCTAssertEqual(ArgumentParser.editDistance("host", "hots"), 1)
        XCTAssertEqual(ArgumentParser.editDistance("kitten", "sitting"), 3)
        XCTAssertEqual(ArgumentParser.editDistance("", "abc"), 3)
        XCTAssertEqual(ArgumentParser.editDistance("same", "same"), 0)
    }

    // MARK: - Positional arguments

    func testAMissingRequiredArgumentIsReported() {
        assertParse(["--json"], throws: .missingArgument("CERT"))
    }

    func testTooManyPositionalsAreUnexpected() {
        let spec = CommandSpec(
            name: "inspect", abstract: "",
            arguments: [ArgumentSpec(name: "CERT", help: ""), ArgumentSpec(name: "KEY", help: "", optional: true)])
        XCTAssertEqual(try parse(["a"], spec).positionals, ["a"])
        XCTAssertEqual(try parse(["a", "b"], spec).positionals, ["a", "b"])
        assertParse(["a", "b", "c", "d"], spec, throws: .unexpectedArgument("c"))
    }

    func testAVariadicLastArgumentAcceptsAnyNumberOfPositionals() throws {
        XCTAssertEqual(try parse(["a", "b", "c"]).positionals, ["a", "b", "c"])
    }

    func testACommandWithoutArgumentsRejectsAnyPositional() {
        let spec = CommandSpec(name: "serve", abstract: "")
        assertParse(["x"], spec, throws: .unexpectedArgument("x"))
    }

    // MARK: - Help

    func testHelpFlagIsRecognisedAnywhereBeforeDoubleDash() throws {
        XCTAssertTrue(try parse(["a.pem", "--help"]).wantsHelp)
        XCTAssertTrue(try parse(["-h", "a.pem"]).wantsHelp)
        XCTAssertTrue(try parse(["-vh", "a.pem"]).wantsHelp)
        XCTAssertFalse(try parse(["a.pem"]).wantsHelp)
        let afterDoubleDash = try parse(["--", "-h"])
        XCTAssertFalse(afterDoubleDash.wantsHelp)
        XCTAssertEqual(afterDoubleDash.positionals, ["-h"])
    }

    func testHelpSuppressesMissingArgumentAndOtherErrors() throws {
        XCTAssertTrue(try parse(["--help"]).wantsHelp)
        XCTAssertTrue(try parse(["--bogus", "--help"]).wantsHelp)
        XCTAssertTrue(try parse(["--host", "-h"]).wantsHelp)
        XCTAssertTrue(try parse(["--host", "a", "--host", "b", "-h"]).wantsHelp)
    }

    func testGoldenHelpText() {
        let spec = CommandSpec(
            name: "verify",
            abstract: "Evaluate a certificate chain.",
            discussion: "Builds a chain from the leaf to a trust anchor and checks it.",
            arguments: [
                ArgumentSpec(name: "CERT", help: "The leaf certificate, then candidate intermediates.", variadic: true)
            ],
            options: [
                OptionSpec(names: ["--anchors"], valueName: "FILE", repeatable: true, help: "Trust only these anchors (repeatable)."),
                OptionSpec(names: ["-X", "--method"], valueName: "METHOD", help: "The HTTP method."),
                OptionSpec(names: ["--host"], valueName: "NAME", help: "The host name that the leaf certificate must be valid for; checked against the subject alternative names."),
                OptionSpec(names: ["--client-certificate"], valueName: "FILE", help: "Present this certificate."),
                OptionSpec(names: ["--json"], help: "Print one JSON object."),
                OptionSpec(names: ["--trace"], help: "Internal.", hidden: true),
            ],
            examples: ["mtls verify server.pem --anchors ca.pem --host localhost"]
        )
        let expected = """
            OVERVIEW: Evaluate a certificate chain.

            Builds a chain from the leaf to a trust anchor and checks it.

            USAGE: mtls verify <CERT> ... [--anchors <FILE> ...] [--method <METHOD>] [--host <NAME>] [--client-certificate <FILE>] [--json]

            ARGUMENTS:
              <CERT>                  The leaf certificate, then candidate intermediates.

            OPTIONS:
              --anchors <FILE>        Trust only these anchors (repeatable).
              -X, --method <METHOD>   The HTTP method.
              --host <NAME>           The host name that the leaf certificate must be valid
                                      for; checked against the subject alternative names.
              --client-certificate <FILE>
                                      Present this certificate.
              --json                  Print one JSON object.
              -h, --help              Show help information.

            EXAMPLES:
              mtls verify server.pem --anchors ca.pem --host localhost
            """
        XCTAssertEqual(ArgumentParser.helpText(for: spec, commandPath: ["mtls", "verify"]), expected)
    }

    func testRootHelpListsSubcommandsAndUsesASubcommandUsage() {
        let expected = """
            OVERVIEW: Mutual-TLS tools.

            USAGE: mtls <subcommand>

            OPTIONS:
              -h, --help              Show help information.

            SUBCOMMANDS:
              verify                  Evaluate a certificate chain.
              serve                   Run a test server.
              request                 Send one request.
            """
        XCTAssertEqual(ArgumentParser.helpText(for: Self.root, commandPath: ["mtls"]), expected)
    }

    func testALabelOneShortOfTheColumnStaysOnTheSameLine() {
        // "  " + 23 characters = 25 columns, one space before the help column.
        let spec = CommandSpec(
            name: "x", abstract: "",
            options: [
                OptionSpec(names: ["--abcdefghijklmnopqrstu"], help: "Fits."),
                OptionSpec(names: ["--abcdefghijklmnopqrstuv"], help: "Wraps."),
            ])
        let help = ArgumentParser.helpText(for: spec, commandPath: ["x"])
        XCTAssertTrue(help.contains("\n  --abcdefghijklmnopqrstu Fits.\n"), help)
        XCTAssertTrue(help.contains("\n  --abcdefghijklmnopqrstuv\n                          Wraps.\n"), help)
    }

    // MARK: - Usage

    func testUsageListsOptionalOptionsInBrackets() {
        let spec = CommandSpec(
            name: "inspect", abstract: "",
            arguments: [
                ArgumentSpec(name: "CERT", help: ""),
                ArgumentSpec(name: "MORE", help: "", optional: true, variadic: true),
            ],
            options: [
                OptionSpec(names: ["-v", "--verbose"], repeatable: true, help: ""),
                OptionSpec(names: ["-q"], help: ""),
                OptionSpec(names: ["--secret"], help: "", hidden: true),
            ])
        XCTAssertEqual(
            ArgumentParser.usageLine(for: spec, commandPath: ["mtls", "inspect"]),
            "mtls inspect <CERT> [<MORE> ...] [--verbose ...] [-q]")
    }

    func testUsageAbbreviatesManyOptions() {
        XCTAssertEqual(
            ArgumentParser.usageLine(for: Self.verify, commandPath: ["mtls", "verify"]),
            "mtls verify <CERT> ... [<options>]")
    }

    func testUsageOverrideIsUsedVerbatim() {
        var spec = Self.verify
        spec.usage = "mtls verify <CERT> [--anchors <FILE>]"
        XCTAssertEqual(ArgumentParser.usageLine(for: spec, commandPath: ["mtls", "verify"]), spec.usage)
        XCTAssertTrue(
            ArgumentParser.helpText(for: spec, commandPath: ["mtls", "verify"])
                .contains("\nUSAGE: mtls verify <CERT> [--anchors <FILE>]\n"))
    }

    // MARK: - Error text

    func testGoldenErrorText() {
        let text = ArgumentParser.errorText(
            .unknownOption("--hots", suggestion: "--host"), spec: Self.verify, commandPath: ["mtls", "verify"])
        let expected = """
            Error: Unknown option '--hots'. Did you mean '--host'?
            Usage: mtls verify <CERT> ... [<options>]
              See 'mtls verify --help' for more information.
            """
        XCTAssertEqual(text, expected)
    }

    func testErrorMessagesMatchSwiftArgumentParserWording() {
        func message(_ error: ArgumentError) -> String {
            ArgumentParser.message(for: error, spec: Self.verify)
        }
        XCTAssertEqual(message(.unknownOption("--zzz", suggestion: nil)), "Unknown option '--zzz'.")
        XCTAssertEqual(message(.missingValue(option: "--anchors")), "Missing value for '--anchors <FILE>'")
        XCTAssertEqual(message(.missingValue(option: "-X")), "Missing value for '-X <METHOD>'")
        XCTAssertEqual(message(.missingArgument("CERT")), "Missing expected argument '<CERT>'")
        XCTAssertEqual(message(.unexpectedArgument("-x")), "Unexpected argument '-x'")
        XCTAssertEqual(message(.unexpectedArgument("hunter2")), "Unexpected argument (not shown: it names no file and may be a secret given by mistake)")
        XCTAssertEqual(
            message(.unexpectedValue(option: "--json", value: "yes")),
            "The option '--json' does not take any value, but a value was specified.")
        XCTAssertEqual(message(.duplicateOption("--host")), "Option '--host' cannot be repeated")
        XCTAssertEqual(
            message(.invalidValue(option: "--at", value: "abc", reason: "expected an ISO 8601 date")),
            "The value 'abc' is invalid for '--at <TIME>': expected an ISO 8601 date")
        XCTAssertEqual(
            message(.invalidValue(option: "at", value: "abc", reason: "bad")),
            "The value 'abc' is invalid for '--at <TIME>': bad")
        XCTAssertEqual(
            message(.unknownSubcommand("verfy", suggestion: "verify")),
            "Unknown subcommand 'verfy'. Did you mean 'verify'?")
        XCTAssertEqual(message(.missingSubcommand), "Missing subcommand")
    }

    // MARK: - Subcommands

    func testRootParseSelectsTheSubcommandAndKeepsItsArguments() throws {
        let parsed = try parse(["verify", "a.pem", "--json"], Self.root)
        XCTAssertEqual(parsed.subcommand, "verify")
        XCTAssertEqual(parsed.positionals, ["verify", "a.pem", "--json"])
        XCTAssertFalse(parsed.wantsHelp)
    }

    func testUnknownSubcommandSuggestsTheClosestName() {
        assertParse(["verfy", "a.pem"], Self.root, throws: .unknownSubcommand("verfy", suggestion: "verify"))
        assertParse(["frobnicate"], Self.root, throws: .unknownSubcommand("frobnicate", suggestion: nil))
    }

    func testNoSubcommandIsAMissingSubcommandUnlessHelpIsWanted() throws {
        assertParse([], Self.root, throws: .missingSubcommand)
        XCTAssertTrue(try parse(["--help"], Self.root).wantsHelp)
    }

    func testResolveRunsTheSubcommandWithItsOwnArguments() {
        guard
            case let .run(path, spec, arguments) = ArgumentParser.resolve(
                ["verify", "a.pem", "--host", "h"], root: Self.root)
        else { return XCTFail("expected .run") }
        XCTAssertEqual(path, ["mtls", "verify"])
        XCTAssertEqual(spec.name, "verify")
        XCTAssertEqual(arguments.positionals, ["a.pem"])
        XCTAssertEqual(arguments.value(.host), "h")
    }

    func testARunMakesOnlyItsOwnSubcommandsSpecification() {
        let made = Locked<[String]>([])
        func counted(_ spec: CommandSpec) -> CommandSpec.Subcommand {
            CommandSpec.Subcommand(name: spec.name) {
                made.withLock { $0.append(spec.name) }
                return spec
            }
        }
        let root = CommandSpec(
            name: "mtls", abstract: "Mutual-TLS tools.",
            subcommands: [counted(Self.verify), counted(CommandSpec(name: "serve", abstract: "Run a test server."))])
        guard case .run(_, let spec, _) = ArgumentParser.resolve(["verify", "a.pem", "--host", "h"], root: root) else {
            return XCTFail("expected .run")
        }
        XCTAssertEqual(spec.name, "verify")
        XCTAssertFalse(made.withLock { $0.contains("serve") }, "serve's specification was made for a verify run")
        // Help lists every subcommand, so it makes them all.
        guard case .help(let text) = ArgumentParser.resolve(["--help"], root: root) else { return XCTFail("expected .help") }
        XCTAssertTrue(text.contains("serve"), text)
        XCTAssertTrue(made.withLock { $0.contains("serve") })
    }

    func testEveryCommandIsListedUnderItsSpecificationsName() {
        for command in MTLSCommand.commands {
            XCTAssertEqual(command.subcommand.spec().name, command.subcommand.name)
        }
        XCTAssertEqual(MTLSCommand.rootSpec.subcommands.map(\.name), MTLSCommand.commands.map(\.subcommand.name))
    }

    func testResolveTurnsHelpRequestsIntoTheRightHelpText() {
        let verifyHelp = ArgumentParser.helpText(for: Self.verify, commandPath: ["mtls", "verify"])
        let rootHelp = ArgumentParser.helpText(for: Self.root, commandPath: ["mtls"])
        for (args, expected) in [
            (["verify", "--help"], verifyHelp),
            (["help", "verify"], verifyHelp),
            (["-h"], rootHelp),
            (["help"], rootHelp),
        ] {
            guard case let .help(text) = ArgumentParser.resolve(args, root: Self.root) else {
                XCTFail("expected .help for \(args)")
                continue
            }
            XCTAssertEqual(text, expected, "\(args)")
        }
    }

    func testResolveRendersErrorsForTheCommandThatFailed() {
        guard case let .failure(text) = ArgumentParser.resolve(["verify", "--hots", "x"], root: Self.root)
        else { return XCTFail("expected .failure") }
        XCTAssertEqual(
            text,
            """
            Error: Unknown option '--hots'. Did you mean '--host'?
            Usage: mtls verify <CERT> ... [<options>]
              See 'mtls verify --help' for more information.
            """)
        guard case let .failure(rootText) = ArgumentParser.resolve(["verfy"], root: Self.root)
        else { return XCTFail("expected .failure") }
        XCTAssertEqual(
            rootText,
            """
            Error: Unknown subcommand 'verfy'. Did you mean 'verify'?
            Usage: mtls <subcommand>
              See 'mtls --help' for more information.
            """)
    }

    // MARK: - An option whose value may be left out

    /// `verify` with `--revocation [hard|soft]` (alone: hard), as the real command declares it.
    private static let withImplicit = CommandSpec(
        name: "verify", abstract: "Evaluate a certificate chain.",
        arguments: [ArgumentSpec(name: "CERT", help: "The leaf.", variadic: true)],
        options: [
            RevocationOutput.option,
            OptionSpec(names: ["--json"], help: "Print one JSON object."),
            OptionSpec(names: ["--anchors"], valueName: "FILE", repeatable: true, help: "Anchors."),
        ])

    func testAnOptionAloneTakesItsImplicitValue() throws {
        // At the end, before another option, before `--`.
        for args in [["leaf.pem", "--revocation"], ["--revocation", "--json", "leaf.pem"], ["--revocation", "--", "leaf.pem"]] {
            let parsed = try parse(args, Self.withImplicit)
            XCTAssertEqual(parsed.value(.revocation), "hard", "\(args)")
            XCTAssertEqual(parsed.positionals, ["leaf.pem"], "\(args)")
        }
    }

    func testOnlyAChoiceWordIsTakenAsTheValueAnythingElseStaysAnArgument() throws {
        let soft = try parse(["--revocation", "soft", "leaf.pem"], Self.withImplicit)
        XCTAssertEqual(soft.value(.revocation), "soft")
        XCTAssertEqual(soft.positionals, ["leaf.pem"])
        XCTAssertEqual(try parse(["--revocation", "HARD", "leaf.pem"], Self.withImplicit).value(.revocation), "HARD")
        // The ambiguous case: a file name after the flag is the certificate, not the mode.
        let file = try parse(["--revocation", "leaf.pem", "--anchors", "root.pem"], Self.withImplicit)
        XCTAssertEqual(file.value(.revocation), "hard")
        XCTAssertEqual(file.positionals, ["leaf.pem"])
        XCTAssertEqual(file.values(.anchors), ["root.pem"])
        // A file that happens to be named like a mode is reached with ./ or after --.
        XCTAssertEqual(try parse(["--revocation", "./soft"], Self.withImplicit).positionals, ["./soft"])
        // With `=`, the value is whatever follows (and the command judges it).
        XCTAssertEqual(try parse(["--revocation=maybe", "leaf.pem"], Self.withImplicit).value(.revocation), "maybe")
        assertParse(["--revocation", "--revocation", "leaf.pem"], Self.withImplicit, throws: .duplicateOption("--revocation"))
    }

    func testHelpShowsTheValueAsOptionalAndSaysWhatAloneMeans() {
        let option = RevocationOutput.option
        XCTAssertEqual(ArgumentParser.optionSynopsis(option), "--revocation [<MODE>]")
        XCTAssertEqual(ArgumentParser.optionLabel(option), "--revocation [<MODE>]")
        XCTAssertContains(ArgumentParser.helpLine(option), "(alone: hard; only hard or soft is taken as its value")
        let help = ArgumentParser.helpText(for: Self.withImplicit, commandPath: ["mtls", "verify"])
        XCTAssertContains(help, "--revocation [<MODE>]")
    }
}
