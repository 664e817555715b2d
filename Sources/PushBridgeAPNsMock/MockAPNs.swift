import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOConcurrencyHelpers

/// A mock APNs for tests: HTTP/2 over TLS on loopback, checking requests as APNs does (path, token,
/// headers, payload size, the provider token's ES256 signature and age) and answering as scripted
/// per device token: 200, 410 with a timestamp, 400 reasons, 429, 500/503, slow answers,
/// connection resets and GOAWAY. Every request is recorded.
///
/// Like APNSwift's test server or `NIOTestUtils`, it is shipped as test support: a team can point
/// its own service (or PushBridge's) at it. It listens on 127.0.0.1 only.
public final class MockAPNs: Sendable {
    /// How the mock authenticates providers.
    public struct Configuration: Sendable {
        /// Provider token keys by key id: the team id and the public key that must have signed the
        /// JWT. Empty: tokens are not checked (certificate auth). The key id `"*"` stands for any key
        /// id, and the team id `"*"` for any team (a capture that knows the team's key alone).
        public var tokenKeys: [String: (teamID: String, key: P256.Signing.PublicKey)]
        /// Whether connections must present a client certificate signed by the test CA.
        public var requiresClientCertificate: Bool
        /// A provider token older than this is answered 403 `ExpiredProviderToken` (APNs: one hour).
        public var maximumTokenAgeSeconds: Int64
        /// The streams one connection may have open at once (APNs advertises 1,000 or fewer).
        public var maximumConcurrentStreams: Int
        /// The port (0: any free port).
        public var port: Int
        /// Whether every request is kept for ``requests`` (a benchmark turns it off and reads
        /// ``answerCounts`` only).
        public var recordsRequests: Bool
        /// How long every answer takes, as real APNs does from a data centre (50–300 ms): added
        /// before a scripted answer (a `.slow` one waits on top of it).
        public var latency: Latency
        /// The address to listen on (loopback unless a capture is told otherwise).
        public var host: String = "127.0.0.1"
        /// The certificate the mock presents (the fixed test identity unless set).
        public var identity: MockAPNsIdentity = .test

        /// - Parameters: the fields above.
        public init(
            tokenKeys: [String: (teamID: String, key: P256.Signing.PublicKey)] = [:], requiresClientCertificate: Bool = false,
            maximumTokenAgeSeconds: Int64 = 3_600, maximumConcurrentStreams: Int = 1_000, port: Int = 0, recordsRequests: Bool = true,
            latency: Latency = .none
        ) {
            self.recordsRequests = recordsRequests
            self.latency = latency
            self.tokenKeys = tokenKeys
            self.requiresClientCertificate = requiresClientCertificate
            self.maximumTokenAgeSeconds = maximumTokenAgeSeconds
            self.maximumConcurrentStreams = maximumConcurrentStreams
            self.port = port
        }
    }

    /// The delay before each answer: a fixed part and a uniformly random one on top.
    public struct Latency: Sendable, Hashable {
        /// Every answer waits at least this long.
        public var milliseconds: Int
        /// Up to this much more, uniformly at random per answer.
        public var jitterMilliseconds: Int

        /// - Parameters:
        ///   - milliseconds: the fixed part (0 or more).
        ///   - jitterMilliseconds: the random part's upper bound (0 or more).
        public init(milliseconds: Int, jitterMilliseconds: Int = 0) {
            self.milliseconds = max(0, milliseconds)
            self.jitterMilliseconds = max(0, jitterMilliseconds)
        }

        /// Answers at once.
        public static let none = Latency(milliseconds: 0)

        /// One answer's delay.
        func draw() -> Int64 {
            Int64(milliseconds) + (jitterMilliseconds > 0 ? Int64.random(in: 0...Int64(jitterMilliseconds)) : 0)
        }
    }

    /// What the mock answers a request that passed its checks.
    public indirect enum Answer: Sendable, Hashable {
        /// 200, delivered.
        case ok
        /// 410 `Unregistered` (or `ExpiredToken`) with a `timestamp` in epoch milliseconds.
        case gone(reason: String, timestampMilliseconds: Int64)
        /// A 400, 403, 404, 405 or 413 with a reason.
        case refuse(status: Int, reason: String)
        /// 429 `TooManyRequests`, with an optional `Retry-After` in seconds.
        case tooManyRequests(retryAfterSeconds: Int?)
        /// 500 `InternalServerError` or 503 `ServiceUnavailable`.
        case serverError(status: Int)
        /// Waits, then answers.
        case slow(milliseconds: Int, then: Answer)
        /// Closes the TCP connection without answering (every open stream on it fails).
        case reset
        /// Answers, then sends GOAWAY and closes the connection shortly after.
        case goAway(then: Answer)

        /// `Unregistered` with a timestamp.
        public static func unregistered(at milliseconds: Int64) -> Answer { .gone(reason: "Unregistered", timestampMilliseconds: milliseconds) }
        /// 400 `BadDeviceToken`.
        public static let badDeviceToken = Answer.refuse(status: 400, reason: "BadDeviceToken")
    }

    /// One request as the mock saw it.
    public struct Request: Sendable, Hashable {
        /// The device token from the path.
        public var token: String
        /// The request headers (lower-case names), `authorization` included.
        public var headers: [String: String]
        /// The payload bytes.
        public var payload: [UInt8]
        /// The status the mock answered (0: the connection was reset instead).
        public var status: Int
        /// The reason it answered with, if not 200.
        public var reason: String?
        /// Which connection it came on (counted from 1).
        public var connection: Int

        /// The `apns-id` header.
        public var apnsID: String? { headers["apns-id"] }
    }

    struct State {
        var scripts: [String: [Answer]] = [:]
        var defaultAnswer: Answer = .ok
        var requests: [Request] = []
        var connections = 0
        var answerCounts: [Int: Int] = [:]
        var revokedBefore: Int64 = 0
        /// Provider tokens whose signature checked out → their `iat` (verified once, as APNs does).
        var verifiedTokens: [Substring: Int64] = [:]
        /// Told of each request as it arrives (``watchArrivals(_:)``).
        var arrival: (@Sendable (Request) -> Void)?
    }

    let configuration: Configuration
    let state = NIOLockedValueBox(State())
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    /// The port the mock listens on.
    public let port: Int

    /// The base URL to give a client: `https://<host>:<port>`.
    public var baseURL: String { "https://\(configuration.host):\(port)" }

    /// Starts a mock on 127.0.0.1.
    /// - Parameter configuration: how it authenticates providers.
    public static func start(_ configuration: Configuration = Configuration()) async throws -> MockAPNs {
        try await MockAPNs(configuration: configuration)
    }

    private init(configuration: Configuration) async throws {
        self.configuration = configuration
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(configuration.identity.certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(configuration.identity.privateKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2"]
        if configuration.requiresClientCertificate {
            tls.certificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(MockAPNsCredentials.caCertificatePEM.utf8), format: .pem)])
        }
        let context = try NIOSSLContext(configuration: tls)
        let state = self.state
        let owner = Owner()
        var connectionSettings = NIOHTTP2Handler.ConnectionConfiguration()
        connectionSettings.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maximumConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
        ]
        let connection = connectionSettings
        // Its own threads: a client in the same process never shares an event loop with the mock.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        self.group = group
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 512)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let number = state.withLockedValue {
                        $0.connections += 1
                        return $0.connections
                    }
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connection, streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(), MockAPNsStreamHandler(owner: owner, connection: number),
                            ])
                        }
                    }
                }
            }
        channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        port = channel.localAddress?.port ?? 0
        owner.mock = self
    }

    /// Stops listening and closes every connection.
    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    // MARK: Scripting

    /// Answers for one device token, in order; the last one repeats.
    /// - Parameters:
    ///   - token: the device token (any case).
    ///   - answers: what to answer its requests.
    public func script(_ token: String, _ answers: [Answer]) {
        state.withLockedValue { $0.scripts[token.lowercased()] = answers }
    }

    /// What tokens without a script get (`.ok` unless set).
    public func setDefaultAnswer(_ answer: Answer) {
        state.withLockedValue { $0.defaultAnswer = answer }
    }

    /// Refuses every provider token issued before `seconds` (epoch) with 403
    /// `ExpiredProviderToken`, as APNs does once a token is over an hour old.
    public func expireProviderTokens(issuedBefore seconds: Int64) {
        state.withLockedValue { $0.revokedBefore = seconds }
    }

    // MARK: What it saw

    /// Every request so far, in the order they arrived.
    public var requests: [Request] { state.withLockedValue { $0.requests } }

    /// The requests answered 200, by token.
    public func delivered() -> [String: [Request]] {
        Dictionary(grouping: requests.filter { $0.status == 200 }, by: \.token)
    }

    /// How many requests were answered, by status (a reset connection counts as status 0).
    public var answerCounts: [Int: Int] { state.withLockedValue { $0.answerCounts } }

    /// How many TLS connections clients opened.
    public var connectionCount: Int { state.withLockedValue { $0.connections } }

    /// Tells `arrived` of each request as it arrives, before its answer waits the latency (its
    /// status is still 0); `nil` stops it. A benchmark times a push's way to APNs with it.
    public func watchArrivals(_ arrived: (@Sendable (Request) -> Void)?) {
        state.withLockedValue { $0.arrival = arrived }
    }

    /// Tells the watcher of ``watchArrivals(_:)``, if any, of a request.
    func arrived(_ request: Request) {
        if let arrival = state.withLockedValue({ $0.arrival }) { arrival(request) }
    }

    /// Forgets the recorded requests.
    public func clearRequests() {
        state.withLockedValue {
            $0.requests.removeAll()
            $0.answerCounts.removeAll()
        }
    }

    /// The answer for a token's next request (consuming a scripted one).
    func nextAnswer(for token: String) -> Answer {
        state.withLockedValue { state in
            guard var answers = state.scripts[token], let first = answers.first else { return state.defaultAnswer }
            if answers.count > 1 {
                answers.removeFirst()
                state.scripts[token] = answers
            }
            return first
        }
    }

    func record(_ request: Request) {
        let keeps = configuration.recordsRequests
        state.withLockedValue {
            $0.answerCounts[request.status, default: 0] += 1
            if keeps { $0.requests.append(request) }
        }
    }

    /// Lets stream handlers reach the mock, which is made after the bootstrap.
    final class Owner: @unchecked Sendable {
        var mock: MockAPNs?
    }
}
