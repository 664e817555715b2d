import AsyncHTTPClient
import Foundation
import PushBridgeAPNsMock
import PushBridgeJSON
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Two `pushbridge serve` processes on one PostgreSQL, one killed with `kill -9` mid-delivery: the
/// other keeps serving, and the killed node's claimed deliveries are sent once their lease lapses.
@Suite("PostgreSQL service processes")
struct PostgresProcessTests {
    typealias ServerProcess = ProcessScenario.ServerProcess

    @Test("kill -9 of one node: the other keeps serving and finishes the dead node's deliveries after the lease")
    func killOneNode() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try await freshPostgresDatabase(url)
        let kit = try DeliveryKit()
        let users = 150
        try await withMockAPNs(kit.mockConfiguration) { mock in
            // 8 in flight, 100 ms each: 80 deliveries a second, so the 600 take 7.5 s and the kill after the first
            // 150 comes seconds before the end, however late the test's loop runs on a loaded machine.
            mock.setDefaultAnswer(.slow(milliseconds: 100, then: .ok))
            var environment = try ProcessScenario.environment(kit, mock, concurrency: 8)
            environment["PUSHBRIDGE_STORE"] = "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)"
            environment["PUSHBRIDGE_DELIVERY_LEASE_SECONDS"] = "2"
            environment["PUSHBRIDGE_LOG_LEVEL"] = "info"
            let a = try await ServerProcess.start(database: temporaryDirectory() + "/a", extraEnvironment: environment)
            let b = try await ServerProcess.start(database: temporaryDirectory() + "/b", extraEnvironment: environment)
            defer { b.stopInBackground() }
            try await withHTTPClient { client in
                let key = try await ProcessScenario.setUp(client, a)
                for i in 0..<users {
                    let calls = #"[{"call":"initializeSDK","appkey":"1#2","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(ProcessScenario.token(i))"}]"#
                    let node = i % 2 == 0 ? a : b
                    #expect(try await client.call(.POST, node.base + "/v1/apps/demo/users/p\(i)/calls?dialect=agora-silent", key: key, body: calls).status == 200)
                }
                let members = (0..<users).map { "\"p\($0)\"" }.joined(separator: ",")
                #expect(try await client.call(.PUT, b.base + "/v1/apps/demo/groups/pg/members", key: key, body: #"{"members":["sender",\#(members)]}"#).status == 200)
                // Messages through both nodes; then node A dies while both deliver.
                for m in 0..<4 {
                    let node = m % 2 == 0 ? a : b
                    let message = #"{"id":"pm\#(m)","conversationId":"pg","from":"sender","to":"pg","chatType":"GroupChat","body":{"type":"text","text":"kill \#(m)"}}"#
                    #expect(try await client.call(.POST, node.base + "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: message).status == 201)
                }
                let deadline = Date().addingTimeInterval(30)
                while (mock.answerCounts[200] ?? 0) < users && Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
                await a.kill9()
                let atKill = mock.answerCounts[200] ?? 0
                #expect(atKill < 4 * users, "the kill came before the queue was done (\(atKill))")

                // Node B keeps serving: a new message is accepted and decided.
                let after = #"{"id":"pm-after","conversationId":"pg","from":"sender","to":"pg","chatType":"GroupChat","body":{"type":"text","text":"after"}}"#
                #expect(try await client.call(.POST, b.base + "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: after).status == 201)

                // Every delivery of every message ends delivered, through node B.
                var duplicates = 0
                let delivered = { mock.delivered() }
                for id in ["pm0", "pm1", "pm2", "pm3", "pm-after"] {
                    let until = Date().addingTimeInterval(60)
                    var deliveries: [JSONValue] = []
                    while Date() < until {
                        deliveries = try await client.call(.GET, b.base + "/v1/apps/demo/messages/\(id)", key: key).json?["deliveries"]?.arrayValue ?? []
                        if deliveries.count == users && !deliveries.contains(where: { $0["state"]?.stringValue == "queued" }) { break }
                        try await Task.sleep(nanoseconds: 50_000_000)
                    }
                    #expect(deliveries.count == users, "\(id)")
                    let sent = delivered()
                    for d in deliveries {
                        #expect(d["state"]?.stringValue == "delivered", "\(id): \(d)")
                        let n = sent[d["token"]?.stringValue ?? ""]?.filter { $0.apnsID == d["apns-id"]?.stringValue }.count ?? 0
                        #expect(n >= 1, "lost: \(id) \(d["token"]?.stringValue ?? "")")
                        duplicates += max(0, n - 1)
                    }
                }
                #expect(duplicates <= 8 + 256, "sent twice: \(duplicates)")
                print("PostgreSQL kill -9 of one node: \(atKill) of \(4 * users) delivered at the kill; node B finished the rest, \(duplicates) sent twice")
            }
        }
    }

    /// The threads a process holds now (`/proc/<pid>/status`), or `nil` when it cannot be read.
    static func threads(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return nil }
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
    }

    /// The most threads `pid` has, sampled every 5 ms until the task is cancelled.
    static func mostThreads(of pid: Int32) -> Task<Int, Never> {
        Task {
            var most = 0
            while !Task.isCancelled {
                most = max(most, threads(of: pid) ?? 0)
                try? await Task.sleep(for: .milliseconds(5))
            }
            return most
        }
    }

    /// A node's writers hold no thread while PostgreSQL answers a warm send's commit,
    /// so 8 busy apps cost the node no thread of their own.
    @Test("8 apps under concurrent load on one node hold a bounded number of threads")
    func eightAppsHoldBoundedThreads() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try await freshPostgresDatabase(url)
        let server = try await ServerProcess.start(
            database: temporaryDirectory() + "/threads",
            extraEnvironment: ["PUSHBRIDGE_STORE": "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)", "PUSHBRIDGE_LOG_LEVEL": "error"])
        defer { server.stopInBackground() }
        let pid = server.process.processIdentifier
        guard Self.threads(of: pid) != nil else { return }  // no /proc here
        // Threads come and go between samples (dispatch lets idle workers go): "before" is the most
        // seen while the apps are set up and warmed, one request at a time.
        let warming = Self.mostThreads(of: pid)
        try await withHTTPClient { client in
            let examples = Repository.root.appendingPathComponent("Examples/facade")
            let app = try String(contentsOf: examples.appendingPathComponent("app.json"), encoding: .utf8)
            let calls = try String(contentsOf: examples.appendingPathComponent("u2-calls.json"), encoding: .utf8)
            var keys: [String] = []
            for i in 0..<8 {
                let created = try await client.call(.POST, server.base + "/v1/apps", key: testAdminKey, body: #"{"app":"t\#(i)"}"#)
                let key = try #require(created.json?["key"]?.stringValue, "\(created.text)")
                #expect(try await client.call(.PUT, server.base + "/v1/apps/t\(i)", key: key, body: app).status == 200)
                #expect(try await client.call(.POST, server.base + "/v1/apps/t\(i)/users/u2/calls?dialect=agora-silent", key: key, body: calls).status == 200)
                #expect(try await client.call(.POST, server.base + "/v1/apps/t\(i)/messages?dialect=agora-silent", key: key, body: ProcessScenario.message("warm")).status == 201)
                keys.append(key)
            }
            let (appKeys, base) = (keys, server.base)
            warming.cancel()
            let before = await warming.value
            let sampling = Self.mostThreads(of: pid)
            let created = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<32 {
                    group.addTask {
                        var created = 0
                        for n in 0..<25 {
                            let app = (worker + n) % 8
                            let reply = try await client.call(
                                .POST, base + "/v1/apps/t\(app)/messages?dialect=agora-silent", key: appKeys[app], body: ProcessScenario.message("w\(worker)-\(n)"))
                            if reply.status == 201 { created += 1 }
                        }
                        return created
                    }
                }
                return try await group.reduce(0, +)
            }
            sampling.cancel()
            let most = await sampling.value
            #expect(created == 32 * 25, "every send answered 201")
            // The writers' rounds run on a few shared queues and await PostgreSQL: the load adds a
            // few threads (measured: 7 before, 10 under it; 12 on a saturated 2-core machine, where
            // dispatch adds workers). 8 writers each blocked on its statements, as in 0.30.0, added
            // one each on top (9 → 17 when the rounds had a queue per app).
            #expect(most <= before + 6, "threads: \(before) before the load, at most \(most) under 32 concurrent requests over 8 apps")
            print("threads: \(before) before the load, at most \(most) under 32 concurrent requests over 8 apps")
        }
    }
}
