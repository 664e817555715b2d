import PushBridgeCore

/// A store's delivery outbox as statements of its own, awaited: no write transaction, no write lock and
/// no thread held while the store answers (PostgreSQL's: a claim is one `UPDATE … FOR UPDATE SKIP LOCKED`,
/// which needs no app lock). A store without one (SQLite, memory) is used through ``PushStateStore/write(_:)``
/// and ``PushStateStore/read(_:)``, as ``PushStateStore/awaitedOutbox`` says by being `nil`.
public protocol AwaitedOutbox: Sendable {
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

    /// Forgets delivered and failed deliveries last changed before `cutoff`; returns how many.
    /// - Parameter cutoff: the oldest change kept.
    func pruneDeliveries(settledBefore cutoff: Instant) async throws -> Int

    /// The outbox's counts and when its next queued delivery is due, in one snapshot.
    func outboxState() async throws -> (counts: OutboxCounts, nextDue: Instant?)
}
