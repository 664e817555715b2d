import AsyncHTTPClient
import Foundation
import PushBridgeAPNsMock
import PushBridgeDelivery
import PushBridgeJSON
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// `pushbridge serve` delivering from its outbox, killed with `kill -9` in the middle: the restarted
/// process finishes the queue, nothing acknowledged is lost, and what is sent twice is bounded.
@Suite("Delivery process")
struct DeliveryProcessTests {
    typealias ServerProcess = ProcessScenario.ServerProcess


    @Test("serve --check-config reads every credential file and prints labels, never key material")
    func checkConfigReadsCredentials() throws {
        let kit = try DeliveryKit()
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHBRIDGE_") }
        environment["PUSHBRIDGE_APNS_CREDENTIALS_FILE"] = try kit.credentialsFile()
        let good = try runTool(["serve", "--db", ":memory:", "--check-config"], environment: environment)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("credential: key \(DeliveryKit.keyID) for *"), "\(good.stdout)")
        #expect(good.stdout.contains("apns-credentials-file: \(kit.path("credentials.yaml"))"))
        // apns-thread-nice: 10 unless set; 0–19, anything else refused naming its source.
        #expect(good.stdout.contains("apns-thread-nice: 10\n"), "\(good.stdout)")
        var niced = environment
        niced["PUSHBRIDGE_APNS_THREAD_NICE"] = "0"
        let zero = try runTool(["serve", "--db", ":memory:", "--check-config"], environment: niced)
        #expect(zero.status == 0 && zero.stdout.contains("apns-thread-nice: 0\n"), "\(zero.stdout)\(zero.stderr)")
        niced["PUSHBRIDGE_APNS_THREAD_NICE"] = "20"
        let twenty = try runTool(["serve", "--db", ":memory:", "--check-config"], environment: niced)
        #expect(
            twenty.status == 2 && twenty.stderr.contains("environment PUSHBRIDGE_APNS_THREAD_NICE: apns-thread-nice: expected a nice value for the APNs client's threads, 0–19, found \"20\""),
            "\(twenty.stderr)")
        let keyLine = String(kit.key.pemRepresentation.split(separator: "\n")[1])
        #expect(!good.stdout.contains(keyLine) && !good.stdout.contains("PRIVATE KEY"))
        // A key file that is not a P-256 key: exit 2, the file named, its content not shown.
        try kit.write("AuthKey_\(DeliveryKit.keyID).p8", "-----BEGIN PRIVATE KEY-----\nTOPSECRETNOTAKEY\n-----END PRIVATE KEY-----\n")
        let bad = try runTool(["serve", "--db", ":memory:", "--check-config"], environment: environment)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("AuthKey_\(DeliveryKit.keyID).p8"), "\(bad.stderr)")
        #expect(!bad.stderr.contains("TOPSECRET") && !bad.stdout.contains("TOPSECRET"))
    }

    @Test("kill -9 mid-delivery: the restarted service finishes the queue; every push delivered, duplicates bounded")
    func killNineMidDeliveryFinishesTheQueue() async throws {
        let users = 300
        let messages = 4
        let concurrency = 16
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            // Each answer takes a little while, so the kill lands with deliveries in flight.
            mock.setDefaultAnswer(.slow(milliseconds: 15, then: .ok))
            let database = temporaryDirectory() + "/service"
            let environment = try ProcessScenario.environment(kit, mock, concurrency: concurrency)
            let first = try await ServerProcess.start(database: database, extraEnvironment: environment)
            var key = ""
            var deliveredAtKill = 0
            try await withHTTPClient { client in
                let appKey = try await ProcessScenario.setUp(client, first)
                key = appKey
                try await ProcessScenario.registerUsers(client, first, key: appKey, count: users)
                let members = (0..<users).map { "\"k\($0)\"" }.joined(separator: ",")
                #expect(try await client.call(.PUT, first.base + "/v1/apps/demo/groups/kg/members", key: key, body: #"{"members":["sender",\#(members)]}"#).status == 200)
                for m in 0..<messages {
                    let message = #"{"id":"km\#(m)","conversationId":"kg","from":"sender","to":"kg","chatType":"GroupChat","body":{"type":"text","text":"kill \#(m)"}}"#
                    let sent = try await client.call(.POST, first.base + "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: message)
                    #expect(sent.status == 201, "\(sent.text)")
                }
                // Kill once a fifth of the pushes have reached APNs.
                let deadline = Date().addingTimeInterval(60)
                while mock.delivered().values.reduce(0, { $0 + $1.count }) < users * messages / 5 && Date() < deadline {
                    try await Task.sleep(nanoseconds: 2_000_000)
                }
                await first.kill9()
                deliveredAtKill = mock.delivered().values.reduce(0) { $0 + $1.count }
            }
            #expect(first.process.terminationReason == .uncaughtSignal && first.process.terminationStatus == SIGKILL)
            #expect(deliveredAtKill < users * messages, "the kill came before the queue was done (\(deliveredAtKill) delivered)")

            // The restart resumes the queue at once (claims of the dead process are released).
            let second = try await ServerProcess.start(database: database, extraEnvironment: environment)
            defer { second.stopInBackground() }
            try await withHTTPClient { client in
                var duplicates = 0
                for m in 0..<messages {
                    let deadline = Date().addingTimeInterval(60)
                    var deliveries: [JSONValue] = []
                    while Date() < deadline {
                        let reply = try await client.call(.GET, second.base + "/v1/apps/demo/messages/km\(m)", key: key)
                        deliveries = reply.json?["deliveries"]?.arrayValue ?? []
                        if !deliveries.isEmpty && !deliveries.contains(where: { $0["state"]?.stringValue == "queued" }) { break }
                        try await Task.sleep(nanoseconds: 20_000_000)
                    }
                    #expect(deliveries.count == users, "km\(m): one delivery per member")
                    let delivered = mock.delivered()
                    for d in deliveries {
                        let token = d["token"]?.stringValue ?? ""
                        #expect(d["state"]?.stringValue == "delivered", "km\(m) \(token): \(d)")
                        let received = delivered[token]?.filter { $0.apnsID == d["apns-id"]?.stringValue }.count ?? 0
                        #expect(received >= 1, "lost: km\(m) \(token)")
                        duplicates += max(0, received - 1)
                    }
                }
                // No key material in answers or logs, at debug level.
                let keyLine = String(kit.key.pemRepresentation.split(separator: "\n")[1])
                for path in ["/metrics", "/v1/apps/demo/messages/km0", "/v1/apps/demo/users/k1"] {
                    let text = try await client.call(.GET, second.base + path, key: key).text
                    #expect(!text.contains("PRIVATE KEY") && !text.contains(keyLine), "\(path)")
                }
                #expect(!second.log.contains("PRIVATE KEY") && !second.log.contains(keyLine))
                #expect(second.log.contains("deliveries recorded"), "the debug log records each batch of outcomes")
                // What a crash sends again: the requests in flight plus one batch of unrecorded outcomes.
                #expect(duplicates <= concurrency + 256, "\(duplicates) sent twice")
                print("kill -9 mid-delivery: \(deliveredAtKill) of \(users * messages) delivered at the kill, \(duplicates) sent twice after the restart")
            }
        }
    }
}
