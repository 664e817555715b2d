import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// How a request to APNs failed below HTTP (no status came back). A closed set.
enum APNsTransportFailure: Error, Equatable {
    /// No answer within the request's deadline (the stream was reset).
    case timeout
    /// Nothing listens at the address.
    case connectionRefused
    /// The connection or the stream closed before the answer.
    case connectionReset
    /// The server sent GOAWAY before answering this stream.
    case goAway
    /// The connection could not be made (no route, DNS, connect timeout).
    case connectionFailed
    /// Anything else, in a few words (TLS handshake, protocol): never a secret.
    case other(String)

    /// The words a delivery's record keeps (``DeliveryReason`` knows the first five).
    var recorded: String {
        switch self {
        case .timeout: "timeout"
        case .connectionRefused: "connection-refused"
        case .connectionReset: "connection-reset"
        case .goAway: "goaway"
        case .connectionFailed: "connection-failed"
        case .other(let text): "transport: " + String(text.prefix(80))
        }
    }

    /// A connect or handshake error, named.
    static func connecting(_ error: any Error) -> APNsTransportFailure {
        if let failure = error as? APNsTransportFailure { return failure }
        if let error = error as? NIOConnectionError {
            if error.connectionErrors.contains(where: { isRefused($0.error) }) { return .connectionRefused }
            return error.dnsAAAAError != nil && error.dnsAError != nil && error.connectionErrors.isEmpty ? .other("cannot resolve \(error.host)") : .connectionFailed
        }
        if isRefused(error) { return .connectionRefused }
        if error is ChannelError { return .connectionFailed }
        if let error = error as? NIOSSLError { return .other("TLS: \(error)") }
        if let error = error as? BoringSSLError { return .other("TLS: \(error)") }
        return .other("\(error)")
    }

    private static func isRefused(_ error: any Error) -> Bool {
        if let error = error as? IOError { return error.errnoCode == ECONNREFUSED }
        return "\(error)".lowercased().contains("refused")
    }
}

/// What APNs answered one request: its status, the headers that matter and the body.
struct APNsResponse: Sendable {
    var status: Int
    var apnsID: String?
    var retryAfter: String?
    var body: [UInt8]
}

/// One HTTP/2 connection to APNs over TLS (swift-nio-http2 directly): each request is a stream of
/// the connection's multiplexer; streams beyond the server's `SETTINGS_MAX_CONCURRENT_STREAMS`
/// wait inside NIOHTTP2 for a free one. A connection that got GOAWAY, failed or closed is no longer
/// ``isUsable``: its pool replaces it, and what is still in flight on it finishes or fails.
final class APNsConnection: Sendable {
    let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let health: APNsConnectionHealth

    private init(channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer, health: APNsConnectionHealth) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.health = health
    }

    /// Whether new requests may go on it (open, no GOAWAY, no connection error).
    var isUsable: Bool { health.usable && channel.isActive }

    /// Connects, completes the TLS handshake and checks that the server speaks HTTP/2.
    /// - Parameters:
    ///   - host: the host to connect to (a name or an address).
    ///   - port: its port.
    ///   - context: the TLS context (trust roots, the client certificate of the identity if any).
    ///   - timeout: the longest the connect and the handshake may take together.
    ///   - eventLoops: the event loops the connection runs on.
    /// - Throws: ``APNsTransportFailure`` naming what went wrong.
    static func connect(host: String, port: Int, context: NIOSSLContext, timeout: TimeAmount, on eventLoops: any EventLoopGroup) async throws -> APNsConnection {
        // SNI and the certificate's name check take a host name, not an address (IPv4 or IPv6).
        let isAddress = host.contains(":") || (!host.isEmpty && host.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") })
        let serverHostname = isAddress ? nil : host
        let channel: any Channel
        let multiplexer: NIOHTTP2Handler.StreamMultiplexer
        let ready: EventLoopFuture<Void>
        let health = APNsConnectionHealth()
        do {
            (channel, multiplexer, ready) = try await ClientBootstrap(group: eventLoops)
                .connectTimeout(timeout)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handshake = channel.eventLoop.makePromise(of: Void.self)
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: serverHostname))
                        try channel.pipeline.syncOperations.addHandler(APNsHandshakeWatcher(done: handshake))
                        var settings = NIOHTTP2Handler.ConnectionConfiguration()
                        // APNs answers are tiny; a roomy window still lets a server push big errors.
                        settings.initialSettings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: 100), HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16)]
                        let multiplexer = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                            mode: .client, connectionConfiguration: settings, streamConfiguration: .init()
                        ) { $0.eventLoop.makeSucceededVoidFuture() }
                        try channel.pipeline.syncOperations.addHandler(APNsConnectionWatcher(health: health))
                        return (channel, multiplexer, handshake.futureResult)
                    }
                }
        } catch {
            throw APNsTransportFailure.connecting(error)
        }
        // The handshake, bounded: a server that accepts and says nothing does not hold the pool. The
        // deadline ends on the event loop when the handshake does, not when this task next runs: on
        // a busy concurrency pool that can be seconds later, and the deadline would close a
        // connection that was ready.
        let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        ready.whenComplete { _ in deadline.cancel() }
        do {
            try await ready.get()
        } catch {
            channel.close(promise: nil)
            throw APNsTransportFailure.connecting(error)
        }
        let connection = APNsConnection(channel: channel, multiplexer: multiplexer, health: health)
        return connection
    }

    /// Closes it now (what is in flight fails as `connection-reset`).
    func close() {
        health.retire(goAway: false)
        channel.close(promise: nil)
    }

    /// Sends one request and waits for its whole answer, or for `timeout` (then resets the stream).
    /// - Parameters:
    ///   - headers: the request's headers, pseudo-headers first.
    ///   - body: the payload.
    ///   - timeout: the longest to wait for the answer, from now.
    /// - Returns: the answer, or how the request failed.
    func send(headers: HPACKHeaders, body: ByteBuffer, timeout: TimeAmount) async -> Result<APNsResponse, APNsTransportFailure> {
        let eventLoop = channel.eventLoop
        let answered = eventLoop.makePromise(of: APNsResponse.self)
        let opened = eventLoop.makePromise(of: (any Channel).self)
        multiplexer.createStreamChannel(promise: opened) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(APNsStreamHandler(answered: answered, timeout: timeout))
            }
        }
        opened.futureResult.whenComplete { result in
            switch result {
            case .success(let stream):
                stream.write(HTTP2Frame.FramePayload.headers(.init(headers: headers)), promise: nil)
                stream.writeAndFlush(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(body), endStream: true)), promise: nil)
            case .failure(let error):
                answered.fail(error)
            }
        }
        do {
            return .success(try await answered.futureResult.get())
        } catch let failure as APNsTransportFailure {
            return .failure(failure == .connectionReset && health.goAwayReceived ? .goAway : failure)
        } catch {
            return .failure(health.goAwayReceived ? .goAway : .connectionReset)
        }
    }
}

/// A connection's state as its watcher sees it, read by the pool.
private final class APNsConnectionHealth: Sendable {
    private let state = Mutex((usable: true, goAwayReceived: false))

    var usable: Bool { state.withLock { $0.usable } }
    var goAwayReceived: Bool { state.withLock { $0.goAwayReceived } }

    /// The server said GOAWAY, or the connection failed or closed: no new requests on it.
    func retire(goAway: Bool) {
        state.withLock {
            $0.usable = false
            if goAway { $0.goAwayReceived = true }
        }
    }
}

/// Completes when the TLS handshake did, and checks that HTTP/2 was negotiated.
private final class APNsHandshakeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let done: EventLoopPromise<Void>

    init(done: EventLoopPromise<Void>) { self.done = done }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let negotiated) = event as? TLSUserEvent {
            if negotiated == "h2" {
                done.succeed(())
            } else {
                done.fail(APNsTransportFailure.other("the server does not speak HTTP/2 (ALPN: \(negotiated ?? "none"))"))
                context.close(promise: nil)
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(APNsTransportFailure.connectionReset)
        context.fireChannelInactive()
    }

    /// Removed after the handshake (the promise is complete: no effect), or with a channel that never
    /// became active (a refused connect): the promise fails rather than leak.
    func handlerRemoved(context: ChannelHandlerContext) {
        done.fail(APNsTransportFailure.connectionReset)
    }
}

/// Sees the connection's own frames and events: GOAWAY and errors retire the connection.
private final class APNsConnectionWatcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    let health: APNsConnectionHealth

    init(health: APNsConnectionHealth) { self.health = health }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway = unwrapInboundIn(data).payload { health.retire(goAway: true) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        health.retire(goAway: false)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        health.retire(goAway: false)
        context.fireChannelInactive()
    }
}

/// One request's stream: collects the answer (status, `apns-id`, `retry-after`, body up to 64 KiB)
/// and completes the request's promise once, with the answer or with how the stream ended.
private final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    let answered: EventLoopPromise<APNsResponse>
    let timeout: TimeAmount
    private var response = APNsResponse(status: 0, body: [])
    private var done = false
    private var timer: Scheduled<Void>?

    init(answered: EventLoopPromise<APNsResponse>, timeout: TimeAmount) {
        self.answered = answered
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = loopBound.value
            handler.finish(.failure(.timeout))
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if let status = frame.headers.first(name: ":status").flatMap({ Int($0) }) {
                // 1xx are interim; the final answer's headers replace them.
                if status >= 200 {
                    response.status = status
                    response.apnsID = frame.headers.first(name: "apns-id")
                    response.retryAfter = frame.headers.first(name: "retry-after")
                }
            }
            if frame.endStream { finish(response.status >= 200 ? .success(response) : .failure(.connectionReset)) }
        case .data(let frame):
            if case .byteBuffer(var buffer) = frame.data, response.body.count < 64 * 1024 {
                response.body += buffer.readBytes(length: min(buffer.readableBytes, 64 * 1024 - response.body.count)) ?? []
            }
            if frame.endStream { finish(response.status >= 200 ? .success(response) : .failure(.connectionReset)) }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(.connectionReset))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(.connectionReset))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.failure(.connectionReset))
    }

    private func finish(_ result: Result<APNsResponse, APNsTransportFailure>) {
        guard !done else { return }
        done = true
        timer?.cancel()
        switch result {
        case .success(let response): answered.succeed(response)
        case .failure(let failure): answered.fail(failure)
        }
    }
}
