import Foundation
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL
import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

/// Sends one delivery to APNs and reports what happened; ``APNsClient`` is the real one.
public protocol APNsSender: Sendable {
    /// Sends `delivery` with the given `apns-id` and `apns-expiration` (epoch seconds).
    func send(_ delivery: OutboxDelivery, apnsID: String, expiration: Int64) async -> DeliveryAttempt
    /// Sends `delivery` as ``send(_:apnsID:expiration:)`` does, and calls `done` once with the attempt
    /// (on any thread; it must not block), so that no task has to wait for the answer.
    func start(_ delivery: OutboxDelivery, apnsID: String, expiration: Int64, then done: @escaping @Sendable (DeliveryAttempt) -> Void)
    /// Called when APNs refused as expired the provider token issued at `issuedAt` that this delivery carried.
    func providerTokenExpired(for delivery: OutboxDelivery, issuedAt: Int64, now: Int64)
}

extension APNsSender {
    /// Sends on a task of its own and calls `done` with the attempt.
    public func start(_ delivery: OutboxDelivery, apnsID: String, expiration: Int64, then done: @escaping @Sendable (DeliveryAttempt) -> Void) {
        Task { done(await send(delivery, apnsID: apnsID, expiration: expiration)) }
    }
}

/// APNs over HTTP/2, on swift-nio-http2 directly: a pool of connections per TLS identity and host
/// (token auth shares one pool, each client certificate has its own). Each connection multiplexes
/// up to the streams the server's `SETTINGS_MAX_CONCURRENT_STREAMS` allows (APNs: up to 1,000;
/// a request beyond that waits inside the connection for a free stream); requests go round the
/// pool's connections in turn. A connection that gets GOAWAY or fails is replaced by the next
/// request on its slot and drained (its open streams finish or fail, to be retried by the delivery
/// policy). Measured against async-http-client on the same mock (`make bench-deliver`): about twice
/// the requests per CPU second, which is why delivery does not use it.
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
        /// The threads of the client's own event loops: APNs traffic never shares a thread with the
        /// service's HTTP requests, so a campaign's deliveries do not hold a chat request's answer.
        public var eventLoopThreads: Int
        /// The nice value of the event loops' threads (Linux; 0: the process's own, elsewhere ignored):
        /// above 0, the service's requests and decisions get the CPU first when both want it, and
        /// deliveries take what is left — a campaign's deliveries then do not slow its deciding or a
        /// chat request's answer on a busy machine.
        public var eventLoopNice: Int32

        /// The default threads of the client's event loops: one a core.
        public static var defaultEventLoopThreads: Int { System.coreCount }

        /// The default number of connections per TLS identity: enough streams for 100 ms away
        /// (4 × 1,000 at APNs's largest `SETTINGS_MAX_CONCURRENT_STREAMS`), few enough to stay polite.
        public static let defaultConnections = 4

        public init(
            productionURL: String = "https://api.push.apple.com", developmentURL: String = "https://api.development.push.apple.com",
            trustedCAFile: String? = nil, requestTimeoutSeconds: Double = 10, connectionsPerIdentity: Int = Endpoint.defaultConnections,
            eventLoopThreads: Int = Endpoint.defaultEventLoopThreads, eventLoopNice: Int32 = 0
        ) {
            self.productionURL = productionURL
            self.developmentURL = developmentURL
            self.trustedCAFile = trustedCAFile
            self.requestTimeoutSeconds = requestTimeoutSeconds
            self.connectionsPerIdentity = max(1, connectionsPerIdentity)
            self.eventLoopThreads = max(1, eventLoopThreads)
            self.eventLoopNice = min(19, max(0, eventLoopNice))
        }

        /// Both environments at one base URL (a local APNs).
        public init(
            baseURL: String, trustedCAFile: String?, requestTimeoutSeconds: Double = 10, connectionsPerIdentity: Int = Endpoint.defaultConnections,
            eventLoopNice: Int32 = 0
        ) {
            self.init(
                productionURL: baseURL, developmentURL: baseURL, trustedCAFile: trustedCAFile, requestTimeoutSeconds: requestTimeoutSeconds,
                connectionsPerIdentity: connectionsPerIdentity, eventLoopNice: eventLoopNice)
        }
    }

    let endpoint: Endpoint
    let credentials: [APNsCredential]
    /// Index of `credentials` → its pools, by environment (one pool when both environments share a host).
    let pools: [[APNsEnvironment: APNsConnectionPool]]
    /// Every pool once (token credentials share theirs).
    private let distinctPools: [APNsConnectionPool]
    /// The event loops of every connection, the client's own (shut down by ``shutdown()``).
    private let eventLoops: MultiThreadedEventLoopGroup

    /// Opens the pools (no connection is made until the first request).
    /// - Parameters:
    ///   - endpoint: URLs, trust and deadline.
    ///   - credentials: the credentials by topic.
    /// - Throws: ``DeliveryError`` for a CA file that cannot be read or a URL that is not `https://host[:port]`.
    public init(endpoint: Endpoint, credentials: [APNsCredential]) throws {
        self.endpoint = endpoint
        self.credentials = credentials
        var targets: [APNsEnvironment: APNsConnectionPool.Target] = [:]
        for (environment, url) in [(APNsEnvironment.production, endpoint.productionURL), (.development, endpoint.developmentURL)] {
            guard let target = APNsConnectionPool.Target(baseURL: url) else {
                throw DeliveryError(.unreadableFile, subject: url, expected: "an https://host[:port] URL")
            }
            targets[environment] = target
        }
        let drainTime = TimeAmount.milliseconds(Int64(endpoint.requestTimeoutSeconds * 1000) + 1_000)
        let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: endpoint.eventLoopThreads)
        if endpoint.eventLoopNice > 0 { Self.lowerPriority(of: eventLoops, nice: endpoint.eventLoopNice) }
        func pools(_ identity: (chain: [NIOSSLCertificate], key: NIOSSLPrivateKey)?) throws -> [APNsEnvironment: APNsConnectionPool] {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.applicationProtocols = ["h2"]
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
            let context: NIOSSLContext
            do {
                context = try NIOSSLContext(configuration: tls)
            } catch {
                throw DeliveryError(.unreadableFile, subject: endpoint.trustedCAFile ?? "the TLS identity", expected: "a usable TLS configuration")
            }
            let production = APNsConnectionPool(
                target: targets[.production]!, context: context, size: endpoint.connectionsPerIdentity, drainTime: drainTime, eventLoops: eventLoops)
            let development =
                targets[.development] == targets[.production]
                ? production
                : APNsConnectionPool(
                    target: targets[.development]!, context: context, size: endpoint.connectionsPerIdentity, drainTime: drainTime, eventLoops: eventLoops)
            return [.production: production, .development: development]
        }
        var all: [[APNsEnvironment: APNsConnectionPool]] = []
        var tokenPools: [APNsEnvironment: APNsConnectionPool]?
        do {
            for credential in credentials {
                switch credential.kind {
                case .token:
                    if tokenPools == nil { tokenPools = try pools(nil) }
                    all.append(tokenPools!)
                case .certificate(let chain, let key):
                    all.append(try pools((chain, key)))
                }
            }
        } catch {
            try? eventLoops.syncShutdownGracefully()  // nothing was connected on them
            throw error
        }
        self.pools = all
        self.eventLoops = eventLoops
        var seen = Set<ObjectIdentifier>()
        distinctPools = all.flatMap(\.values).filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    /// Sets the nice value of each of `eventLoops`' threads, from the thread itself (on Linux a
    /// thread's nice value is its own); before any connection's work, which the loops run after it.
    private static func lowerPriority(of eventLoops: MultiThreadedEventLoopGroup, nice: Int32) {
        #if os(Linux)
        for loop in eventLoops.makeIterator() {
            loop.execute { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) }
        }
        #endif
    }

    /// The nice value of each event loop's thread, read on the thread (0 where nice values are not
    /// per thread).
    func eventLoopNiceValues() async throws -> [Int32] {
        var values: [Int32] = []
        for loop in eventLoops.makeIterator() {
            values.append(
                try await loop.submit { () -> Int32 in
                    #if os(Linux)
                    return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
                    #else
                    return 0
                    #endif
                }.get())
        }
        return values
    }

    /// Closes every connection, then stops the client's event loops.
    public func shutdown() async {
        for pool in distinctPools { await pool.shutdown() }
        try? await eventLoops.shutdownGracefully()
    }

    /// How many connections are open or opening, over every pool.
    public var openConnections: Int {
        distinctPools.reduce(0) { $0 + $1.openConnections }
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
        await withCheckedContinuation { answered in
            start(delivery, apnsID: apnsID, expiration: expiration) { answered.resume(returning: $0) }
        }
    }

    /// Sends `delivery` on its slot's connection when that is open, without waiting (its answer calls
    /// `done` on the connection's event loop); when the slot has to connect first, the request waits
    /// for that on a task of its own.
    public func start(_ delivery: OutboxDelivery, apnsID: String, expiration: Int64, then done: @escaping @Sendable (DeliveryAttempt) -> Void) {
        switch request(delivery, apnsID: apnsID, expiration: expiration) {
        case .ended(let attempt):
            done(attempt)
        case .ready(let request):
            if let connection = request.pool.readyConnection(slot: request.slot) { return request.send(on: connection, then: done) }
            Task {
                switch await request.pool.connection(slot: request.slot, connectTimeout: request.connectTimeout) {
                case .success(let connection): request.send(on: connection, then: done)
                case .failure(let failure): done(.transportFailure(failure.recorded))
                }
            }
        }
    }

    /// One delivery as a request: its pool and slot, headers, body and deadline.
    struct Request: Sendable {
        let pool: APNsConnectionPool
        let slot: Int
        let headers: HPACKHeaders
        let body: ByteBuffer
        let deadline: NIODeadline
        let connectTimeout: TimeAmount
        /// The provider token's `iat`, for token auth.
        let issuedAt: Int64?

        /// Sends it on `connection` with what is left of its deadline (none left: `timeout` at once).
        func send(on connection: APNsConnection, then done: @escaping @Sendable (DeliveryAttempt) -> Void) {
            let left = deadline - .now()
            guard left > .zero else { return done(.transportFailure(APNsTransportFailure.timeout.recorded)) }
            connection.start(headers: headers, body: body, timeout: left) { [issuedAt] result in
                switch result {
                case .success(let response):
                    var answer = APNsClient.answer(status: response.status, retryAfter: response.retryAfter, apnsID: response.apnsID, body: response.body)
                    answer.providerTokenIssuedAt = issuedAt
                    done(.answered(answer))
                case .failure(let failure):
                    done(.transportFailure(failure.recorded))
                }
            }
        }
    }

    /// A delivery made a request, or ended at once.
    enum Prepared {
        case ready(Request)
        case ended(DeliveryAttempt)
    }

    /// The request for `delivery`, or the attempt it ends as at once (no credential for its topic).
    func request(_ delivery: OutboxDelivery, apnsID: String, expiration: Int64) -> Prepared {
        let topic = delivery.header("apns-topic") ?? ""
        guard let index = credential(for: topic), let pool = pools[index][delivery.environment] else { return .ended(.noCredential(topic: topic)) }
        let timeout = TimeAmount.milliseconds(Int64(endpoint.requestTimeoutSeconds * 1000))
        let deadline = NIODeadline.now() + timeout
        var headers = HPACKHeaders()
        headers.reserveCapacity(delivery.headers.count + 8)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: pool.target.authority)
        // A value no later request repeats is not indexed: in HPACK's table (4 KiB) it would only push
        // out the ones every request repeats (the provider token above all), which then go literally.
        headers.add(name: ":path", value: "/3/device/" + delivery.token, indexing: .nonIndexable)
        var issuedAt: Int64?
        if case .token(let signer) = credentials[index].kind {
            let token = signer.token(now: Self.epochSeconds())
            issuedAt = token.issuedAt
            headers.add(name: "authorization", value: "bearer " + token.jwt)
        }
        for header in delivery.headers { headers.add(name: header.name, value: header.value) }
        headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
        headers.add(name: "apns-expiration", value: String(expiration), indexing: .nonIndexable)
        headers.add(name: "content-length", value: String(delivery.payload.count))
        return .ready(Request(
            pool: pool, slot: pool.nextSlot(), headers: headers, body: ByteBuffer(bytes: delivery.payload), deadline: deadline,
            connectTimeout: min(timeout, .seconds(5)), issuedAt: issuedAt))
    }

    public func providerTokenExpired(for delivery: OutboxDelivery, issuedAt: Int64, now: Int64) {
        guard let index = credential(for: delivery.header("apns-topic") ?? ""), case .token(let signer) = credentials[index].kind else { return }
        signer.refresh(rejectedIssuedAt: issuedAt, now: now)
    }

    /// Reads an answer's `reason` / `timestamp` body and its headers (a body that is not JSON: no reason).
    static func answer(status: Int, retryAfter: String?, apnsID: String?, body: [UInt8]) -> APNsAnswer {
        var answer = APNsAnswer(status: status, retryAfterSeconds: retryAfter.flatMap { Int($0) }, apnsID: apnsID)
        if !body.isEmpty, let json = try? JSONParser.parse(body), case .object(let members) = json {
            for (key, value) in members {
                if key == "reason", case .string(let reason) = value { answer.reason = reason }
                if key == "timestamp", case .int(let ms) = value { answer.timestampMilliseconds = ms }
            }
        }
        return answer
    }

    static func epochSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
