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
/// - `CONNECT` is answered by the routes (405) and the connection closes after it: NIO's parser
///   treats the bytes after a CONNECT head as a tunnel and would read no further request.
///
/// Sits between Hummingbird's HTTP/1 codec and its connection-state handler (an additional channel
/// handler of `HTTP1Channel`). One per connection; runs on the connection's event loop.
final class HTTPFramingHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Called once per request the parser refused before a route saw it, with the parser's words.
    private let refused: @Sendable (String) -> Void
    /// Requests whose head was read and whose answer has not ended.
    private var requestsInFlight = 0
    /// A request's head was read and its end not yet: a parser error now is in its body.
    private var readingBody = false
    /// A parser error in a request after those in flight (pipelined): answered once they are.
    private var pendingRefusal: HTTPParserError?
    /// Close once the answers in flight have ended.
    private var closeAfterAnswers = false
    /// The connection has been answered and closed here.
    private var closed = false

    /// - Parameter refused: counts and logs a refusal (no request value is passed, only the parser's error).
    init(refused: @escaping @Sendable (String) -> Void) {
        self.refused = refused
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestsInFlight += 1
            readingBody = true
            if head.method == .connect { closeAfterAnswers = true }
        case .end: readingBody = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
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
        if requestsInFlight > 0 {
            // A pipelined request after those being answered: its refusal comes after their answers.
            pendingRefusal = pendingRefusal ?? parserError
            return
        }
        refuse(parserError, context: context)
    }

    /// Answers a request the parser refused, then closes the connection.
    private func refuse(_ parserError: HTTPParserError, context: ChannelHandlerContext) {
        guard !closed else { return }
        closed = true
        refused("\(parserError)")
        let body = ServiceError.malformedHTTP(parserError).body
        let head = HTTPResponse(
            status: .badRequest,
            headerFields: [.contentType: "application/json", .contentLength: String(body.count), .connection: "close"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.close(promise: nil)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        requestsInFlight = max(0, requestsInFlight - 1)
        if let pending = pendingRefusal, requestsInFlight == 0 {
            context.write(data, promise: promise)
            refuse(pending, context: context)
        } else if closeAfterAnswers && requestsInFlight == 0 {
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        } else {
            context.write(data, promise: promise)
        }
    }
}
