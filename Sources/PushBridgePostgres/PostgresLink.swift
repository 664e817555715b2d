import Foundation
import Logging
import PushBridgeStore

/// A connection that comes back by itself: the session in use while it works, and a new one when
/// the server closed it (a restart, `pg_terminate_backend`) or a statement passed its deadline.
///
/// A failed attempt is retried after a backoff (100 ms, doubling, at most 2 s), and until then a
/// use fails at once as `unreachable`: a request gets its 503 without waiting for a connection
/// that cannot be made, and writes resume within about 2 s of the server coming back. Every
/// session it makes gets the location's `search_path` and, on its first success, whatever
/// `prepare` does once (migrations). Used under its owner's lock.
final class PostgresLink: @unchecked Sendable {
    let location: PostgresLocation
    let logger: Logger
    /// Runs once, on the first session that connects (the schema's migrations).
    private var prepare: ((PostgresSession) throws -> Void)?
    private var session: PostgresSession?
    private var retryAt = ContinuousClock.now
    private var backoff: Duration = .zero
    static let firstBackoff: Duration = .milliseconds(100)
    static let maximumBackoff: Duration = .seconds(2)

    /// - Parameters:
    ///   - location: the server, database and schema.
    ///   - logger: postgres-nio's logger.
    ///   - prepare: run once on the first session that connects, before it is used.
    init(location: PostgresLocation, logger: Logger, prepare: ((PostgresSession) throws -> Void)? = nil) {
        self.location = location
        self.logger = logger
        self.prepare = prepare
    }

    /// Runs `body` on the working session, connecting first when there is none; a session that
    /// broke during `body` is dropped, so the next use connects anew.
    func use<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        let session = try current()
        do {
            return try body(session)
        } catch {
            if session.isBroken || (error as? StoreError)?.code == .unreachable {
                self.session = nil
                session.closeNow()
            }
            throw error
        }
    }

    /// Whether the last use left a working session (no connection is attempted).
    var isConnected: Bool { session.map { !$0.isBroken } ?? false }

    private func current() throws -> PostgresSession {
        if let session, !session.isBroken { return session }
        session = nil
        let now = ContinuousClock.now
        guard now >= retryAt else {
            throw StoreError(.unreachable, "PostgreSQL at \(location.description) is unreachable (retrying)", context: location.description)
        }
        do {
            let fresh = try PostgresSession(configuration: location.configuration, target: location.description, logger: logger)
            if let schema = location.schema, prepare == nil { try fresh.execute("SET search_path TO \(schema)") }
            if let prepare {
                try prepare(fresh)
                self.prepare = nil
            }
            session = fresh
            backoff = .zero
            return fresh
        } catch {
            backoff = backoff == .zero ? Self.firstBackoff : min(backoff * 2, Self.maximumBackoff)
            retryAt = ContinuousClock.now + backoff
            throw error
        }
    }
}
