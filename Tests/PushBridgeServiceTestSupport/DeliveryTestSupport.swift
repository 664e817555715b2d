import Crypto
import Foundation
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import PushBridgeAPNsMock
import PushBridgeCore
import PushBridgeDialects
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeServer
import PushBridgeTesting
import Testing

/// A test's APNs credentials on disk: a fresh `.p8` key (token auth), the mock's CA and client
/// certificate (certificate auth), in a temporary directory.
package struct DeliveryKit {
    package static let keyID = "ABC123DEFG"
    package static let teamID = "DEF123GHIJ"
    package let directory: String
    package let key: P256.Signing.PrivateKey

    package init() throws {
        directory = temporaryDirectory()
        key = P256.Signing.PrivateKey()
        try write("AuthKey_\(Self.keyID).p8", key.pemRepresentation)
        try write("ca.pem", MockAPNsCredentials.caCertificatePEM)
        try write("client.pem", MockAPNsCredentials.clientCertificatePEM)
        try write("client-key.pem", MockAPNsCredentials.clientPrivateKeyPEM)
        try Data(base64Encoded: MockAPNsCredentials.clientP12Base64)!.write(to: URL(fileURLWithPath: path("client.p12")))
        try write("client.p12.password", MockAPNsCredentials.clientP12Password + "\n")
    }

    package func path(_ name: String) -> String { directory + "/" + name }

    @discardableResult
    package func write(_ name: String, _ text: String) throws -> String {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        return path(name)
    }

    /// The mock configured to check this kit's provider tokens.
    package var mockConfiguration: MockAPNs.Configuration {
        MockAPNs.Configuration(tokenKeys: [Self.keyID: (Self.teamID, key.publicKey)])
    }

    /// Token auth for every topic.
    package func tokenCredential() throws -> APNsCredential {
        try APNsCredential(topics: ["*"], source: .token(keyFile: path("AuthKey_\(Self.keyID).p8"), keyID: Self.keyID, teamID: Self.teamID))
    }

    /// A credentials file for the service: token auth for every topic.
    package func credentialsFile() throws -> String {
        try write("credentials.yaml", """
            - topics: ["*"]
              key-file: AuthKey_\(Self.keyID).p8
              key-id: \(Self.keyID)
              team-id: \(Self.teamID)
            """)
    }
}

/// Runs `body` with a mock APNs, stopping it afterwards.
package func withMockAPNs<T>(_ configuration: MockAPNs.Configuration, _ body: (MockAPNs) async throws -> T) async throws -> T {
    let mock = try await MockAPNs.start(configuration)
    do {
        let result = try await body(mock)
        await mock.stop()
        return result
    } catch {
        await mock.stop()
        throw error
    }
}

/// The example app (the articles) in a facade that queues deliveries: two certificates, u2 with two
/// devices (development and production), u1 and u3; group g1.
package func exampleDeliveryFacade(_ store: any PushStateStore) async throws -> PushFacade {
    let facade = PushFacade(store: store, queuesDeliveries: true)
    let examples = Repository.root.appendingPathComponent("Examples/facade")
    func json(_ name: String) throws -> JSONValue { try JSONParser.parse(try String(contentsOf: examples.appendingPathComponent(name), encoding: .utf8)) }
    try await facade.configure(try Scenario.app(from: try json("app.json"), at: .root))
    for user in ["u1", "u2"] {
        guard case .array(let calls) = try json("\(user)-calls.json") else { continue }
        _ = try await facade.apply(calls.enumerated().map { PushFacade.DialectCall($0.element, at: Instant(milliseconds: 1_000 + Int64($0.offset)), pointer: .root / $0.offset) },
            dialect: "agora-silent", user: user)
    }
    try await facade.setMembers(["u1", "u2", "u3"], of: "g1")
    return facade
}

/// A one-to-one agora-silent text message from u1 to `to`.
package func textMessage(id: String, to: String = "u2", text: String = "hello") throws -> JSONValue {
    try JSONParser.parse(#"{"id":"\#(id)","conversationId":"\#(to)","from":"u1","to":"\#(to)","chatType":"Chat","body":{"type":"text","text":"\#(text)"}}"#)
}

/// The tokens of u2's two devices in the example app.
package let exampleTokens = (
    development: "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0",
    production: "0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de"
)

/// Runs `body` with an APNs client for the mock, shutting it down afterwards (also when `body` throws).
package func withAPNsClient<T>(_ mock: MockAPNs, _ kit: DeliveryKit, _ credentials: [APNsCredential], _ body: (APNsClient) async throws -> T) async throws -> T {
    // A deadline no test here is about: a whole suite on two busy cores can leave a request's task
    // unscheduled for seconds between taking a connection and sending, and 10 s would time it out.
    let endpoint = APNsClient.Endpoint(baseURL: mock.baseURL, trustedCAFile: kit.path("ca.pem"), requestTimeoutSeconds: 120)
    let client = try APNsClient(endpoint: endpoint, credentials: credentials)
    do {
        let result = try await body(client)
        await client.shutdown()
        return result
    } catch {
        await client.shutdown()
        throw error
    }
}

/// A service that delivers to a mock APNs, and waiting for a message's deliveries to settle.
package enum ServiceDeliveryScenario {
    /// The service configuration for a mock: token auth for every topic, fast retries.
    package static func configure(_ c: inout ServiceConfiguration, kit: DeliveryKit, mock: MockAPNs, feedback: String? = nil) throws {
        var d = ServiceConfiguration.Delivery(credentialsFile: try kit.credentialsFile())
        d.apnsURL = mock.baseURL
        d.caFile = kit.path("ca.pem")
        d.retryBaseMilliseconds = 20
        // Long enough for a loaded machine; the tests about deadlines set their own.
        d.requestTimeoutSeconds = 60
        d.feedbackURL = feedback
        c.delivery = d
        // The test's HTTP client keeps one connection: on a loaded machine it can sit idle for longer
        // than the default 10 s while a test works elsewhere, and the service would close it.
        c.requestTimeoutSeconds = 300
    }

    /// Polls a message until no delivery is queued (at most `seconds`), and returns its body.
    package static func settled(_ service: LiveService, app: String, key: String, message: String, seconds: Double = 20) async throws -> JSONValue {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let reply = try await service.call(.get, "/v1/apps/\(app)/messages/\(message)", key: key)
            let body = try #require(reply.json, "\(reply.text)")
            let states = body["deliveries"]?.arrayValue?.compactMap { $0["state"]?.stringValue } ?? []
            if !states.contains("queued") || Date() > deadline { return body }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}
