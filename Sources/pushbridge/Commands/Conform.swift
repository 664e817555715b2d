import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeServiceConformance
import PushBridgeFacadeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Synchronization

struct Conform: AsyncParsableCommand {
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

    @Argument(help: "Fixture files or folders (searched recursively for *.json); none with --capture-ca-out alone.")
    var paths: [String] = []

    @Option(help: "The implementation under test: a shell command (run as `CMD FILE`) or an http:// or https:// URL.")
    var against: String?

    @Option(help: "Seconds per fixture for --against.")
    var timeout: Double = 10

    @Option(help: "Run service fixtures (Fixtures/service) against this running `pushbridge serve`, such as http://127.0.0.1:8080: each makes a new app with the admin key from PUSHBRIDGE_ADMIN_KEY (or --admin-key-file).")
    var service: String?

    @Option(help: "With --service: a file holding the service's admin key.")
    var adminKeyFile: String?

    @Option(help: "With --service: judge each service fixture by the requests that reach an APNs stand-in listening at HOST:PORT (HTTP/2 over TLS), which the server under test must be configured to deliver to.")
    var captureApns: String?

    @Option(help: "The capture's CA certificate (PEM), for the server under test to trust; its key is kept beside it (FILE.key, mode 0600). Made when missing, reused when there; alone (without --service) it only makes them.")
    var captureCaOut: String?

    @Option(help: "With --capture-apns: the team's APNs public key (PEM, or the .p8 key): provider tokens must be signed with it.")
    var captureJwtKey: String?

    @Option(help: "With --capture-apns: write every request the capture saw to this file, one JSON object a line (token, headers without the provider token, payload, the token's claims, the answer).")
    var captureLog: String?

    @Option(help: "With --capture-apns: seconds a send's pushes may take to reach the capture.")
    var captureTimeout: Double = 5

    @Option(help: "With --capture-apns: a command that registers a device on the server under test, for fixtures whose device only a vendor's client SDK registers; run as `CMD VENDOR USER TOKEN CERTIFICATE-OR-BUSIID`.")
    var deviceHook: String?

    @Option(help: "With --capture-apns: the vendor credentials of a server that is not PushBridge (JSON: easemob {org, app, clientId, clientSecret}, tencent {sdkAppId, secretKey, administrator}), instead of the admin key.")
    var vendorCredentials: String?

    @Option(help: "Also write a JUnit XML report to this file (one testcase per fixture, with its time).")
    var junit: String?

    @Option(help: "How many fixtures run at once (default: the number of cores). The report keeps file order.")
    var jobs: Int?

    @Option(help: "The report on standard output: human or json.")
    var format: ReportFormat = .human

    @Flag(help: "Run each fixture through the facade's SQLite store (apply the calls, set the group, send) instead of the in-memory engine; queries are answered from the store.")
    var viaStore = false

    @Flag(help: "Print what a team's server and app need before a black-box run of the service fixtures selected (certificates, the users, groups and devices the run makes and removes, the credentials files), then exit.")
    var printSetup = false

    @Flag(help: "Exit 0 even when every selected fixture was skipped (a run that judged nothing exits 2 otherwise).")
    var allowSkips = false

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
        if paths.isEmpty && !(captureCaOut != nil && service == nil) {
            throw ValidationError("Missing expected argument '<paths> ...': fixture files or folders (only --capture-ca-out alone needs none)")
        }
        if force && !record { throw ValidationError("--force only goes with --record") }
        if printSetup && (record || against != nil || viaStore || service != nil) {
            throw ValidationError("--print-setup only reads the fixtures; it goes with neither --record, --against, --via-store nor --service")
        }
        if viaStore && (against != nil || record) { throw ValidationError("--via-store tests the built-in store path; it goes with neither --against nor --record") }
        if record && against != nil { throw ValidationError("--record writes the built-in engine's decisions; it cannot be used with --against") }
        if timeout <= 0 { throw ValidationError("--timeout must be a positive number of seconds") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if service != nil && (against != nil || viaStore || record) {
            throw ValidationError("--service runs service fixtures against a service; it goes with neither --against, --via-store nor --record")
        }
        if adminKeyFile != nil && service == nil { throw ValidationError("--admin-key-file only goes with --service") }
        if (captureApns != nil || captureJwtKey != nil || deviceHook != nil || vendorCredentials != nil) && service == nil {
            throw ValidationError("--capture-apns, --capture-jwt-key, --device-hook and --vendor-credentials go with --service")
        }
        if (captureJwtKey != nil || deviceHook != nil || vendorCredentials != nil || captureLog != nil) && captureApns == nil {
            throw ValidationError("--capture-jwt-key, --capture-log, --device-hook and --vendor-credentials go with --capture-apns (black-box mode)")
        }
        if vendorCredentials != nil && adminKeyFile != nil { throw ValidationError("--vendor-credentials replaces the admin key: give one of them") }
        if captureTimeout <= 0 || captureTimeout > 600 { throw ValidationError("--capture-timeout must be 0–600 seconds") }
    }

    func run() async throws {
        let registry = DialectRegistry.standard
        if let dialect { try dialectOption(dialect, in: registry) }
        _ = try profileOption(profile, in: registry)
        let selection = FixtureSelection(pattern: filter, dialect: dialect, profile: profile)
        if record { return try recordFixtures(selection) }
        if printSetup {
            let fixtures = try rejectingBadInput(file: nil) {
                try FixtureDiscovery.files(in: paths).filter { selection.takes(path: $0, name: nil) }.map { try ServiceFixture(path: $0) }
            }
            if fixtures.isEmpty {
                printError("pushbridge: no fixtures selected: \(selectionText) [no-fixtures]")
                throw ExitCode(2)
            }
            print(ServiceSetup(fixtures).text)
            return
        }
        if service == nil, let captureCaOut {
            let (_, made) = try captureAuthority(captureCaOut)
            printError(made ? "pushbridge: wrote the capture CA to \(captureCaOut) (its key: \(captureCaOut).key)" : "pushbridge: the capture CA at \(captureCaOut) is there already")
            return
        }

        let report: ConformanceReport
        if let service {
            report = try await serviceReport(service, selection: selection)
        } else {
            let provider = try provider()
            try check(provider)
            let runner = ConformanceRunner(provider: provider)
            let progress = ProgressLine()
            report = try await rejectingBadInput(file: nil) {
                try await runner.run(paths: paths, selection: selection, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, progress: progress.show)
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
        if report.judgedNothing && !allowSkips {
            let reasons = report.skipGroups.map { "\($0.reason) (\($0.fixtures))" }.joined(separator: "; ")
            printError("pushbridge: every selected fixture (\(report.results.count)) was skipped, so nothing was judged: \(reasons); "
                + "--allow-skips accepts such a run [all-skipped]")
            throw ExitCode(2)
        }
    }

    /// Runs service fixtures against a running service (the same runner the tests use).
    func serviceReport(_ service: String, selection: FixtureSelection) async throws -> ConformanceReport {
        guard let url = URL(string: service), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            printError("pushbridge: --service: expected a URL such as http://127.0.0.1:8080, found \"\(service)\" [invalid-value]")
            throw ExitCode(2)
        }
        var runner: ServiceConformanceRunner
        if let vendorCredentials {
            let credentials = try rejectingBadInput(file: vendorCredentials) { try VendorCredentials(path: vendorCredentials) }
            runner = ServiceConformanceRunner(baseURL: service, credentials: credentials)
        } else {
            let key = try readSecret(file: adminKeyFile, option: "--admin-key-file", variable: "PUSHBRIDGE_ADMIN_KEY", what: "the service's admin key", command: "--service")
            runner = ServiceConformanceRunner(baseURL: service, adminKey: key)
        }
        if case .failure(let error) = await Result(catching: { try await runner.checkReachable() }) {
            printError("pushbridge: --service: expected a running \(vendorCredentials == nil ? "PushBridge service" : "server"), found \(error) [unreachable]")
            throw ExitCode(2)
        }
        var capture: APNsCapture?
        if let captureApns {
            capture = try await startCapture(captureApns)
            runner.capture = capture
            runner.captureTimeout = .milliseconds(Int64(captureTimeout * 1000))
            runner.deviceHook = deviceHook
        }
        let outcome = await Result(catching: { [runner] in try await runner.run(paths: paths, selection: selection) })
        if let capture, let captureLog { try writeCaptureLog(capture, to: captureLog) }
        await capture?.stop()
        return try rejectingBadInput(file: nil) { try outcome.get() }
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
