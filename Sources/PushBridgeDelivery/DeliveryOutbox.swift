import PushBridgeCore
import PushBridgeFacade
import PushBridgeStore

/// A worker's way into one store's outbox: the service goes through its writer, a library user
/// through the facade (``FacadeOutbox``).
public protocol DeliveryOutbox: Sendable {
    /// Claims due deliveries, chat pushes first, at most `taskLimit` of push tasks' (see
    /// `PushOutbox.claimDeliveries(dueBy:claimUntil:limit:taskLimit:)`).
    func claim(now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) async throws -> [OutboxDelivery]
    /// Removes dead devices, then records the attempts.
    func settle(_ settlements: [DeliverySettlement], dead: [PushFacade.DeadDevice], at now: Instant) async throws -> [PushFacade.RemovedDevice]
    /// Ends every claim (a store one process owns, at start).
    func releaseClaims() async throws
    /// When the next queued delivery is due, if any.
    func nextDue() async throws -> Instant?
    /// Forgets settled deliveries older than a cutoff.
    func prune(settledBefore cutoff: Instant) async throws -> Int
    /// How many deliveries wait.
    func counts() async throws -> OutboxCounts
}

/// The outbox of a facade's store, used directly (`PushStateStore.outbox`).
public struct FacadeOutbox: DeliveryOutbox {
    public let facade: PushFacade
    public init(facade: PushFacade) { self.facade = facade }

    public func claim(now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) async throws -> [OutboxDelivery] {
        try await facade.claimDeliveries(now: now, claimUntil: claimUntil, limit: limit, taskLimit: taskLimit)
    }

    public func settle(_ settlements: [DeliverySettlement], dead: [PushFacade.DeadDevice], at now: Instant) async throws -> [PushFacade.RemovedDevice] {
        try await facade.settleDeliveries(settlements, dead: dead, at: now)
    }

    public func releaseClaims() async throws { try await facade.releaseDeliveryClaims() }
    public func nextDue() async throws -> Instant? { try await facade.outboxState().nextDue }
    public func prune(settledBefore cutoff: Instant) async throws -> Int { try await facade.pruneDeliveries(settledBefore: cutoff) }
    public func counts() async throws -> OutboxCounts { try await facade.outboxCounts() }
}

/// What a worker reports, for metrics and logs (no token, user or message id in the counters).
public struct DeliveryObserver: Sendable {
    /// An attempt's outcome: `delivered`, `retried`, `failed`, `device-removed`.
    public var attempted: @Sendable (_ app: String, _ outcome: String, _ count: Int) -> Void
    /// Something went wrong in the worker itself (a store error): it waits and goes on.
    public var workerError: @Sendable (_ app: String, _ error: any Error) -> Void
    /// Attempts by outcome and reason (``DeliveryReason/label(_:)``, a bounded set), for metrics.
    public var settled: @Sendable (_ app: String, _ outcome: String, _ reason: String, _ count: Int) -> Void
    /// APNs refused the credential of a topic (``DeliveryReason/credentialReasons``): once per
    /// settled batch and topic, for an operator's warning.
    public var credentialRefused: @Sendable (_ app: String, _ topic: String, _ reason: String) -> Void

    /// - Parameters:
    ///   - attempted: attempts by outcome.
    ///   - workerError: a failure of the worker itself.
    ///   - settled: attempts by outcome and reason.
    ///   - credentialRefused: a topic's credential refused by APNs.
    public init(
        attempted: @escaping @Sendable (String, String, Int) -> Void = { _, _, _ in },
        workerError: @escaping @Sendable (String, any Error) -> Void = { _, _ in },
        settled: @escaping @Sendable (String, String, String, Int) -> Void = { _, _, _, _ in },
        credentialRefused: @escaping @Sendable (String, String, String) -> Void = { _, _, _ in }
    ) {
        self.attempted = attempted
        self.workerError = workerError
        self.settled = settled
        self.credentialRefused = credentialRefused
    }
}
