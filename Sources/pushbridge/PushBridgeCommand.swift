import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeServiceConformance
import PushBridgeFacadeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Synchronization

@main
struct PushBridgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushbridge",
        abstract: "Decide, render and conformance-test iOS offline pushes across chat vendors' dialects.",
        discussion: """
            Dialects: easemob-legacy, agora-silent, tencent-tim (each also a profile: an output shape).
            Exit status: 0 success; 1 a conformance failure; 2 bad input or a usage error (one line on stderr \
            naming the file or option, the JSON pointer and what was expected); 3 `translate --strict` lost \
            something; 4 a store failure.
            """,
        version: PushBridgeVersion.current,
        subcommands: [Decide.self, Conform.self, Translate.self, Mappings.self, App.self, Apply.self, Members.self, Send.self, User.self, DeviceCommand.self, Serve.self, UserSigCommand.self]
    )

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var memberList: [String]? = nil
        if arguments.first == "members", let (rest, users) = Members.splitMemberList(Array(arguments.dropFirst())) {
            arguments = ["members"] + rest
            memberList = users
        }
        do {
            var command = try parseAsRoot(arguments)
            if let memberList, var members = command as? Members {
                members.users = memberList
                command = members
            }
            if var service = command as? any AsyncParsableCommand {
                try await service.run()
            } else {
                try command.run()
            }
        } catch {
            // Usage errors (ArgumentParser's 64) are bad input too: one exit-code table, 0–4.
            if exitCode(for: error) == .validationFailure {
                printError(fullMessage(for: error))
                exit(withError: ExitCode(2))
            }
            exit(withError: error)
        }
    }
}

/// Checks a dialect named by an option; an unknown one → one line on stderr (with the likeliest
/// dialect) and exit 2. The same wording whichever option names it.
/// - Parameters:
///   - id: the dialect id given.
///   - option: the option that named it (`--dialect`, `--to`, `--from`).
///   - registry: the known dialects.
func dialectOption(_ id: String, option: String = "--dialect", in registry: DialectRegistry = .standard) throws {
    _ = try rejectingOption(option) { try registry.adapter(id, at: .root) }
}

/// Runs a lookup of an option's value; bad input → `pushbridge: OPTION: expected …, found … [code]`
/// on stderr and exit 2 (the wording of every option check).
func rejectingOption<T>(_ option: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as InputError {
        printError("pushbridge: \(option): expected \(error.expected)" + (error.found.map { ", found \($0)" } ?? "") + " [\(error.code)]")
        throw ExitCode(2)
    }
}

/// Prints one line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// The profile a `--profile` option names; an unknown one → one line on stderr (with the likeliest
/// profile) and exit 2.
func profileOption(_ id: String?, in registry: DialectRegistry) throws -> Profile? {
    guard let id else { return nil }
    return try rejectingOption("--profile") { try registry.profile(id, at: .root) }
}

/// Whether standard output gets colours: a terminal, and `NO_COLOR` unset or empty (no-color.org).
var colorsOnStandardOutput: Bool {
    isatty(STDOUT_FILENO) == 1 && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
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
            {"push":true,"payload":{…},"deliveries":[{"device":{"token":…,"environment":…},"headers":{…}},…]} or \
            {"push":false,"reason":"…"}. One delivery per device of the receiver, newest binding first.
            """)

    @Argument(help: "A scenario file (the fixture format; `expect` is not needed).")
    var file: String

    @Option(help: "Render with this profile instead of the scenario's: easemob-legacy, agora-silent or tencent-tim.")
    var profile: String?

    @Flag(help: "Indent the JSON for reading (the keys and values stay exactly as decided).")
    var pretty = false

    func run() throws {
        let engine = ScenarioEngine()
        let decision = try rejectingBadInput(file: file) { () throws -> PushDecision in
            let fixture = try Fixture(path: file)
            let chosen = try profile.map { try engine.registry.profile($0, at: JSONPointer.root / "profile") }
            return try engine.decide(fixture.scenario, profile: chosen)
        }
        print(pretty ? JSONWriter.prettyText(try JSONParser.parse(decision.json)) : decision.jsonText)
    }
}

struct Conform: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run fixtures and compare the decisions strictly with their expectations.",
        discussion: """
            One line per fixture, a strict diff (JSON pointer, expected and got, with types) under each failure, \
            and last `N passed, N failed`. Exit 1 if any fixture failed, 2 if any fixture is bad input. \
            With --against, another implementation gives the decisions: a command run as `CMD FILE` (its standard \
            output is the decision JSON) or an http(s) URL each fixture is POSTed to (the response body is the decision); \
            a crash, a timeout or invalid JSON fails that fixture. Queries (expect.queries) are judged only in-process.
            """)

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
        case human, json
    }

    @Argument(help: "Fixture files or folders (searched recursively for *.json).")
    var paths: [String]

    @Option(help: "The implementation under test: a shell command (run as `CMD FILE`) or an http:// or https:// URL.")
    var against: String?

    @Option(help: "Seconds per fixture for --against.")
    var timeout: Double = 10

    @Option(help: "Run service fixtures (Fixtures/service) against this running `pushbridge serve`, such as http://127.0.0.1:8080: each makes a new app with the admin key from PUSHBRIDGE_ADMIN_KEY (or --admin-key-file).")
    var service: String?

    @Option(help: "With --service: a file holding the service's admin key.")
    var adminKeyFile: String?

    @Option(help: "Also write a JUnit XML report to this file (one testcase per fixture, with its time).")
    var junit: String?

    @Option(help: "How many fixtures run at once (default: the number of cores). The report keeps file order.")
    var jobs: Int?

    @Option(help: "The report on standard output: human or json.")
    var format: ReportFormat = .human

    @Flag(help: "Run each fixture through the facade's SQLite store (apply the calls, set the group, send) instead of the in-memory engine; queries are answered from the store.")
    var viaStore = false

    @Flag(help: "Write the engine's current decision into fixtures that have no expect, instead of judging.")
    var record = false

    @Flag(help: "With --record: replace existing expectations too.")
    var force = false

    @Option(help: "Only fixtures whose path or name contains this text (or matches this glob).")
    var filter: String?

    @Option(help: "Only scenarios in this dialect (and only this variant of equivalence fixtures).")
    var dialect: String?

    @Option(help: "Only scenarios rendered with this profile (and only this profile of equivalence fixtures).")
    var profile: String?

    func validate() throws {
        if force && !record { throw ValidationError("--force only goes with --record") }
        if viaStore && (against != nil || record) { throw ValidationError("--via-store tests the built-in store path; it goes with neither --against nor --record") }
        if record && against != nil { throw ValidationError("--record writes the built-in engine's decisions; it cannot be used with --against") }
        if timeout <= 0 { throw ValidationError("--timeout must be a positive number of seconds") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if service != nil && (against != nil || viaStore || record) {
            throw ValidationError("--service runs service fixtures against a service; it goes with neither --against, --via-store nor --record")
        }
        if adminKeyFile != nil && service == nil { throw ValidationError("--admin-key-file only goes with --service") }
    }

    func run() throws {
        let registry = DialectRegistry.standard
        if let dialect { try dialectOption(dialect, in: registry) }
        _ = try profileOption(profile, in: registry)
        let selection = FixtureSelection(pattern: filter, dialect: dialect, profile: profile)
        if record { return try recordFixtures(selection) }

        let report: ConformanceReport
        if let service {
            report = try serviceReport(service, selection: selection)
        } else {
            let provider = try provider()
            try check(provider)
            let runner = ConformanceRunner(provider: provider)
            let progress = ProgressLine()
            report = try rejectingBadInput(file: nil) {
                try runner.run(paths: paths, selection: selection, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, progress: progress.show)
            }
            progress.clear()
        }
        if report.results.isEmpty {
            printError("pushbridge: no fixtures selected: \(selectionText) [no-fixtures]")
            throw ExitCode(2)
        }
        switch format {
        case .human: print(report.humanText(colored: colorsOnStandardOutput))
        case .json: print(JSONWriter.prettyText(report.json))
        }
        if let junit {
            guard FileManager.default.createFile(atPath: junit, contents: Data(report.junitXML.utf8)) else {
                printError("pushbridge: --junit: expected a writable file, found \"\(junit)\" [unreadable-file]")
                throw ExitCode(2)
            }
        }
        if report.hasBadFixtures { throw ExitCode(2) }
        if report.failedCount > 0 { throw ExitCode(1) }
    }

    /// Runs service fixtures against a running service (the same runner the tests use).
    func serviceReport(_ service: String, selection: FixtureSelection) throws -> ConformanceReport {
        guard let url = URL(string: service), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            printError("pushbridge: --service: expected a URL such as http://127.0.0.1:8080, found \"\(service)\" [invalid-value]")
            throw ExitCode(2)
        }
        let key = try readSecret(file: adminKeyFile, option: "--admin-key-file", variable: "PUSHBRIDGE_ADMIN_KEY", what: "the service's admin key", command: "--service")
        let runner = ServiceConformanceRunner(baseURL: service, adminKey: key)
        let reachable = BlockingResult<Void>()
        Task.detached { reachable.set(await Result { try await runner.checkReachable() }) }
        if case .failure(let error) = reachable.wait() {
            printError("pushbridge: --service: expected a running PushBridge service, found \(error) [unreachable]")
            throw ExitCode(2)
        }
        let paths = paths
        let outcome = BlockingResult<ConformanceReport>()
        Task.detached { outcome.set(await Result { try await runner.run(paths: paths, selection: selection) }) }
        return try rejectingBadInput(file: nil) { try outcome.wait().get() }
    }

    /// The paths and filters, for a run that selected nothing.
    var selectionText: String {
        var text = "no *.json fixture under " + paths.map { "\"\($0)\"" }.joined(separator: ", ")
        let filters = [("--filter", filter), ("--dialect", dialect), ("--profile", profile)].compactMap { name, value in value.map { "\(name) \($0)" } }
        if !filters.isEmpty { text += " matches " + filters.joined(separator: ", ") }
        return text
    }

    /// Stops before the run when the implementation under test cannot be reached at all: a command
    /// that is not found or not executable, a URL nothing listens on.
    func check(_ provider: any DecisionProvider) throws {
        do {
            if let command = provider as? CommandDecisionProvider { try command.checkRunnable() }
            if let http = provider as? HTTPDecisionProvider { try http.checkReachable() }
        } catch let failure as ImplementationFailure {
            printError("pushbridge: --against: \(failure.reason) [unreachable]")
            throw ExitCode(2)
        }
    }

    func provider() throws -> any DecisionProvider {
        if viaStore { return StoreDecisionProvider(backing: .sqlite) }
        guard let against else { return EngineDecisionProvider() }
        if against.hasPrefix("http://") || against.hasPrefix("https://") {
            guard let url = URL(string: against), url.host != nil else {
                printError("pushbridge: --against: expected a URL such as http://127.0.0.1:8080/decide, found \"\(against)\" [invalid-value]")
                throw ExitCode(2)
            }
            return HTTPDecisionProvider(url: url, timeout: timeout)
        }
        return CommandDecisionProvider(command: against, timeout: timeout)
    }

    func recordFixtures(_ selection: FixtureSelection) throws {
        let recorder = FixtureRecorder()
        let files = try rejectingBadInput(file: nil) { try FixtureDiscovery.files(in: paths) }
        var recorded = 0
        var kept = 0
        var bad = false
        for file in files {
            do {
                switch try recorder.record(file: file, force: force, selection: selection) {
                case .recorded?:
                    recorded += 1
                    print("RECORDED  " + file)
                case .kept?:
                    kept += 1
                    print("KEPT      " + file + "  (has expect; --force replaces it)")
                case nil: break
                }
            } catch let error as InputError {
                bad = true
                printError("pushbridge: " + error.in(file: file).description)
            }
        }
        print("\(recorded) recorded, \(kept) kept")
        if bad { throw ExitCode(2) }
    }
}

/// The `[done/n] path` line on a terminal while more than 50 fixtures run; nothing otherwise.
final class ProgressLine: Sendable {
    let enabled = isatty(STDERR_FILENO) == 1
    let shown = Mutex(false)

    @Sendable func show(_ done: Int, _ total: Int, _ path: String) {
        guard enabled, total > 50 else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K[\(done)/\(total)] \(path)".utf8))
        shown.withLock { $0 = true }
    }

    func clear() {
        if shown.withLock({ $0 }) { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
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

    @Argument(help: "A scenario file, or several files and folders (searched recursively for *.json) with --output.")
    var paths: [String]

    @Option(help: "The target dialect: easemob-legacy, agora-silent or tencent-tim.")
    var to: String

    @Option(help: "For several files or a folder: the folder each translation is written to, under its relative path.")
    var output: String?

    @Flag(help: "Exit 3 when anything is lost.")
    var strict = false

    func run() throws {
        let registry = DialectRegistry.standard
        try dialectOption(to, option: "--to", in: registry)
        let files = try rejectingBadInput(file: nil) { try FixtureDiscovery.files(in: paths).map { ($0, Self.relative($0, in: paths)) } }
        if output == nil, paths.count == 1, files.count == 1, files[0].0 == paths[0] {
            let translation = try rejectingBadInput(file: paths[0]) {
                try ScenarioTranslator().translate(try Fixture(path: paths[0]).scenario, to: to)
            }
            print(JSONWriter.prettyText(translation.document))
            for loss in translation.losses { printError("lost: " + loss.description) }
            if strict && !translation.isLossless { throw ExitCode(3) }
            return
        }
        guard let output else {
            printError("pushbridge: --output: expected the folder to write translations to, for \(files.count) files [missing-key]")
            throw ExitCode(2)
        }
        if files.isEmpty {
            printError("pushbridge: no scenarios to translate: no *.json file under " + paths.map { "\"\($0)\"" }.joined(separator: ", ") + " [no-fixtures]")
            throw ExitCode(2)
        }
        var lossless = 0, lossy = 0, skipped = 0, bad = 0
        var byField: [String: Int] = [:]
        for (file, relative) in files {
            do {
                let document = try JSONParser.parse(try FixtureDiscovery.read(file))
                if document["variants"] != nil {
                    skipped += 1
                    print("SKIP      \(file)  (an equivalence fixture: already in several dialects)")
                    continue
                }
                let translation = try ScenarioTranslator().translate(try Fixture(path: file, document: document).scenario, to: to)
                let destination = URL(fileURLWithPath: output).appendingPathComponent(relative)
                try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                guard FileManager.default.createFile(atPath: destination.path, contents: Data((JSONWriter.prettyText(translation.document) + "\n").utf8)) else {
                    printError("pushbridge: --output: expected a writable folder, found \"\(output)\" [unreadable-file]")
                    throw ExitCode(2)
                }
                let fields = Set(translation.losses.map(\.field.rawValue)).sorted()
                for field in fields { byField[field, default: 0] += 1 }
                if translation.isLossless {
                    lossless += 1
                    print("LOSSLESS  \(file) → \(destination.path)")
                } else {
                    lossy += 1
                    print("LOSSY     \(file) → \(destination.path)  (\(translation.losses.count) lost: \(fields.joined(separator: ", ")))")
                }
            } catch let error as InputError {
                bad += 1
                print("BAD       \(file)")
                printError("pushbridge: " + error.in(file: file).description)
            }
        }
        if !byField.isEmpty {
            print("")
            print("Losses by field:")
            let width = String(byField.values.max() ?? 0).count
            for (field, count) in byField.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
                print("  " + String(repeating: " ", count: width - String(count).count) + "\(count) file\(count == 1 ? ": " : "s:") \(field)")
            }
        }
        print("\(lossless + lossy) translated to \(to) (\(lossless) lossless, \(lossy) lossy), \(skipped) skipped, \(bad) bad")
        if bad > 0 { throw ExitCode(2) }
        if strict && lossy > 0 { throw ExitCode(3) }
    }

    /// A file's path below the folder argument that found it (its name, for a file argument).
    static func relative(_ file: String, in paths: [String]) -> String {
        for path in paths where file != path {
            let folder = path.hasSuffix("/") ? path : path + "/"
            if file.hasPrefix(folder) { return String(file.dropFirst(folder.count)) }
        }
        return URL(fileURLWithPath: file).lastPathComponent
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

    @Option(help: "With --to: one pair's view (what a migration from this dialect carries), 100 columns wide.")
    var from: String?

    @Option(help: "With --from: the dialect migrated to.")
    var to: String?

    func validate() throws {
        if (from == nil) != (to == nil) { throw ValidationError("--from and --to go together") }
    }

    func run() throws {
        if let from, let to {
            try dialectOption(from, option: "--from")
            try dialectOption(to, option: "--to")
        }
        let directory = mappings ?? Self.defaultDirectory()
        let catalog = try rejectingBadInput(file: nil) { try MappingCatalog.load(from: directory) }
        if let from, let to {
            print(catalog.pairView(from: from, to: to), terminator: "")
            return
        }
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

/// A secret from the file an option names, else from an environment variable (never from the
/// command line, where process lists show it); exits 2 naming both when neither has it.
func readSecret(file: String?, option: String, variable: String, what: String, command: String) throws -> String {
    let text: String?
    if let file {
        guard let data = FileManager.default.contents(atPath: file) else {
            printError("pushbridge: \(option): expected a readable file, found \"\(file)\" [unreadable-file]")
            throw ExitCode(2)
        }
        text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    } else {
        text = ProcessInfo.processInfo.environment[variable]
    }
    guard let text, !text.isEmpty else {
        printError("pushbridge: \(command): expected \(what) in \(option) or \(variable) [missing-key]")
        throw ExitCode(2)
    }
    return text
}

/// Waits on a synchronous path for a value an async task produces.
final class BlockingResult<Value: Sendable>: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var value: Result<Value, any Error>?

    func set(_ result: Result<Value, any Error>) {
        value = result
        semaphore.signal()
    }

    func wait() -> Result<Value, any Error> {
        semaphore.wait()
        return value!
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
