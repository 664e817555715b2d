import Foundation
import PushBridgeServer
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import PushBridgeVendorREST
import Testing

/// The HTTP edges a campaign of a million hostile requests found, each on a live server
/// over raw sockets, where a client library would hide what the server writes: one spelling per
/// token, early answers a client still writing can read, 405 with `Allow`, bodiless `HEAD` answers,
/// `Expect: 100-continue`, and framing answered at once instead of at the idle timeout.
@Suite("HTTP edges")
struct HTTPEdgeTests {
    typealias Reply = HostileInputTests.RawReply

    /// The header `name` of a raw answer (first one), or `nil`.
    static func header(_ name: String, _ reply: Reply) -> String? {
        guard let end = reply.text.range(of: "\r\n\r\n") else { return nil }
        for line in reply.text[..<end.lowerBound].split(separator: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// A live service whose idle timeout (300 s) is far from every bound checked here: an answer
    /// that came "at once" did not come from the timeout.
    static func withService(_ body: @Sendable (LiveService) async throws -> Void) async throws {
        try await HostileInputTests.withService("sqlite", body)
    }

    // MARK: 1. One spelling per token

    @Test func aRespelledTokenOrUserSigIsRefusedOverTheWire() async throws {
        try await Self.withService { service in
            let routes = VendorRoutesTests()
            let e = try await routes.easemobApp(service, "em")
            let body = #"{"nickname":"Bob"}"#
            #expect(try await service.call(.put, "\(e.prefix)/users/bob", key: e.token, body: body).status == 200)
            let siblings = AppTokenTestSupport.siblings(of: e.token, alphabet: .url)
            #expect(siblings.count == 3)
            for sibling in siblings {
                let reply = try await service.call(.put, "\(e.prefix)/users/bob", key: sibling, body: #"{"nickname":"Mallory"}"#)
                #expect(reply.status == 401 && reply.json?["error"] == "unauthorized", "\(sibling): \(reply.text)")
            }
            // Tencent: a UserSig respelled in its last character is not a UserSig.
            let t = try await routes.tencentApp(service, "tim")
            let query = t.query()
            let sig = String(query.split(separator: "&").first { $0.hasPrefix("usersig=") }!.dropFirst("usersig=".count))
            let send = #"{"To_Account":"bob","MsgRandom":7,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#
            let good = try await service.call(.post, "/v4/openim/sendmsg?" + query, body: send)
            #expect(good.json?["ErrorCode"] == 0, "\(good.text)")
            for sibling in AppTokenTestSupport.siblings(of: sig, alphabet: .tencent) {
                let reply = try await service.call(.post, "/v4/openim/sendmsg?" + query.replacingOccurrences(of: sig, with: sibling), body: send)
                #expect(reply.json?["ErrorCode"] == 70003, "\(reply.text)")
            }
            // The app's own key is compared whole: a changed character is another key.
            let changed = String(e.key.dropLast()) + (e.key.hasSuffix("0") ? "1" : "0")
            #expect(try await service.call(.get, "/v1/apps/em", key: changed).status == 401)
            #expect(try await service.call(.get, "/v1/apps/em", key: e.key.uppercased()).status == 401)
        }
    }

    // MARK: 2. Early answers reach a client still writing

    /// What a connection reads until the server closes it (or its receive timeout ends the wait).
    static func readToEnd(_ connection: RawConnection) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(connection.fd, &buffer, buffer.count)
            if n <= 0 { return bytes }
            bytes += buffer[..<n]
        }
    }

    /// Sends a head and a whole body of `size` bytes before reading anything (as a naive client
    /// does), then reads the answer: the server must read the body away instead of resetting.
    /// - Parameters:
    ///   - pause: how long the client waits after each MiB it sends (a slow client), if at all.
    static func writeAllThenRead(_ port: Int, head: String, size: Int, pause: Duration? = nil) async throws -> (reply: Reply, sent: Bool) {
        try await onAThreadOfItsOwn {
            let connection = try RawConnection(port: port)
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(connection.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(connection.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var sent = (try? connection.send(head)) != nil
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 65_536)
            var left = size
            var sincePause = 0
            while sent && left > 0 {
                let n = chunk.withUnsafeBytes { Foundation.send(connection.fd, $0.baseAddress, min(left, chunk.count), Int32(MSG_NOSIGNAL)) }
                if n <= 0 { sent = false } else { left -= n; sincePause += n }
                if let pause, sincePause >= 1 << 20 {
                    sincePause = 0
                    Thread.sleep(forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18)
                }
            }
            return (Reply(text: String(decoding: readToEnd(connection), as: UTF8.self), closed: true), sent)
        }
    }

    @Test func anEarlyAnswerToALargeBodyReachesTheClient() async throws {
        try await Self.withService { service in
            let key = try await setUpExampleApp(service, app: "demo")
            let size = 7_000_000
            let cases: [(String, Int, String)] = [
                ("POST /no/such/route/here HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(size)\r\n\r\n", 404, "not-found"),
                ("POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: \(size)\r\n\r\n", 413, "too-large"),
                ("POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: \(size)\r\n\r\n", 413, "too-large"),
                ("POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(size)\r\n\r\n", 401, "unauthorized"),
            ]
            for (head, status, code) in cases {
                let (reply, sent) = try await Self.writeAllThenRead(service.port, head: head, size: size)
                #expect(sent, "\(head.prefix(60).debugDescription): the body could not be sent")
                #expect(reply.status == status && reply.body.contains(#""code":"\#(code)""#) && reply.isComplete, "\(head.prefix(60).debugDescription): \(reply.text.prefix(300))")
            }
            #expect(try await service.call(.get, "/healthz").status == 200)
        }
    }

    /// A slow client still writing is read to its end (it sends a byte at least every 5 s), however
    /// long its body takes; one that stops sending is closed 5 s later, not held for the 30 s bound.
    @Test func aLingeringCloseWaitsForASlowClientAndNotForAStalledOne() async throws {
        try await Self.withService { service in
            let key = try await setUpExampleApp(service, app: "demo")
            let size = 7_000_000
            let head = "POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: \(size)\r\n\r\n"
            // 1 s after each MiB: about 7 s of sending, past a flat bound of a few seconds.
            let (reply, sent) = try await Self.writeAllThenRead(service.port, head: head, size: size, pause: .seconds(1))
            #expect(sent, "a slow client's body could not be sent: the connection closed under it")
            #expect(reply.status == 413 && reply.isComplete, "\(reply.text.prefix(300))")

            // A client that sends 1 MiB, reads the answer and the server's FIN, and then stops.
            let stalled = try await onAThreadOfItsOwn { () throws -> (answered: Bool, closed: Bool) in
                let connection = try RawConnection(port: service.port)
                try connection.send(head)
                let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
                _ = chunk.withUnsafeBytes { Foundation.send(connection.fd, $0.baseAddress, chunk.count, Int32(MSG_NOSIGNAL)) }
                var timeout = timeval(tv_sec: 20, tv_usec: 0)
                setsockopt(connection.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                let answered = String(decoding: Self.readToEnd(connection), as: UTF8.self).hasPrefix("HTTP/1.1 413")
                // Silent for 7 s (past the 5 s without a byte); then a byte every 250 ms for up
                // to 3 s: a socket the server closed draws a reset at the first and fails the next,
                // one still lingering reads them away (and would until its 30 s bound).
                Thread.sleep(forTimeInterval: 7)
                let start = ContinuousClock.now
                while ContinuousClock.now - start < .seconds(3) {
                    if Foundation.send(connection.fd, "x", 1, Int32(MSG_NOSIGNAL)) < 0 { return (answered, true) }
                    Thread.sleep(forTimeInterval: 0.25)
                }
                return (answered, false)
            }
            #expect(stalled.answered)
            #expect(stalled.closed, "a lingering connection was still open 7–10 s after its client stopped sending")
            #expect(try await service.call(.get, "/healthz").status == 200)
        }
    }

    // MARK: 3. 405 with Allow, in each family's shape

    @Test func aKnownPathWithoutTheMethodIs405WithAllow() async throws {
        try await Self.withService { service in
            let key = try await setUpExampleApp(service, app: "demo")
            _ = try await VendorRoutesTests().easemobApp(service, "app")  // binds acme/app
            let auth = "Authorization: Bearer \(key)\r\n"
            let cases: [(String, String, String)] = [
                ("DELETE /v1/apps/demo", "GET, HEAD, PUT", #""code":"method-not-allowed""#),
                ("PATCH /v1/apps/demo", "GET, HEAD, PUT", #""code":"method-not-allowed""#),
                ("DELETE /healthz", "GET, HEAD", #""code":"method-not-allowed""#),
                ("POST /v1/apps/demo/users/u1", "GET, HEAD, DELETE", #""code":"method-not-allowed""#),
                ("PATCH /v1/apps/demo/groups/g1/members", "GET, HEAD, POST, PUT", #""code":"method-not-allowed""#),
                ("GET /v4/openim/sendmsg", "POST", #""ErrorCode":60008"#),
                ("DELETE /acme/app/token", "POST", #""error":"method_not_allowed""#),
                ("PATCH /acme/app/users/bob", "GET, HEAD, PUT, DELETE", #""error":"method_not_allowed""#),
            ]
            for (line, allow, shape) in cases {
                let reply = try await HostileInputTests.exchange(service.port, "\(line) HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 0\r\n\r\n", expectingClose: false)
                #expect(reply.status == 405 && Self.header("Allow", reply) == allow && reply.body.contains(shape), "\(line): \(reply.text)")
            }
            // No route at all is still 404, in the shape of the family whose prefix the path has; the
            // native 404 names no document that does not exist.
            let unknown: [(String, Int, String)] = [
                ("GET /v1/nothing", 404, #""code":"not-found""#),
                ("GET /favicon.ico", 404, #""code":"not-found""#),
                ("POST /acme/app/no/such/route", 404, #""error":"service_resource_not_found""#),
                ("GET /acme/app/chatrooms", 404, #""error":"service_resource_not_found""#),
                ("GET /acme/unbound/chatrooms", 404, #""code":"not-found""#),
                ("GET /v2/anything", 404, #""code":"not-found""#),
                ("POST /v4/openim/sendmsg/extra", 200, #""ErrorCode":60009"#),
                ("GET /v4", 200, #""ErrorCode":60009"#),
            ]
            for (line, status, shape) in unknown {
                let reply = try await HostileInputTests.exchange(service.port, "\(line) HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", expectingClose: false)
                #expect(reply.status == status && reply.body.contains(shape) && !reply.body.contains("README"), "\(line): \(reply.text)")
            }
            let metrics = try await service.call(.get, "/metrics").text
            #expect(metrics.contains(#"status="405""#) && !metrics.contains(#"status="500""#))
        }
    }

    @Test func connectAndMethodsNoRouteTakesAre405WithAllowAndABody() async throws {
        try await Self.withService { service in
            let key = try await setUpExampleApp(service, app: "demo")
            _ = try await VendorRoutesTests().easemobApp(service, "app")  // binds acme/app
            let auth = "Authorization: Bearer \(key)\r\n"
            // CONNECT: the same 405 as any method a route does not take — its body, Content-Length and
            // Allow — and the connection closes after it (nothing here tunnels).
            let connects: [(String, String?, String)] = [
                ("CONNECT example.com:443", nil, #""code":"method-not-allowed""#),
                ("CONNECT /v1/apps/demo", "GET, HEAD, PUT", #""code":"method-not-allowed""#),
                ("CONNECT /v4/openim/sendmsg", "POST", #""ErrorCode":60008"#),
                ("CONNECT /acme/app/users/bob", "GET, HEAD, PUT, DELETE", #""error":"method_not_allowed""#),
            ]
            for (line, allow, shape) in connects {
                let reply = try await HostileInputTests.exchange(service.port, "\(line) HTTP/1.1\r\nHost: example.com:443\r\n\(auth)\r\n")
                let length = Self.header("Content-Length", reply).flatMap { Int($0) }
                #expect(reply.status == 405 && reply.body.contains(shape) && length == reply.body.utf8.count && reply.closed, "\(line): \(reply.text)")
                #expect(Self.header("Content-Type", reply) == "application/json" && Self.header("Connection", reply) == "close", "\(line): \(reply.text)")
                if let allow {
                    #expect(Self.header("Allow", reply) == allow, "\(line): \(reply.text)")
                } else {
                    // A target no route has (host:port): what the service serves anywhere.
                    #expect(Self.header("Allow", reply)?.hasPrefix("GET, HEAD, POST, PUT") == true && Self.header("Allow", reply)?.contains("DELETE") == true, "\(line): \(reply.text)")
                }
            }
            // Methods the parser accepts that no route takes: 405 with Allow and a body, the connection kept.
            for method in ["PROPFIND", "TRACE", "OPTIONS", "LINK", "MKCOL"] {
                let reply = try await HostileInputTests.exchange(service.port, "\(method) /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", expectingClose: false)
                let length = Self.header("Content-Length", reply).flatMap { Int($0) }
                #expect(reply.status == 405 && Self.header("Allow", reply) == "GET, HEAD" && reply.body.contains(#""code":"method-not-allowed""#) && length == reply.body.utf8.count,
                    "\(method): \(reply.text)")
            }
            #expect(try await service.call(.get, "/healthz").status == 200)
        }
    }

    // MARK: 4. HEAD answers carry no body

    @Test func headAnswersCarryNoBody() async throws {
        try await Self.withService { service in
            let key = try await setUpExampleApp(service, app: "demo")
            // HEAD of a GET route: the GET's status and headers (its Content-Length), no body.
            let get = try await HostileInputTests.exchange(service.port, "GET /v1/apps/demo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n\r\n", expectingClose: false)
            let head = try await HostileInputTests.exchange(service.port, "HEAD /v1/apps/demo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nConnection: close\r\n\r\n")
            #expect(head.status == 200 && head.body.isEmpty && Self.header("Content-Length", head) == Self.header("Content-Length", get), "\(head.text)")
            // Refused by a route, by the router, by the parser: never a body.
            let requests = [
                "HEAD /v1/apps/demo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",  // 401
                "HEAD /v1/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",  // 404
                "HEAD /v1/apps/demo/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",  // 405
                "HEAD /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n",  // the parser: header block too large
                "HEAD /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",  // the parser: a header line without a colon
                "HEAD /\r\n",  // HTTP/0.9
            ]
            for (i, request) in requests.enumerated() {
                let reply = try await HostileInputTests.exchange(service.port, request)
                #expect(reply.status >= 400 && reply.body.isEmpty && reply.closed, "\(i): (\(reply.timing)) \(reply.text.prefix(300))")
            }
        }
    }

    // MARK: 5. Expect: 100-continue

    @Test func expectContinueIsAnswered() async throws {
        try await Self.withService { service in
            let key = try await setUpExampleApp(service, app: "demo")
            let port = service.port
            let message = #"{"id":"m-continue","conversationId":"u1","from":"u2","to":"u1","chatType":"Chat","body":{"type":"text","text":"hi"}}"#
            // Accepted: 100 Continue first, then the final answer once the body is sent.
            let accepted: (String, String) = try await onAThreadOfItsOwn {
                let connection = try RawConnection(port: port)
                try connection.send(
                    "POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(message.utf8.count)\r\nExpect: 100-continue\r\n\r\n")
                let interim = Self.readAvailable(connection.fd, until: "\r\n\r\n", limit: .seconds(5))
                try connection.send(message)
                let final = Self.readAvailable(connection.fd, until: "}]}", limit: .seconds(10))
                return (interim, final)
            }
            #expect(accepted.0 == "HTTP/1.1 100 Continue\r\n\r\n", "\(accepted.0)")
            #expect(accepted.1.hasPrefix("HTTP/1.1 201"), "\(accepted.1)")
            // Refused before the body: the final status at once (no 100), and the connection closes.
            let refusals: [(String, Int)] = [
                ("POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", 401),
                ("POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong-key\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", 401),
                ("POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Length: 50000000\r\nExpect: 100-continue\r\n\r\n", 413),
            ]
            for (request, status) in refusals {
                let reply = try await HostileInputTests.exchange(port, request)
                #expect(reply.status == status && !reply.text.contains("100 Continue") && reply.closed, "(\(reply.timing)) \(reply.text)")
            }
        }
    }

    /// Reads until `marker` appears or the limit passes; what was read.
    static func readAvailable(_ fd: Int32, until marker: String, limit: Duration) -> String {
        let start = ContinuousClock.now
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while ContinuousClock.now - start < limit {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 50)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { break }
            if poller.revents != 0 {
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 { break }
                bytes += buffer[..<n]
                if String(decoding: bytes, as: UTF8.self).contains(marker) { break }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: 6. Framing judged at once

    @Test func framingThatCanBeJudgedIsAnsweredAtOnce() async throws {
        try await Self.withService { service in
            let key = try await setUpExampleApp(service, app: "demo")
            let post = "POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\n"
            let cases: [(String, String, Int, String)] = [
                ("a chunk of 2^64-1 bytes", post + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc", 413, "too-large"),
                ("a chunk over the body limit", post + "Transfer-Encoding: chunked\r\n\r\n200000\r\nabc", 413, "too-large"),
                ("an HTTP/0.9 request line", "GET /healthz\r\n", 400, "malformed-http"),
                ("an empty request line", "\r\n\r\n", 400, "malformed-http"),
                ("a declared 10 GB body", post + "Content-Length: 10000000000\r\n\r\n{", 413, "too-large"),
            ]
            for (what, request, status, code) in cases {
                let start = ContinuousClock.now
                let reply = try await HostileInputTests.exchange(service.port, request)
                let took = ContinuousClock.now - start
                #expect(reply.status == status && reply.body.contains(#""code":"\#(code)""#) && reply.closed, "\(what): (\(reply.timing)) \(reply.text)")
                #expect(took < .seconds(5), "\(what): answered after \(took), not at once")
            }
            // A chunked body within the limit and one empty line before a request line are fine.
            let chunked = try await HostileInputTests.exchange(
                service.port, "\r\n" + post + "Transfer-Encoding: chunked\r\n\r\n10\r\n{\"id\":\"m-chunk\",\r\n61\r\n\"conversationId\":\"u1\",\"from\":\"u2\",\"to\":\"u1\",\"chatType\":\"Chat\",\"body\":{\"type\":\"text\",\"text\":\"hi\"}}\r\n0\r\n\r\n",
                expectingClose: false)
            #expect(chunked.status == 201, "\(chunked.text)")
            #expect(try await service.call(.get, "/healthz").status == 200)
        }
    }
}
