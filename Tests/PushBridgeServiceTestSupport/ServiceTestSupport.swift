import AsyncHTTPClient
import Foundation
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import CSQLite
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgePostgres
import PushBridgeStore
import PushBridgeEasemob
import PushBridgeServer
import PushBridgeTencent
import PushBridgeTesting
import Testing

/// The admin key of every test service.
package let testAdminKey = "test-admin-key-0123456789"

/// A reply: status, body text, headers (PushBridgeTesting's).
package typealias Reply = ServiceReply

/// A service on a loopback port (or behind the router), spoken to over one keep-alive connection.
package struct LiveService: Sendable {
    package let service: TestService

    package init(service: TestService) { self.service = service }
    /// A service a test built itself (its own logger, say).
    package init(client: any TestClientProtocol) { service = TestService(client: client, adminKey: testAdminKey) }
    /// The loopback port (a live service's).
    package var port: Int { service.port! }
    /// Hummingbird's test client, for requests `call` does not shape.
    package var client: any TestClientProtocol { service.client }

    /// One request.
    /// - Parameters:
    ///   - method: the method.
    ///   - path: the path and query.
    ///   - key: the bearer key, if any.
    ///   - body: the JSON body, if any.
    ///   - contentType: the content type sent with a body.
    package func call(
        _ method: HTTPRequest.Method, _ path: String, key: String? = nil, body: String? = nil, contentType: String? = "application/json"
    ) async throws -> Reply {
        try await service.call(method, path, key: key, body: body, contentType: contentType)
    }

    /// Creates an app with the admin key and returns its key (a refusal throws, with the service's answer).
    package func createApp(_ id: String) async throws -> String { try await service.createApp(id) }
}

/// Runs `body` against a real service (PushBridgeTesting's `withTestService`).
/// - Parameters:
///   - database: `:memory:`, or `nil` for a new temporary data directory.
///   - mode: `.live` (a loopback port: transport, crashes, shutdown) or `.router` (no socket: API tests).
///   - storage: a storage twin instead of the one the configuration names.
///   - vendors: the vendor REST families it serves (all by default).
///   - configure: changes to the test configuration.
package func withLiveService<T: Sendable>(
    database: String? = ":memory:", mode: TestService.Mode = .live, storage: (any ServiceStorage)? = nil, vendors: [VendorRESTFamily] = [.easemob, .tencent],
    _ configure: (inout ServiceConfiguration) -> Void = { _ in }, _ body: @Sendable (LiveService) async throws -> T
) async throws -> T {
    var configuration = ServiceConfiguration(
        host: "127.0.0.1", port: 0, database: database ?? temporaryDirectory(), adminKeyHash: AccessKey.hash(testAdminKey), logLevel: .warning)
    // The test's client keeps its connection idle while the test works elsewhere, and a whole suite on
    // two busy cores can leave it so for longer than the default 10 s; tests about deadlines set their own.
    configuration.requestTimeoutSeconds = 300
    configure(&configuration)
    // A backend's store is built here, as the executable builds it (the service knows no backend).
    let storage = try storage ?? configuration.storage(from: [PostgresStorageBackend()])
    return try await withTestService(configuration, adminKey: testAdminKey, mode: mode, storage: storage, vendors: vendors) { service in
        try await body(LiveService(service: service))
    }
}


/// The example app's setup (the article Running the service): an app with two certificates, u2 with two
/// devices, u1 with a display name, group g1 = u1, u2, u3.
package func setUpExampleApp(_ service: LiveService, app: String) async throws -> String {
    try await setUpExampleApp(app: app) { method, path, key, body in try await service.call(method, path, key: key, body: body) }
}

/// The example app's setup through any client (one that opens new connections when the server
/// closes idle ones, for tests with short timeouts).
package func setUpExampleApp(app: String, call: (HTTPRequest.Method, String, String?, String?) async throws -> Reply) async throws -> String {
    // Set-up, not the behaviour under test: a store too busy to answer in time (503, nothing created) on a
    // loaded 2-core machine is asked again, a few times.
    var created = try await call(.post, "/v1/apps", testAdminKey, #"{"app":"\#(app)"}"#)
    for _ in 0..<4 where created.status == 503 {
        try await Task.sleep(for: .milliseconds(500))
        created = try await call(.post, "/v1/apps", testAdminKey, #"{"app":"\#(app)"}"#)
    }
    #expect(created.status == 201, "\(created.text)")
    let key = try #require(created.json?["key"]?.stringValue)
    let examples = Repository.root.appendingPathComponent("Examples/facade")
    func file(_ name: String) throws -> String { try String(contentsOf: examples.appendingPathComponent(name), encoding: .utf8) }
    let steps: [(HTTPRequest.Method, String, String)] = [
        (.put, "/v1/apps/\(app)", try file("app.json")),
        (.post, "/v1/apps/\(app)/users/u1/calls?dialect=agora-silent", try file("u1-calls.json")),
        (.post, "/v1/apps/\(app)/users/u2/calls?dialect=agora-silent", try file("u2-calls.json")),
        (.put, "/v1/apps/\(app)/groups/g1/members", #"{"members":["u1","u2","u3"]}"#),
    ]
    for (method, path, body) in steps {
        let reply = try await call(method, path, key, body)
        #expect(reply.status == 200, "\(path): \(reply.text)")
    }
    return key
}

/// A client for concurrent requests (many connections) to a live service.
/// - Parameters:
///   - connectionPerRequest: whether every request opens a connection of its own (for a service that
///     closes idle connections soon: a pooled one could be closed just as a request is sent on it).
///   - retriesConnecting: whether a refused connection is tried again until the request's deadline
///     (async-http-client's default); `false` fails the call at once (a test that kills the server).
///   - body: the calls.
package func withHTTPClient<T>(connectionPerRequest: Bool = false, retriesConnecting: Bool = true, _ body: (HTTPClient) async throws -> T) async throws -> T {
    var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(5), read: .seconds(30)))
    // As many connections as the tests' concurrent callers (async-http-client's default is 8 a host: a
    // call waiting for one of them past the connect timeout fails with getConnectionFromPoolTimeout).
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
    // Idle connections are closed by the client before the server's idle timeout (its request timeout:
    // 10 s by default, 3 s in the fault tests) can close one as a request is sent on it, which fails
    // that request with `remoteConnectionClosed` (a test that waits between bursts saw it in CI).
    configuration.connectionPool.idleTimeout = .seconds(2)
    if connectionPerRequest { configuration.maximumUsesPerConnection = 1 }
    configuration.connectionPool.retryConnectionEstablishment = retriesConnecting
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
        let result = try await body(client)
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}

extension HTTPClient {
    /// One request with a JSON body.
    package func call(_ method: NIOHTTP1.HTTPMethod, _ url: String, key: String?, body: String? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return Reply(status: Int(response.status.code), text: String(buffer: bytes), headers: [:])
    }
}

/// Reads an app's SQLite store as the service left it (after a kill or a stop).
package struct PushBridgeStoreProbe {
    package let facade: PushFacade
    package let path: String

    package init(path: String) throws {
        self.path = path
        facade = PushFacade(store: try SQLiteStateStore(path: path))
    }

    /// The message's decisions as the service answered them (`[…]`), or `nil` when not stored.
    package func sentMessage(_ id: String) async throws -> String? {
        let now = Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        return try await facade.sentMessage(id, now: now).map { "[" + $0.map { String(decoding: $0.json, as: UTF8.self) }.joined(separator: ",") + "]" }
    }

    package func badge(of user: String) async throws -> Int { try await facade.user(user)?.state.badge ?? 0 }

    /// SQLite's `PRAGMA integrity_check`.
    package func integrityCheck() throws -> String {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return "cannot open" }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return "no answer" }
        return String(cString: text)
    }
}

extension ServiceConfiguration {
    /// Keeps the service's state on PostgreSQL at `location` (`store: postgres://…`).
    package mutating func usePostgres(_ location: PostgresLocation) {
        store = try! StoreURL(location)  // a location read from a URL always describes itself
    }
}
