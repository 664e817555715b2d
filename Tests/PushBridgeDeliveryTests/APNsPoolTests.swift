import Foundation
import PushBridgeAPNsMock
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Synchronization
import Testing

/// The APNs client's connection pool against the mock APNs on loopback: how many
/// connections it opens, the server's stream limit, GOAWAY, timeouts and URLs.
@Suite("APNs connection pool")
struct APNsPoolTests {
    static func delivery(_ token: String, message: String = "m") -> OutboxDelivery {
        OutboxDelivery(
            messageID: message, receiver: "u", token: token, environment: .production, boundAt: Instant(milliseconds: 0),
            headers: [HeaderField("apns-topic", "com.example"), HeaderField("apns-push-type", "alert")], payload: Array(#"{"aps":{}}"#.utf8),
            queuedAt: Instant(milliseconds: 0))
    }

    static func token(_ i: Int) -> String { String(format: "%064x", i + 1) }

    /// Sends `count` deliveries at once; their statuses (0 for a transport failure).
    static func sendAll(_ client: APNsClient, count: Int, tokenOffset: Int = 0) async -> [Int] {
        await withTaskGroup(of: Int.self) { group in
            for i in 0..<count {
                group.addTask {
                    let attempt = await client.send(
                        delivery(token(tokenOffset + i)), apnsID: APNsID.make(app: "a", message: "m\(i)", token: token(tokenOffset + i)), expiration: 0)
                    if case .answered(let answer) = attempt { return answer.status }
                    return 0
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    static func client(_ mock: MockAPNs, _ kit: DeliveryKit, connections: Int, timeout: Double = 10) throws -> APNsClient {
        try APNsClient(
            endpoint: .init(baseURL: mock.baseURL, trustedCAFile: kit.path("ca.pem"), requestTimeoutSeconds: timeout, connectionsPerIdentity: connections),
            credentials: [try kit.tokenCredential()])
    }

    /// Runs `body` with the mock APNs answering after `latency` milliseconds and a client of `connections`.
    static func withClient(latency: Int, connections: Int, timeout: Double = 10, _ body: (MockAPNs, APNsClient) async throws -> Void) async throws {
        let kit = try DeliveryKit()
        var configuration = kit.mockConfiguration
        configuration.latency = .init(milliseconds: latency)
        try await withMockAPNs(configuration) { mock in try await body(mock, try client(mock, kit, connections: connections, timeout: timeout)) }
    }

    @Test("Requests go round the configured number of connections, no more")
    func opensTheConfiguredConnections() async throws {
        try await Self.withClient(latency: 20, connections: 3) { mock, client in
            let statuses = await Self.sendAll(client, count: 90)
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            #expect(mock.connectionCount == 3)
            #expect(client.openConnections == 3)
            // Every connection carried requests.
            let byConnection = Dictionary(grouping: mock.requests, by: \.connection).mapValues(\.count)
            #expect(byConnection.count == 3 && byConnection.values.allSatisfy { $0 == 30 }, "\(byConnection)")
            await client.shutdown()
            #expect(client.openConnections == 0)
        }
    }

    @Test("Answers' bodies past the connection's 64 KiB window keep coming: the client returns the window as it reads them")
    func returnsTheConnectionWindow() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            // Each answer's body is about 1 KB: 120 answers are about 123,000 bytes on one connection, past the
            // 65,535 a connection's window starts with. A client that never returned it would stall.
            let reason = String(repeating: "Bad", count: 340)
            mock.setDefaultAnswer(.refuse(status: 400, reason: reason))
            let client = try Self.client(mock, kit, connections: 1, timeout: 60)
            var statuses: [Int] = []
            for round in 0..<3 { statuses += await Self.sendAll(client, count: 40, tokenOffset: round * 40) }
            #expect(statuses.count == 120 && statuses.allSatisfy { $0 == 400 }, "\(Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count))")
            #expect(mock.connectionCount == 1)
            await client.shutdown()
        }
    }

    @Test("An answer whose body passes a stream's 64 KiB window arrives whole: the client returns the stream's window too")
    func returnsTheStreamWindow() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            // One answer of about 100,000 bytes on one stream: past the 65,535 a stream's window starts with.
            // A client that returned only the connection's window would wait for its deadline (status 0).
            mock.setDefaultAnswer(.refuse(status: 400, reason: String(repeating: "BadDeviceToken", count: 7_000)))
            let client = try Self.client(mock, kit, connections: 1, timeout: 20)
            let statuses = await Self.sendAll(client, count: 2)
            #expect(statuses == [400, 400], "\(statuses)")
            // The next answer on the same connection still comes (both windows were returned).
            mock.setDefaultAnswer(.ok)
            #expect(await Self.sendAll(client, count: 1, tokenOffset: 2) == [200])
            #expect(mock.connectionCount == 1)
            await client.shutdown()
        }
    }

    @Test("Requests started together off the event loop ride one hop to it: each is opened once and answered with its own apns-id")
    func requestsStartedTogether() async throws {
        try await Self.withClient(latency: 5, connections: 1, timeout: 30) { mock, client in
            _ = await Self.sendAll(client, count: 1)  // the connection opens
            let count = 400
            let ids = (0..<count).map { APNsID.make(app: "a", message: "t\($0)", token: Self.token($0)) }
            let answered = Mutex<[String: Int]>([:])
            // Started from one task in a tight loop, as the delivery worker starts a claim: many gather
            // before the event loop takes them.
            for (i, id) in ids.enumerated() {
                client.start(Self.delivery(Self.token(i)), apnsID: id, expiration: 0) { attempt in
                    var status = 0
                    if case .answered(let answer) = attempt, answer.apnsID == id { status = answer.status }
                    answered.withLock { $0[id, default: 0] += status == 200 ? 1 : 1_000 }
                }
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while answered.withLock({ $0.values.reduce(0, +) }) < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            let all = answered.withLock { $0 }
            #expect(all.count == count && all.values.allSatisfy { $0 == 1 }, "every request answered once, with its own apns-id")
            let seen = Dictionary(grouping: mock.requests.compactMap(\.apnsID), by: { $0 }).mapValues(\.count)
            #expect(ids.allSatisfy { seen[$0] == 1 }, "the mock got each request once")
            await client.shutdown()
        }
    }

    @Test("The server's SETTINGS_MAX_CONCURRENT_STREAMS is honoured: requests beyond it wait for a stream, none is refused")
    func honoursTheStreamLimit() async throws {
        let kit = try DeliveryKit()
        var configuration = kit.mockConfiguration
        configuration.maximumConcurrentStreams = 4
        configuration.latency = .init(milliseconds: 50)
        try await withMockAPNs(configuration) { mock in
            let client = try Self.client(mock, kit, connections: 1)
            // Open the connection first, so the server's SETTINGS are known before the burst.
            #expect(await Self.sendAll(client, count: 1, tokenOffset: 1_000) == [200])
            let start = ContinuousClock.now
            let statuses = await Self.sendAll(client, count: 40)
            let took = ContinuousClock.now - start
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            #expect(mock.connectionCount == 1)
            // 40 requests, 4 at a time, 50 ms each: at least 10 rounds (a lower bound: load only adds).
            #expect(took >= .milliseconds(500), "\(took): more than 4 streams were open at once")
            await client.shutdown()
        }
    }

    @Test("A connection that got GOAWAY is replaced: the next request opens a new one and is answered")
    func goAwayReplacesTheConnection() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            // A deadline a loaded debug run keeps (the replaced connection is closed 1 s after it).
            let client = try Self.client(mock, kit, connections: 1, timeout: 10)
            mock.script(Self.token(0), [.goAway(then: .ok)])
            #expect(await Self.sendAll(client, count: 1) == [200])
            // The GOAWAY arrives with or just after the answer: wait until the connection is replaced. A
            // request that went out on the old connection before the client read the GOAWAY may fail (the
            // server takes no new stream on it; a delivery is retried): the one after the replacement may not.
            for i in 1...50 {
                _ = await Self.sendAll(client, count: 1, tokenOffset: i)
                if mock.connectionCount == 2 { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(mock.connectionCount == 2, "a new connection after GOAWAY")
            #expect(await Self.sendAll(client, count: 1, tokenOffset: 100) == [200], "answered on the new connection")
            #expect(mock.connectionCount == 2)
            // The replaced one is closed once its requests have had their deadline (10 s, plus 1 s).
            var open = client.openConnections
            for _ in 0..<600 where open != 1 {
                try await Task.sleep(for: .milliseconds(100))
                open = client.openConnections
            }
            #expect(open == 1, "the drained connection was closed")
            await client.shutdown()
        }
    }

    @Test("Slow requests on one connection each fail at their own deadline, not at the first one's nor later")
    func eachTimeoutAtItsOwnDeadline() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            let client = try Self.client(mock, kit, connections: 1, timeout: 6)
            mock.script(Self.token(0), [.slow(milliseconds: 60_000, then: .ok)])
            mock.script(Self.token(1), [.slow(milliseconds: 60_000, then: .ok)])
            #expect(await Self.sendAll(client, count: 1, tokenOffset: 100) == [200], "the connection is open before the slow requests")
            // The connection's one timer is first set for the first slow request; the second, opened a
            // second and a half later, is failed when the timer, set again, reaches its own deadline.
            let clock = ContinuousClock()
            async let first: (DeliveryAttempt, Duration) = {
                let start = clock.now
                let attempt = await client.send(Self.delivery(Self.token(0)), apnsID: "00000000-0000-0000-0000-000000000011", expiration: 0)
                return (attempt, clock.now - start)
            }()
            try await Task.sleep(for: .milliseconds(1_500))
            let start = clock.now
            let second = await client.send(Self.delivery(Self.token(1)), apnsID: "00000000-0000-0000-0000-000000000012", expiration: 0)
            let secondTook = clock.now - start
            let (firstAttempt, firstTook) = await first
            for (attempt, took) in [(firstAttempt, firstTook), (second, secondTook)] {
                guard case .transportFailure(let what) = attempt else {
                    Issue.record("expected a timeout, got \(attempt)")
                    continue
                }
                #expect(what == "timeout")
                // Not before its own deadline; well before the answer (a loaded run may resume the
                // sender late, never by the minute).
                #expect(took >= .seconds(6) && took < .seconds(30), "failed \(took) after it was sent, its deadline 6 s")
            }
            #expect(await Self.sendAll(client, count: 3, tokenOffset: 1_000) == [200, 200, 200])
            #expect(mock.connectionCount == 1)
            await client.shutdown()
        }
    }

    @Test("A request past its deadline fails as a timeout; the connection keeps serving")
    func aTimeoutResetsOnlyItsStream() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            // A deadline a loaded debug run keeps for ordinary requests (3 s once did not cover the
            // first connect with every suite running), and an answer far past it.
            let client = try Self.client(mock, kit, connections: 1, timeout: 10)
            mock.script(Self.token(0), [.slow(milliseconds: 120_000, then: .ok)])
            #expect(await Self.sendAll(client, count: 1, tokenOffset: 100) == [200], "the connection is open before the slow request")
            let attempt = await client.send(Self.delivery(Self.token(0)), apnsID: "00000000-0000-0000-0000-000000000001", expiration: 0)
            guard case .transportFailure(let what) = attempt else {
                Issue.record("expected a timeout, got \(attempt)")
                return
            }
            #expect(what == "timeout")
            #expect(await Self.sendAll(client, count: 5, tokenOffset: 1) == [200, 200, 200, 200, 200])
            #expect(mock.connectionCount == 1, "the reset stream did not cost the connection")
            await client.shutdown()
        }
    }

    @Test("An APNs URL must be https://host[:port]; the error names it")
    func urls() async throws {
        let kit = try DeliveryKit()
        for url in ["http://127.0.0.1:8443", "https://", "https://host:99999", "https://host:port"] {
            do {
                _ = try APNsClient(endpoint: .init(baseURL: url, trustedCAFile: kit.path("ca.pem")), credentials: [try kit.tokenCredential()])
                Issue.record("accepted \(url)")
            } catch let error as DeliveryError {
                #expect(error.subject == url)
            }
        }
        for url in ["https://api.push.apple.com", "https://127.0.0.1:8443", "https://[::1]:8443", "https://localhost:8443/"] {
            let client = try APNsClient(endpoint: .init(baseURL: url, trustedCAFile: kit.path("ca.pem")), credentials: [try kit.tokenCredential()])
            await client.shutdown()
        }
    }
}
