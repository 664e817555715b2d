import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushBridgeJSON
import PushBridgeEasemob
import PushBridgeServer
import PushBridgeTencent
import PushBridgeStore

/// A reply from a ``TestService``: its status, body text and headers.
public struct ServiceReply: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The body, as UTF-8 text.
    public var text: String
    /// The response headers.
    public var headers: HTTPFields

    /// - Parameters:
    ///   - status: the HTTP status code.
    ///   - text: the body, as UTF-8 text.
    ///   - headers: the response headers.
    public init(status: Int, text: String, headers: HTTPFields) {
        self.status = status
        self.text = text
        self.headers = headers
    }

    /// The body as JSON, when it is JSON.
    public var json: JSONValue? { try? JSONParser.parse(text) }
    /// `error.code` of an error body (Specification §11's error shape).
    public var errorCode: String? { json?["error"]?["code"]?.stringValue }
}

/// A PushBridge service running inside a test: on a loopback port (``TestService/Mode/live``) or
/// behind Hummingbird's router without a socket (``TestService/Mode/router``), spoken to with one client.
public struct TestService: Sendable {
    /// How a test reaches the service.
    public enum Mode: Sendable {
        /// A real server on an ephemeral 127.0.0.1 port, one keep-alive connection: for tests of the
        /// transport (framing, timeouts, shutdown).
        case live
        /// Requests handed to the router directly: no socket, no port; for API tests.
        case router
    }

    /// The test client (Hummingbird's).
    public let client: any TestClientProtocol
    /// The admin key the service was configured with.
    public let adminKey: String

    /// - Parameters:
    ///   - client: Hummingbird's test client of an application (`application.test(...)`).
    ///   - adminKey: the admin key the service was configured with.
    public init(client: any TestClientProtocol, adminKey: String) {
        self.client = client
        self.adminKey = adminKey
    }

    /// The loopback port (``Mode/live`` only; `nil` behind the router).
    public var port: Int? { client.port }

    /// One request.
    /// - Parameters:
    ///   - method: the method.
    ///   - path: the path and query.
    ///   - key: the bearer key, if any.
    ///   - body: the JSON body, if any.
    ///   - contentType: the content type sent with a body.
    /// - Returns: the reply.
    public func call(
        _ method: HTTPRequest.Method, _ path: String, key: String? = nil, body: String? = nil, contentType: String? = "application/json"
    ) async throws -> ServiceReply {
        var headers: HTTPFields = [:]
        if let key { headers[.authorization] = "Bearer \(key)" }
        if body != nil, let contentType { headers[.contentType] = contentType }
        let response = try await client.executeRequest(uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        return ServiceReply(status: Int(response.status.code), text: String(buffer: response.body), headers: response.headers)
    }

    /// Creates an app with the admin key.
    /// - Parameter id: the app id.
    /// - Returns: the app's key.
    /// - Throws: ``TestServiceError`` when the service refuses.
    public func createApp(_ id: String) async throws -> String {
        let reply = try await call(.post, "/v1/apps", key: adminKey, body: #"{"app":"\#(id)"}"#)
        guard reply.status == 201, let key = reply.json?["key"]?.stringValue else {
            throw TestServiceError(what: "POST /v1/apps answered \(reply.status): \(reply.text)")
        }
        return key
    }
}

/// A service that did not answer as a test expected.
public struct TestServiceError: Error, CustomStringConvertible {
    /// What happened, with the service's answer.
    public var what: String
    public var description: String { what }
}

/// Runs `body` against a PushBridge service built from `configuration`, then stops it.
/// - Parameters:
///   - configuration: the service's settings (its `adminKeyHash` must be `AccessKey.hash(adminKey)`).
///   - adminKey: the admin key, for ``TestService/createApp(_:)``.
///   - mode: ``TestService/Mode/live`` (a loopback port) or ``TestService/Mode/router`` (no socket).
///   - storage: where the service keeps its apps; `nil`: SQLite files or memory, as the configuration
///     says (a backend's storage is built with `ServiceConfiguration.storage(from:)`). A twin
///     (a `ServiceStorage` of the test's) can count, slow down or fail the stores' opening.
///   - vendors: the vendor REST families it serves; by default every one PushBridge has.
///   - body: the test.
/// - Returns: what `body` returns.
public func withTestService<T: Sendable>(
    _ configuration: ServiceConfiguration, adminKey: String, mode: TestService.Mode = .live, storage: (any ServiceStorage)? = nil,
    vendors: [VendorRESTFamily] = [.easemob, .tencent], _ body: @Sendable (TestService) async throws -> T
) async throws -> T {
    let service = try PushBridgeService(configuration: configuration, storage: storage, vendors: vendors)
    let testing: TestingSetup = mode == .live ? .live : .router
    return try await service.application().test(testing) { client in try await body(TestService(client: client, adminKey: adminKey)) }
}
