import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore
import Synchronization

/// Sends one delivery to APNs and reports what happened; ``APNsClient`` is the real one.
public protocol APNsSender: Sendable {
    /// Sends `delivery` with the given `apns-id` and `apns-expiration` (epoch seconds).
    func send(_ delivery: OutboxDelivery, apnsID: String, expiration: Int64) async -> DeliveryAttempt
    /// Called when APNs refused as expired the provider token issued at `issuedAt` that this delivery carried.
    func providerTokenExpired(for delivery: OutboxDelivery, issuedAt: Int64, now: Int64)
}

/// APNs over HTTP/2 (async-http-client): a pool of connections per TLS identity (token auth shares
/// one pool, each client certificate has its own). Each connection multiplexes up to the streams the
/// server's `SETTINGS_MAX_CONCURRENT_STREAMS` allows (APNs: up to 1,000; a request beyond that waits for
/// a stream on its connection); requests go round the pool's connections in turn. A connection that
/// gets GOAWAY or fails is drained (its open streams finish or fail, to be retried by the delivery
/// policy) and the next request on its slot opens a new one.
public final class APNsClient: APNsSender {
    /// Where requests go and whom to trust.
    public struct Endpoint: Sendable, Hashable {
        /// `https://api.push.apple.com` by default.
        public var productionURL: String
        /// `https://api.development.push.apple.com` by default.
        public var developmentURL: String
        /// A PEM file of the CAs to trust instead of the system's (a local APNs such as the mock).
        public var trustedCAFile: String?
        /// The deadline of one request, in seconds.
        public var requestTimeoutSeconds: Double
        /// HTTP/2 connections per TLS identity (per environment's host).
        public var connectionsPerIdentity: Int

        /// The default number of connections per TLS identity: enough streams for 100 ms away
        /// (4 × 1,000 at APNs's largest `SETTINGS_MAX_CONCURRENT_STREAMS`), few enough to stay polite.
        public static let defaultConnections = 4

        public init(
            productionURL: String = "https://api.push.apple.com", developmentURL: String = "https://api.development.push.apple.com",
            trustedCAFile: String? = nil, requestTimeoutSeconds: Double = 10, connectionsPerIdentity: Int = Endpoint.defaultConnections
        ) {
            self.productionURL = productionURL
            self.developmentURL = developmentURL
            self.trustedCAFile = trustedCAFile
            self.requestTimeoutSeconds = requestTimeoutSeconds
            self.connectionsPerIdentity = max(1, connectionsPerIdentity)
        }

        /// Both environments at one base URL (a local APNs).
        public init(baseURL: String, trustedCAFile: String?, requestTimeoutSeconds: Double = 10, connectionsPerIdentity: Int = Endpoint.defaultConnections) {
            self.init(
                productionURL: baseURL, developmentURL: baseURL, trustedCAFile: trustedCAFile, requestTimeoutSeconds: requestTimeoutSeconds,
                connectionsPerIdentity: connectionsPerIdentity)
        }
    }

    let endpoint: Endpoint
    let credentials: [APNsCredential]
    /// Index of `credentials` → its pool: one HTTP client per connection (each async-http-client
    /// client keeps one HTTP/2 connection per host).
    let pools: [[HTTPClient]]
    /// Which connection of a pool the next request takes.
    private let turn = Atomic<Int>(0)

    /// Opens the clients (no connection is made until the first request).
    /// - Parameters:
    ///   - endpoint: URLs, trust and deadline.
    ///   - credentials: the credentials by topic.
    public init(endpoint: Endpoint, credentials: [APNsCredential]) throws {
        self.endpoint = endpoint
        self.credentials = credentials
        func client(_ identity: (chain: [NIOSSLCertificate], key: NIOSSLPrivateKey)?) throws -> HTTPClient {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let ca = endpoint.trustedCAFile {
                guard FileManager.default.isReadableFile(atPath: ca) else {
                    throw DeliveryError(.unreadableFile, subject: ca, expected: "a readable PEM file of trusted CAs")
                }
                tls.trustRoots = .file(ca)
            }
            if let identity {
                tls.certificateChain = identity.chain.map { .certificate($0) }
                tls.privateKey = .privateKey(identity.key)
            }
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tls, redirectConfiguration: .disallow,
                timeout: .init(connect: .seconds(5), read: .milliseconds(Int64(endpoint.requestTimeoutSeconds * 1000))))
            configuration.httpVersion = .automatic
            configuration.connectionPool = .init(idleTimeout: .seconds(600))
            // A refused or failed connection fails the attempt at once, named for what it was; the
            // delivery policy retries it with its own backoff (the pool would retry silently until
            // the deadline and report the last error as something else).
            configuration.connectionPool.retryConnectionEstablishment = false
            // No request spans: tracing costs ~4 % of a delivery's CPU (perf) and nothing reads them.
            configuration.tracing.tracer = nil
            return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }
        func pool(_ identity: (chain: [NIOSSLCertificate], key: NIOSSLPrivateKey)?) throws -> [HTTPClient] {
            try (0..<endpoint.connectionsPerIdentity).map { _ in try client(identity) }
        }
        var pools: [[HTTPClient]] = []
        var tokenPool: [HTTPClient]?
        for credential in credentials {
            switch credential.kind {
            case .token:
                if tokenPool == nil { tokenPool = try pool(nil) }
                pools.append(tokenPool!)
            case .certificate(let chain, let key):
                pools.append(try pool((chain, key)))
            }
        }
        self.pools = pools
    }

    /// Closes every connection.
    public func shutdown() async {
        var seen = Set<ObjectIdentifier>()
        for client in pools.joined() where seen.insert(ObjectIdentifier(client)).inserted { try? await client.shutdown() }
    }

    /// The connection (client) of a credential's pool that takes the next request: each in turn.
    func connection(of index: Int) -> HTTPClient {
        let pool = pools[index]
        return pool.count == 1 ? pool[0] : pool[(turn.wrappingAdd(1, ordering: .relaxed).oldValue & Int.max) % pool.count]
    }

    /// The label of the credential that serves a topic (a key id or a certificate file's name,
    /// never a secret), or `nil` when none does.
    /// - Parameter topic: the `apns-topic`.
    public func credentialLabel(for topic: String) -> String? {
        credential(for: topic).map { credentials[$0].label }
    }

    /// The credential for a topic: one that names it, else a `*` one.
    func credential(for topic: String) -> Int? {
        credentials.firstIndex { $0.names(topic) } ?? credentials.firstIndex { $0.topics.contains("*") }
    }

    public func send(_ delivery: OutboxDelivery, apnsID: String, expiration: Int64) async -> DeliveryAttempt {
        let topic = delivery.header("apns-topic") ?? ""
        guard let index = credential(for: topic) else { return .noCredential(topic: topic) }
        let base = delivery.environment == .production ? endpoint.productionURL : endpoint.developmentURL
        var request = HTTPClientRequest(url: base + "/3/device/" + delivery.token)
        request.method = .POST
        var issuedAt: Int64?
        if case .token(let signer) = credentials[index].kind {
            let token = signer.token(now: Self.epochSeconds())
            issuedAt = token.issuedAt
            request.headers.add(name: "authorization", value: "bearer " + token.jwt)
        }
        for header in delivery.headers { request.headers.add(name: header.name, value: header.value) }
        request.headers.add(name: "apns-id", value: apnsID)
        request.headers.add(name: "apns-expiration", value: String(expiration))
        request.body = .bytes(ByteBuffer(bytes: delivery.payload))
        do {
            let response = try await connection(of: index).execute(
                request, deadline: .now() + .milliseconds(Int64(endpoint.requestTimeoutSeconds * 1000)))
            let body = try await response.body.collect(upTo: 64 * 1024)
            var answer = Self.answer(status: Int(response.status.code), headers: response.headers, body: Array(buffer: body))
            answer.providerTokenIssuedAt = issuedAt
            return .answered(answer)
        } catch {
            return .transportFailure(Self.describe(error))
        }
    }

    public func providerTokenExpired(for delivery: OutboxDelivery, issuedAt: Int64, now: Int64) {
        guard let index = credential(for: delivery.header("apns-topic") ?? ""), case .token(let signer) = credentials[index].kind else { return }
        signer.refresh(rejectedIssuedAt: issuedAt, now: now)
    }

    /// Reads an answer's `reason` / `timestamp` body and its headers (a body that is not JSON: no reason).
    static func answer(status: Int, headers: HTTPHeaders, body: [UInt8]) -> APNsAnswer {
        var answer = APNsAnswer(status: status, retryAfterSeconds: headers.first(name: "retry-after").flatMap { Int($0) }, apnsID: headers.first(name: "apns-id"))
        if !body.isEmpty, let json = try? JSONParser.parse(body), case .object(let members) = json {
            for (key, value) in members {
                if key == "reason", case .string(let reason) = value { answer.reason = reason }
                if key == "timestamp", case .int(let ms) = value { answer.timestampMilliseconds = ms }
            }
        }
        return answer
    }

    /// A transport failure in a few words for the record (`timeout`, `connection-reset`, …).
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: return "timeout"
            case .remoteConnectionClosed: return "connection-reset"
            default: break
            }
        }
        let text = "\(error)"
        let lower = text.lowercased()
        if lower.contains("refused") || lower.contains("econnrefused") { return "connection-refused" }
        if error is ChannelError { return "connection-failed" }
        if text.contains("GOAWAY") || text.lowercased().contains("goaway") { return "goaway" }
        if lower.contains("reset") || lower.contains("closed") { return "connection-reset" }
        return "transport: " + String(text.prefix(80))
    }

    static func epochSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
