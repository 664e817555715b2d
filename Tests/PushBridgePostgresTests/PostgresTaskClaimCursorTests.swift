import Foundation
import Synchronization
import PushBridgeCore
import PushBridgeFacade
@testable import PushBridgePostgres
import PushBridgeStore
import PushBridgeStoreTestSupport
import Testing

/// Push tasks' deliveries are claimed by the app's cursor on PostgreSQL, writing no delivery row:
/// two nodes never claim one twice, a node that dies leaves its claims to lapse and be claimed
/// again, a delivery due again after an attempt is claimed at its time, and a release lets the
/// cursor's claims go.
@Suite("PostgreSQL push tasks' claim cursor")
struct PostgresTaskClaimCursorTests {
    static let task = PushTask.messagePrefix(of: 11)

    /// Two nodes with `messages` of a push task queued (three receivers each, u2–u4).
    static func queued(_ messages: Int) async throws -> (PushFacade, PushFacade)? {
        guard let (a, b) = try await PostgresNodesTests.twoNodes() else { return nil }
        for i in 0..<messages {
            _ = try await a.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: task + "\(i)"), dialect: "agora-silent", now: FacadeScenario.now)
        }
        return (a, b)
    }

    @Test("Two nodes claiming a push task's deliveries at once never claim one twice; the claims lapse together and come back once")
    func claimsAreExclusiveAndLapse() async throws {
        guard let (a, b) = try await Self.queued(40) else { return }
        let now = Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let lease = now.adding(seconds: 60)
        let claimed = try await PostgresNodesTests.claimAll(from: [a, b], now: now, claimUntil: lease, limit: 7, taskLimit: 7).flatMap { $0 }
        #expect(claimed.allSatisfy { $0.lane == 1 })
        let ids = claimed.map(\.id)
        #expect(ids.count == 120, "40 messages × 3 receivers, each claimed once")
        #expect(Set(ids).count == ids.count, "no delivery claimed by both nodes")
        let state = try await b.outboxState()
        #expect(state.queued == 120 && state.nextDue == lease, "held until the cursor's claims lapse: \(state)")
        #expect(try await a.claimDeliveries(now: lease.adding(seconds: -1), claimUntil: lease, limit: 500, taskLimit: 500).isEmpty)
        // Every claim lapsed (the nodes died): each delivery is claimed again, once.
        let later = lease.adding(seconds: 1)
        let again = try await b.claimDeliveries(now: later, claimUntil: later.adding(seconds: 60), limit: 500, taskLimit: 500)
        #expect(again.map(\.id).sorted() == ids.sorted())
        #expect(try await a.claimDeliveries(now: later, claimUntil: later.adding(seconds: 60), limit: 500, taskLimit: 500).isEmpty)
        #expect(try await a.outboxState().nextDue == later.adding(seconds: 60))
    }

    @Test("Settled deliveries leave the queue; one due again is claimed at its time; deliveries queued after the cursor are claimed next, in id order")
    func settleRetryAndNewRows() async throws {
        guard let (a, b) = try await Self.queued(2) else { return }
        let now = Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let lease = now.adding(seconds: 60)
        let first = try await a.claimDeliveries(now: now, claimUntil: lease, limit: 10, taskLimit: 4)
        #expect(first.count == 4 && first.map(\.id) == first.map(\.id).sorted())
        let retryAt = now.adding(seconds: 5)
        _ = try await a.settleDeliveries(
            [DeliverySettlement(id: first[0].id, state: .delivered, status: 200), DeliverySettlement(id: first[1].id, state: .failed, status: 400, reason: "BadDeviceToken"),
             DeliverySettlement(id: first[2].id, state: .queued, status: 429, reason: "TooManyRequests", retryAt: retryAt),
             DeliverySettlement(id: first[3].id, state: .delivered, status: 200)],
            dead: [], at: now)
        #expect(try await b.outboxCounts() == OutboxCounts(queued: 3, delivered: 2, failed: 1))
        for i in 2..<4 {
            _ = try await b.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: Self.task + "\(i)"), dialect: "agora-silent", now: FacadeScenario.now)
        }
        let second = try await b.claimDeliveries(now: now, claimUntil: lease, limit: 100, taskLimit: 100)
        #expect(second.count == 8 && second.allSatisfy { $0.id > first[3].id }, "the rest, never the one due at \(retryAt.milliseconds)")
        #expect(try await a.outboxState().nextDue == retryAt)
        let due = try await a.claimDeliveries(now: retryAt, claimUntil: lease, limit: 100, taskLimit: 100)
        #expect(due.map(\.id) == [first[2].id] && due.first?.attempts == 1)
        #expect(try await b.claimDeliveries(now: retryAt, claimUntil: lease, limit: 100, taskLimit: 100).isEmpty)
        // Released: what the cursor held is claimed again, earliest due first, the task limit binding
        // those and the ones due again together; chat first.
        _ = try await a.settleDeliveries([DeliverySettlement(id: first[2].id, state: .queued, status: 429, reason: "TooManyRequests", retryAt: retryAt)], dead: [], at: now)
        try await a.releaseDeliveryClaims()
        _ = try await a.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: "chat-1"), dialect: "agora-silent", now: FacadeScenario.now)
        let mixed = try await b.claimDeliveries(now: retryAt, claimUntil: lease, limit: 5, taskLimit: 2)
        #expect(mixed.filter { $0.lane == 0 }.count == 3 && mixed.filter { $0.lane == 1 }.map(\.id) == second.prefix(2).map(\.id), "\(mixed.map(\.id))")
        let rest = try await a.claimDeliveries(now: retryAt, claimUntil: lease, limit: 100, taskLimit: 100)
        #expect(rest.map(\.id) == (second.dropFirst(2).map(\.id) + [first[2].id]).sorted(), "each once")
        #expect(try await b.claimDeliveries(now: retryAt, claimUntil: lease, limit: 100, taskLimit: 100).isEmpty)
    }

    @Test("A claim takes the cursor's lock only when a task's deliveries wait after it: chat claims never wait for one another's")
    func chatClaimsTakeNoCursorLock() async throws {
        guard let (a, b) = try await Self.queued(1) else { return }
        let store = try #require(a.store as? PostgresStateStore)
        let now = Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let lease = now.adding(seconds: 60)
        #expect(try await b.claimDeliveries(now: now, claimUntil: lease, limit: 10, taskLimit: 10).count == 3)
        _ = try await a.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: "chat-2"), dialect: "agora-silent", now: FacadeScenario.now)
        // Another node's claim holds the cursor (an open transaction here): a claim with room for a task's
        // deliveries, none of which waits after the cursor, answers at once.
        let (claimed, beforeRelease) = try await store.pool.use(schema: store.schema) { session in
            try await session.execute("BEGIN")
            _ = try await session.query("SELECT next_id FROM delivery_cursors FOR UPDATE")
            let answered = Mutex(false)
            let claim = Task {
                defer { answered.withLock { $0 = true } }
                return try await b.claimDeliveries(now: now, claimUntil: lease, limit: 10, taskLimit: 10)
            }
            let waited = ContinuousClock.now
            while !answered.withLock({ $0 }) && ContinuousClock.now - waited < .seconds(20) { try await Task.sleep(for: .milliseconds(20)) }
            let beforeRelease = answered.withLock { $0 }
            try await session.execute("ROLLBACK")  // a claim that waited for the lock answers now
            return (try await claim.value, beforeRelease)
        }
        #expect(beforeRelease, "answered while the cursor was locked")
        #expect(claimed.map(\.messageID) == ["chat-2", "chat-2", "chat-2"], "the chat pushes, without waiting for the cursor's lock")
    }

    @Test("A task's delivery queued by a node whose clock runs ahead is claimed in its turn, not passed over by the cursor")
    func aheadClockIsNotPassedOver() async throws {
        guard let (a, b) = try await PostgresNodesTests.twoNodes() else { return }
        let now = Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        _ = try await a.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: Self.task + "ahead"), dialect: "agora-silent", now: now.adding(seconds: 30))
        _ = try await b.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: Self.task + "behind"), dialect: "agora-silent", now: FacadeScenario.now)
        let claimed = try await b.claimDeliveries(now: now, claimUntil: now.adding(seconds: 60), limit: 100, taskLimit: 100)
        #expect(claimed.map(\.messageID) == Array(repeating: Self.task + "ahead", count: 3) + Array(repeating: Self.task + "behind", count: 3))
    }
}
