import Crypto
import Foundation
import HTTPTypes
import Logging
import PushBridgeAPNsMock
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeJSON
import PushBridgeEasemob
import PushBridgeServer
import PushBridgeTencent
import PushBridgeStore
import PushBridgeVendorREST
import Synchronization
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Delivery an operator can run: bad keys named, refused connections named at once, bounded reasons, dead credentials counted.
extension HostileInputTests {
    /// A `.p8` holding a key that is not P-256 is a bad setting: exit 2, naming the file, not the key.
    @Test(arguments: ["P-384", "Ed25519"])
    func aKeyThatIsNotP256IsABadSetting(_ kind: String) async throws {
        let kit = try DeliveryKit()
        let pem: String
        switch kind {
        case "P-384": pem = P384.Signing.PrivateKey().pemRepresentation
        default:
            let raw = Curve25519.Signing.PrivateKey().rawRepresentation
            // PKCS#8 of an Ed25519 key: the fixed prefix, then the 32 key bytes.
            let der = Data([0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]) + raw
            pem = "-----BEGIN PRIVATE KEY-----\n" + der.base64EncodedString() + "\n-----END PRIVATE KEY-----\n"
        }
        try kit.write("AuthKey_\(DeliveryKit.keyID).p8", pem)
        let credentials = try kit.credentialsFile()
        let run = try await runOffThePool(
            Repository.executable, ["serve", "--db", temporaryDirectory(), "--listen", "127.0.0.1:0"],
            environment: ["PUSHBRIDGE_ADMIN_KEY": testAdminKey, "PUSHBRIDGE_APNS_CREDENTIALS_FILE": credentials])
        #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("AuthKey_\(DeliveryKit.keyID).p8") && run.stderr.contains("P-256"), "\(run.stderr)")
        #expect(!run.stderr.contains(String(pem.split(separator: "\n")[1].prefix(24))), "no key material in the error")
    }

    /// Nothing listening where APNs should be: the attempt fails at once as `connection-refused`.
    @Test func aRefusedConnectionIsNamedAtOnce() async throws {
        let kit = try DeliveryKit()
        // A port held by a socket that is bound but not listening: connecting to it is refused, and
        // no other test can take it meanwhile.
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, length) == 0 && getsockname(holder, $0, &length) == 0 }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let client = try APNsClient(
            endpoint: .init(baseURL: "https://127.0.0.1:\(port)", trustedCAFile: kit.path("ca.pem"), requestTimeoutSeconds: 10),
            credentials: [try kit.tokenCredential()])
        let delivery = OutboxDelivery(
            messageID: "m", receiver: "u", token: String(repeating: "ab", count: 32), environment: .development, boundAt: Instant(milliseconds: 0),
            headers: [HeaderField("apns-topic", "com.example")], payload: Array("{}".utf8), queuedAt: Instant(milliseconds: 0))
        let start = ContinuousClock.now
        let attempt = await client.send(delivery, apnsID: "00000000-0000-0000-0000-000000000001", expiration: 0)
        let took = ContinuousClock.now - start
        await client.shutdown()
        guard case .transportFailure(let what) = attempt else {
            Issue.record("expected a transport failure, got \(attempt)")
            return
        }
        // Named for what it was. (Before, the HTTP client retried connecting until the deadline and the
        // attempt said `connection-reset`.) No wall-clock bound: on a loaded run this task can wait
        // for a thread of the concurrency pool longer than any connect timeout.
        #expect(what == "connection-refused", "after \(took)")
        #expect(DeliveryReason.label(what) == "connection-refused")
    }

    @Test func deliveryReasonsAreABoundedSet() {
        #expect(DeliveryReason.label(nil) == "none")
        #expect(DeliveryReason.label("InvalidProviderToken") == "InvalidProviderToken")
        #expect(DeliveryReason.label("Unregistered (gave up: older than 86400 s)") == "Unregistered")
        #expect(DeliveryReason.label("transport: some error text with a token 0f1e2d") == "transport")
        #expect(DeliveryReason.label("no credential for topic com.example.app") == "no-credential")
        #expect(DeliveryReason.label("status 418") == "status-418")
        #expect(DeliveryReason.label("status 9999") == "other")
        #expect(DeliveryReason.label("SomethingNew") == "other")
    }

    /// A dead credential (a key id APNs does not know): every delivery fails with 403
    /// `InvalidProviderToken`, `/metrics` says so by reason, and the log warns once per interval,
    /// naming the credential's label and never its key.
    @Test func aDeadCredentialIsCountedAndWarnedOnce() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            let lines = LogLines()
            var configuration = ServiceConfiguration(
                host: "127.0.0.1", port: 0, database: temporaryDirectory(), adminKeyHash: AccessKey.hash(testAdminKey), logLevel: .info)
            try ServiceDeliveryScenario.configure(&configuration, kit: kit, mock: mock)
            _ = try kit.write("credentials.yaml", """
                - topics: ["*"]
                  key-file: AuthKey_\(DeliveryKit.keyID).p8
                  key-id: WRONGKEY12
                  team-id: \(DeliveryKit.teamID)
                """)
            configuration.delivery?.retryBaseMilliseconds = 20
            let logger = Logger(label: "pushbridge") { _ in CapturingLogHandler(lines: lines) }
            let service = try PushBridgeService(configuration: configuration, vendors: [.easemob, .tencent], logger: logger)
            try await service.application().test(.live) { client in
                let live = LiveService(client: client)
                let key = try await setUpExampleApp(live, app: "dead")
                for i in 0..<3 {
                    let body = try String(contentsOf: Repository.root.appendingPathComponent("Examples/facade/message.json"), encoding: .utf8)
                        .replacingOccurrences(of: "\"m-1\"", with: "\"dead-\(i)\"")
                    #expect(try await live.call(.post, "/v1/apps/dead/messages?dialect=agora-silent", key: key, body: body).status == 201)
                }
                let deadline = ContinuousClock.now + .seconds(20)
                var metrics = ""
                while ContinuousClock.now < deadline {
                    metrics = try await live.call(.get, "/metrics").text
                    if metrics.contains(#"pushbridge_deliveries_total{outcome="failed",reason="InvalidProviderToken"} 6"#) { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(metrics.contains(#"pushbridge_deliveries_total{outcome="failed",reason="InvalidProviderToken"} 6"#), "\(metrics)")
            }
            // The example's two topics (the iPhone's and the iPad's bundle ids): one warning each,
            // however many deliveries failed (six, over three messages).
            let warnings = lines.all.filter { $0.contains("warning") && $0.contains("APNs refuses the credential") }
            #expect(warnings.count == 2, "one warning per credential and topic per minute: \(warnings)")
            #expect(Set(warnings.compactMap { $0.split(separator: " ").first { $0.hasPrefix("topic=") } }).count == 2, "\(warnings)")
            for warning in warnings {
                #expect(warning.contains(#"credential="key WRONGKEY12""#) && warning.contains("reason=InvalidProviderToken"), "\(warning)")
            }
            let key = try String(contentsOfFile: kit.path("AuthKey_\(DeliveryKit.keyID).p8"), encoding: .utf8)
            for line in lines.all { #expect(!line.contains(String(key.split(separator: "\n")[1].prefix(24))), "no key material in the log") }
        }
    }
}
