import NIOCore
import NIOEmbedded
@testable import PushBridgeServer
import Testing

/// The connection guard alone, on an embedded channel: what it lets through to the parser and what it
/// refuses must not depend on how the bytes are split into reads (a line or a head whole in one read is
/// judged where it lies; one split between reads is held until whole).
@Suite struct HTTPConnectionGuardTests {
    /// What reached the parser and what the guard refused or failed, for one way of splitting the input.
    struct Outcome: Equatable, CustomStringConvertible {
        var forwarded: [UInt8] = []
        var refusals: [String] = []
        var chunkTooLarge: [String] = []
        var lastRequestIsHead = false
        var description: String {
            "forwarded \(String(decoding: forwarded, as: UTF8.self).debugDescription), refusals \(refusals), chunk too large \(chunkTooLarge), head \(lastRequestIsHead)"
        }
    }

    final class Sink: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var outcome = Outcome()
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            outcome.forwarded += Array(buffer: unwrapInboundIn(data))
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if let error = error as? HTTPConnectionGuard.ChunkTooLarge { outcome.chunkTooLarge.append(error.declared) }
        }
    }

    /// Feeds `input` to a new guard in reads of the given lengths (the rest in a last read).
    static func feed(_ input: [UInt8], reads: [Int], bodyLimit: Int = 1_000) throws -> Outcome {
        let channel = EmbeddedChannel()
        let sink = Sink()
        final class Refusals { var found: [String] = [] }
        let refusals = Refusals()
        let guardHandler = HTTPConnectionGuard(bodyLimitBytes: bodyLimit) { refusals.found.append($0.found ?? $0.code) }
        try channel.pipeline.syncOperations.addHandler(guardHandler)
        try channel.pipeline.syncOperations.addHandler(sink)
        var offset = 0
        for length in reads + [input.count] where offset < input.count {
            let end = min(input.count, offset + length)
            try channel.writeInbound(ByteBuffer(bytes: input[offset..<end]))
            offset = end
        }
        var outcome = sink.outcome
        outcome.refusals = refusals.found
        outcome.lastRequestIsHead = guardHandler.requestIsHead
        _ = try? channel.finish()
        return outcome
    }

    /// The outcome of feeding `text` whole, checked equal for every split into two reads and for reads
    /// of one byte each; returned for the caller's own expectations.
    static func everySplit(_ text: String, bodyLimit: Int = 1_000) throws -> Outcome {
        let input = Array(text.utf8)
        let whole = try feed(input, reads: [], bodyLimit: bodyLimit)
        let bytewise = try feed(input, reads: Array(repeating: 1, count: input.count), bodyLimit: bodyLimit)
        #expect(bytewise == whole, "one byte a read: \(bytewise) against whole: \(whole)")
        for split in 1..<input.count {
            let outcome = try feed(input, reads: [split], bodyLimit: bodyLimit)
            #expect(outcome == whole, "split at \(split): \(outcome) against whole: \(whole)")
        }
        return whole
    }

    @Test func pipelinedRequestsWithBodiesPassAsTheyAre() throws {
        // Bodies that look like heads and request lines are bodies: the guard follows Content-Length.
        let text = "POST /a HTTP/1.1\r\nHost: x\r\ncontent-LENGTH:  24 \r\n\r\nGET / HTTP/1.1\r\n\r\nabcdef"
            + "POST /b HTTP/1.1\r\nContent-Length: 5\r\nX-Other: y\r\n\r\nhello"
            + "HEAD /c HTTP/1.1\r\n\r\n"
        let outcome = try Self.everySplit(text)
        #expect(outcome.forwarded == Array(text.utf8))
        #expect(outcome.refusals.isEmpty)
        #expect(outcome.lastRequestIsHead)
    }

    @Test func oneEmptyLineBeforeARequestIsDroppedASecondIsRefused() throws {
        let one = try Self.everySplit("\r\nGET / HTTP/1.1\r\n\r\n")
        #expect(one.forwarded == Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(one.refusals.isEmpty)
        let two = try Self.everySplit("GET / HTTP/1.1\r\n\r\n\r\n\nGET / HTTP/1.1\r\n\r\n")
        #expect(two.forwarded == Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(two.refusals == ["an empty request line"])
    }

    @Test func aRequestLineWithoutAVersionIsRefusedAndNothingOfItPasses() throws {
        let get = try Self.everySplit("GET / HTTP/1.1\r\nA: b\r\n\r\nGET /\r\n")
        #expect(get.forwarded == Array("GET / HTTP/1.1\r\nA: b\r\n\r\n".utf8))
        #expect(get.refusals == ["a request line without an HTTP version (HTTP/0.9 is not served)"])
        #expect(!get.lastRequestIsHead)
        let head = try Self.everySplit("HEAD / HTTP/x.1\n")
        #expect(head.forwarded.isEmpty)
        #expect(head.refusals.count == 1)
        #expect(head.lastRequestIsHead, "a refused HEAD is answered without a body")
        #expect(try Self.everySplit("GET  / HTTP/1.1\r\n").refusals.count == 1, "three spaces: no version where it belongs")
    }

    @Test func chunkedBodiesAreFollowedAndAnOversizedChunkFailsTheBody() throws {
        let chunked = "POST /a HTTP/1.1\r\nTransfer-Encoding: gzip, CHUNKED\r\n\r\n5\r\nGET /\r\n0\r\nX-Trailer: 1\r\n\r\nGET /b HTTP/1.1\r\n\r\n"
        let passed = try Self.everySplit(chunked)
        #expect(passed.forwarded == Array(chunked.utf8), "a chunk that reads like an HTTP/0.9 line is data")
        #expect(passed.refusals.isEmpty && passed.chunkTooLarge.isEmpty)
        let tooLarge = try Self.everySplit("POST /a HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nffffffffffffffff\r\nxx", bodyLimit: 100)
        #expect(tooLarge.chunkTooLarge == ["ffffffffffffffff"])
        #expect(tooLarge.forwarded == Array("POST /a HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nffffffffffffffff\r\n".utf8))
    }

    @Test func framingTheGuardCannotFollowIsLeftToTheParser() throws {
        // Conflicting lengths, a length with chunked, a coding list not ending in chunked: the bytes pass
        // untouched (the parser refuses them) and nothing after them is judged.
        for head in [
            "Content-Length: 5\r\nContent-Length: 6\r\n", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "Content-Length: five\r\n",
        ] {
            let text = "POST /a HTTP/1.1\r\n" + head + "\r\nhelloGET /\r\n"
            let outcome = try Self.everySplit(text)
            #expect(outcome.forwarded == Array(text.utf8))
            #expect(outcome.refusals.isEmpty)
        }
        // "chunked, " ends in an empty coding, which is no coding: the last one is chunked.
        let trailingComma = "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked, \r\n\r\n0\r\n\r\nGET /\r\n"
        #expect(try Self.everySplit(trailingComma).refusals.count == 1)
    }

    @Test func aHeadLongerThanTheLimitIsLeftToTheParser() throws {
        let long = String(repeating: "a", count: HTTPConnectionGuard.headLimit + 10)
        let text = "GET / HTTP/1.1\r\nX: " + long + "\r\n\r\nGET /\r\n"
        let input = Array(text.utf8)
        // Whole, and in reads of 4 KiB (one byte at a time would take too long for a 96 KiB head).
        for reads in [[], Array(repeating: 4_096, count: input.count / 4_096 + 1), [20, 50_000]] {
            let outcome = try Self.feed(input, reads: reads)
            #expect(outcome.forwarded == input)
            #expect(outcome.refusals.isEmpty)
        }
    }
}
