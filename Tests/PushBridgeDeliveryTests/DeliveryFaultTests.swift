import AsyncHTTPClient
import Foundation
import PushBridgeAPNsMock
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeJSON
import PushBridgeServer
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The fault matrix (Specification §13): many deliveries through the real service into the mock APNs with
/// every fault mixed in. Afterwards nothing is lost, nothing is delivered twice except by a retry
/// whose first answer never arrived, and exactly the devices the mock declared dead are removed.
/// `PUSHBRIDGE_LONG_TESTS=1` runs the long variant (40,000 deliveries; CI runs 2,000).
@Suite("Delivery fault matrix")
struct DeliveryFaultTests {
    static var isLong: Bool { ProcessInfo.processInfo.environment["PUSHBRIDGE_LONG_TESTS"] == "1" }

    /// The faults, by kind: what the mock answers a token's requests, in order (the last repeats).
    static let kinds: [(name: String, script: [MockAPNs.Answer], dead: Bool)] = [
        ("ok", [.ok], false),
        ("unregistered", [.gone(reason: "Unregistered", timestampMilliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000)], true),
        ("bad-device-token", [.badDeviceToken], true),
        ("not-for-topic", [.refuse(status: 400, reason: "DeviceTokenNotForTopic")], true),
        ("429", [.tooManyRequests(retryAfterSeconds: nil), .tooManyRequests(retryAfterSeconds: nil), .ok], false),
        ("429-retry-after", [.tooManyRequests(retryAfterSeconds: 1), .ok], false),
        ("500", [.serverError(status: 500), .ok], false),
        ("503", [.serverError(status: 503), .serverError(status: 503), .ok], false),
        ("slow", [.slow(milliseconds: 150, then: .ok)], false),
        ("timeout", [.slow(milliseconds: 3_000, then: .ok), .ok], false),
        ("reset", [.reset, .ok], false),
        ("goaway", [.goAway(then: .ok), .ok], false),
        ("bad-topic", [.refuse(status: 400, reason: "BadTopic")], false),
    ]


    @Test("Thousands of deliveries with every fault: 0 lost, duplicates only from unanswered attempts, only dead devices removed")
    func faultMatrix() async throws {
        let users = Self.isLong ? 4_000 : 400
        let messages = Self.isLong ? 10 : 5
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            var kindOf: [String: Int] = [:]
            var generator = SystemRandomNumberGenerator()
            for i in 0..<users {
                // Most devices are fine; each fault kind gets a share.
                let kind = i % 3 == 0 ? Int.random(in: 1..<Self.kinds.count, using: &generator) : 0
                kindOf[ProcessScenario.token(i)] = kind
                mock.script(ProcessScenario.token(i), Self.kinds[kind].script)
            }
            let kindOfToken = kindOf
            let root = temporaryDirectory()
            try await withLiveService(database: root, {
                try! ServiceDeliveryScenario.configure(&$0, kit: kit, mock: mock)
                // Debug builds spend milliseconds per request in the HTTP/2 stack: a modest window and a
                // deadline the "timeout" kind (3 s) exceeds.
                $0.delivery?.requestTimeoutSeconds = 2
                $0.delivery?.concurrency = 32
            }) { service in
                let key = try await service.createApp("f1")
                let app = try String(contentsOf: Repository.root.appendingPathComponent("Examples/facade/app.json"), encoding: .utf8)
                #expect(try await service.call(.put, "/v1/apps/f1", key: key, body: app).status == 200)
                try await withHTTPClient { client in
                    let base = "http://127.0.0.1:\(service.port)"
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for lane in 0..<8 {
                            group.addTask {
                                for i in stride(from: lane, to: users, by: 8) {
                                    let calls = #"[{"call":"initializeSDK","appkey":"1#2","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(ProcessScenario.token(i))"}]"#
                                    let reply = try await client.call(.POST, "\(base)/v1/apps/f1/users/u\(i)/calls?dialect=agora-silent", key: key, body: calls)
                                    #expect(reply.status == 200, "\(reply.text)")
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                let members = (0..<users).map { "\"u\($0)\"" }.joined(separator: ",")
                #expect(try await service.call(.put, "/v1/apps/f1/groups/g/members", key: key, body: #"{"members":["sender",\#(members)]}"#).status == 200)
                for m in 0..<messages {
                    let message = #"{"id":"fm\#(m)","conversationId":"g","from":"sender","to":"g","chatType":"GroupChat","body":{"type":"text","text":"fault \#(m)"}}"#
                    let sent = try await service.call(.post, "/v1/apps/f1/messages?dialect=agora-silent", key: key, body: message)
                    #expect(sent.status == 201, "\(sent.text)")
                }
                // Wait until every delivery is settled.
                var bodies: [JSONValue] = []
                for m in 0..<messages {
                    bodies.append(try await ServiceDeliveryScenario.settled(service, app: "f1", key: key, message: "fm\(m)", seconds: Self.isLong ? 600 : 60))
                }
                var records: [(message: String, token: String, state: String, attempts: Int, apnsID: String, removed: Bool)] = []
                for (m, body) in bodies.enumerated() {
                    for d in body["deliveries"]?.arrayValue ?? [] {
                        guard case .int(let attempts) = d["attempts"] else { continue }
                        records.append(("fm\(m)", d["token"]?.stringValue ?? "", d["state"]?.stringValue ?? "", Int(attempts), d["apns-id"]?.stringValue ?? "",
                            d["device-removed"] == .bool(true)))
                    }
                }
                // Every pushed receiver's delivery is there (dead devices are gone for later messages).
                #expect(records.filter { $0.message == "fm0" }.count == users, "the first message reaches every device")
                #expect(!records.contains { $0.state == "queued" }, "everything settled")
                let delivered = mock.delivered()
                var duplicates = 0
                for record in records {
                    let kind = Self.kinds[kindOfToken[record.token]!]
                    let answers200 = delivered[record.token]?.filter { $0.apnsID == record.apnsID }.count ?? 0
                    if kind.dead || kind.name == "bad-topic" {
                        #expect(record.state == "failed", "\(kind.name) \(record.token)")
                        #expect(answers200 == 0)
                    } else {
                        #expect(record.state == "delivered", "\(kind.name) \(record.token) \(record.state)")
                        #expect(answers200 >= 1, "lost: \(kind.name) \(record.token) \(record.message)")
                        if answers200 > 1 {
                            duplicates += answers200 - 1
                            #expect(record.attempts > 1, "a duplicate without a retry: \(kind.name) \(record.token)")
                        }
                    }
                }
                // Exactly the dead devices were removed, each once.
                let removed = Set(records.filter(\.removed).map(\.token))
                let dead = Set(kindOfToken.filter { Self.kinds[$0.value].dead }.map(\.key))
                #expect(removed == dead)
                // A message sent after the removals reaches every device except the dead ones.
                let last = #"{"id":"fm-last","conversationId":"g","from":"sender","to":"g","chatType":"GroupChat","body":{"type":"text","text":"after"}}"#
                #expect(try await service.call(.post, "/v1/apps/f1/messages?dialect=agora-silent", key: key, body: last).status == 201)
                let after = try await ServiceDeliveryScenario.settled(service, app: "f1", key: key, message: "fm-last", seconds: 60)
                let afterTokens = Set((after["deliveries"]?.arrayValue ?? []).compactMap { $0["token"]?.stringValue })
                #expect(afterTokens.count == users - dead.count)
                #expect(afterTokens.isDisjoint(with: dead), "a removed device gets no later message")
                let probe = try PushBridgeStoreProbe(path: root + "/apps/f1.sqlite")
                for i in 0..<users {
                    let devices = try await probe.facade.user("u\(i)")?.state.devices.map(\.token) ?? []
                    #expect(devices == (dead.contains(ProcessScenario.token(i)) ? [] : [ProcessScenario.token(i)]))
                }
                // The deliveries went round the pool: every connection of it was opened (and more, for
                // the ones GOAWAY and resets closed).
                #expect(mock.connectionCount > APNsClient.Endpoint.defaultConnections, "\(mock.connectionCount) connections")
                print("fault matrix: \(records.count) deliveries, \(mock.requests.count) requests, \(mock.connectionCount) connections, \(removed.count) devices removed, \(duplicates) duplicates (after unanswered attempts)")
            }
        }
    }
}
