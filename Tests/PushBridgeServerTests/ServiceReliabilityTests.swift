import Foundation
import NIOHTTP1
import Hummingbird
import HummingbirdTesting
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
@testable import PushBridgeServer
import PushBridgeStore
import Synchronization
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Group commit, concurrency, timeouts and a fuzz run against the live server.
@Suite("Service reliability")
struct ServiceReliabilityTests {

    /// A store whose commits fail: every send of the group is answered with the store failure, none
    /// with its own result.
    final class FailingCommitStore: TransactionStore, @unchecked Sendable {
        let base = MemoryStateStore()
        func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T { try base.write(body) }
        func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T { try base.read(body) }
        func update<Outcome: Sendable>(
            reading keys: StateKeys, deciding decide: @escaping @Sendable (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)
        ) async throws -> Outcome {
            _ = try decide(try await base.snapshot(keys))
            throw StoreError(.sqlite, "disk I/O error", sqliteCode: 10)
        }
    }

    @Test func aFailedCommitFailsEveryWriteOfTheGroup() async throws {
        let reported = Mutex<[String]>([])
        let store = FailingCommitStore()
        let facade = PushFacade(store: store)
        try await PushFacade(store: store.base).configure(FacadeScenario.app)
        let writer = GroupCommitWriter(
            facade: facade, maxBatch: 8, maxWaitMicroseconds: 0, timeout: .seconds(5), name: "failing",
            observer: .init(failed: { error in reported.withLock { $0.append("\(error)") } }))
        do {
            _ = try await writer.send(try facade.prepare(JSONParser.parse(ProcessScenario.message("f1")), dialect: "agora-silent", now: FacadeScenario.now))
            Issue.record("a send of a failed commit was answered as done")
        } catch let error as ServiceError {
            #expect(error.status == .internalServerError && error.code == "store-failure", "\(error)")
            #expect(!error.description.contains("disk I/O"), "store details stay in the log")
        }
        #expect(reported.withLock { $0 }.count == 1 && reported.withLock { $0 }[0].contains("disk I/O error"), "the log gets the details")
    }

    /// The writer: concurrent writes share commits; one that waited past the timeout is refused
    /// (503, not applied); a stopped writer refuses new writes.
    @Test func writerBatchesTimesOutAndStops() async throws {
        let store = try SQLiteStateStore(path: temporaryDirectory() + "/writer.sqlite")
        let batches = Mutex<[Int]>([])
        let facade = PushFacade(store: store)
        let writer = GroupCommitWriter(
            facade: facade, maxBatch: 64, maxWaitMicroseconds: 2_000, timeout: .seconds(5), name: "test-writer",
            observer: .init(committed: { batch, _ in batches.withLock { $0.append(batch) } }))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<100 {
                group.addTask { try await writer.update { try await facade.setMembers(["u\(i)"], of: "g\(i)") } }
            }
            try await group.waitForAll()
        }
        let sizes = batches.withLock { $0 }
        #expect(sizes.reduce(0, +) == 100, "every write committed once: \(sizes)")
        #expect(sizes.count < 100, "concurrent writes shared commits: \(sizes)")
        #expect(try store.read { try $0.members(of: "g99") } == ["u99"])

        // A write stuck behind a slow one past the timeout is refused without running.
        let slow = GroupCommitWriter(facade: PushFacade(store: store), maxBatch: 1, maxWaitMicroseconds: 0, timeout: .milliseconds(100), name: "slow-writer")
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let first = Task { try await slow.update { started.signal(); gate.wait() } }
        while started.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(5)) }
        let late = Task { try await slow.update { try await facade.setMembers(["late"], of: "late") } }
        while slow.depth < 1 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(150))
        gate.signal()
        try await first.value
        await #expect(throws: ServiceError.self) { try await late.value }
        #expect(try store.read { try $0.members(of: "late") } == [])
        await slow.stop()
        await #expect(throws: ServiceError.self) { try await slow.update { 1 } }
        await writer.stop()
    }

    /// A writer over a store that can stop answering (PostgreSQL) answers every write by its timeout:
    /// a commit that has not ended is 503 `store-unavailable` (it still ends, and is kept), a write
    /// still waiting is 503 `busy` and never runs.
    @Test func writerAnswersByItsDeadlineWhileACommitHangs() async throws {
        let store = try SQLiteStateStore(path: temporaryDirectory() + "/deadline.sqlite")
        let facade = PushFacade(store: store)
        let writer = GroupCommitWriter(
            facade: facade, maxBatch: 1, maxWaitMicroseconds: 0, timeout: .milliseconds(200),
            answersByDeadline: true, name: "deadline-writer")
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let hung = Task { try await writer.update { started.signal(); gate.wait(); try await facade.setMembers(["hung"], of: "hung") } }
        while started.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(5)) }
        let waiting = Task { try await writer.update { try await facade.setMembers(["waiting"], of: "waiting") } }
        // Both are answered while the commit is still hung (the gate opens only after): no wall-clock
        // bound, which a loaded test run could pass by holding this task.
        let hungError = await #expect(throws: ServiceError.self) { try await hung.value }
        let waitingError = await #expect(throws: ServiceError.self) { try await waiting.value }
        #expect(hungError?.code == "store-unavailable" && hungError?.status == .serviceUnavailable)
        #expect(waitingError?.code == "busy")
        gate.signal()
        // The hung commit ends and is kept; the waiting write never runs.
        var members: [String] = []
        for _ in 0..<200 where members.isEmpty {
            members = try store.read { try $0.members(of: "hung") }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(members == ["hung"])
        #expect(try store.read { try $0.members(of: "waiting") } == [])
    }

    /// Sends and other writes in one group: each run of sends is one facade batch, in queue order
    /// with the writes between them; a send that fails fails alone.
    @Test func sendsBetweenWritesKeepTheirOrderInOneGroup() async throws {
        let store = try SQLiteStateStore(path: temporaryDirectory() + "/sends.sqlite")
        let facade = PushFacade(store: store)
        try await facade.configure(FacadeScenario.app)
        for user in ["u1", "u2"] { try await FacadeScenario.register(user, in: facade) }
        try store.write { try $0.recordSentMessage("bad", at: FacadeScenario.now, decisions: [0x50], forgettingBefore: Instant(milliseconds: 0)) }
        let batches = Mutex<[Int]>([])
        // A timeout no queueing reaches: on a loaded CI machine, queueing the six jobs one at a time
        // took longer than 5 s, and the first were refused as waiting too long (not what this tests).
        let writer = GroupCommitWriter(
            facade: PushFacade(store: store), maxBatch: 64, maxWaitMicroseconds: 0, timeout: .seconds(600),
            name: "sends-writer", observer: .init(committed: { batch, _ in batches.withLock { $0.append(batch) } }))
        func prepared(_ id: String) throws -> PushFacade.PreparedMessage {
            try facade.prepare(JSONParser.parse(ProcessScenario.message(id)), dialect: "agora-silent", now: FacadeScenario.now)
        }
        // Hold the writer, queue the jobs one at a time (so their order is known), then let it go.
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let holder = Task { try await writer.update { started.signal(); gate.wait() } }
        while started.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(5)) }
        var queued = 0
        func queue<T: Sendable>(_ job: @escaping @Sendable () async throws -> T) async throws -> Task<T, any Error> {
            let task = Task { try await job() }
            queued += 1
            while writer.depth < queued { try await Task.sleep(for: .milliseconds(2)) }
            return task
        }
        let m1 = try await queue { [message = try prepared("m1")] in try await writer.send(message) }
        let m2 = try await queue { [message = try prepared("m2")] in try await writer.send(message) }
        let mute = try await queue {
            try await writer.update {
                try await facade.apply(
                    [.init(FacadeScenario.json(#"{"call":"setSilentModeForConversation","conversationId":"u1","conversationType":"Chat","remindType":"None"}"#), at: FacadeScenario.now, pointer: .root)],
                    dialect: "agora-silent", user: "u2")
            }
        }
        let m3 = try await queue { [message = try prepared("m3")] in try await writer.send(message) }
        let bad = try await queue { [message = try prepared("bad")] in try await writer.send(message) }
        let again = try await queue { [message = try prepared("m1")] in try await writer.send(message) }
        gate.signal()
        try await holder.value
        #expect(try await m1.value.decisions[0].decision.request?.badgeCounter == 1)
        #expect(try await m2.value.decisions[0].decision.request?.badgeCounter == 2)
        _ = try await mute.value
        #expect(try await m3.value.decisions[0].decision == .suppressed(.muted), "the write between the sends came before m3")
        await #expect(throws: StoreError.self) { try await bad.value }
        let repeated = try await again.value
        let first = try await m1.value
        #expect(repeated.isRepeat && repeated.decisions == first.decisions)
        await #expect(try facade.user("u2")?.state.badge == 2)
        #expect(batches.withLock { $0 } == [1, 6], "the held write alone, then the six queued jobs in one commit")
    }

    /// 400 concurrent messages over 32 connections: every one answered 201, every one counted
    /// once (u2's badge), on SQLite.
    @Test func concurrentMessagesAreEachCommittedOnce() async throws {
        // Not a timeout test: on a saturated machine a pooled connection can sit idle past the default
        // request timeout, and the service's close races the client's next request (a reset, once).
        try await withLiveService(database: nil, { $0.requestTimeoutSeconds = 300 }) { service in
            let key = try await setUpExampleApp(service, app: "demo")
            let base = "http://127.0.0.1:\(service.port)/v1/apps/demo/messages?dialect=agora-silent"
            let statuses = try await withHTTPClient { client in
                try await withThrowingTaskGroup(of: [Int].self) { group in
                    for worker in 0..<32 {
                        group.addTask {
                            var out: [Int] = []
                            for i in stride(from: worker, to: 400, by: 32) {
                                out.append(try await client.call(.POST, base, key: key, body: ProcessScenario.message("c-\(i)")).status)
                            }
                            return out
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
            }
            #expect(statuses.count == 400 && statuses.allSatisfy { $0 == 201 }, "\(Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count))")
            let u2 = try await service.call(.get, "/v1/apps/demo/users/u2", key: key)
            #expect(u2.json?["badge"] == .int(400))
            let metrics = try await service.call(.get, "/metrics").text
            #expect(metrics.contains("pushbridge_messages_total{dialect=\"agora-silent\",repeat=\"false\"} 400\n"))
        }
    }

    /// A client that stalls mid-body neither holds the writer nor the server: other requests are
    /// answered meanwhile (well before the stall times out), and the stalled connection is closed
    /// after the request timeout.
    @Test func aStalledClientHoldsNothing() async throws {
        // 6 s: on a saturated 2-core machine the other request alone (a new connection and a commit)
        // has taken over 2 s; a held writer would answer only after the stall's close.
        try await withLiveService(database: nil, { $0.requestTimeoutSeconds = 6 }) { service in
            // Every request on a connection of its own: the server closes idle ones after 6 s too,
            // and on a loaded machine a pooled one can be closed just as the next request is sent.
            let key = try await withHTTPClient(connectionPerRequest: true) { client in
                let base = "http://127.0.0.1:\(service.port)"
                let key = try await setUpExampleApp(app: "demo") { method, path, key, body in
                    try await client.call(NIOHTTP1.HTTPMethod(rawValue: method.rawValue), base + path, key: key, body: body)
                }
                let socket = try RawConnection(port: service.port)
                try socket.send(
                    "POST /v1/apps/demo/messages?dialect=agora-silent HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(key)\r\n"
                        + "Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"id\":\"stalled\"")
                let reply = try await client.call(.POST, base + "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: ProcessScenario.message("while-stalled"))
                #expect(reply.status == 201, "answered while another client stalls")
                let closedAfter = socket.waitForClose(limit: .seconds(10))
                #expect(closedAfter != nil, "the stalled connection was never closed")
                // Answered well before the stalled connection timed out: the stall held nothing.
                if let closedAfter { #expect(closedAfter >= .milliseconds(500), "the answer came only \(closedAfter) before the close") }
                return key
            }
            // A new client: the pooled connections have just been closed as idle too.
            let stalled = try await withHTTPClient(connectionPerRequest: true) { client in
                try await client.call(.GET, "http://127.0.0.1:\(service.port)/v1/apps/demo/messages/stalled", key: key)
            }
            #expect(stalled.status == 404, "the stalled request was not applied")
            // The stall is the client's: counted as 499, never as a server error.
            let metrics = try await withHTTPClient(connectionPerRequest: true) { client in
                try await client.call(.GET, "http://127.0.0.1:\(service.port)/metrics", key: nil).text
            }
            #expect(metrics.contains(#"route="/v1/apps/{app}/messages",status="499"} 1"#), "\(metrics)")
            #expect(!metrics.contains(#"status="500""#), "\(metrics)")
        }
    }

    /// Mutated bodies on every route with a body, odd ids on the routes without: every request is
    /// answered (never 5xx, never a dropped connection), and the service keeps serving.
    @Test func fuzzedBodiesAreAllAnswered() async throws {
        try await withLiveService(database: nil) { service in
            let key = try await setUpExampleApp(service, app: "demo")
            let seeds: [(HTTPRequest.Method, String, String)] = [
                (.put, "/v1/apps/demo", #"{"certificates":[{"name":"agoraTest","bundleId":"io.agora.chatdemo","environment":"development"}],"templates":[{"name":"t","title_pattern":"{0}","content_pattern":"x"}]}"#),
                (.post, "/v1/apps/demo/users/u5/calls?dialect=agora-silent", #"[{"call":"initializeSDK","appkey":"41117440#383391","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff00112233"},{"call":"setSilentModeForAll","remindType":"MentionOnly"}]"#),
                (.post, "/v1/apps/demo/users/u6/calls?dialect=tencent-tim", #"[{"call":"setToken","busiId":2383,"token":"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"},{"call":"setAPNS","openPush":0,"c2cSound":"c2c.caf","at":"2026-03-02T09:15:00Z"},{"call":"doBackground","c2cUnread":3}]"#),
                (.put, "/v1/apps/demo/groups/g2/members", #"{"members":["u1","u2","u5"]}"#),
                (.post, "/v1/apps/demo/groups/g2/members", #"{"members":["u6"]}"#),
                (.put, "/v1/apps/demo/users/u2/presence?dialect=agora-silent", #"{"presence":"background","backgroundSince":"2026-03-02T09:15:00Z"}"#),
                (.post, "/v1/apps/demo/messages?dialect=agora-silent", #"{"id":"f-0","conversationId":"g2","from":"u1","to":"g2","chatType":"GroupChat","body":{"type":"text","text":"hi"},"ext":{"em_at_list":["u2"]}}"#),
                (.post, "/v1/apps/demo/messages?dialect=easemob-legacy", #"{"id":"f-1","target_type":"users","target":["u2","u5"],"msg":{"type":"txt","msg":"hello"},"from":"u1","ext":{"em_apns_ext":{"em_push_title":"T"}}}"#),
                (.post, "/v1/apps/demo/messages?dialect=tencent-tim", #"{"id":"f-2","conversation":{"type":"C2C","id":"u6"},"sender":"u1","elems":[{"type":"Text","text":"hello"}]}"#),
            ]
            var random = SeededRandom(seed: 20_261_122)
            var statuses: [Int: Int] = [:]
            for (method, path, seed) in seeds {
                for round in 0..<60 {
                    let body = Fuzz.mutate(seed, round: round, using: &random)
                    let reply = try await service.call(method, path, key: key, body: body)
                    statuses[reply.status, default: 0] += 1
                    #expect(reply.status < 500, "\(method) \(path) with \(body.debugDescription): \(reply.status) \(reply.text)")
                    if reply.status >= 400 { #expect(reply.json?["error"]?["code"]?.stringValue != nil, "\(reply.text)") }
                }
            }
            #expect(statuses.keys.contains(400) && statuses.keys.contains { $0 < 300 }, "mutations hit both paths: \(statuses)")
            // Routes without a body: odd ids and query strings in the path.
            let odd = ["%00", "%FF%FE", "..", "%2e%2e%2fservice.sqlite", String(repeating: "x", count: 2_000), "%E2%80%AE", "u1%20u2", "%22%7D", "-"]
            let templates = [
                "/v1/apps/demo/users/%@", "/v1/apps/demo/users/%@/devices/%@", "/v1/apps/demo/groups/%@/members", "/v1/apps/demo/groups/g2/members/%@",
                "/v1/apps/demo/messages/%@", "/v1/apps/%@", "/v1/apps/demo/messages?dialect=%@",
            ]
            for template in templates {
                for id in odd {
                    let path = template.replacingOccurrences(of: "%@", with: id)
                    for method in [HTTPRequest.Method.get, .delete] {
                        let reply = try await service.call(method, path, key: key)
                        #expect(reply.status < 500, "\(method) \(path.prefix(120)): \(reply.status) \(reply.text)")
                    }
                }
            }
            #expect(try await service.call(.get, "/healthz").status == 200)
            let reply = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: ProcessScenario.message("after-fuzz"))
            #expect(reply.status == 201)
        }
    }
}

/// A deterministic generator (SplitMix64), so a failing fuzz case can be replayed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Body mutations: byte flips, truncation, deletion, duplication, type swaps of values, odd tokens.
enum Fuzz {
    static let tokens = ["null", "true", "-1", "1e999", "\"\"", "[]", "{}", "\"\\u0000\"", "\"\\ud800\"", "99999999999999999999", "\"x\"", "{\"a\":", "]", "\u{FEFF}", "\"é\""]

    static func mutate(_ seed: String, round: Int, using random: inout SeededRandom) -> String {
        var bytes = Array(seed.utf8)
        let kind = round % 8
        let at = Int.random(in: 0..<bytes.count, using: &random)
        switch kind {
        case 0: bytes[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
        case 1: bytes = Array(bytes[..<at])
        case 2: bytes.remove(at: at)
        case 3: bytes.insert(contentsOf: Array(tokens.randomElement(using: &random)!.utf8), at: at)
        case 4: bytes.insert(contentsOf: bytes[at...].prefix(Int.random(in: 1...20, using: &random)), at: at)
        default:
            // Replace one JSON value (after a colon or in an array) with another token: valid JSON, odd types.
            let text = String(decoding: bytes, as: UTF8.self)
            let colons = text.indices.filter { text[$0] == ":" }
            guard let colon = colons.randomElement(using: &random) else { break }
            let start = text.index(after: colon)
            var end = start
            var depth = 0
            var inString = false
            while end < text.endIndex {
                let c = text[end]
                if inString {
                    if c == "\\" { end = text.index(after: end) } else if c == "\"" { inString = false }
                } else if c == "\"" {
                    inString = true
                } else if c == "{" || c == "[" {
                    depth += 1
                } else if c == "}" || c == "]" {
                    if depth == 0 { break }
                    depth -= 1
                } else if c == "," && depth == 0 {
                    break
                }
                end = text.index(after: end)
            }
            return String(text[..<start]) + tokens.randomElement(using: &random)! + String(text[end...])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A plain TCP connection, for clients that misbehave on purpose.
final class RawConnection: @unchecked Sendable {
    let fd: Int32

    init(port: Int) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw POSIXError(.EPIPE) }
    }

    /// Reads until the peer closes; how long that took, or `nil` past the limit.
    func waitForClose(limit: Duration) -> Duration? {
        let start = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            // Past the limit, one last look (no wait): a starved test thread still sees a close already queued.
            let late = ContinuousClock.now - start >= limit
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // EINTR is not the peer's doing: other suites spawn and stop processes (SIGCHLD).
            let ready = poll(&poller, 1, late ? 0 : 100)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { return nil }
            if poller.revents == 0 && late { return nil }
            if poller.revents != 0 {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return ContinuousClock.now - start }
            }
        }
    }
}

/// Internal helpers of the service, for tests.
enum ServiceRoutesProbe {
    static func isJSON(_ type: String) -> Bool { ServiceRoutes.isJSON(mediaType: type) }
}
