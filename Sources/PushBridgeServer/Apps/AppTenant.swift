import NIOPosix
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeStore
import Synchronization

/// One open app of the service: the facade over its store (reads, and what needs no store), and its
/// group-commit writer.
///
/// Every operation holds a lease on the tenant while it runs, so the registry closes only a tenant
/// nobody is using (``ServiceApps``' least-recently-used eviction). A request that still holds a
/// tenant the registry has closed since is not refused: its operation runs on the app's tenant
/// opened anew (`reopen`), so eviction is invisible to clients.
package final class AppTenant: Sendable {
    let id: String
    let facade: PushFacade
    let writer: GroupCommitWriter
    /// Called after each write when the service delivers (the write may have queued deliveries).
    let afterWrite: (@Sendable () -> Void)?
    /// The app's tenant as the registry has it now (opening it again after an eviction).
    private let reopen: @Sendable () async throws -> AppTenant

    /// What the registry needs to know to close the tenant safely.
    private struct Use {
        /// Operations running now.
        var inFlight = 0
        /// Closed by the registry: operations go to the tenant opened anew.
        var retired = false
        /// Writes ended so far.
        var writes: UInt64 = 0
        /// `writes` when the delivery worker last began a look at the outbox that found it empty
        /// (`nil`: not since the tenant opened, or it found deliveries).
        var emptyOutboxAt: UInt64?
        /// When a request last asked for it (`nil`: none has, it was opened to deliver): the least
        /// recently used is closed first, and one asked for within the last second is not closed, so
        /// one just opened serves the request that opened it.
        var lastUsedAt: ContinuousClock.Instant?
        /// Whether its task runner has pending push tasks (an app with tasks to run is not closed).
        var hasPendingTasks = false
    }
    private let use = Mutex(Use())

    /// - Parameters:
    ///   - id: the app.
    ///   - facade: the facade over the app's store.
    ///   - writer: the app's writer.
    ///   - afterWrite: called after each write (wakes the delivery worker).
    ///   - reopen: the app's current tenant, for operations on this one after it is closed.
    init(
        id: String, facade: PushFacade, writer: GroupCommitWriter, afterWrite: (@Sendable () -> Void)? = nil,
        reopen: @escaping @Sendable () async throws -> AppTenant
    ) {
        self.id = id
        self.facade = facade
        self.writer = writer
        self.afterWrite = afterWrite
        self.reopen = reopen
    }

    /// The dialects the app's requests may name.
    var registry: DialectRegistry { facade.registry }

    /// Runs a facade update (it reads, decides and commits through the store) in its turn among the
    /// app's writes: the awaited facade calls (`try await facade.apply(…)`).
    /// - Parameters:
    ///   - waking: whether to wake the delivery worker afterwards (not for the worker's own writes).
    ///   - rerouting: whether a closed tenant hands the write to the app's tenant opened anew (requests);
    ///     the delivery worker's writes are refused instead (``ServiceError/stopping``): its worker ends
    ///     with the tenant.
    ///   - body: the update, given the app's facade.
    package func update<T: Sendable>(waking: Bool = true, rerouting: Bool = true, _ body: @escaping @Sendable (PushFacade) async throws -> T) async throws -> T {
        try await leased(writes: true, rerouting: rerouting, elsewhere: { try await $0.update(waking: waking, body) }) {
            let facade = facade
            let result = try await writer.update { try await body(facade) }
            if waking { afterWrite?() }
            return result
        }
    }

    /// Runs a facade update beside the app's writer, not in one of its rounds: the store orders it
    /// among the writer's commits (SQLite's serial queue, PostgreSQL's write lock), so a long update —
    /// a push task's page — never holds the requests' sends waiting behind it for a whole round. A
    /// closed tenant refuses (``ServiceError/stopping``); the delivery worker is woken afterwards.
    /// - Parameter body: the update, given the app's facade.
    func updateBesideWriter<T: Sendable>(_ body: @escaping @Sendable (PushFacade) async throws -> T) async throws -> T {
        try await leased(writes: true, rerouting: false, elsewhere: { _ in throw ServiceError.stopping }) {
            let result = try await body(facade)
            afterWrite?()
            return result
        }
    }

    /// Sends a prepared message in the app's next group commit (decided with the sends next to it).
    /// - Parameter message: the prepared message (its required targets are checked when it is decided).
    func send(_ message: PushFacade.PreparedMessage) async throws -> PushFacade.SendOutcome {
        try await leased(writes: true, rerouting: true, elsewhere: { try await $0.send(message) }) {
            let outcome = try await writer.send(message)
            afterWrite?()
            return outcome
        }
    }

    /// Runs a facade read that is awaited (`PushFacade.reading(_:_:)`, `PushFacade.sentMessage(_:now:)`…):
    /// a store over the network holds no thread meanwhile.
    /// - Parameters:
    ///   - rerouting: as for ``update(waking:rerouting:_:)``.
    ///   - body: the read, given the app's facade.
    package func reading<T: Sendable>(rerouting: Bool = true, _ body: @escaping @Sendable (PushFacade) async throws -> T) async throws -> T {
        try await leased(writes: false, rerouting: rerouting, elsewhere: { try await $0.reading(body) }) { try await body(facade) }
    }

    /// Runs an outbox operation (`PushStateStore.outbox`), holding a lease as the delivery worker's
    /// writes do (a closed tenant refuses: its worker ends with it).
    /// - Parameters:
    ///   - writes: whether the operation changes the outbox (for the outbox's empty look).
    ///   - body: the operation.
    /// - Returns: its result.
    func outbox<T: Sendable>(writes: Bool, _ body: (any PushOutbox) async throws -> T) async throws -> T {
        let outbox = facade.store.outbox
        return try await leased(writes: writes, rerouting: false, elsewhere: { _ in throw ServiceError.stopping }) { try await body(outbox) }
    }

    /// Runs `operation` holding a lease on this tenant; on a closed tenant, runs `elsewhere` on the
    /// app's tenant opened anew (`rerouting`) or refuses (``ServiceError/stopping``).
    /// - Parameters:
    ///   - writes: whether the operation counts as a write (for the outbox's empty look).
    ///   - rerouting: whether a closed tenant hands the operation on.
    ///   - elsewhere: the same operation on another tenant.
    ///   - operation: the operation on this one.
    private func leased<T>(
        writes: Bool, rerouting: Bool, elsewhere: (AppTenant) async throws -> T, _ operation: () async throws -> T
    ) async throws -> T {
        guard lease() else {
            guard rerouting else { throw ServiceError.stopping }
            return try await elsewhere(try await reopen())
        }
        defer { endLease(wrote: writes) }
        return try await operation()
    }

    // MARK: The registry's view

    /// Notes a request for the app.
    func used() { use.withLock { $0.lastUsedAt = .now } }

    /// When a request last asked for the app (`nil`: none has).
    var lastUsedAt: ContinuousClock.Instant? { use.withLock { $0.lastUsedAt } }

    /// Before the delivery worker looks at the outbox: the writes so far.
    func writesBeforeOutboxLook() -> UInt64 { use.withLock { $0.writes } }

    /// After the task runner's look at its tasks: whether any is pending.
    func tasksLooked(pending: Bool) {
        use.withLock { $0.hasPendingTasks = pending }
    }

    /// After the delivery worker's look: whether the outbox held no delivery, with the writes counted
    /// before it began (a write after that may have queued one the look did not see).
    func outboxLooked(empty: Bool, writesBefore: UInt64) {
        use.withLock { $0.emptyOutboxAt = empty ? writesBefore : nil }
    }

    /// Marks the tenant closed when nobody uses it, nobody has asked for it since `cutoff`, and (with
    /// delivery) its outbox was seen empty since its last write, and no push task is pending; operations that come later go to the
    /// app's tenant opened anew.
    /// - Parameters:
    ///   - delivering: whether the service delivers (an outbox with deliveries keeps its app open).
    ///   - cutoff: a tenant asked for (or opened) after this is kept.
    /// - Returns: whether it is now retired.
    func retireIfIdle(delivering: Bool, unusedSince cutoff: ContinuousClock.Instant) -> Bool {
        use.withLock { use in
            guard !use.retired, use.inFlight == 0, use.lastUsedAt.map({ $0 <= cutoff }) ?? true else { return false }
            if delivering && use.emptyOutboxAt != use.writes { return false }
            if use.hasPendingTasks { return false }
            use.retired = true
            return true
        }
    }

    private func lease() -> Bool {
        use.withLock { use in
            guard !use.retired else { return false }
            use.inFlight += 1
            return true
        }
    }

    private func endLease(wrote: Bool) {
        use.withLock { use in
            use.inFlight -= 1
            if wrote { use.writes &+= 1 }
        }
    }
}
