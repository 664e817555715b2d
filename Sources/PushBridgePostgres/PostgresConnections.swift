import Foundation
import Logging
import NIOCore
import PostgresNIO
import PushBridgeStore
import Synchronization

/// The connections one node keeps to one PostgreSQL database, shared by every app's store and the
/// directory on it: postgres-nio's `PostgresClient`, at most ``limit`` connections however many apps
/// are open, each use on a connection set to its app's schema.
///
/// - The client runs in the service's `ServiceGroup` (`run()`, through `ServiceStorage`); connections a
///   tool or test opened for one store or directory run on a task of their own (on a dispatch
///   queue), ended with them.
/// - A use waits for a connection at most the location's deadline, then fails: `busy` (503 with
///   `Retry-After`) while connections are open, `unreachable` when none is (the server is down; the
///   client keeps reconnecting with its backoff). After an unreachable wait, uses fail at once for a
///   second, so requests get their 503 without each waiting the deadline.
/// - A statement has the deadline too: past it the connection is closed, never used again, and the
///   client connects another in its place (`PostgresLease`).
///
/// No thread waits: leases and statements are awaited.
final class PostgresConnections: Sendable {
    /// The server and database (the schema is each use's).
    let location: PostgresLocation
    /// The most connections open at once.
    let limit: Int
    /// Every statement its connections sent.
    let statements = StatementCounter()
    /// Uses that waited for a connection past the deadline.
    let exhausted = StatementCounter()
    /// The apps' one-round-trip commits, sent together.
    let commits: PostgresCommitCombiner
    private let client: PostgresClient
    /// Each open connection's `search_path` (by the client's connection id; empty: unknown); also how
    /// many are open.
    private let searchPaths = Mutex<[Int: String]>([:])
    /// Uses waiting for a connection now.
    private let waiting = Atomic<Int>(0)
    /// Until when a use fails at once as unreachable (after a wait that found no connection open).
    private let unreachableUntil = Mutex<ContinuousClock.Instant?>(nil)
    /// The schema every connection's `search_path` names from its start, if any.
    private let bornIn: String?
    /// The client's run, when these connections run on their own (a tool's or test's store).
    private let ownRun: Mutex<Task<Void, Never>?>

    /// - Parameters:
    ///   - location: the server and database; its deadline bounds a connection attempt, a statement and a wait for a connection.
    ///   - limit: the most connections open at once (at least 1).
    ///   - logger: postgres-nio's logger.
    ///   - runsItself: whether the client runs on a task of its own (a store or directory opened
    ///     alone); `false`: the caller runs `run()` (the service's `ServiceGroup`).
    ///   - commits: how the apps' one-round-trip commits are sent together.
    init(location: PostgresLocation, limit: Int, logger: Logger, runsItself: Bool, commits: PostgresCommitCombiner = PostgresCommitCombiner()) {
        self.commits = commits
        var location = location
        // Connections of one store's own are born in its schema (a startup parameter): no statement sets it.
        bornIn = runsItself ? location.schema : nil
        location.schema = nil
        self.location = location
        self.limit = max(1, limit)
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password, database: location.database, tls: .disable)
        configuration.options.maximumConnections = self.limit
        configuration.options.connectTimeout = .nanoseconds(location.deadline.nanoseconds)
        configuration.options.keepAliveBehavior = nil
        if let bornIn { configuration.options.additionalStartupParameters = [("search_path", bornIn)] }
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        ownRun = Mutex(nil)
        if runsItself {
            // On a queue of its own, not the cooperative pool: a tool's or test's synchronous caller
            // blocking cooperative threads cannot starve the connections its call waits for.
            let client = client
            let executor = QueueTaskExecutor(DispatchQueue(label: "pushbridge-postgres-client"))
            ownRun.withLock { $0 = Task(executorPreference: executor) { await client.run() } }
        }
    }

    deinit { ownRun.withLock { $0?.cancel() } }

    /// Runs the client until cancelled or the service shuts down gracefully (after the services
    /// started later have stopped: the stores are closed first).
    func run() async { await client.run() }

    /// Runs `body` on a connection whose `search_path` is `schema`, then gives the connection back.
    /// The wait for a connection and `body`'s statements are awaited: no thread waits.
    /// - Parameters:
    ///   - schema: the schema unqualified names mean (checked by `PostgresLocation.checkSchema`);
    ///     `nil`: any (`body` qualifies its names).
    ///   - body: the statements.
    /// - Throws: `StoreError` — `unreachable` (no connection can be made now), `busy` (every connection
    ///   stayed in use past the deadline) — or what `body` throws.
    func use<T>(schema: String?, _ body: (PostgresLease) async throws -> T) async throws -> T {
        if let until = unreachableUntil.withLock({ $0 }), ContinuousClock.now < until { throw unreachable() }
        let deadline = Duration.nanoseconds(location.deadline.nanoseconds)
        let claim = LeaseClaim()
        waiting.add(1, ordering: .relaxed)
        defer { if claim.stopWaiting() { waiting.subtract(1, ordering: .relaxed) } }
        return try await withoutActuallyEscaping(body) { body in
            let work = UncheckedBox(body)
            return try await withThrowingTaskGroup(of: UncheckedBox<T>?.self) { group in
                group.addTask {
                    try await self.client.withConnection { connection in
                        guard claim.lease() else { throw CancellationError() }  // the wait already gave up
                        if claim.stopWaiting() { self.waiting.subtract(1, ordering: .relaxed) }
                        self.unreachableUntil.withLock { $0 = nil }
                        let lease = try await self.lease(connection, schema: schema)
                        return UncheckedBox(try await work.value(lease))
                    }
                }
                group.addTask {
                    try? await Task.sleep(for: deadline)
                    return nil
                }
                while let step = try await group.next() {
                    if let result = step {
                        group.cancelAll()
                        return result.value
                    }
                    if claim.giveUp() {
                        group.cancelAll()
                        throw waitedPastDeadline()
                    }
                }
                throw CancellationError()
            }
        }
    }

    /// Connections open now (leased at least once and not closed since).
    var openCount: Int { searchPaths.withLock { $0.count } }

    /// Uses waiting for a connection now.
    var waitingCount: Int { waiting.load(ordering: .relaxed) }

    /// A leased connection in `schema`: its `search_path` is set when it was another's.
    private func lease(_ connection: PostgresConnection, schema: String?) async throws -> PostgresLease {
        let id = connection.id
        let known: String = searchPaths.withLock { paths in
            if let path = paths[id] { return path }
            paths[id] = bornIn ?? ""
            connection.closeFuture.whenComplete { [weak self] _ in _ = self?.searchPaths.withLock { $0.removeValue(forKey: id) } }
            return bornIn ?? ""
        }
        let lease = PostgresLease(connection: connection, target: location.description, deadline: location.deadline, counter: statements) { [weak self] path in
            self?.searchPaths.withLock { if $0[id] != nil { $0[id] = path ?? "" } }
        }
        if let schema, known != schema {
            lease.schema = nil  // unknown until the SET succeeds
            try await lease.execute("SET search_path TO \(schema)")
            lease.schema = schema
        }
        return lease
    }

    /// A wait for a connection passed the deadline: busy while connections are open, else unreachable.
    private func waitedPastDeadline() -> StoreError {
        let seconds = Double(location.deadline.nanoseconds) / 1e9
        if openCount == 0 {
            unreachableUntil.withLock { $0 = ContinuousClock.now + min(.seconds(1), .nanoseconds(location.deadline.nanoseconds)) }
            return StoreError(.unreachable, "cannot connect to PostgreSQL at \(location.description) within \(seconds) s", context: location.description)
        }
        exhausted.add()
        return StoreError(.busy, "all \(limit) connections to PostgreSQL at \(location.description) stayed in use for \(seconds) s", context: location.description)
    }

    private func unreachable() -> StoreError {
        StoreError(.unreachable, "PostgreSQL at \(location.description) is unreachable (retrying)", context: location.description)
    }
}

/// Who ends a use's wait for a connection: the lease (it runs the body) or the deadline (it fails),
/// never both.
private final class LeaseClaim: Sendable {
    private enum State { case waiting, leased, gaveUp }
    private let state = Mutex(State.waiting)
    private let counted = Atomic<Bool>(true)

    /// The lease came: `false` when the deadline already gave up.
    func lease() -> Bool {
        state.withLock { state in
            guard state == .waiting else { return false }
            state = .leased
            return true
        }
    }

    /// The deadline passed: `true` when no lease came first.
    func giveUp() -> Bool {
        state.withLock { state in
            guard state == .waiting else { return false }
            state = .gaveUp
            return true
        }
    }

    /// `true` once: the use stops counting as waiting.
    func stopWaiting() -> Bool { counted.exchange(false, ordering: .relaxed) }
}

/// A value carried into the lease's child task and out: the use awaits that task before it returns,
/// so the value is never used by two tasks at once.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A count shared by threads: statements sent to the server (each a round trip: what the round-trip
/// budget of a send is measured by, `PostgresRoundTripTests`), waits that passed their deadline.
final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
