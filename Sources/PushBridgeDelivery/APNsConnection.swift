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

/// One HTTP/2 connection to APNs over TLS (swift-nio-http2 directly, at the frame level): each
/// request is a stream the connection's `APNsStreams` handler opens, answers and times out itself,
/// with no channel of its own; streams beyond the server's `SETTINGS_MAX_CONCURRENT_STREAMS` wait
/// inside NIOHTTP2 for a free one. A connection that got GOAWAY, failed or closed is no longer
/// ``isUsable``: its pool replaces it, and what is still in flight on it finishes or fails.
final class APNsConnection: Sendable {
    let channel: any Channel
    private let streams: NIOLoopBound<APNsStreams>
    private let health: APNsConnectionHealth
    /// Requests started off the event loop that it has not opened yet: one hop to the loop opens all
    /// that gathered meanwhile, and one flush sends them (a TLS record and a write for many).
    private let outgoing = Mutex<[Outgoing]>([])

    /// A request waiting for the event loop.
    private struct Outgoing {
        var headers: HPACKHeaders
        var body: ByteBuffer
        var timeout: TimeAmount
        var done: @Sendable (Result<APNsResponse, APNsTransportFailure>) -> Void
    }

    private init(channel: any Channel, streams: NIOLoopBound<APNsStreams>, health: APNsConnectionHealth) {
        self.channel = channel
        self.streams = streams
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
        let streams: NIOLoopBound<APNsStreams>
        let ready: EventLoopFuture<Void>
        let health = APNsConnectionHealth()
        do {
            (channel, streams, ready) = try await ClientBootstrap(group: eventLoops)
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
                        try channel.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .client, connectionConfiguration: settings))
                        let streams = APNsStreams(health: health)
                        try channel.pipeline.syncOperations.addHandler(streams)
                        return (channel, NIOLoopBound(streams, eventLoop: channel.eventLoop), handshake.futureResult)
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
        return APNsConnection(channel: channel, streams: streams, health: health)
    }

    /// Closes it now (what is in flight fails as `connection-reset`).
    func close() {
        health.retire(goAway: false)
        channel.close(promise: nil)
    }

    /// Sends one request and calls `done` once with its whole answer, or with how it failed (a reset
    /// after GOAWAY is named `goaway`), on the connection's event loop: no task waits for it. Past
    /// `timeout` the stream is reset and the request fails `timeout`.
    /// - Parameters:
    ///   - headers: the request's headers, pseudo-headers first.
    ///   - body: the payload.
    ///   - timeout: the longest to wait for the answer, from now.
    ///   - done: what to do with the answer (it must not block the event loop).
    func start(headers: HPACKHeaders, body: ByteBuffer, timeout: TimeAmount, then done: @escaping @Sendable (Result<APNsResponse, APNsTransportFailure>) -> Void) {
        let request = Outgoing(headers: headers, body: body, timeout: timeout, done: done)
        if channel.eventLoop.inEventLoop {
            open(request)
            streams.value.flush()
            return
        }
        // The first request to gather takes the hop; the others ride on it.
        let first = outgoing.withLock { waiting in
            waiting.append(request)
            return waiting.count == 1
        }
        if first { channel.eventLoop.execute { [self] in openOutgoing() } }
    }

    /// Opens every request that gathered, then flushes once. On the event loop.
    private func openOutgoing() {
        // The list is handed over whole (no copy); requests that start meanwhile begin a new one.
        let waiting = outgoing.withLock { waiting in
            var taken: [Outgoing] = []
            swap(&taken, &waiting)
            return taken
        }
        for request in waiting { open(request) }
        streams.value.flush()
    }

    /// Opens one request's stream (not flushed) and calls its `done` with the answer. On the event loop.
    private func open(_ request: Outgoing) {
        let answered = channel.eventLoop.makePromise(of: APNsResponse.self)
        streams.value.open(headers: request.headers, body: request.body, timeout: request.timeout, answered: answered)
        answered.futureResult.whenComplete { [health, done = request.done] result in
            done(result.mapError { error in
                guard let failure = error as? APNsTransportFailure else { return health.goAwayReceived ? .goAway : .connectionReset }
                return failure == .connectionReset && health.goAwayReceived ? .goAway : failure
            })
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

/// A connection's requests, at the frame level: opens each as a stream (HEADERS, then DATA ending
/// it), collects its answer (status, `apns-id`, `retry-after`, body up to 64 KiB) and completes its
/// promise once, with the answer or with how the stream ended: reset, refused by GOAWAY, the
/// connection closed, or its deadline (then it resets the stream). GOAWAY and connection errors
/// retire the connection; it returns the connection's and each stream's flow-control window as
/// answers' bodies use them.
///
/// Deadlines are kept with the streams and watched by one timer, set for the earliest of them: a
/// request schedules and cancels no timer of its own (NIO cancels a scheduled task by searching the
/// event loop's whole queue of them).
private final class APNsStreams: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// One request in flight.
    private struct Stream {
        var answered: EventLoopPromise<APNsResponse>
        /// When it fails `timeout` (its stream reset) unless answered first.
        var deadline: NIODeadline
        var response = APNsResponse(status: 0, body: [])
        /// Body bytes read on this stream since its window was last returned.
        var unreturned = 0
    }

    private let health: APNsConnectionHealth
    private var context: ChannelHandlerContext?
    private var open: [HTTP2StreamID: Stream] = [:]
    /// The next stream's id: clients use odd ids, each larger than the last.
    private var nextID = 1
    /// Body bytes read since the connection's window was last returned.
    private var unreturned = 0
    private var closed = false
    /// The timer that ends the streams past their deadlines, and when it fires (no later than the
    /// earliest open stream's deadline).
    private var watch: (deadline: NIODeadline, timer: Scheduled<Void>)?

    /// The largest id a client stream may have; past it the connection is retired (replaced).
    private static let lastID = Int(Int32.max) - 2

    init(health: APNsConnectionHealth) { self.health = health }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        failAll(.connectionReset)
        watch?.timer.cancel()
        watch = nil
        self.context = nil
    }

    /// Opens a stream for one request (written, not flushed: ``flush()`` sends it), or fails the
    /// request at once when the connection can take no more. On the connection's event loop.
    func open(headers: HPACKHeaders, body: ByteBuffer, timeout: TimeAmount, answered: EventLoopPromise<APNsResponse>) {
        // After GOAWAY no new stream may open on the connection: the request goes again on another.
        // (`send` names a reset after GOAWAY `goaway`.)
        guard let context, !closed, nextID <= Self.lastID, !health.goAwayReceived else {
            answered.fail(APNsTransportFailure.connectionReset)
            return
        }
        let id = HTTP2StreamID(nextID)
        nextID += 2
        if nextID > Self.lastID { health.retire(goAway: false) }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let deadline = NIODeadline.now() + timeout
        open[id] = Stream(answered: answered, deadline: deadline)
        watch(until: deadline, context: context)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { _ in
            let (streams, _) = loopBound.value
            streams.finish(id, .failure(.connectionReset))
        }
        let empty = body.readableBytes == 0
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: empty)))), promise: written)
        if !empty { context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(body), endStream: true)))), promise: nil) }
    }

    /// Sends what ``open(headers:body:timeout:answered:)`` wrote. On the connection's event loop.
    func flush() { context?.flush() }

    /// Makes sure the timer fires by `deadline` (moving it earlier when it was set later).
    private func watch(until deadline: NIODeadline, context: ChannelHandlerContext) {
        if let watch, watch.deadline <= deadline { return }
        watch?.timer.cancel()
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        watch = (deadline, context.eventLoop.scheduleTask(deadline: deadline) { loopBound.value.endOverdue() })
    }

    /// Fails the streams past their deadlines with `timeout`, resetting each; sets the timer for the
    /// earliest deadline left.
    private func endOverdue() {
        watch = nil
        guard let context else { return }
        let now = NIODeadline.now()
        var overdue: [HTTP2StreamID] = []
        var next: NIODeadline?
        for (id, stream) in open {
            if stream.deadline <= now {
                overdue.append(id)
            } else if next.map({ stream.deadline < $0 }) ?? true {
                next = stream.deadline
            }
        }
        for id in overdue {
            finish(id, .failure(.timeout))
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
        }
        if !overdue.isEmpty { context.flush() }
        if let next { watch(until: next, context: context) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.streamID == .rootStream {
            if case .goAway(let lastStreamID, _, _) = frame.payload {
                health.retire(goAway: true)
                // Streams the server never began are refused: they may go again on another connection.
                for id in open.keys where id > lastStreamID { finish(id, .failure(.goAway)) }
            }
            return
        }
        let id = frame.streamID
        guard var stream = open[id] else { return }
        switch frame.payload {
        case .headers(let headers):
            if let status = headers.headers.first(name: ":status").flatMap({ Int($0) }), status >= 200 {
                // 1xx are interim; the final answer's headers replace them.
                stream.response.status = status
                stream.response.apnsID = headers.headers.first(name: "apns-id")
                stream.response.retryAfter = headers.headers.first(name: "retry-after")
            }
            open[id] = stream
            if headers.endStream { answer(id, stream.response) }
        case .data(let data):
            // Padding counts against the windows as the body does.
            var used = data.paddingBytes ?? 0
            if case .byteBuffer(var buffer) = data.data {
                used += buffer.readableBytes
                if stream.response.body.count < 64 * 1024 {
                    stream.response.body += buffer.readBytes(length: min(buffer.readableBytes, 64 * 1024 - stream.response.body.count)) ?? []
                }
            }
            var returned = false
            if data.endStream {
                answer(id, stream.response)
            } else {
                // A long answer (past its 64 KiB window) keeps coming: its stream's window goes back too.
                stream.unreturned += used
                if stream.unreturned >= 16 * 1024 {
                    context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: stream.unreturned))), promise: nil)
                    stream.unreturned = 0
                    returned = true
                }
                open[id] = stream
            }
            unreturned += used
            if unreturned >= 16 * 1024 {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unreturned))), promise: nil)
                unreturned = 0
                returned = true
            }
            if returned { context.flush() }
        case .rstStream:
            finish(id, .failure(.connectionReset))
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A stream NIOHTTP2 closed that is still open here (refused, reset, dropped by GOAWAY).
        if let closed = event as? StreamClosedEvent, open[closed.streamID] != nil {
            finish(closed.streamID, .failure(.connectionReset))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOHTTP2Errors.StreamError {
            // One stream's error (NIOHTTP2 has reset the stream): that request fails, the connection goes on.
            finish(error.streamID, .failure(.connectionReset))
            return
        }
        health.retire(goAway: false)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        health.retire(goAway: false)
        failAll(.connectionReset)
        context.fireChannelInactive()
    }

    /// The stream ended with its answer: a final status (`connection-reset` when none came).
    private func answer(_ id: HTTP2StreamID, _ response: APNsResponse) {
        finish(id, response.status >= 200 ? .success(response) : .failure(.connectionReset))
    }

    private func finish(_ id: HTTP2StreamID, _ result: Result<APNsResponse, APNsTransportFailure>) {
        guard let stream = open.removeValue(forKey: id) else { return }
        switch result {
        case .success(let response): stream.answered.succeed(response)
        case .failure(let failure): stream.answered.fail(failure)
        }
    }

    private func failAll(_ failure: APNsTransportFailure) {
        for id in Array(open.keys) { finish(id, .failure(failure)) }
    }
}
