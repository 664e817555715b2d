import Crypto
import Foundation
import PushBridgeAPNsMock
import PushBridgeCore
import PushBridgeDialects
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import Testing

/// A test's APNs credentials on disk: a fresh `.p8` key (token auth), the mock's CA and client
/// certificate (certificate auth), in a temporary directory.
struct DeliveryKit {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"
    let directory: String
    let key: P256.Signing.PrivateKey

    init() throws {
        directory = temporaryDirectory()
        key = P256.Signing.PrivateKey()
        try write("AuthKey_\(Self.keyID).p8", key.pemRepresentation)
        try write("ca.pem", MockAPNsCredentials.caCertificatePEM)
        try write("client.pem", MockAPNsCredentials.clientCertificatePEM)
        try write("client-key.pem", MockAPNsCredentials.clientPrivateKeyPEM)
        try Data(base64Encoded: MockAPNsCredentials.clientP12Base64)!.write(to: URL(fileURLWithPath: path("client.p12")))
        try write("client.p12.password", MockAPNsCredentials.clientP12Password + "\n")
    }

    func path(_ name: String) -> String { directory + "/" + name }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        return path(name)
    }

    /// The mock configured to check this kit's provider tokens.
    var mockConfiguration: MockAPNs.Configuration {
        MockAPNs.Configuration(tokenKeys: [Self.keyID: (Self.teamID, key.publicKey)])
    }

    /// Token auth for every topic.
    func tokenCredential() throws -> APNsCredential {
        try APNsCredential(topics: ["*"], source: .token(keyFile: path("AuthKey_\(Self.keyID).p8"), keyID: Self.keyID, teamID: Self.teamID))
    }

    /// A credentials file for the service: token auth for every topic.
    func credentialsFile() throws -> String {
        try write("credentials.yaml", """
            - topics: ["*"]
              key-file: AuthKey_\(Self.keyID).p8
              key-id: \(Self.keyID)
              team-id: \(Self.teamID)
            """)
    }
}

/// Runs `body` with a mock APNs, stopping it afterwards.
func withMockAPNs<T>(_ configuration: MockAPNs.Configuration, _ body: (MockAPNs) async throws -> T) async throws -> T {
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
func exampleDeliveryFacade(_ store: any PushStateStore) throws -> PushFacade {
    let facade = PushFacade(store: store, queuesDeliveries: true)
    let examples = Repository.root.appendingPathComponent("Examples/facade")
    func json(_ name: String) throws -> JSONValue { try JSONParser.parse(try String(contentsOf: examples.appendingPathComponent(name), encoding: .utf8)) }
    try facade.configure(try Scenario.app(from: try json("app.json"), at: .root))
    for user in ["u1", "u2"] {
        guard case .array(let calls) = try json("\(user)-calls.json") else { continue }
        _ = try facade.apply(calls.enumerated().map { PushFacade.DialectCall($0.element, at: Instant(milliseconds: 1_000 + Int64($0.offset)), pointer: .root / $0.offset) },
            dialect: "agora-silent", user: user)
    }
    try facade.setMembers(["u1", "u2", "u3"], of: "g1")
    return facade
}

/// A one-to-one agora-silent text message from u1 to `to`.
func textMessage(id: String, to: String = "u2", text: String = "hello") throws -> JSONValue {
    try JSONParser.parse(#"{"id":"\#(id)","conversationId":"\#(to)","from":"u1","to":"\#(to)","chatType":"Chat","body":{"type":"text","text":"\#(text)"}}"#)
}

/// The tokens of u2's two devices in the example app.
let exampleTokens = (
    development: "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0",
    production: "0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de"
)

/// Runs `body` with an APNs client for the mock, shutting it down afterwards (also when `body` throws).
func withAPNsClient<T>(_ mock: MockAPNs, _ kit: DeliveryKit, _ credentials: [APNsCredential], _ body: (APNsClient) async throws -> T) async throws -> T {
    let client = try APNsClient(endpoint: .init(baseURL: mock.baseURL, trustedCAFile: kit.path("ca.pem")), credentials: credentials)
    do {
        let result = try await body(client)
        await client.shutdown()
        return result
    } catch {
        await client.shutdown()
        throw error
    }
}
