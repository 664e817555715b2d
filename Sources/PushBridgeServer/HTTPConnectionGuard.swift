import Foundation
import NIOCore

/// The raw bytes of an HTTP/1.1 connection, before the parser: follows the framing (request
/// lines, heads, fixed and chunked bodies) to judge what the parser alone would wait on, and closes
/// the connection without cutting off an answer the client has yet to read.
///
/// - A request line without an HTTP version (HTTP/0.9, `GET /`) or a second empty line where a
///   request line belongs is refused at once (400 `malformed-http`, through ``HTTPFramingHandler``),
///   where the parser would wait out the idle timeout.
/// - A chunk whose declared size is over the body limit (`ffffffffffffffff`) fails the body at once
///   (``ChunkTooLarge``: 413), where the parser would wait for the bytes.
/// - Whether the request being parsed is a `HEAD` (its refusal then carries no body).
/// - A lingering close (as servers have long done, RFC 9112 §9.6): a connection closed while the
///   client may still be sending shuts its output first (the answer, then FIN), reads and discards
///   what still comes, bounded in bytes, in time and in time without a byte (nginx's `lingering_time`
///   and `lingering_timeout`), and only then closes; closing with unread input would reset the
///   connection and the client would lose the answer.
///
/// Added by ``HTTPFramingHandler`` at the front of the pipeline; runs on the connection's event loop.
final class HTTPConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A chunk declared larger than the body limit: the body's error (413 `too-large`).
    struct ChunkTooLarge: Error, Sendable {
        /// The chunk size as declared (hex digits).
        var declared: String
        /// The body limit it is over.
        var limit: Int
    }

    /// How long a lingering close reads what the client still sends, at most.
    static let lingerTime = TimeAmount.seconds(30)
    /// How long a lingering close waits for the client's next bytes before it closes: a client that
    /// stopped sending is not waited on for the whole ``lingerTime``, a slow one (a loaded machine)
    /// is not cut off while it still sends.
    static let lingerIdle = TimeAmount.seconds(5)
    /// How many bytes a lingering close reads away, at most.
    static let lingerBytes = 32 << 20
    /// A request line or a head longer than this is left to the parser (which has its own limit).
    static let headLimit = 96 * 1024

    private enum Phase {
        /// Before a request line; its bytes are held until the line is whole and judged.
        case requestLine(emptyLines: Int)
        /// In a head, reading Content-Length and Transfer-Encoding (``HeadFraming``).
        case headers
        case fixedBody(remaining: UInt64)
        case chunkSize
        case chunkData(remaining: UInt64)
        /// The CRLF after a chunk's data.
        case chunkEnd
        /// Trailer lines after the last chunk, until an empty one.
        case trailers
        /// Framing this guard does not follow (the parser will refuse it): bytes pass as they are.
        case untracked
        /// After a refusal: nothing more reaches the parser.
        case discarding
    }

    private let bodyLimitBytes: Int
    private let refuse: (ServiceError) -> Void
    private var phase = Phase.requestLine(emptyLines: 0)
    /// A line begun in an earlier read and still going on (request line, header line, chunk size or
    /// trailer line), as read so far; a line whole in one read is judged where it lies.
    private var line: [UInt8] = []
    /// The head being read.
    private var head = HeadFraming()
    /// Whether the request being parsed is a `HEAD`.
    private(set) var requestIsHead = false
    private var lingering = false
    private var lingeredBytes = 0
    /// Closes a lingering connection after ``lingerIdle`` without a byte; moved on by each read.
    private var lingerIdleClose: Scheduled<Void>?
    private var inputClosed = false

    /// - Parameters:
    ///   - bodyLimitBytes: the largest body a route reads.
    ///   - refuse: answers a request refused here (400) and closes.
    init(bodyLimitBytes: Int, refuse: @escaping (ServiceError) -> Void) {
        self.bodyLimitBytes = bodyLimitBytes
        self.refuse = refuse
    }

    /// This handler's context, for answers written past the encoder (``writeAnswer(_:promise:)``).
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes a whole serialized answer to the socket, past the HTTP encoder, and flushes it.
    /// - Parameters:
    ///   - bytes: the status line, headers, empty line and body.
    ///   - promise: completed when written.
    func writeAnswer(_ bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if lingering {
            lingeredBytes += buffer.readableBytes
            if lingeredBytes > Self.lingerBytes {
                context.close(promise: nil)
            } else {
                closeWhenIdle(context: context)
                context.read()
            }
            return
        }
        var out: ByteBuffer? = nil
        let view = buffer.readableBytesView
        var index = view.startIndex
        var forwardFrom = view.startIndex
        func write(_ bytes: [UInt8]) {
            if out == nil { out = context.channel.allocator.buffer(capacity: buffer.readableBytes + bytes.count) }
            out!.writeBytes(bytes)
        }
        /// Bytes of `view` from `forwardFrom` up to `end` go on to the parser: a slice of the read's
        /// own buffer, not a copy, when nothing went before it (a body passes through uncopied).
        func forward(upTo end: Int) {
            if end > forwardFrom {
                let slice = buffer.getSlice(at: forwardFrom, length: end - forwardFrom)!
                if out == nil { out = slice } else { out!.writeImmutableBuffer(slice) }
            }
            forwardFrom = max(forwardFrom, end)
        }
        func flush() {
            if let out { context.fireChannelRead(wrapInboundOut(out)) }
        }
        /// The index of the next `\n` of the read from `start` on, if any.
        func newline(from start: Int) -> Int? {
            buffer.withUnsafeReadableBytes { bytes -> Int? in
                let offset = start - view.startIndex
                guard offset < bytes.count, let base = bytes.baseAddress, let found = memchr(base + offset, 0x0A, bytes.count - offset) else { return nil }
                return view.startIndex + base.distance(to: UnsafeRawPointer(found))
            }
        }
        while index < view.endIndex {
            switch phase {
            case .untracked:
                index = view.endIndex
            case .discarding:
                forward(upTo: index)
                forwardFrom = view.endIndex
                index = view.endIndex
            case .fixedBody(let remaining):
                let step = Int(min(remaining, UInt64(view.endIndex - index)))
                index += step
                phase = remaining == UInt64(step) ? .requestLine(emptyLines: 0) : .fixedBody(remaining: remaining - UInt64(step))
            case .chunkData(let remaining):
                let step = Int(min(remaining, UInt64(view.endIndex - index)))
                index += step
                phase = remaining == UInt64(step) ? .chunkEnd : .chunkData(remaining: remaining - UInt64(step))
            case .requestLine(let emptyLines):
                // Held back: the parser sees the line only once it is judged.
                if line.isEmpty { forward(upTo: index) }
                let start = index
                guard let newline = newline(from: index) else {
                    // The line goes on in a later read: held until it is whole.
                    line.append(contentsOf: view[start...])
                    index = view.endIndex
                    if line.count > Self.headLimit {
                        write(line)
                        line = []
                        forwardFrom = index
                        phase = .untracked
                    }
                    continue
                }
                index = newline + 1
                // Whole in this read, the line is judged where it lies; begun in an earlier one, it is held.
                let held = !line.isEmpty
                if held { line.append(contentsOf: view[start..<index]) }
                let length = held ? line.count : index - start
                if length - 1 > Self.headLimit {
                    // Too long to judge: the parser has its own limit.
                    if held {
                        write(line)
                        line = []
                        forwardFrom = index
                    }
                    phase = .untracked
                    continue
                }
                let verdict = held ? Self.judgeRequestLine(line[...]) : Self.judgeRequestLine(view[start..<index])
                switch verdict {
                case .empty:
                    // RFC 9112 §2.2: at least one empty line before a request line is ignored; a second is no request.
                    line = []
                    forwardFrom = index
                    if emptyLines >= 1 {
                        flush()
                        refused(found: "an empty request line")
                        return
                    }
                    phase = .requestLine(emptyLines: emptyLines + 1)
                    continue
                case .noVersion(let isHead):
                    requestIsHead = isHead
                    flush()
                    refused(found: "a request line without an HTTP version (HTTP/0.9 is not served)")
                    return
                case .request(let isHead):
                    requestIsHead = isHead
                }
                // Judged: the held line goes on (one whole in this read goes on from where it lies).
                if held {
                    write(line)
                    line = []
                    forwardFrom = index
                }
                head = HeadFraming()
                phase = .headers
            case .headers:
                // Line by line; only a header line split between reads is held (in `line`).
                let start = index
                guard let newline = newline(from: index) else {
                    head.bytes += view.endIndex - start
                    index = view.endIndex
                    if head.bytes > Self.headLimit {
                        phase = .untracked
                        line = []
                    } else {
                        line.append(contentsOf: view[start...])
                    }
                    continue
                }
                index = newline + 1
                head.bytes += index - start
                if head.bytes > Self.headLimit {
                    phase = .untracked
                    line = []
                    continue
                }
                let ended: Bool
                if line.isEmpty {
                    ended = head.read(line: view[start..<index])
                } else {
                    line.append(contentsOf: view[start..<index])
                    ended = head.read(line: line[...])
                    line = []
                }
                if ended { phase = head.bodyPhase }
            case .chunkSize:
                let byte = view[index]
                index += 1
                line.append(byte)
                guard byte == UInt8(ascii: "\n") else {
                    if line.count > 4_096 {
                        phase = .untracked
                        line = []
                    }
                    continue
                }
                let digits = line.prefix { Self.hexValue($0) != nil }
                line = []
                guard !digits.isEmpty, digits.count <= 16 else {
                    phase = .untracked  // the parser refuses it
                    continue
                }
                let size = digits.reduce(UInt64(0)) { $0 &* 16 &+ UInt64(Self.hexValue($1)!) }
                if size > UInt64(bodyLimitBytes) {
                    // Nothing after it reaches the parser; the route reading the body answers 413.
                    forward(upTo: index)
                    phase = .discarding
                    flush()
                    context.fireErrorCaught(ChunkTooLarge(declared: String(decoding: digits, as: UTF8.self), limit: bodyLimitBytes))
                    return
                }
                phase = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkEnd:
                let byte = view[index]
                index += 1
                if byte == UInt8(ascii: "\n") {
                    phase = .chunkSize
                } else if byte != UInt8(ascii: "\r") {
                    phase = .untracked
                }
            case .trailers:
                let byte = view[index]
                index += 1
                line.append(byte)
                guard byte == UInt8(ascii: "\n") else { continue }
                if line == [10] || line == [13, 10] { phase = .requestLine(emptyLines: 0) }
                line = []
            }
        }
        if case .requestLine = phase, !line.isEmpty {
            // A line still held: what came before it went on already.
        } else {
            forward(upTo: view.endIndex)
        }
        flush()
    }

    private func refused(found: String) {
        phase = .discarding
        line = []
        refuse(ServiceError(.badRequest, code: "malformed-http", expected: "a well-formed HTTP/1.1 request (RFC 9112)", found: found))
    }

    /// What a request line is: empty, without an HTTP version, or a request (and whether a `HEAD`).
    private enum RequestLineVerdict {
        case empty
        case noVersion(isHead: Bool)
        case request(isHead: Bool)
    }

    /// Judges a request line, its `\n` (and a `\r` before it) included: `METHOD SP target SP HTTP/d.d`.
    private static func judgeRequestLine<Line: BidirectionalCollection<UInt8>>(_ line: Line) -> RequestLineVerdict {
        var text = line.dropLast()
        if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
        if text.isEmpty { return .empty }
        // Two spaces exactly; the version is the last eight bytes.
        var spaces = 0
        for byte in text where byte == UInt8(ascii: " ") { spaces += 1 }
        let isHead = text.starts(with: "HEAD ".utf8)
        guard spaces == 2, let lastSpace = text.lastIndex(of: UInt8(ascii: " ")) else { return .noVersion(isHead: isHead) }
        let version = text[text.index(after: lastSpace)...]
        guard version.count == 8, version.starts(with: "HTTP/".utf8) else { return .noVersion(isHead: isHead) }
        let major = version.index(version.startIndex, offsetBy: 5)
        let dot = version.index(after: major)
        let minor = version.index(after: dot)
        guard (48...57).contains(version[major]), version[dot] == UInt8(ascii: "."), (48...57).contains(version[minor]) else { return .noVersion(isHead: isHead) }
        return .request(isHead: isHead)
    }

    /// A head's framing headers, read line by line: where its body goes.
    private struct HeadFraming {
        /// The head's bytes so far, its request line aside.
        var bytes = 0
        /// Whether the last `Transfer-Encoding` ends with `chunked`.
        var chunked = false
        var length: UInt64?
        /// Two `Content-Length`s that disagree, or one that is no number: the parser refuses the request.
        var unreadable = false

        /// Reads one line of the head, its `\n` included.
        /// - Returns: whether it is the empty line that ends the head.
        mutating func read<Line: BidirectionalCollection<UInt8>>(line: Line) -> Bool {
            var text = line.dropLast()
            if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
            if text.isEmpty { return true }
            guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else { return false }
            let name = text[..<colon]
            if Self.equalIgnoringCase(name, "content-length") {
                guard let n = UInt64(String(decoding: Self.trimmed(text[text.index(after: colon)...], of: " \t\r"), as: UTF8.self)), length == nil || length == n
                else {
                    unreadable = true
                    return false
                }
                length = n
            } else if Self.equalIgnoringCase(name, "transfer-encoding") {
                // The last coding (empty ones aside), as the value lists them.
                let codings = Self.trimmed(text[text.index(after: colon)...], of: " \t\r").split(separator: UInt8(ascii: ","))
                chunked = codings.last.map { Self.equalIgnoringCase(Self.trimmed($0, of: " \t"), "chunked") } ?? false
            }
            return false
        }

        /// Where the body goes once the head has ended: chunked, a fixed length, or none.
        var bodyPhase: Phase {
            if unreadable { return .untracked }
            if chunked { return length == nil ? .chunkSize : .untracked }
            if let length, length > 0 { return .fixedBody(remaining: length) }
            return .requestLine(emptyLines: 0)
        }

        private static func equalIgnoringCase(_ bytes: some Collection<UInt8>, _ lowercase: StaticString) -> Bool {
            guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
            return lowercase.withUTF8Buffer { expected in
                zip(bytes, expected).allSatisfy { byte, want in (65...90).contains(byte) ? byte + 32 == want : byte == want }
            }
        }

        private static func trimmed<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes, of set: StaticString) -> Bytes.SubSequence {
            set.withUTF8Buffer { set in
                var slice = bytes[...]
                while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
                while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
                return slice
            }
        }
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            inputClosed = true
            if lingering { context.close(promise: nil) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inputClosed = true
        context.fireChannelInactive()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode != .input, !lingering, !inputClosed, context.channel.isActive else {
            context.close(mode: mode, promise: promise)
            return
        }
        // Output first: the answer is flushed, then FIN; what the client still sends is read away.
        lingering = true
        phase = .discarding
        if mode == .output {
            context.close(mode: .output, promise: promise)
        } else {
            context.close(mode: .output, promise: nil)
            if let promise { context.channel.closeFuture.cascade(to: promise) }
        }
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerTime) { context.close(promise: nil) }
        closeWhenIdle(context: context)
        context.read()
    }

    /// (Re)schedules the close of a lingering connection ``lingerIdle`` from now.
    private func closeWhenIdle(context: ChannelHandlerContext) {
        lingerIdleClose?.cancel()
        lingerIdleClose = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerIdle) { context.close(promise: nil) }
    }
}
