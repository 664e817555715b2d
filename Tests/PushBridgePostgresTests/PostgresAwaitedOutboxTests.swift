import Foundation
import PostgresNIO
import PushBridgeCore
import PushBridgeFacade
@testable import PushBridgePostgres
import PushBridgeStore
import PushBridgeStoreTestSupport
import Testing

/// A node's delivery worker claims, settles, prunes and counts through the store's own
/// awaited statements — no write transaction, no app lock, no thread held — with the answers the
/// transactions give.
@Suite("PostgreSQL awaited outbox")
struct PostgresAwaitedOutboxTests {
    @Test("claims answer while another node holds the app's write lock; a claim is the node's alone; settle, state and prune as the transactions")
    func claimSettleStatePrune() async throws {
        guard let (a, b) = try await PostgresOneRoundTripTests.twoNodes() else { return }
        #expect(try await MemoryStateStore().outbox.outboxCounts() == OutboxCounts(queued: 0, delivered: 0, failed: 0), "every store has one")
        let outbox = b.outbox
        _ = try await PostgresOneRoundTripTests.commit(a, try (1...3).map { try PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne("o\($0)"), on: a) })
        let now = FacadeScenario.now
        let lease = Instant(milliseconds: now.milliseconds + 60_000)
        // Node A holds the app's write lock in an open transaction (a long write): node B's claim does not wait for it.
        let claimed = try await a.pool.use(schema: a.schema) { session in
            try await session.execute("BEGIN")
            _ = try await session.query(a.writeLockQuery)
            let claimed = try await outbox.claimDeliveries(dueBy: now, claimUntil: lease, limit: 10)
            try await session.execute("ROLLBACK")
            return claimed
        }
        #expect(claimed.count == 3 && claimed.map(\.id) == claimed.map(\.id).sorted())
        #expect(try await a.claimDeliveries(dueBy: now, claimUntil: lease, limit: 10).isEmpty, "claimed by node B until its lease ends")
        let retryAt = Instant(milliseconds: now.milliseconds + 5_000)
        try await outbox.settleDeliveries(
            [DeliverySettlement(id: claimed[0].id, state: .delivered, status: 200), DeliverySettlement(id: claimed[1].id, state: .delivered, status: 200),
             DeliverySettlement(id: claimed[2].id, state: .queued, status: 429, reason: "TooManyRequests", retryAt: retryAt)],
            at: now)
        let state = try await outbox.outboxState()
        #expect(try await outbox.outboxCounts() == OutboxCounts(queued: 1, delivered: 2, failed: 0))
        #expect(state.queued == 1 && state.nextDue == retryAt)
        let seenByA = try await PushFacade(store: a).outboxState()
        #expect(seenByA.queued == 1 && seenByA.nextDue == retryAt, "node A reads the same")
        #expect(try await PushFacade(store: a).outboxCounts() == OutboxCounts(queued: 1, delivered: 2, failed: 0))
        #expect(try await PushFacade(store: a).deliveries(ofMessage: "o3").first?.reason == "TooManyRequests")
        #expect(try await outbox.claimDeliveries(dueBy: retryAt, claimUntil: lease, limit: 10).map(\.id) == [claimed[2].id], "due again at its retry")
        #expect(try await outbox.pruneDeliveries(settledBefore: Instant(milliseconds: now.milliseconds + 1)) == 2)
        #expect(try await outbox.outboxCounts() == OutboxCounts(queued: 1, delivered: 0, failed: 0))
    }
}
