import Foundation
import PushBridgeConformance
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

/// An implementation under test behind HTTP, awaited: a server that answers is judged on its
/// decisions, one that never answers fails the fixture at the deadline, and neither holds a thread.
@Suite("HTTP decision provider")
struct HTTPProviderTests {
    /// A one-connection-at-a-time HTTP/1.1 server on 127.0.0.1, on a thread of its own: each POST's
    /// body goes to `answer`, whose bytes are the response (`nil`: read the request and never answer).
    final class TinyServer: @unchecked Sendable {
        let port: Int
        private let listener: Int32

        init(answer: @escaping @Sendable ([UInt8]) -> [UInt8]?) throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.listener = listener
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
            guard bound == 0, listen(listener, 8) == 0 else { throw ImplementationFailure("cannot listen") }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread.detachNewThread {
                while true {
                    let connection = accept(listener, nil, nil)
                    guard connection >= 0 else { return }
                    guard let body = Self.readRequest(connection), let reply = answer(body) else { continue }  // no answer: left open
                    let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(reply.count)\r\nConnection: close\r\n\r\n"
                    let bytes = Array(head.utf8) + reply
                    _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
                    close(connection)
                }
            }
        }

        /// The request's body (by its `Content-Length`), or `nil` when the connection ends first.
        static func readRequest(_ connection: Int32) -> [UInt8]? {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                if let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                    let head = String(decoding: received[..<end.lowerBound], as: UTF8.self).lowercased()
                    let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if received.count - end.upperBound >= length { return Array(received[end.upperBound..<end.upperBound + length]) }
                }
                let count = recv(connection, &buffer, buffer.count, 0)
                guard count > 0 else { return nil }
                received += buffer[..<count]
            }
        }

        func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
    }

    static let fixture = Repository.root.appendingPathComponent(HarnessTests.two[0]).path

    @Test func aServerThatAnswersIsJudgedOnItsDecisions() async throws {
        // The server decides with the built-in engine: what it gets is the scenario without `expect`.
        let server = try TinyServer { body in
            guard let document = try? JSONParser.parse(body), let fixture = try? Fixture(path: "posted.json", document: document) else { return Array("{}".utf8) }
            return try? ScenarioEngine().decide(fixture.scenario, profile: nil).json
        }
        defer { server.stop() }
        let provider = HTTPDecisionProvider(url: URL(string: "http://127.0.0.1:\(server.port)/decide")!, timeout: 10)
        let result = await ConformanceRunner(provider: provider).run(file: Self.fixture)
        #expect(result.passed, "\(result.failure?.description ?? "")")
        // A server that answers something else fails the fixture with the pointer of the difference.
        let wrong = try TinyServer { _ in Array(#"{"push":false,"reason":"offline-push-disabled"}"#.utf8) }
        defer { wrong.stop() }
        let failed = await ConformanceRunner(provider: HTTPDecisionProvider(url: URL(string: "http://127.0.0.1:\(wrong.port)/decide")!)).run(file: Self.fixture)
        #expect(!failed.passed && failed.failure?.description.contains("/push") == true, "\(failed.failure?.description ?? "")")
    }

    /// Run as `pushbridge conform` in a process of its own: its deadline is measured without the
    /// other tests' work on this process's threads.
    @Test func aServerThatNeverAnswersFailsAtTheDeadline() async throws {
        let server = try TinyServer { _ in nil }
        defer { server.stop() }
        // Timed on the thread that runs it: a test task waits for a shared thread to resume, which a
        // full run's blocking tests may hold for minutes.
        let (run, waited) = try await onAThreadOfItsOwn {
            let start = ContinuousClock.now
            let run = try runTool(["conform", HarnessTests.two[0], "--against", "http://127.0.0.1:\(server.port)/decide", "--timeout", "1"])
            return (run, ContinuousClock.now - start)
        }
        #expect(run.status != 0)
        #expect(run.stdout.contains("timed out after 1 s") || run.stdout.contains("failed: "), "\(run.stdout)")
        #expect(waited < .seconds(60), "the deadline holds: \(waited)")
    }
}
