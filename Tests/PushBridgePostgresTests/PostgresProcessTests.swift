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
        let location = try freshPostgresDatabase(url)
        let kit = try DeliveryKit()
        let users = 150
        try await withMockAPNs(kit.mockConfiguration) { mock in
            mock.setDefaultAnswer(.slow(milliseconds: 20, then: .ok))
            var environment = try ProcessScenario.environment(kit, mock, concurrency: 8)
            environment["PUSHBRIDGE_STORE"] = "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)"
            environment["PUSHBRIDGE_DELIVERY_LEASE_SECONDS"] = "2"
            environment["PUSHBRIDGE_LOG_LEVEL"] = "info"
            let a = try ServerProcess(database: temporaryDirectory() + "/a", extraEnvironment: environment)
            let b = try ServerProcess(database: temporaryDirectory() + "/b", extraEnvironment: environment)
            defer { _ = b.stop(signal: SIGTERM) }
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
                kill(a.process.processIdentifier, SIGKILL)
                a.process.waitUntilExit()
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
}
