import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Where HTTP/1.1 framing goes wrong, below the router: answers what the parser refuses with the
/// JSON error body, and closes a connection whose byte stream can no longer be trusted.
///
/// - A request the parser refuses before its head is complete (an unknown method, a header block
///   over the limit, a malformed request line) gets `400 {"error": {"code": "malformed-http", …}}`
///   with `Connection: close`, then the connection closes. Hummingbird alone answers an empty 400.
/// - A framing error inside a body (a chunk size `zz`) reaches the route as the body's error, and
///   the route answers 400 `malformed-http`; the connection closes after that answer, since the
///   parser stops there.
/// - `CONNECT` is answered by the routes (405 with `Allow` and its body, as any method a route does
///   not take) and the connection closes after it: NIO's parser treats the bytes after a CONNECT head
///   as a tunnel and would read no further request, and NIO's encoder writes no body or
///   `Content-Length` for an answer to CONNECT (right for a 2xx, which opens a tunnel; a refusal has
///   a body, RFC 9110 §9.3.6), so that answer is serialized here and written past the encoder.
/// - An answer to `HEAD` carries no body (RFC 9110 §9.3.2), whoever wrote it.
/// - `Expect: 100-continue` (RFC 9110 §10.1.1): `100 Continue` is sent when the route starts
///   reading the body (``SendContinue``); a route that answers first (401, 413, …) gives the final
///   status at once, and the connection closes after it, since the client may never send the body.
/// - An answer given before the body is read that cannot wait for it (413, a body declared over the
///   limit, a refused `Expect`) says `Connection: close`; ``HTTPConnectionGuard`` then reads the rest
///   of the body away before closing, so the client, still writing, gets to read the answer.
///
/// Sits between Hummingbird's HTTP/1 codec and its connection-state handler (an additional channel
/// handler of `HTTP1Channel`), and puts an ``HTTPConnectionGuard`` before the codec. One per
/// connection; runs on the connection's event loop.
final class HTTPFramingHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What a route triggers (an outbound user event) when it starts reading a request's body.
    struct SendContinue: Sendable {}

    /// A request whose head was read and whose answer has not ended, oldest first.
    private struct Exchange {
        var isHead: Bool
        var isConnect = false
        var expectsContinue: Bool
        var continueSent = false
        var bodyDeclaredTooLarge: Bool
        var answerStarted = false
    }

    private let bodyLimitBytes: Int
    /// Called once per request the parser refused before a route saw it, with the parser's words.
    private let refused: @Sendable (String) -> Void
    /// The requests in flight (pipelined ones are answered in order).
    private var exchanges: [Exchange] = []
    /// A request's head was read and its end not yet: a parser error now is in its body.
    private var readingBody = false
    /// A parser error in a request after those in flight (pipelined): answered once they are.
    private var pendingRefusal: ServiceError?
    /// Close once the answers in flight have ended.
    private var closeAfterAnswers = false
    /// The connection has been answered and closed here.
    private var closed = false
    /// The raw-byte side of the connection (before the codec).
    private var connectionGuard: HTTPConnectionGuard?
    /// This handler's context, for refusals the guard asks for (same event loop).
    private var context: ChannelHandlerContext?
    /// The answer to a CONNECT as the route writes it, until its end.
    private var connectAnswer: (head: HTTPResponse, body: ByteBuffer)?

    /// - Parameters:
    ///   - bodyLimitBytes: the largest body a route reads (a longer declared body closes the connection after its answer).
    ///   - refused: counts and logs a refusal (no request value is passed, only the parser's error).
    init(bodyLimitBytes: Int, refused: @escaping @Sendable (String) -> Void) {
        self.bodyLimitBytes = bodyLimitBytes
        self.refused = refused
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let guardHandler = HTTPConnectionGuard(bodyLimitBytes: bodyLimitBytes) { [weak self] error in self?.refuseJudged(error) }
        connectionGuard = guardHandler
        try? context.pipeline.syncOperations.addHandler(guardHandler, position: .first)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            readingBody = true
            if head.method == .connect { closeAfterAnswers = true }
            let expect = head.headerFields[.expect]?.lowercased()
            let declared = head.headerFields[.contentLength].flatMap { UInt64($0) }
            exchanges.append(
                Exchange(
                    isHead: head.method == .head, isConnect: head.method == .connect, expectsContinue: expect == "100-continue",
                    bodyDeclaredTooLarge: declared.map { $0 > UInt64(bodyLimitBytes) } ?? false))
        case .end: readingBody = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPConnectionGuard.ChunkTooLarge {
            closeAfterAnswers = true
            context.fireErrorCaught(error)
            return
        }
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if readingBody {
            // The route reading the body gets the error and answers; the connection closes after.
            closeAfterAnswers = true
            context.fireErrorCaught(error)
            return
        }
        refuse(.malformedHTTP(parserError), what: "\(parserError)", context: context)
    }

    /// A request line the guard judged broken (HTTP/0.9, an empty request line): answered like a parser refusal.
    private func refuseJudged(_ error: ServiceError) {
        guard let context else { return }
        refuse(error, what: error.found ?? error.code, context: context)
    }

    /// Answers a request refused before a route saw it, then closes the connection; after the
    /// answers in flight when there are any (a pipelined request).
    private func refuse(_ error: ServiceError, what: String, context: ChannelHandlerContext) {
        if !exchanges.isEmpty {
            pendingRefusal = pendingRefusal ?? error
            return
        }
        guard !closed else { return }
        closed = true
        refused(what)
        let body = error.body
        let head = HTTPResponse(
            status: error.status,
            headerFields: [.contentType: "application/json", .contentLength: String(body.count), .connection: "close"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        // The answer to a HEAD has no body, refused or not.
        if connectionGuard?.requestIsHead != true { context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.close(promise: nil)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is SendContinue else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        // The request being read is the newest in flight.
        if readingBody, let last = exchanges.indices.last, exchanges[last].expectsContinue, !exchanges[last].continueSent, !exchanges[last].answerStarted {
            exchanges[last].continueSent = true
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        promise?.succeed()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if exchanges.first?.isConnect == true {
            answerConnect(unwrapOutboundIn(data), context: context, promise: promise)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(var head):
            guard !exchanges.isEmpty else { break }
            exchanges[0].answerStarted = true
            // An answer before the body that will not wait for it: the client may never send it
            // (a refused Expect), or it is too large to read; close after, reading the rest away.
            let exchange = exchanges[0]
            if exchange.bodyDeclaredTooLarge
                || (exchanges.count == 1 && readingBody && ((exchange.expectsContinue && !exchange.continueSent) || head.status == .contentTooLarge))
            {
                closeAfterAnswers = true
            }
            if closeAfterAnswers && exchanges.count == 1 { head.headerFields[.connection] = "close" }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
            return
        case .body:
            if exchanges.first?.isHead == true {
                promise?.succeed()
                return
            }
        case .end:
            if !exchanges.isEmpty { exchanges.removeFirst() }
            if let pending = pendingRefusal, exchanges.isEmpty {
                context.write(data, promise: promise)
                refuse(pending, what: pending.found ?? pending.code, context: context)
            } else if closeAfterAnswers && exchanges.isEmpty {
                context.writeAndFlush(data, promise: promise)
                context.close(promise: nil)
            } else {
                context.write(data, promise: promise)
            }
            return
        }
        context.write(data, promise: promise)
    }

    /// Collects the answer to a CONNECT and, at its end, writes it whole past the encoder (which
    /// would drop its body), then closes the connection.
    private func answerConnect(_ part: HTTPResponsePart, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        switch part {
        case .head(let head):
            exchanges[0].answerStarted = true
            connectAnswer = (head, context.channel.allocator.buffer(capacity: 256))
            promise?.succeed()
        case .body(let bytes):
            connectAnswer?.body.writeImmutableBuffer(bytes)
            promise?.succeed()
        case .end:
            exchanges.removeFirst()
            let answer = connectAnswer ?? (HTTPResponse(status: .methodNotAllowed), ByteBuffer())
            connectAnswer = nil
            closed = true
            if let connectionGuard {
                connectionGuard.writeAnswer(Self.serialized(answer.head, body: answer.body, allocator: context.channel.allocator), promise: promise)
            } else {
                promise?.fail(ChannelError.ioOnClosedChannel)
            }
            context.close(promise: nil)
        }
    }

    /// An HTTP/1.1 answer as bytes, framed by `Content-Length`, closing the connection.
    static func serialized(_ head: HTTPResponse, body: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        var out = allocator.buffer(capacity: 256 + body.readableBytes)
        out.writeString("HTTP/1.1 \(head.status.code) \(head.status.reasonPhrase)\r\n")
        for field in head.headerFields where field.name != .contentLength && field.name != .transferEncoding && field.name != .connection {
            out.writeString("\(field.name.rawName): \(field.value)\r\n")
        }
        out.writeString("Content-Length: \(body.readableBytes)\r\nConnection: close\r\n\r\n")
        out.writeImmutableBuffer(body)
        return out
    }
}
