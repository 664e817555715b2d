import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON

@main
struct PushBridgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushbridge",
        abstract: "Decide, render and conformance-test iOS offline pushes across chat vendors' dialects.",
        discussion: """
            Dialects: easemob-legacy, agora-silent, tencent-tim (each also a profile: an output shape).
            Exit status: 0 success, 1 a conformance failure, 2 bad input (one line on stderr naming the \
            file, the JSON pointer and what was expected), 3 `translate --strict` lost something.
            """,
        subcommands: [Decide.self, Conform.self, Translate.self, Mappings.self]
    )
}

/// Prints one line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Runs a body that may reject bad input; bad input → one line on stderr and exit 2.
func rejectingBadInput<T>(file: String?, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as InputError {
        printError("pushbridge: " + (file.map { error.in(file: $0) } ?? error).description)
        throw ExitCode(2)
    }
}

struct Decide: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the decision for one scenario as one JSON object.",
        discussion: """
            {"push":true,"payload":{…},"headers":{…},"device":{"token":…,"environment":…}} or {"push":false,"reason":"…"}.
            """)

    @Argument(help: "A scenario file (the fixture format; `expect` is not needed).")
    var file: String

    @Option(help: "Render with this profile instead of the scenario's: easemob-legacy, agora-silent or tencent-tim.")
    var profile: String?

    func run() throws {
        let engine = ScenarioEngine()
        let decision = try rejectingBadInput(file: file) { () throws -> PushDecision in
            let fixture = try Fixture(path: file)
            let chosen = try profile.map { try engine.registry.profile($0, at: JSONPointer.root / "profile") }
            return try engine.decide(fixture.scenario, profile: chosen)
        }
        print(decision.jsonText)
    }
}

struct Conform: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run fixtures and compare the decisions strictly with their expectations.",
        discussion: """
            One line per fixture, a strict diff (JSON pointer, expected and got, with types) under each failure, \
            and last `N passed, N failed`. Exit 1 if any fixture failed, 2 if any fixture is bad input.
            """)

    @Argument(help: "Fixture files or folders (searched recursively for *.json).")
    var paths: [String]

    func run() throws {
        let runner = ConformanceRunner()
        let report = try rejectingBadInput(file: nil) { try runner.run(paths: paths) }
        print(report.humanText)
        if report.hasBadFixtures { throw ExitCode(2) }
        if report.failedCount > 0 { throw ExitCode(1) }
    }
}

struct Translate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite a scenario in another dialect and list what cannot be carried over.",
        discussion: """
            Prints the scenario in the target dialect with "translatedFrom", the source's profile and \
            "losses": [{"field", "user"?, "key"?, "why"}]. The translated scenario can be decided as it is; \
            when nothing is lost it decides exactly as the source and keeps its "expect". \
            With --strict, exit 3 when anything is lost (the scenario is still printed).
            """)

    @Argument(help: "A scenario file.")
    var file: String

    @Option(help: "The target dialect: easemob-legacy, agora-silent or tencent-tim.")
    var to: String

    @Flag(help: "Exit 3 when anything is lost.")
    var strict = false

    func run() throws {
        let registry = DialectRegistry.standard
        guard registry.adapter(to) != nil else {
            printError("pushbridge: --to: expected a dialect: one of \(registry.ids.joined(separator: ", ")), found \"\(to)\" [unknown-reference]")
            throw ExitCode(2)
        }
        let translation = try rejectingBadInput(file: file) {
            try ScenarioTranslator().translate(try Fixture(path: file).scenario, to: to)
        }
        print(JSONWriter.prettyText(translation.document))
        for loss in translation.losses { printError("lost: " + loss.description) }
        if strict && !translation.isLossless { throw ExitCode(3) }
    }
}

struct Mappings: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the cross-dialect matrix built from Mappings/: every canonical field × every dialect.",
        discussion: """
            Each cell is exact, converted, lossy or none, with the dialect inputs that set the field. \
            The folder is --mappings, else ./Mappings, else the Mappings folder of the checkout the tool was built in.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case markdown, json
    }

    @Option(help: "markdown (a table) or json.")
    var format: Format = .markdown

    @Option(help: "The folder holding <dialect>.json mapping files.")
    var mappings: String?

    func run() throws {
        let directory = mappings ?? Self.defaultDirectory()
        let catalog = try rejectingBadInput(file: nil) { try MappingCatalog.load(from: directory) }
        switch format {
        case .markdown: print(catalog.matrixMarkdown, terminator: "")
        case .json: print(JSONWriter.prettyText(catalog.matrixJSON))
        }
    }

    /// `./Mappings` when present, else the nearest `Mappings` above the executable (a build inside a checkout).
    static func defaultDirectory() -> String {
        let fm = FileManager.default
        if fm.fileExists(atPath: "Mappings/easemob-legacy.json") { return "Mappings" }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("Mappings")
            if fm.fileExists(atPath: candidate.appendingPathComponent("easemob-legacy.json").path) { return candidate.path }
            dir = dir.deletingLastPathComponent()
        }
        return "Mappings"
    }
}
