import AsyncHTTPClient
import Foundation
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import PushBridgeAPNsMock
import PushBridgeDelivery
import PushBridgeJSON
import Testing

/// `pushbridge serve` as a child process, and what the process tests of the service, delivery and
/// PostgreSQL share: a free port, a message, a delivery environment, tokens.
package enum ProcessScenario {
    /// A port nothing listens on now.
    package static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                guard bind(fd, $0, length) == 0, getsockname(fd, $0, &length) == 0 else { throw POSIXError(.EADDRINUSE) }
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
    /// A running `pushbridge serve`.
    package final class ServerProcess: @unchecked Sendable {
        package let process = Process()
        package let port: Int
        package let logPath: String

        /// Starts the server on a free loopback port over `database` and waits until it listens, on a
        /// thread of its own: the wait (seconds under load) would hold one of the concurrency pool's
        /// threads — two on a 2-core machine — and stall every service the test process runs.
        /// - Parameters:
        ///   - database: the `--db` path.
        ///   - extraEnvironment: `PUSHBRIDGE_*` settings for the server.
        ///   - logDirectory: where its log goes (default: beside `database`).
        package static func start(database: String, extraEnvironment: [String: String] = [:], logDirectory: String? = nil) async throws -> ServerProcess {
            try await onAThreadOfItsOwn { try ServerProcess(database: database, extraEnvironment: extraEnvironment, logDirectory: logDirectory) }
        }

        private init(database: String, extraEnvironment: [String: String], logDirectory: String?) throws {
            let directory = logDirectory.map { URL(fileURLWithPath: $0) } ?? URL(fileURLWithPath: database).deletingLastPathComponent()
            logPath = directory.appendingPathComponent("serve-\(UUID().uuidString).log").path
            try Data().write(to: URL(fileURLWithPath: logPath))
            process.executableURL = URL(fileURLWithPath: Repository.executable)
            process.arguments = ["serve", "--db", database, "--listen", "127.0.0.1:0"]
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHBRIDGE_") }
            environment["PUSHBRIDGE_ADMIN_KEY"] = testAdminKey
            environment.merge(extraEnvironment) { $1 }
            process.environment = environment
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle(forWritingAtPath: logPath)
            try process.run()
            // The first line: "listening on http://127.0.0.1:PORT".
            var line: [UInt8] = []
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let byte = out.fileHandleForReading.readData(ofLength: 1)
                guard let b = byte.first else { break }
                if b == 10 { break }
                line.append(b)
            }
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("listening on http://127.0.0.1:"), let port = Int(text.split(separator: ":").last ?? "") else {
                process.terminate()
                throw ProcessFailure(message: "the server did not start: \(text)\n\((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
            }
            self.port = port
        }

        package var base: String { "http://127.0.0.1:\(port)" }
        package var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

        /// Sends a signal and waits (bounded, on a thread of its own) for the exit; the exit status, or
        /// `nil` if it did not end in time (then it is killed).
        /// - Parameters:
        ///   - signal: the signal sent first.
        ///   - limit: how long it may take to exit.
        package func stop(signal: Int32, within limit: TimeInterval = 15) async -> Int32? {
            await onAThreadOfItsOwn { self.stopBlocking(signal: signal, within: limit) }
        }

        /// Sends a signal and leaves the wait for the exit to a thread of its own (for a `defer`, which
        /// cannot await).
        /// - Parameter signal: the signal sent first (killed after 15 s if it did not end).
        package func stopInBackground(signal: Int32 = SIGTERM) {
            Thread { _ = self.stopBlocking(signal: signal, within: 15) }.start()
        }

        /// Waits (on a thread of its own) until the process has exited.
        package func exited() async {
            await onAThreadOfItsOwn { self.process.waitUntilExit() }
        }

        /// `kill -9` and the wait for the exit.
        package func kill9() async {
            _ = await stop(signal: SIGKILL)
        }

        private func stopBlocking(signal: Int32, within limit: TimeInterval) -> Int32? {
            kill(process.processIdentifier, signal)
            let deadline = Date().addingTimeInterval(limit)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            return process.terminationStatus
        }
    }
    /// Creates the example app on a server process, returns its key.
    package static func setUp(_ client: HTTPClient, _ server: ServerProcess) async throws -> String {
        let created = try await client.call(.POST, server.base + "/v1/apps", key: testAdminKey, body: #"{"app":"demo"}"#)
        let key = try #require(created.json?["key"]?.stringValue, "\(created.text)")
        let examples = Repository.root.appendingPathComponent("Examples/facade")
        let app = try String(contentsOf: examples.appendingPathComponent("app.json"), encoding: .utf8)
        let calls = try String(contentsOf: examples.appendingPathComponent("u2-calls.json"), encoding: .utf8)
        #expect(try await client.call(.PUT, server.base + "/v1/apps/demo", key: key, body: app).status == 200)
        #expect(try await client.call(.POST, server.base + "/v1/apps/demo/users/u2/calls?dialect=agora-silent", key: key, body: calls).status == 200)
        return key
    }
    /// Registers users `k0`…`k<count-1>`, each with a device of its own (``token(_:)``), eight at a time.
    package static func registerUsers(_ client: HTTPClient, _ server: ServerProcess, key: String, count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for i in stride(from: lane, to: count, by: 8) {
                        let calls = #"[{"call":"initializeSDK","appkey":"1#2","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(token(i))"}]"#
                        let reply = try await client.call(.POST, server.base + "/v1/apps/demo/users/k\(i)/calls?dialect=agora-silent", key: key, body: calls)
                        #expect(reply.status == 200, "\(reply.text)")
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Binds Easemob credentials to the `demo` app and returns an Easemob app token for it.
    package static func easemobToken(_ client: HTTPClient, _ server: ServerProcess, key: String) async throws -> String {
        let bound = try await client.call(
            .PUT, server.base + "/v1/apps/demo/vendors/easemob", key: key, body: #"{"org":"acme","app":"demo","clientId":"YXA6-id","clientSecret":"YXA6-secret"}"#)
        #expect(bound.status == 200, "\(bound.text)")
        let granted = try await client.call(
            .POST, server.base + "/acme/demo/token", key: nil, body: #"{"grant_type":"client_credentials","client_id":"YXA6-id","client_secret":"YXA6-secret"}"#)
        return try #require(granted.json?["access_token"]?.stringValue, "\(granted.text)")
    }

    /// Kills a server process with `kill -9` once a push task on it has decided at least `count`
    /// receivers (or after 60 s); returns how many it had decided.
    package static func killWhenDecided(_ client: HTTPClient, _ server: ServerProcess, key: String, task: Int64, count: Int) async throws -> Int {
        var decided = 0
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let status = try await client.call(.GET, server.base + "/v1/apps/demo/push-tasks/\(task)", key: key)
            decided = status.json?["targets"]?.intValue.map(Int.init) ?? 0
            if decided >= count { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        await server.kill9()
        return decided
    }

    /// A push task's status once it has finished and its deliveries are settled (or after `seconds`).
    package static func endedTask(_ client: HTTPClient, _ server: ServerProcess, key: String, task: Int64, seconds: Double) async throws -> JSONValue {
        let deadline = Date().addingTimeInterval(seconds)
        var status = JSONValue.null
        while Date() < deadline {
            status = try await client.call(.GET, server.base + "/v1/apps/demo/push-tasks/\(task)", key: key).json ?? .null
            if status["state"] == "finished" && status["deliveries"]?["queued"] == 0 { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return status
    }

    /// Checks that each of `k0`…`k<users-1>` got one push whose payload holds `marker` (one `apns-id`,
    /// perhaps sent more than once) and returns how many were sent again.
    package static func taskPushesResent(_ mock: MockAPNs, users: Int, marker: String) -> Int {
        let delivered = mock.delivered()
        var resent = 0
        for i in 0..<users {
            let pushes = (delivered[token(i)] ?? []).filter { String(decoding: $0.payload, as: UTF8.self).contains(marker) }
            let ids = Set(pushes.map(\.apnsID))
            #expect(ids.count == 1, "k\(i): \(ids.count) different pushes of the task")
            resent += pushes.count - ids.count
        }
        return resent
    }

    /// A one-to-one message from u1 to u2 with a given id (agora-silent).
    package static func message(_ id: String, to receiver: String = "u2") -> String {
        #"{"id":"\#(id)","conversationId":"\#(receiver)","from":"u1","to":"\#(receiver)","chatType":"Chat","body":{"type":"text","text":"hi \#(id)"}}"#
    }
    /// The variables that point a server process at the mock.
    package static func environment(_ kit: DeliveryKit, _ mock: MockAPNs, concurrency: Int) throws -> [String: String] {
        [
            "PUSHBRIDGE_APNS_CREDENTIALS_FILE": try kit.credentialsFile(),
            "PUSHBRIDGE_APNS_URL": mock.baseURL,
            "PUSHBRIDGE_APNS_CA_FILE": kit.path("ca.pem"),
            "PUSHBRIDGE_DELIVERY_RETRY_BASE_MILLISECONDS": "20",
            "PUSHBRIDGE_DELIVERY_CONCURRENCY": String(concurrency),
            "PUSHBRIDGE_LOG_LEVEL": "debug",
        ]
    }
    package static func token(_ i: Int) -> String {
        let hex = String(i, radix: 16)
        return "fa" + String(repeating: "0", count: 62 - hex.count) + hex
    }

    package struct ProcessFailure: Error, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }
}
