import AsyncHTTPClient
import Foundation
import PushBridgeJSON
import Synchronization
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// `pushbridge serve` as a process: configuration checks, SIGTERM, and `kill -9` under load.
@Suite("Service process")
struct ServiceProcessTests {

    /// A value shared between tasks.
    final class Locked<Value>: @unchecked Sendable {
        private var value: Value
        private let lock = NSLock()
        init(_ value: Value) { self.value = value }
        func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
    }



    /// Posts messages to u2 from `workers` concurrent clients until `stop` says so; returns the
    /// ids tried and, for each acknowledged one, the body of its 201.
    static func load(_ client: HTTPClient, _ server: ProcessScenario.ServerProcess, key: String, workers: Int, stop: @escaping @Sendable (Int) -> Bool)
        async -> (tried: [String], acked: [String: String])
    {
        let tried = Locked<[String]>([])
        let acked = Locked<[String: String]>([:])
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var i = 0
                    while !stop(acked.withLock { $0.count }) {
                        let id = "k-\(worker)-\(i)"
                        i += 1
                        tried.withLock { $0.append(id) }
                        guard let reply = try? await client.call(
                            .POST, server.base + "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: ProcessScenario.message(id))
                        else { return }
                        if reply.status == 201 { acked.withLock { $0[id] = reply.text } } else if reply.status >= 500 { return }
                    }
                }
            }
        }
        return (tried.withLock { $0 }, acked.withLock { $0 })
    }

    /// After a restart: every acknowledged message is there with the decisions it was answered
    /// with, and u2's badge counts exactly the messages that are there (none half-applied).
    static func checkAfterRestart(database: String, tried: [String], acked: [String: String]) async throws {
        let server = try await ProcessScenario.ServerProcess.start(database: database)
        defer { server.stopInBackground() }
        try await withHTTPClient { client in
            let created = try await client.call(.POST, server.base + "/v1/apps", key: testAdminKey, body: #"{"app":"demo"}"#)
            #expect(created.status == 409, "the app survived")
            // The key is not stored; read state through a second app? No: through the facade file.
            _ = created
        }
        let store = try PushBridgeStoreProbe(path: database + "/apps/demo.sqlite")
        var present = 0
        for id in tried {
            let stored = try await store.sentMessage(id)
            if let body = acked[id] {
                #expect(stored != nil, "acknowledged message \(id) is lost")
                if let stored { #expect(body.contains(stored), "\(id): stored decisions differ from the acknowledged ones") }
            }
            if stored != nil { present += 1 }
        }
        #expect(present >= acked.count)
        let badge = try await store.badge(of: "u2")
        #expect(badge == present, "u2's badge counts \(badge) pushes, \(present) messages are stored")
        #expect(try store.integrityCheck() == "ok")
    }

    /// `kill -9` while 16 clients post messages: nothing acknowledged is lost, nothing half-applied.
    @Test func killNineUnderLoadLosesNothingAcknowledged() async throws {
        let database = temporaryDirectory() + "/data"
        let server = try await ProcessScenario.ServerProcess.start(database: database)
        let (tried, acked) = try await withHTTPClient(retriesConnecting: false) { client in
            let key = try await ProcessScenario.setUp(client, server)
            let killer = Task {
                // Kill once 200 messages are acknowledged (or after 10 s on a loaded machine).
                let start = Date()
                while Date().timeIntervalSince(start) < 10 {
                    try? await Task.sleep(for: .milliseconds(20))
                    if let reply = try? await client.call(.GET, server.base + "/metrics", key: nil),
                        let line = reply.text.split(separator: "\n").first(where: { $0.hasPrefix("pushbridge_messages_total{") }),
                        let count = Double(line.split(separator: " ").last ?? ""), count >= 200
                    { break }
                }
                kill(server.process.processIdentifier, SIGKILL)
            }
            // Each worker posts until a call fails (at the kill, or refused at once after it): no
            // pause in which the kill could find every worker idle. (A worker that first checked
            // `isRunning` could stop before trying again; on a loaded CI machine all 16 once did,
            // and nothing was in flight.)
            let result = await Self.load(client, server, key: key, workers: 16) { _ in false }
            _ = await killer.value
            await server.exited()
            return result
        }
        #expect(server.process.terminationReason == .uncaughtSignal && server.process.terminationStatus == SIGKILL)
        #expect(acked.count >= 20, "the load reached the server: \(acked.count) acknowledged")
        #expect(tried.count > acked.count, "requests were tried that were never acknowledged: the ones in flight at the kill")
        try await Self.checkAfterRestart(database: database, tried: tried, acked: acked)
    }

    /// SIGTERM under load: the process stops accepting, finishes what it took, commits, exits 0.
    @Test func sigtermFinishesRequestsAndClosesTheStores() async throws {
        let database = temporaryDirectory() + "/data"
        let server = try await ProcessScenario.ServerProcess.start(database: database)
        let status = Locked<Int32?>(nil)
        let (tried, acked) = try await withHTTPClient { client in
            let key = try await ProcessScenario.setUp(client, server)
            let stopper = Task.detached {
                try? await Task.sleep(for: .milliseconds(400))
                let exit = await server.stop(signal: SIGTERM)
                status.withLock { $0 = exit }
            }
            let result = await Self.load(client, server, key: key, workers: 8) { _ in !server.process.isRunning }
            _ = await stopper.value
            return result
        }
        #expect(status.withLock { $0 } == 0, "exit status after SIGTERM: \(String(describing: status.withLock { $0 }))\n\(server.log.suffix(2000))")
        #expect(server.log.contains("stores closed"))
        #expect(server.log.contains("route=/v1/apps/{app}/messages"), "one log line per request")
        #expect(!server.log.contains(testAdminKey) && !server.log.contains("pbk_"), "no key reaches the log")
        #expect(acked.count > 0)
        try await Self.checkAfterRestart(database: database, tried: tried, acked: acked)
    }

    /// `serve --check-config`: file, environment and flags in that order; errors name their source
    /// and key; secrets are never printed.
    @Test func configurationIsCheckedAndSecretsStayHidden() throws {
        let dir = temporaryDirectory()
        let file = dir + "/pushbridge.yaml"
        try """
            # a comment
            listen: 127.0.0.1:9000
            db: \(dir)/data
            request-timeout-seconds: 3
            admin-key: file-admin-key-0123456789
            """.write(toFile: file, atomically: true, encoding: .utf8)
        var run = try runServe(["--config", file, "--check-config", "--listen", "127.0.0.1:9100"], environment: ["PUSHBRIDGE_REQUEST_TIMEOUT_SECONDS": "7"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("listen: 127.0.0.1:9100\n"), "a flag wins over the file")
        #expect(run.stdout.contains("request-timeout-seconds: 7.0\n"), "the environment wins over the file")
        #expect(run.stdout.contains("db: \(dir)/data\n") && run.stdout.contains("admin key: set (hidden)"))
        #expect(!run.stdout.contains("file-admin-key"), "the admin key is never printed")

        try "listen: 127.0.0.1:9000\nrequest-timeout: 3\n".write(toFile: file, atomically: true, encoding: .utf8)
        run = try runServe(["--config", file, "--check-config"])
        #expect(run.status == 2 && run.stderr.contains("\(file): request-timeout: expected a known key (did you mean request-timeout-seconds?)"), "\(run.stderr)")

        run = try runServe(["--check-config"], environment: ["PUSHBRIDGE_ADMIN_KEY": "short-secret"])
        #expect(run.status == 2 && run.stderr.contains("environment PUSHBRIDGE_ADMIN_KEY: admin-key: expected a key of at least 16 characters, found (hidden)"), "\(run.stderr)")
        #expect(!run.stderr.contains("short-secret"))
        run = try runServe(["--check-config"], environment: ["PUSHBRIDGE_LISTN": "x"])
        #expect(run.status == 2 && run.stderr.contains("PUSHBRIDGE_LISTN") && run.stderr.contains("did you mean PUSHBRIDGE_LISTEN?"), "\(run.stderr)")
        // max-open-apps: printed when valid; 0 refused, naming its source and what was expected.
        run = try runServe(["--check-config"], environment: ["PUSHBRIDGE_MAX_OPEN_APPS": "32"])
        #expect(run.status == 0 && run.stdout.contains("max-open-apps: 32\n"), "\(run.stdout)\(run.stderr)")
        run = try runServe(["--check-config"], environment: ["PUSHBRIDGE_MAX_OPEN_APPS": "0"])
        #expect(run.status == 2 && run.stderr.contains("environment PUSHBRIDGE_MAX_OPEN_APPS: max-open-apps: expected a number of apps, 1–1000000, found \"0\""), "\(run.stderr)")
        // push-task-rate: 0 is no limit; a negative rate refused.
        run = try runServe(["--check-config"], environment: ["PUSHBRIDGE_PUSH_TASK_RATE": "250"])
        #expect(run.status == 0 && run.stdout.contains("push-task-rate: 250 receivers a second\n"), "\(run.stdout)\(run.stderr)")
        run = try runServe(["--check-config"])
        #expect(run.status == 0 && run.stdout.contains("push-task-rate: 0 (no limit)\n"), "\(run.stdout)\(run.stderr)")
        run = try runServe(["--check-config"], environment: ["PUSHBRIDGE_PUSH_TASK_RATE": "-5"])
        #expect(run.status == 2 && run.stderr.contains("push-task-rate: expected receivers a second, 1–1000000, or 0 for no limit, found \"-5\""), "\(run.stderr)")
        // postgres-connections: the same, past its range of 1–1000 (a file's key this time).
        try "postgres-connections: 1001\n".write(toFile: file, atomically: true, encoding: .utf8)
        run = try runServe(["--config", file, "--check-config"])
        #expect(run.status == 2 && run.stderr.contains("\(file): postgres-connections: expected a number of connections, 1–1000, found \"1001\""), "\(run.stderr)")
        run = try runServe(["--check-config"], environment: ["PUSHBRIDGE_POSTGRES_CONNECTIONS": "8"])
        #expect(run.status == 0 && run.stdout.contains("store-connections: 8 (unused with SQLite)\n"), "\(run.stdout)\(run.stderr)")
        run = try runServe(["--check-config"], environment: ["PUSHBRIDGE_STORE_CONNECTIONS": "9"])
        #expect(run.status == 0 && run.stdout.contains("store-connections: 9 (unused with SQLite)\n"), "\(run.stdout)\(run.stderr)")
        run = try runServe(["--check-config"], environment: ["PUSHBRIDGE_STORE_CONNECTIONS": "9", "PUSHBRIDGE_POSTGRES_CONNECTIONS": "8"])
        #expect(run.status == 2 && run.stderr.contains("store-connections: expected either store-connections or postgres-connections"), "\(run.stderr)")
        // store: a backend the executable offers, named by its scheme; the URL (a password) never echoed.
        run = try runServe(["--check-config", "--store", "postgres://pb:hunter2-secret@127.0.0.1:1/db"])
        #expect(run.status == 0 && run.stdout.contains("store: postgres://pb@127.0.0.1:1/db\n") && !run.stdout.contains("hunter2"), "\(run.stdout)\(run.stderr)")
        run = try runServe(["--check-config", "--store", "mysql://pb:hunter2-secret@127.0.0.1/db"])
        #expect(run.status == 2 && run.stderr.contains("--store: store: expected sqlite, or a PostgreSQL URL postgres://") && !run.stderr.contains("hunter2"), "\(run.stderr)")
        run = try runServe(["--check-config", "--listen", "nowhere"])
        #expect(run.status == 2 && run.stderr.contains("--listen: listen: expected HOST:PORT"), "\(run.stderr)")
        run = try runServe(["--check-config", "--config", dir + "/missing.yaml"])
        #expect(run.status == 2 && run.stderr.contains("missing.yaml"), "\(run.stderr)")
        try "- a\n- b\n".write(toFile: file, atomically: true, encoding: .utf8)
        run = try runServe(["--config", file, "--check-config"])
        #expect(run.status == 2 && run.stderr.contains("expected a mapping"), "\(run.stderr)")
        // The commented example in the repository is valid as it is.
        run = try runServe(["--config", Repository.root.appendingPathComponent("Examples/service/pushbridge.yaml").path, "--check-config"])
        #expect(run.status == 0, "\(run.stderr)")
    }

    func runServe(_ arguments: [String], environment: [String: String] = [:]) throws -> ToolRun {
        try runTool(["serve"] + arguments, environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHBRIDGE_") }.merging(environment) { $1 })
    }
}
