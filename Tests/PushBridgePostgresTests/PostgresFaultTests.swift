import AsyncHTTPClient
import Foundation
import NIOHTTP1
import PushBridgeJSON
import PushBridgePostgres
import PushBridgeServer
import Synchronization
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// A node whose database restarts, loses its backends or is down when the node starts:
/// every answer in time (201, or 503 `store-unavailable` with `Retry-After`, never a 500 or
/// a hang), writes resume by themselves within 5 s of the database answering again, nothing
/// acknowledged is lost. Each test has a cluster of its own, so restarting it disturbs no other test.
@Suite("PostgreSQL faults", .serialized)
struct PostgresFaultTests {
    /// One message's answer: its id, status, and how long it took.
    struct Answer: Sendable {
        var id: String
        var status: Int
        var seconds: Double
        var at: ContinuousClock.Instant
    }

    @Test("restart and pg_terminate_backend mid-load: answers in time, writes resume, nothing acknowledged lost")
    func restartAndTerminatedBackendsMidLoad() async throws {
        guard let cluster = try await TestCluster.start() else { return }
        defer { cluster.remove() }
        let timeout = 4.0
        try await withLiveService(database: temporaryDirectory(), { $0.usePostgres(cluster.location); $0.requestTimeoutSeconds = timeout }) { service in
            try await withHTTPClient(connectionPerRequest: true) { http in
                let base = "http://127.0.0.1:\(service.port)"
                let key = try await setUpExampleApp(app: "faults") { method, path, key, body in
                    try await http.call(NIOHTTP1.HTTPMethod(rawValue: method.rawValue), base + path, key: key, body: body)
                }
                let answers = Answers()
                let stop = ContinuousClock.now + .seconds(12)
                let restartedAt = try await withThrowingTaskGroup(of: Void.self) { group in
                    for client in 0..<6 {
                        group.addTask {
                            var n = 0
                            while ContinuousClock.now < stop {
                                n += 1
                                let id = "f-\(client)-\(n)"
                                let start = ContinuousClock.now
                                let status: Int
                                do {
                                    status = try await http.call(.POST, base + "/v1/apps/faults/messages?dialect=agora-silent", key: key, body: ProcessScenario.message(id)).status
                                } catch {
                                    status = -1  // no answer at all
                                }
                                let took = ContinuousClock.now - start
                                answers.append(Answer(id: id, status: status, seconds: Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18, at: ContinuousClock.now))
                                if status != 201 { try await Task.sleep(for: .milliseconds(50)) }
                            }
                        }
                    }
                    try await Task.sleep(for: .seconds(2))
                    try await cluster.terminateBackends()
                    try await Task.sleep(for: .seconds(2))
                    try await cluster.restart()
                    let restartedAt = ContinuousClock.now
                    try await group.waitForAll()
                    return restartedAt
                }
                let all = answers.all
                let statuses = Dictionary(grouping: all, by: \.status).mapValues(\.count)
                #expect(all.allSatisfy { $0.status == 201 || $0.status == 503 }, "only 201 or 503: \(statuses)")
                #expect(all.allSatisfy { $0.seconds < timeout + 3 }, "every answer in time: the slowest took \(all.map(\.seconds).max() ?? 0) s")
                #expect(statuses[503, default: 0] > 0 || statuses[201, default: 0] > 0)
                // Writes resumed by themselves within 5 s of the restart.
                let resumed = all.filter { $0.status == 201 && $0.at > restartedAt }.map(\.at).min()
                #expect(resumed != nil && resumed! - restartedAt < .seconds(5), "the first write after the restart: \(resumed.map { "\($0 - restartedAt)" } ?? "none")")
                // Nothing acknowledged is lost; what is stored is counted once (u2's badge).
                var stored = 0
                for answer in all where answer.status == 201 || answer.status == 503 {
                    let read = try await http.call(.GET, base + "/v1/apps/faults/messages/\(answer.id)", key: key)
                    if answer.status == 201 { #expect(read.status == 200, "acknowledged \(answer.id) was lost") }
                    if read.status == 200 { stored += 1 }
                }
                let u2 = try await http.call(.GET, base + "/v1/apps/faults/users/u2", key: key)
                #expect(u2.json?["badge"] == .int(Int64(stored)), "badge \(u2.json?["badge"] ?? .null) for \(stored) stored messages")
                let ready = try await http.call(.GET, base + "/readyz", key: nil)
                #expect(ready.status == 200)
            }
        }
    }

    @Test("a node started while its database is down answers 503, is not ready, and serves once the database is up")
    func aNodeStartsWhileTheDatabaseIsDown() async throws {
        guard let cluster = try await TestCluster.start() else { return }
        defer { cluster.remove() }
        try await cluster.stop()
        try await withLiveService(database: temporaryDirectory(), { $0.usePostgres(cluster.location); $0.requestTimeoutSeconds = 4 }) { service in
            try await withHTTPClient(connectionPerRequest: true) { http in
                let base = "http://127.0.0.1:\(service.port)"
                #expect(try await http.call(.GET, base + "/healthz", key: nil).status == 200, "alive")
                let ready = try await http.call(.GET, base + "/readyz", key: nil)
                #expect(ready.status == 503 && ready.json?["error"]?["code"] == "store-unavailable", "\(ready.text)")
                let start = ContinuousClock.now
                let create = try await http.call(.POST, base + "/v1/apps", key: testAdminKey, body: #"{"app":"late"}"#)
                #expect(create.status == 503 && create.json?["error"]?["code"] == "store-unavailable", "\(create.text)")
                #expect(ContinuousClock.now - start < .seconds(7), "answered in time")
                try await cluster.start()
                let up = ContinuousClock.now
                var key: String?
                while key == nil && ContinuousClock.now - up < .seconds(8) {
                    let reply = try await http.call(.POST, base + "/v1/apps", key: testAdminKey, body: #"{"app":"late"}"#)
                    if reply.status == 201 { key = reply.json?["key"]?.stringValue } else { try await Task.sleep(for: .milliseconds(100)) }
                }
                let resumed = ContinuousClock.now - up
                #expect(key != nil && resumed < .seconds(5), "writes resumed after \(resumed)")
                #expect(try await http.call(.GET, base + "/readyz", key: nil).status == 200)
                if let key {
                    let app = try await http.call(.GET, base + "/v1/apps/late", key: key)
                    #expect(app.status == 200, "\(app.text)")
                }
            }
        }
    }

    @Test("SIGTERM stops a node within its timeout while its database is down and requests wait on it")
    func sigtermWhileTheDatabaseIsDown() async throws {
        guard let cluster = try await TestCluster.start() else { return }
        defer { cluster.remove() }
        let server = try await ProcessScenario.ServerProcess.start(
            database: temporaryDirectory() + "/data",
            extraEnvironment: ["PUSHBRIDGE_STORE": "postgres://pb@127.0.0.1:\(cluster.port)/postgres", "PUSHBRIDGE_REQUEST_TIMEOUT_SECONDS": "3"])
        defer { server.stopInBackground(signal: SIGKILL) }
        try await withHTTPClient(connectionPerRequest: true) { http in
            let key = try await ProcessScenario.setUp(http, server)
            #expect(try await http.call(.POST, server.base + "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: ProcessScenario.message("before")).status == 201)
            try await cluster.stop()
            // Requests in flight while the database is down, then SIGTERM.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<4 {
                    group.addTask {
                        (try? await http.call(.POST, server.base + "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: ProcessScenario.message("down-\(n)")).status) ?? -1
                    }
                }
                try await Task.sleep(for: .milliseconds(300))
                let start = ContinuousClock.now
                let status = await server.stop(signal: SIGTERM, within: 10)
                let took = ContinuousClock.now - start
                #expect(status == 0, "exit status after SIGTERM: \(String(describing: status)) after \(took)\n\(server.log.suffix(1500))")
                #expect(took < .seconds(3 + 3), "stopped within the request timeout and a margin: \(took)")
                var statuses: [Int] = []
                for try await status in group { statuses.append(status) }
                return statuses
            }
            #expect(statuses.allSatisfy { $0 == 503 || $0 == -1 }, "answers while the database was down: \(statuses)")
        }
    }
}

extension PostgresFaultTests {
    /// A node's connections do not grow with its apps. Before, each open app held a
    /// writer connection and its readers on every node, so 200 apps on two nodes needed 400 and more
    /// of the cluster's 100 (PostgreSQL's default `max_connections`, set here explicitly).
    @Test("200 apps on two nodes against max_connections 100: every app answers on both, each node within postgres-connections")
    func manyAppsOnTwoNodesStayWithinTheirConnections() async throws {
        guard let cluster = try await TestCluster.start() else { return }
        defer { cluster.remove() }
        let apps = 200
        let perNode = 16
        var location = cluster.location
        location.deadline = .seconds(5)
        let nodeA = try PostgresServiceStorage(location: location, connections: perNode)
        let nodeB = try PostgresServiceStorage(location: location, connections: perNode)
        let configure: @Sendable (inout ServiceConfiguration) -> Void = { $0.usePostgres(cluster.location); $0.requestTimeoutSeconds = 10 }
        try await withLiveService(database: temporaryDirectory(), storage: nodeA, configure) { a in
            try await withLiveService(database: temporaryDirectory(), storage: nodeB, configure) { b in
                try await withHTTPClient(connectionPerRequest: false) { http in
                    let (baseA, baseB) = ("http://127.0.0.1:\(a.port)", "http://127.0.0.1:\(b.port)")
                    // Eight clients at once: each creates apps on A, sends on A, reads the send back on B
                    // and sends again on B, so both nodes hold every app open.
                    let failures = try await withThrowingTaskGroup(of: [String].self) { group in
                        for client in 0..<8 {
                            group.addTask {
                                var failures: [String] = []
                                for n in stride(from: client, to: apps, by: 8) {
                                    let app = "many-\(n)"
                                    let created = try await http.call(.POST, baseA + "/v1/apps", key: testAdminKey, body: #"{"app":"\#(app)"}"#)
                                    guard created.status == 201, let key = created.json?["key"]?.stringValue else {
                                        failures.append("\(app) create: \(created.status) \(created.text.prefix(200))")
                                        continue
                                    }
                                    let path = "/v1/apps/\(app)/messages"
                                    let onA = try await http.call(.POST, baseA + path + "?dialect=agora-silent", key: key, body: ProcessScenario.message("a-\(n)"))
                                    let readOnB = try await http.call(.GET, baseB + path + "/a-\(n)", key: key)
                                    let onB = try await http.call(.POST, baseB + path + "?dialect=agora-silent", key: key, body: ProcessScenario.message("b-\(n)"))
                                    for (what, reply, status) in [("send on A", onA, 201), ("read on B", readOnB, 200), ("send on B", onB, 201)] where reply.status != status {
                                        failures.append("\(app) \(what): \(reply.status) \(reply.text.prefix(200))")
                                    }
                                }
                                return failures
                            }
                        }
                        var all: [String] = []
                        for try await failures in group { all += failures }
                        return all
                    }
                    #expect(failures.count == 0, "\(failures.count) failures, first: \(failures.prefix(5))")
                    #expect(nodeA.openConnections <= perNode && nodeB.openConnections <= perNode, "open: A \(nodeA.openConnections), B \(nodeB.openConnections)")
                    let reply = try await cluster.psql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
                    let clients = reply.split(separator: "\n").compactMap { Int($0) }.last
                    #expect(clients.map { $0 <= 2 * perNode + 1 } == true, "client connections at the server (psql's own included): \(reply)")
                    #expect(try await http.call(.GET, baseA + "/readyz", key: nil).status == 200)
                    // What an operator sees of the pool.
                    let metrics = try await http.call(.GET, baseB + "/metrics", key: nil).text
                    #expect(metrics.contains("pushbridge_database_connections_limit 16"), "\(metrics.suffix(2000))")
                    let open = metrics.split(separator: "\n").first { $0.hasPrefix("pushbridge_database_connections_open ") }
                        .flatMap { Double($0.split(separator: " ").last ?? "") }
                    #expect(open.map { $0 >= 1 && $0 <= Double(perNode) } == true, "open connections: \(String(describing: open))")
                    let statements = metrics.split(separator: "\n").first { $0.hasPrefix("pushbridge_database_statements_total ") }
                        .flatMap { Double($0.split(separator: " ").last ?? "") }
                    #expect((statements ?? 0) >= Double(2 * apps), "statements: \(String(describing: statements))")
                    #expect(metrics.contains("pushbridge_database_connections_exhausted_total 0"), "no use waited past its deadline")
                }
            }
        }
    }
}

/// The answers of a load, from its clients.
final class Answers: Sendable {
    private let answers = Mutex<[PostgresFaultTests.Answer]>([])
    func append(_ answer: PostgresFaultTests.Answer) { answers.withLock { $0.append(answer) } }
    var all: [PostgresFaultTests.Answer] { answers.withLock { $0 } }
}

/// A PostgreSQL cluster of one test's own, on a free loopback port: started, stopped, restarted
/// and its backends terminated by the test (initdb refuses root, so it runs as `postgres` then).
/// Without PostgreSQL installed the test says it was skipped (and fails under `CI=true`).
final class TestCluster: Sendable {
    let directory: String
    let port: Int
    let bin: String
    let runAs: [String]

    var location: PostgresLocation { try! PostgresLocation(url: "postgres://pb@127.0.0.1:\(port)/postgres") }

    init(directory: String, port: Int, bin: String, runAs: [String]) {
        self.directory = directory
        self.port = port
        self.bin = bin
        self.runAs = runAs
    }

    static func start() async throws -> TestCluster? {
        let bins = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.sorted().map { "/usr/lib/postgresql/\($0)/bin" } ?? []
        guard let bin = bins.last(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }) else {
            _ = testPostgresURL()  // says SKIPPED, or fails under CI
            return nil
        }
        let directory = try await onAThreadOfItsOwn { try runProgram("/usr/bin/mktemp", ["-d", "/tmp/pushbridge-fault-pg.XXXXXX"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
        let runAs: [String] = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
        if getuid() == 0 { _ = try await onAThreadOfItsOwn { try runProgram("/usr/bin/chown", ["postgres", directory]) } }
        let initdb = try await TestCluster(directory: directory, port: 0, bin: bin, runAs: runAs).run(bin + "/initdb", ["-D", directory + "/data", "-A", "trust", "-U", "pb"])
        try #require(initdb.status == 0, "initdb: \(initdb.stderr)")
        // A port free when chosen can be another test's connection's by the time the server binds it
        // (both come from the ephemeral range): then another port.
        for _ in 1..<3 {
            let cluster = TestCluster(directory: directory, port: try ProcessScenario.freePort(), bin: bin, runAs: runAs)
            if try await cluster.startUnlessPortTaken() { return cluster }
        }
        let cluster = TestCluster(directory: directory, port: try ProcessScenario.freePort(), bin: bin, runAs: runAs)
        try await cluster.start()
        return cluster
    }

    /// Runs a PostgreSQL tool with its output in a file. Not Foundation's `Process`: on Linux it learns
    /// that a child ended from a descriptor the child inherits, and `pg_ctl start` leaves the server
    /// holding it, so it would wait until the server stops.
    func run(_ program: String, _ arguments: [String]) async throws -> ToolRun {
        let command = runAs.isEmpty ? [program] + arguments : runAs + [program] + arguments
        let log = directory + "/tool-\(UUID().uuidString).log"
        return try await onAThreadOfItsOwn {
            defer { try? FileManager.default.removeItem(atPath: log) }
            let status = try spawnAndWait(command, output: log)
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return ToolRun(status: status, stdout: text, stderr: text)
        }
    }

    /// How long `pg_ctl` waits for the server: the whole suite runs at once on two cores in CI, where a
    /// first start has taken more than 30 s.
    static let waitSeconds = 120

    /// The last lines of the server's log, for a failure's message.
    func serverLog() -> String {
        let text = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "(no server log)"
        return "server.log (end):\n" + text.split(separator: "\n", omittingEmptySubsequences: false).suffix(20).joined(separator: "\n")
    }

    func start() async throws {
        let run = try await pgCtlStart()
        try #require(run.status == 0, "pg_ctl start: \(run.stderr)\n\(serverLog())")
    }

    /// Starts the server; `false` when it did not start because its port was taken.
    func startUnlessPortTaken() async throws -> Bool {
        try? FileManager.default.removeItem(atPath: directory + "/server.log")  // this attempt's log alone
        let run = try await pgCtlStart()
        if run.status != 0 && serverLog().contains("could not bind IPv4 address") { return false }
        try #require(run.status == 0, "pg_ctl start: \(run.stderr)\n\(serverLog())")
        return true
    }

    private func pgCtlStart() async throws -> ToolRun {
        try await run(bin + "/pg_ctl", [
            "-D", directory + "/data", "-o", "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100", "-l", directory + "/server.log", "-w", "-t", "\(Self.waitSeconds)", "start",
        ])
    }

    func stop() async throws {
        let run = try await run(bin + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "\(Self.waitSeconds)", "stop"])
        try #require(run.status == 0, "pg_ctl stop: \(run.stderr)\n\(serverLog())")
    }

    func restart() async throws {
        let run = try await run(bin + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "\(Self.waitSeconds)", "restart"])
        try #require(run.status == 0, "pg_ctl restart: \(run.stderr)\n\(serverLog())")
    }

    /// One statement's result through `psql`, as text (rows on lines, columns split by `|`), after
    /// whatever psql said on its standard error (run as `postgres`, it may say it cannot enter the
    /// current directory).
    func psql(_ statement: String) async throws -> String {
        let run = try await run(bin + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "pb", "-d", "postgres", "-Atc", statement])
        try #require(run.status == 0, "psql: \(run.stderr)")
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Ends every other backend, as `pg_terminate_backend` does for an operator.
    func terminateBackends() async throws {
        let run = try await run(bin + "/psql", [
            "-h", "127.0.0.1", "-p", "\(port)", "-U", "pb", "-d", "postgres", "-Atc",
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
        ])
        try #require(run.status == 0, "psql: \(run.stderr)")
    }

    /// Stops the cluster at once and removes its files.
    func remove() {
        let command = (runAs.isEmpty ? [bin + "/pg_ctl"] : runAs + [bin + "/pg_ctl"]) + ["-D", directory + "/data", "-m", "immediate", "-w", "stop"]
        _ = try? spawnAndWait(command, output: "/dev/null")
        try? FileManager.default.removeItem(atPath: directory)
    }
}


