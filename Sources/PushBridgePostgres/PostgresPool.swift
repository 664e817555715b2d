import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import PushBridgeStore

/// The connections one node keeps to one PostgreSQL database, shared by every app's store and the
/// directory on it: at most ``limit`` however many apps are open, each transaction on a connection
/// set to its app's schema.
///
/// - A use takes an idle connection (one already in the wanted schema first; another is moved with
///   `SET search_path`), or connects a new one below the limit, or waits for one to be given back —
///   at most the location's deadline, then fails as `busy` (503 with `Retry-After`).
/// - A connection the server closed (a restart, `pg_terminate_backend`) or whose statement passed
///   its deadline is dropped, never used again, and its place is free for a new one.
/// - A failed connection attempt is retried after a backoff (100 ms, doubling, at most 2 s); until
///   then a use that needs a new connection fails at once as `unreachable`, so a request gets its
///   503 without waiting for a connection that cannot be made, and writes resume within about 2 s
///   of the server coming back.
///
/// Waits are bounded futures on NIO's event loops, awaited: no thread waits for a connection.
final class PostgresPool: @unchecked Sendable {
    /// The server and database (the schema is each use's).
    let location: PostgresLocation
    /// The most connections open at once.
    let limit: Int
    let logger: Logger
    /// Every statement its connections sent.
    let statements = StatementCounter()
    /// Uses that waited for a connection past the deadline.
    let exhausted = StatementCounter()
    /// The apps' one-round-trip commits, sent together.
    let commits = PostgresCommitCombiner()
    private let lock = NSLock()
    private var idle: [PostgresSession] = []
    /// Connections that exist or are being made (idle, in use, connecting).
    private var open = 0
    /// Uses waiting for a connection, first come first served: handed an idle connection, or `nil`
    /// (a place to connect a new one).
    private var waiters: [(id: Int, promise: EventLoopPromise<PostgresSession?>)] = []
    private var nextWaiter = 0
    private var retryAt = ContinuousClock.now
    private var backoff: Duration = .zero
    static let firstBackoff: Duration = .milliseconds(100)
    static let maximumBackoff: Duration = .seconds(2)

    /// - Parameters:
    ///   - location: the server and database; its deadline bounds a connection attempt, a statement and a wait for a connection.
    ///   - limit: the most connections open at once (at least 1).
    ///   - logger: postgres-nio's logger.
    init(location: PostgresLocation, limit: Int, logger: Logger) {
        var location = location
        location.schema = nil
        self.location = location
        self.limit = max(1, limit)
        self.logger = logger
    }

    deinit {
        for session in idle { session.closeNow() }
    }

    /// Runs `body` on a connection whose `search_path` is `schema`; gives the connection back after,
    /// or drops it when it broke. The wait for a connection, the connecting and `body`'s statements
    /// are awaited: no thread waits.
    /// - Parameters:
    ///   - schema: the schema unqualified names mean (checked by `PostgresLocation.checkSchema`);
    ///     `nil`: any (`body` qualifies its names).
    ///   - body: the statements.
    /// - Throws: `StoreError` — `unreachable` (no connection can be made now), `busy` (every connection
    ///   stayed in use past the deadline) — or what `body` throws.
    func use<T>(schema: String?, _ body: (PostgresSession) async throws -> T) async throws -> T {
        let session = try await checkOut(preferring: schema)
        do {
            if let schema, session.schema != schema {
                session.schema = nil  // unknown until the SET succeeds
                try await session.execute("SET search_path TO \(schema)")
                session.schema = schema
            }
            let result = try await body(session)
            checkIn(session)
            return result
        } catch {
            giveBack(session, after: error)
            throw error
        }
    }

    /// A use failed: its connection is dropped when it broke (or cannot reach the server), else given back.
    private func giveBack(_ session: PostgresSession, after error: any Error) {
        if session.isBroken || (error as? StoreError)?.code == .unreachable { drop(session) } else { checkIn(session) }
    }

    /// Connections open now (idle, in use or being made).
    var openCount: Int { lock.withLock { open } }

    /// Uses waiting for a connection now.
    var waitingCount: Int { lock.withLock { waiters.count } }

    private enum Step {
        case use(PostgresSession)
        case connect
        case queued(Int, EventLoopPromise<PostgresSession?>)
    }

    /// An idle connection (one in `schema` first), a new one, or one given back while this waited in line.
    private func checkOut(preferring schema: String?) async throws -> PostgresSession {
        switch try step(preferring: schema) {
        case .use(let session): return session
        case .connect: return try await connect()
        case .queued(let id, let promise):
            let timer = expire(id, promise)
            defer { timer.cancel() }
            let handed: PostgresSession?
            do {
                handed = try await promise.futureResult.get()
            } catch {
                throw exhaustedError()
            }
            if let handed { return handed }
            try connectAfterRelease()
            return try await connect()
        }
    }

    /// What a check-out does: take an idle connection, connect one, or wait in line.
    private func step(preferring schema: String?) throws -> Step {
        try lock.withLock {
            // One already in the schema is taken first.
            if let schema, let index = idle.lastIndex(where: { $0.schema == schema }) { idle.append(idle.remove(at: index)) }
            while let session = idle.popLast() {
                if !session.isBroken { return .use(session) }
                open -= 1
                session.closeNow()
            }
            if open < limit {
                guard ContinuousClock.now >= retryAt else {
                    throw StoreError(.unreachable, "PostgreSQL at \(location.description) is unreachable (retrying)", context: location.description)
                }
                open += 1
                return .connect
            }
            nextWaiter += 1
            let promise = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: PostgresSession?.self)
            waiters.append((nextWaiter, promise))
            return .queued(nextWaiter, promise)
        }
    }

    /// Fails waiter `id` at the location's deadline, when no connection was handed to it by then.
    private func expire(_ id: Int, _ promise: EventLoopPromise<PostgresSession?>) -> Scheduled<Void> {
        let deadline = location.deadline
        return promise.futureResult.eventLoop.scheduleTask(in: deadline) { [self] in
            // Still waiting: leave the queue. (A waiter already handed a connection is not failed.)
            let waiting = lock.withLock {
                guard let index = waiters.firstIndex(where: { $0.id == id }) else { return false }
                waiters.remove(at: index)
                return true
            }
            if waiting { promise.fail(PostgresSession.DeadlinePassed(seconds: Double(deadline.nanoseconds) / 1e9)) }
        }
    }

    /// A wait for a connection passed the deadline.
    private func exhaustedError() -> StoreError {
        exhausted.add()
        let seconds = Double(location.deadline.nanoseconds) / 1e9
        return StoreError(.busy, "all \(limit) connections to PostgreSQL at \(location.description) stayed in use for \(seconds) s", context: location.description)
    }

    /// A waiter handed a free place (a dropped connection's) connects in it, unless the server failed just now.
    private func connectAfterRelease() throws {
        if lock.withLock({ ContinuousClock.now < retryAt }) {
            release()
            throw StoreError(.unreachable, "PostgreSQL at \(location.description) is unreachable (retrying)", context: location.description)
        }
    }

    /// Connects one new connection in a place already counted in ``open``.
    private func connect() async throws -> PostgresSession {
        do {
            return connected(try await PostgresSession.connect(configuration: location.configuration, target: location.description, logger: logger))
        } catch {
            throw failedToConnect(error)
        }
    }

    private func connected(_ session: PostgresSession) -> PostgresSession {
        session.counter = statements
        lock.withLock { backoff = .zero }
        return session
    }

    /// A connection attempt failed: the next waits a backoff, and the place is free again.
    private func failedToConnect(_ error: any Error) -> any Error {
        lock.withLock {
            backoff = backoff == .zero ? Self.firstBackoff : min(backoff * 2, Self.maximumBackoff)
            retryAt = ContinuousClock.now + backoff
        }
        release()
        return error
    }

    private func checkIn(_ session: PostgresSession) {
        if session.isBroken { return drop(session) }
        let waiter: EventLoopPromise<PostgresSession?>? = lock.withLock {
            if waiters.isEmpty {
                idle.append(session)
                return nil
            }
            return waiters.removeFirst().promise
        }
        waiter?.succeed(session)
    }

    private func drop(_ session: PostgresSession) {
        session.closeNow()
        release()
    }

    /// A place is free: the first waiter may connect in it.
    private func release() {
        let waiter: EventLoopPromise<PostgresSession?>? = lock.withLock {
            if waiters.isEmpty {
                open -= 1
                return nil
            }
            return waiters.removeFirst().promise
        }
        waiter?.succeed(nil)
    }
}
