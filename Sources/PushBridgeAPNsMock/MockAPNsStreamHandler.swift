import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 stream of the mock: reads the request, checks it, answers as scripted.
final class MockAPNsStreamHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let owner: MockAPNs.Owner
    let connection: Int
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(owner: MockAPNs.Owner, connection: Int) {
        self.owner = owner
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.removeAll(keepingCapacity: true)
        case .body(var buffer):
            if body.count <= 1 << 16 { body += buffer.readBytes(length: buffer.readableBytes) ?? [] }
        case .end:
            guard let head, let mock = owner.mock else { return }
            answer(head, mock: mock, context: context)
        }
    }

    private func answer(_ head: HTTPRequestHead, mock: MockAPNs, context: ChannelHandlerContext) {
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        let token = head.uri.hasPrefix("/3/device/") ? String(head.uri.dropFirst("/3/device/".count)) : ""
        let now = Int64(Date().timeIntervalSince1970)
        let answer: MockAPNs.Answer
        if let failure = mock.check(method: "\(head.method)", path: head.uri, headers: headers, payload: body, now: now) {
            answer = .refuse(status: failure.status, reason: failure.reason)
        } else {
            answer = mock.nextAnswer(for: token.lowercased())
        }
        let request = MockAPNs.Request(token: token, headers: headers, payload: body, status: 0, reason: nil, connection: connection)
        mock.arrived(request)
        let delay = mock.configuration.latency.draw()
        if delay > 0 {
            perform(.slow(milliseconds: Int(delay), then: answer), request: request, mock: mock, context: context)
        } else {
            perform(answer, request: request, mock: mock, context: context)
        }
    }

    private func perform(_ answer: MockAPNs.Answer, request: MockAPNs.Request, mock: MockAPNs, context: ChannelHandlerContext) {
        var request = request
        switch answer {
        case .slow(let milliseconds, let then):
            let request = request
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(milliseconds))) {
                let (handler, context) = loopBound.value
                handler.perform(then, request: request, mock: mock, context: context)
            }
        case .reset:
            mock.record(request)
            context.channel.parent?.close(promise: nil)
        case .goAway(let then):
            perform(then, request: request, mock: mock, context: context)
            if let parent = context.channel.parent, let stream = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) {
                let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: stream, errorCode: .noError, opaqueData: nil))
                parent.writeAndFlush(frame, promise: nil)
                parent.eventLoop.scheduleTask(in: .milliseconds(200)) { parent.close(promise: nil) }
            }
        case .ok:
            request.status = 200
            respond(request, body: nil, extra: [], mock: mock, context: context)
        case .gone(let reason, let timestamp):
            request.status = 410
            request.reason = reason
            respond(request, body: "{\"reason\":\"\(reason)\",\"timestamp\":\(timestamp)}", extra: [], mock: mock, context: context)
        case .refuse(let status, let reason):
            request.status = status
            request.reason = reason
            respond(request, body: "{\"reason\":\"\(reason)\"}", extra: [], mock: mock, context: context)
        case .tooManyRequests(let retryAfter):
            request.status = 429
            request.reason = "TooManyRequests"
            respond(
                request, body: "{\"reason\":\"TooManyRequests\"}", extra: retryAfter.map { [("retry-after", String($0))] } ?? [], mock: mock,
                context: context)
        case .serverError(let status):
            request.status = status
            request.reason = status == 503 ? "ServiceUnavailable" : "InternalServerError"
            respond(request, body: "{\"reason\":\"\(request.reason!)\"}", extra: [], mock: mock, context: context)
        }
    }

    private func respond(_ request: MockAPNs.Request, body: String?, extra: [(String, String)], mock: MockAPNs, context: ChannelHandlerContext) {
        mock.record(request)
        var headers = HTTPHeaders()
        headers.add(name: "apns-id", value: request.apnsID ?? UUID().uuidString.lowercased())
        for (name, value) in extra { headers.add(name: name, value: value) }
        if body != nil { headers.add(name: "content-type", value: "application/json") }
        let status = HTTPResponseStatus(statusCode: request.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: status, headers: headers))), promise: nil)
        if let body {
            var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
            buffer.writeString(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
