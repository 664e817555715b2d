import Foundation
import PushBridgeCore

/// A store's delivery outbox, awaited (``PushStateStore/outbox``): the delivery worker's claims,
/// settlements and look. PostgreSQL's are statements of their own — no write transaction, no write lock
/// and no thread held while the store answers (a claim is one `UPDATE … FOR UPDATE SKIP LOCKED`);
/// SQLite's are transactions on its writer queue; the memory store's, on a queue of its own.
public protocol PushOutbox: Sendable {
    /// Claims due deliveries, as `OutboxTable/claimDeliveries(dueBy:claimUntil:limit:taskLimit:)`:
    /// chat pushes (lane 0) first, then push tasks' deliveries (lane 1), each earliest due first.
    /// - Parameters:
    ///   - now: deliveries due by then, and not claimed past it, are claimed.
    ///   - claimUntil: the end of the claim's lease.
    ///   - limit: the most deliveries claimed.
    ///   - taskLimit: the most of them from push tasks' lane (a worker keeps room for chat pushes).
    func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) async throws -> [OutboxDelivery]

    /// Records attempts, as `OutboxTable/settleDeliveries(_:at:)` (removing dead devices changes users:
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

    /// A worker's look: how many deliveries are queued and when the next is due, in one snapshot —
    /// read from the queued rows alone, so it costs what the queue holds, not what was ever delivered.
    func outboxState() async throws -> (queued: Int, nextDue: Instant?)

    /// How many deliveries the outbox holds in each state (every row: for reports, not for a loop).
    func outboxCounts() async throws -> OutboxCounts
}

extension PushOutbox {
    /// Claims due deliveries from either lane, chat pushes first (no room kept for them).
    public func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int) async throws -> [OutboxDelivery] {
        try await claimDeliveries(dueBy: now, claimUntil: claimUntil, limit: limit, taskLimit: limit)
    }
}

/// The outbox of a store whose transactions are synchronous: its writes (claims, settlements,
/// releases, prunes) run in the store's write turns, those that arrive while one runs together in the
/// next transaction of their turn (a group commit of the worker's bookkeeping) — claims in the
/// requests' turn (a chat push waits for its claim), settlements in the background turn; its look is
/// a read on a dispatch thread. The caller holds no thread meanwhile.
package final class TransactionOutbox: PushOutbox, @unchecked Sendable {  // `pending` is guarded by its lock
    private weak var store: (any TransactionStore)?
    /// The store held, when the outbox is made for one use (not kept by the store).
    private let held: (any TransactionStore)?
    private let turns: WriteTurns
    private let lock = NSLock()
    /// The writes waiting, by turn.
    private var pending: [WriteTurns.Turn: [Pending]] = [:]

    /// A write waiting for its transaction: runs in it, and is told how the transaction ended.
    private struct Pending {
        let run: (any PushStateTransaction) throws -> Void
        let ended: ((any Error)?) -> Void
    }

    /// - Parameters:
    ///   - store: the store whose transactions the calls are.
    ///   - turns: where the writes' transactions run, one at a time.
    ///   - holdsStore: whether the outbox keeps the store alive (`false` for the store's own outbox,
    ///     which it keeps).
    package init(store: any TransactionStore, turns: WriteTurns, holdsStore: Bool = true) {
        self.store = store
        held = holdsStore ? store : nil
        self.turns = turns
    }

    package func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) async throws -> [OutboxDelivery] {
        try await write(.claim) { try $0.claimDeliveries(dueBy: now, claimUntil: claimUntil, limit: limit, taskLimit: taskLimit) }
    }

    package func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) async throws {
        guard !settlements.isEmpty else { return }
        try await write(.background) { try $0.settleDeliveries(settlements, at: now) }
    }

    package func releaseDeliveryClaims() async throws {
        try await write(.claim) { try $0.releaseDeliveryClaims() }
    }

    package func pruneDeliveries(settledBefore cutoff: Instant) async throws -> Int {
        try await write(.background) { try $0.pruneDeliveries(settledBefore: cutoff) }
    }

    package func outboxState() async throws -> (queued: Int, nextDue: Instant?) {
        let store = try self.present()
        return try await DispatchQueue.storageReads.transaction { try store.read { (try $0.queuedDeliveryCount(), try $0.nextDeliveryDue()) } }
    }

    package func outboxCounts() async throws -> OutboxCounts {
        let store = try self.present()
        return try await DispatchQueue.storageReads.transaction { try store.read { try $0.outboxCounts() } }
    }

    /// Runs `body` in the next write transaction of its turn, with the writes of that turn waiting beside it.
    private func write<T>(_ turn: WriteTurns.Turn, _ body: @escaping (any PushStateTransaction) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<UnsafeResult<T>, any Error>) in
            nonisolated(unsafe) var result: T?
            let write = Pending(
                run: { result = try body($0) },
                ended: { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: UnsafeResult(value: result!)) }
                })
            let first = lock.withLock {
                pending[turn, default: []].append(write)
                return pending[turn]?.count == 1
            }
            if first { turns.async(turn) { self.commitWaiting(turn) } }
        }.value
    }

    /// One transaction for every write of `turn` waiting: all are kept, or all fail with its error.
    private func commitWaiting(_ turn: WriteTurns.Turn) {
        let writes = lock.withLock { pending.removeValue(forKey: turn) ?? [] }
        do {
            let store = try present()
            try store.write { transaction in for write in writes { try write.run(transaction) } }
            for write in writes { write.ended(nil) }
        } catch {
            for write in writes { write.ended(error) }
        }
    }

    /// The store, or the error of a store already closed.
    private func present() throws -> any TransactionStore {
        guard let store else { throw StoreError(.unreachable, "the store was closed", context: "outbox") }
        return store
    }
}
