import Dispatch
import PushBridgeCore

/// A store's delivery outbox, awaited (``PushStateStore/outbox``): the delivery worker's claims,
/// settlements and look. PostgreSQL's are statements of their own — no write transaction, no write lock
/// and no thread held while the store answers (a claim is one `UPDATE … FOR UPDATE SKIP LOCKED`);
/// SQLite's are transactions on its writer queue; the memory store's, on a queue of its own.
public protocol PushOutbox: Sendable {
    /// Claims due deliveries, as ``OutboxTable/claimDeliveries(dueBy:claimUntil:limit:)``.
    /// - Parameters:
    ///   - now: deliveries due by then, and not claimed past it, are claimed.
    ///   - claimUntil: the end of the claim's lease.
    ///   - limit: the most deliveries claimed.
    func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int) async throws -> [OutboxDelivery]

    /// Records attempts, as ``OutboxTable/settleDeliveries(_:at:)`` (removing dead devices changes users:
    /// that is a write transaction's).
    /// - Parameters:
    ///   - settlements: each claimed delivery's outcome.
    ///   - now: when they were settled.
    func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) async throws

    /// Ends every claim (a store one process owns, at start: its claims are no worker's now).
    func releaseDeliveryClaims() async throws
    /// Forgets delivered and failed deliveries last changed before `cutoff`; returns how many.
    /// - Parameter cutoff: the oldest change kept.
    func pruneDeliveries(settledBefore cutoff: Instant) async throws -> Int

    /// The outbox's counts and when its next queued delivery is due, in one snapshot.
    func outboxState() async throws -> (counts: OutboxCounts, nextDue: Instant?)
}

/// The outbox of a store whose transactions are synchronous: each call one write or read transaction
/// on a serial queue (the caller holds no thread meanwhile).
package struct TransactionOutbox: PushOutbox {
    let store: any PushStateStore
    let queue: DispatchQueue

    /// - Parameters:
    ///   - store: the store whose transactions the calls are.
    ///   - queue: where the transactions run.
    package init(store: any PushStateStore, queue: DispatchQueue) {
        self.store = store
        self.queue = queue
    }

    package func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int) async throws -> [OutboxDelivery] {
        try await queue.transaction { [store] in try store.write { try $0.claimDeliveries(dueBy: now, claimUntil: claimUntil, limit: limit) } }
    }

    package func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) async throws {
        guard !settlements.isEmpty else { return }
        try await queue.transaction { [store] in try store.write { try $0.settleDeliveries(settlements, at: now) } }
    }

    package func releaseDeliveryClaims() async throws {
        try await queue.transaction { [store] in try store.write { try $0.releaseDeliveryClaims() } }
    }

    package func pruneDeliveries(settledBefore cutoff: Instant) async throws -> Int {
        try await queue.transaction { [store] in try store.write { try $0.pruneDeliveries(settledBefore: cutoff) } }
    }

    package func outboxState() async throws -> (counts: OutboxCounts, nextDue: Instant?) {
        try await queue.transaction { [store] in try store.read { (try $0.outboxCounts(), try $0.nextDeliveryDue()) } }
    }
}
