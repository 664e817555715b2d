// `make bench-deliver`'s client ceilings: how fast two HTTP/2 clients alone push into the mock APNs, in
// the same run as h2load and the service, so the gap between h2load and the service can be split into
// what the HTTP/2 client costs and what deciding, queuing, claiming and recording cost:
// - APNsClient alone: PushBridge's real client (swift-nio-http2, its connection pool, deadlines)
//   sending deliveries with the same concurrency, no store, no worker;
// - swift-nio-http2 directly: a minimal client on NIOHTTP2's stream multiplexer (no pool, no retries,
//   no deadlines; the floor a hand-written transport could reach, not a product);
// - async-http-client: the client delivery used before 0.20 (one HTTPClient per connection, as the
//   pool was then), kept here so the choice between the two stays measured.
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeStore

/// `total` sends through an ``APNsClient`` with `concurrency` in flight; deliveries per second.
func apnsClientCeiling(client: APNsClient, total: Int, concurrency: Int, topic: String, payload: [UInt8]) async throws -> Double {
    let delivery = OutboxDelivery(
        messageID: "ceiling", receiver: "u", token: String(repeating: "ab", count: 32), environment: .production, boundAt: Instant(milliseconds: 0),
        headers: [HeaderField("apns-topic", topic), HeaderField("apns-push-type", "alert"), HeaderField("apns-priority", "10")],
        payload: payload, queuedAt: Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)))
    let start = ContinuousClock.now
    let delivered = await succeeded(total: total, concurrency: concurrency) { i in
        answered200(await client.send(delivery, apnsID: APNsID.make(app: "ceiling", message: "m\(i)", token: delivery.token), expiration: 0))
    }
    guard delivered == total else { fail("APNsClient alone: \(delivered) of \(total) answered 200") }
    return Double(total) / seconds(ContinuousClock.now - start)
}

/// `total` POSTs through async-http-client: `connections` clients (each keeps one HTTP/2 connection)
/// taken in turn, `concurrency` in flight; requests per second.
func asyncHTTPClientCeiling(baseURL: String, caFile: String, headers: [(String, String)], path: String, payload: [UInt8], total: Int, connections: Int,
    concurrency: Int) async throws -> Double
{
    let clients = (0..<connections).map { _ in
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caFile)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.httpVersion = .automatic
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
    @Sendable func one(_ i: Int) async -> Bool {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: payload))
        guard let response = try? await clients[i % clients.count].execute(request, timeout: .seconds(60)) else { return false }
        _ = try? await response.body.collect(upTo: 1 << 16)
        return response.status.code == 200
    }
    // Warm-up: every connection open.
    for i in 0..<connections { _ = await one(i) }
    let start = ContinuousClock.now
    let ok = await succeeded(total: total, concurrency: concurrency, one)
    let rate = Double(total) / seconds(ContinuousClock.now - start)
    for client in clients { try? await client.shutdown() }
    guard ok == total else { fail("async-http-client: \(ok) of \(total) answered 200") }
    return rate
}

/// Runs `one(0)` … `one(total - 1)` with up to `concurrency` at once (a new one starts as each ends);
/// how many returned `true`.
private func succeeded(total: Int, concurrency: Int, _ one: @escaping @Sendable (Int) async -> Bool) async -> Int {
    await withTaskGroup(of: Bool.self) { group in
        var started = 0
        var ok = 0
        while started < min(concurrency, total) {
            let i = started
            group.addTask { await one(i) }
            started += 1
        }
        while let result = await group.next() {
            if result { ok += 1 }
            if started < total {
                let i = started
                group.addTask { await one(i) }
                started += 1
            }
        }
        return ok
    }
}

private func answered200(_ attempt: DeliveryAttempt) -> Bool {
    if case .answered(let answer) = attempt { return answer.status == 200 }
    return false
}

/// `total` POSTs over `connections` HTTP/2 connections with `streams` in flight on each, through
/// swift-nio-http2's multiplexer directly; requests per second.
func nioHTTP2Ceiling(port: Int, caPEM: String, headers: [(String, String)], path: String, payload: [UInt8], total: Int, connections: Int, streams: Int)
    async throws -> Double
{
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(caPEM.utf8), format: .pem)])
    tls.certificateVerification = .noHostnameVerification
    tls.applicationProtocols = ["h2"]
    let context = try NIOSSLContext(configuration: tls)
    var requestHeaders = HPACKHeaders([(":method", "POST"), (":scheme", "https"), (":authority", "127.0.0.1:\(port)"), (":path", path)])
    for (name, value) in headers { requestHeaders.add(name: name, value: value) }
    requestHeaders.add(name: "content-length", value: String(payload.count))
    let requestHeadersValue = requestHeaders

    var multiplexers: [NIOHTTP2Handler.StreamMultiplexer] = []
    var channels: [Channel] = []
    for _ in 0..<connections {
        let (channel, multiplexer) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    let multiplexer = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
                    ) { $0.eventLoop.makeSucceededVoidFuture() }
                    return (channel, multiplexer)
                }
            }
        channels.append(channel)
        multiplexers.append(multiplexer)
    }
    let start = ContinuousClock.now
    let share = total / connections
    let results = try await withThrowingTaskGroup(of: Int.self) { group in
        for (i, multiplexer) in multiplexers.enumerated() {
            let count = i == connections - 1 ? total - share * (connections - 1) : share
            let channel = channels[i]
            group.addTask {
                try await channel.eventLoop.flatSubmit {
                    let driver = ProbeConnection(
                        multiplexer: multiplexer, eventLoop: channel.eventLoop, headers: requestHeadersValue,
                        payload: ByteBuffer(bytes: payload), total: count, streams: streams)
                    driver.startMore()
                    return driver.done.futureResult
                }.get()
            }
        }
        var ok = 0
        for try await n in group { ok += n }
        return ok
    }
    let elapsed = seconds(ContinuousClock.now - start)
    for channel in channels { try? await channel.close() }
    guard results == total else { fail("swift-nio-http2 directly: \(results) of \(total) answered 200") }
    return Double(total) / elapsed
}

/// One connection's requests, driven on its event loop: keeps `streams` in flight until `total` are answered.
private final class ProbeConnection: @unchecked Sendable {  // touched on `eventLoop` only
    let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    let eventLoop: EventLoop
    let headers: HPACKHeaders
    let payload: ByteBuffer
    let streams: Int
    var remaining: Int
    var inFlight = 0
    var succeeded = 0
    let done: EventLoopPromise<Int>

    init(multiplexer: NIOHTTP2Handler.StreamMultiplexer, eventLoop: EventLoop, headers: HPACKHeaders, payload: ByteBuffer, total: Int, streams: Int) {
        self.multiplexer = multiplexer
        self.eventLoop = eventLoop
        self.headers = headers
        self.payload = payload
        self.remaining = total
        self.streams = streams
        self.done = eventLoop.makePromise()
    }

    func startMore() {
        eventLoop.preconditionInEventLoop()
        while inFlight < streams && remaining > 0 {
            remaining -= 1
            inFlight += 1
            let opened = eventLoop.makePromise(of: Channel.self)
            multiplexer.createStreamChannel(promise: opened) { stream in
                stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(ProbeStream(connection: self)) }
            }
            opened.futureResult.whenComplete { result in
                switch result {
                case .success(let stream):
                    stream.write(HTTP2Frame.FramePayload.headers(.init(headers: self.headers)), promise: nil)
                    stream.writeAndFlush(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(self.payload), endStream: true)), promise: nil)
                case .failure:
                    self.finished(status: 0)
                }
            }
        }
        if inFlight == 0 && remaining == 0 { done.succeed(succeeded) }
    }

    func finished(status: Int) {
        inFlight -= 1
        if status == 200 { succeeded += 1 }
        startMore()
    }
}

/// One stream's answer: its `:status`, reported when the stream ends.
private final class ProbeStream: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    let connection: ProbeConnection
    var status = 0
    var ended = false

    init(connection: ProbeConnection) { self.connection = connection }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if let value = frame.headers.first(name: ":status") { status = Int(value) ?? 0 }
            if frame.endStream { end(context) }
        case .data(let frame):
            if frame.endStream { end(context) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !ended {
            ended = true
            connection.finished(status: 0)
        }
        context.fireChannelInactive()
    }

    private func end(_ context: ChannelHandlerContext) {
        guard !ended else { return }
        ended = true
        connection.finished(status: status)
    }
}
