import AsyncHTTPClient
import Foundation
import Hummingbird
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

/// `pushbridge serve` delivering to the mock APNs (Specification §13): queued in the send's commit, sent,
/// readable per delivery, counted in `/metrics`, reported to the feedback URL.
@Suite("Service delivery")
struct ServiceDeliveryTests {
    @Test("A message's pushes are delivered; GET shows each delivery with its apns-id; /metrics counts them")
    func delivers() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            try await withLiveService(database: nil, { try! ServiceDeliveryScenario.configure(&$0, kit: kit, mock: mock) }) { service in
                let key = try await setUpExampleApp(service, app: "a1")
                // APNs learnt of the token's death after the device was bound (the set-up above bound
                // it): scripted once the set-up is done, however long a loaded machine took over it.
                mock.script(exampleTokens.development, [.unregistered(at: Int64(Date().timeIntervalSince1970 * 1000) + 60_000)])
                let message = try String(contentsOf: Repository.root.appendingPathComponent("Examples/facade/message.json"), encoding: .utf8)
                let sent = try await service.call(.post, "/v1/apps/a1/messages?dialect=agora-silent", key: key, body: message)
                #expect(sent.status == 201, "\(sent.text)")
                let body = try await ServiceDeliveryScenario.settled(service, app: "a1", key: key, message: "m-1")
                let deliveries = try #require(body["deliveries"]?.arrayValue)
                #expect(deliveries.count == 2)
                let byToken = Dictionary(uniqueKeysWithValues: deliveries.map { ($0["token"]?.stringValue ?? "", $0) })
                let production = try #require(byToken[exampleTokens.production])
                #expect(production["state"]?.stringValue == "delivered")
                #expect(production["status"] == .int(200))
                #expect(production["apns-id"]?.stringValue == APNsID.make(app: "a1", message: "m-1", token: exampleTokens.production))
                let development = try #require(byToken[exampleTokens.development])
                #expect(development["state"]?.stringValue == "failed")
                #expect(development["reason"]?.stringValue == "Unregistered")
                #expect(development["device-removed"] == .bool(true))
                let user = try await service.call(.get, "/v1/apps/a1/users/u2", key: key)
                #expect(!user.text.contains(exampleTokens.development) && user.text.contains(exampleTokens.production), "\(user.text)")
                #expect(mock.requests.first { $0.token == exampleTokens.production }?.apnsID == production["apns-id"]?.stringValue)
                let metrics = try await service.call(.get, "/metrics")
                #expect(metrics.text.contains(#"pushbridge_deliveries_total{outcome="delivered",reason="none"} 1"#), "\(metrics.text)")
                #expect(metrics.text.contains(#"pushbridge_deliveries_total{outcome="device-removed",reason="Unregistered"} 1"#))
            }
        }
    }

    @Test("Without credentials nothing is queued and a message read says delivery is not configured")
    func notConfigured() async throws {
        try await withLiveService { service in
            let key = try await setUpExampleApp(service, app: "a1")
            let message = try String(contentsOf: Repository.root.appendingPathComponent("Examples/facade/message.json"), encoding: .utf8)
            _ = try await service.call(.post, "/v1/apps/a1/messages?dialect=agora-silent", key: key, body: message)
            let read = try await service.call(.get, "/v1/apps/a1/messages/m-1", key: key)
            #expect(read.json?["delivery"]?.stringValue == "not-configured")
            #expect(read.json?["deliveries"] == nil)
        }
    }

    @Test("Removed devices and final failures are POSTed to the feedback URL")
    func feedback() async throws {
        let kit = try DeliveryKit()
        let received = TextBox()
        let router = Router()
        router.post("/feedback") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            received.append(String(buffer: body))
            return .noContent
        }
        let receiver = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await receiver.test(.live) { client in
            let url = "http://127.0.0.1:\(client.port!)/feedback"
            try await withMockAPNs(kit.mockConfiguration) { mock in
                mock.script(exampleTokens.development, [.badDeviceToken])
                mock.script(exampleTokens.production, [.refuse(status: 400, reason: "BadTopic")])
                try await withLiveService(database: nil, { try! ServiceDeliveryScenario.configure(&$0, kit: kit, mock: mock, feedback: url) }) { service in
                    let key = try await setUpExampleApp(service, app: "a1")
                    let message = try String(contentsOf: Repository.root.appendingPathComponent("Examples/facade/message.json"), encoding: .utf8)
                    _ = try await service.call(.post, "/v1/apps/a1/messages?dialect=agora-silent", key: key, body: message)
                    _ = try await ServiceDeliveryScenario.settled(service, app: "a1", key: key, message: "m-1")
                    let deadline = Date().addingTimeInterval(60)
                    while received.values.isEmpty && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
                }
            }
        }
        let posts = received.values.compactMap { try? JSONParser.parse($0) }
        let removed = posts.flatMap { $0["removed"]?.arrayValue ?? [] }
        let failed = posts.flatMap { $0["failed"]?.arrayValue ?? [] }
        #expect(removed.map { $0["token"]?.stringValue } == [exampleTokens.development], "\(received.values)")
        #expect(removed.first?["user"]?.stringValue == "u2" && removed.first?["reason"]?.stringValue == "BadDeviceToken")
        #expect(failed.map { $0["token"]?.stringValue } == [exampleTokens.production])
        #expect(failed.first?["message"]?.stringValue == "m-1" && failed.first?["status"] == .int(400) && failed.first?["reason"]?.stringValue == "BadTopic")
        #expect(posts.allSatisfy { $0["app"]?.stringValue == "a1" })
    }

    @Test("Delivery settings: errors name the file or key; the summary shows no secret")
    func configuration() throws {
        let kit = try DeliveryKit()
        func load(_ values: [String: String]) throws -> ServiceConfiguration {
            try ServiceConfiguration.load(file: nil, environment: values.reduce(into: [:]) { $0["PUSHBRIDGE_" + $1.key.uppercased().replacingOccurrences(of: "-", with: "_")] = $1.value })
        }
        #expect(throws: ConfigurationError.self) { try load(["apns-url": "https://127.0.0.1:1"]) }
        #expect(throws: ConfigurationError.self) { try load(["apns-credentials-file": "x.yaml", "apns-url": "ftp://x"]) }
        #expect(throws: ConfigurationError.self) { try load(["apns-credentials-file": "x.yaml", "delivery-concurrency": "0"]) }
        let loaded = try load(["apns-credentials-file": try kit.credentialsFile(), "delivery-max-age-seconds": "600", "feedback-url": "http://127.0.0.1:9/f"])
        #expect(loaded.delivery?.maximumAgeSeconds == 600)
        #expect(loaded.summary.contains("delivery-max-age-seconds: 600"))
        #expect(try loaded.delivery?.loadCredentials().map(\.label) == ["key ABC123DEFG"])
        let secret = "-----BEGIN PRIVATE KEY-----\nSECRETSECRET\n-----END PRIVATE KEY-----\n"
        try kit.write("bad.p8", secret)
        let files: [(String, String)] = [
            ("- topics: [\"*\"]\n  key-file: bad.p8\n  key-id: ABC123DEFG\n  team-id: DEF123GHIJ\n", "bad.p8"),
            ("- topics: [\"*\"]\n  key-file: nowhere.p8\n  key-id: ABC123DEFG\n  team-id: DEF123GHIJ\n", "nowhere.p8"),
            ("- topics: [\"*\"]\n  key-fle: bad.p8\n", "did you mean key-file"),
            ("- topics: [\"*\"]\n  key-file: bad.p8\n  certificate-file: client.pem\n", "exactly one of"),
            ("- topics: [a]\n  certificate-file: client.pem\n  private-key-file: client-key.pem\n- topics: [a]\n  p12-file: client.p12\n", "also in [0]"),
            ("topics: x\n", "a list of credentials"),
        ]
        for (text, expected) in files {
            let file = try kit.write("creds.yaml", text)
            var d = ServiceConfiguration.Delivery(credentialsFile: file)
            d.apnsURL = "https://127.0.0.1:1"
            do {
                _ = try PushBridgeService(configuration: ServiceConfiguration(database: ":memory:", delivery: d), vendors: [])
                Issue.record("accepted \(text)")
            } catch let error as ConfigurationError {
                #expect("\(error)".contains(expected), "\(error)")
                #expect("\(error)".contains("creds.yaml"))
                #expect(!"\(error)".contains("SECRET"))
            }
        }
    }
}

/// Texts collected from concurrent handlers.
final class TextBox: @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [String] = []
    func append(_ text: String) { lock.withLock { texts.append(text) } }
    var values: [String] { lock.withLock { texts } }
}
