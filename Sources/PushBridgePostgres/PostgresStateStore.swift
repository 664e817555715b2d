import Foundation
import Logging
import PostgresNIO
import PushBridgeStore

/// Push state in PostgreSQL, shared by several service nodes (issue 19, work in progress).
///
/// Writers take one transaction-scoped advisory lock per database before they change anything, so
/// writes are serialised across nodes as SQLite serialises them across processes: a badge counter
/// read and rewritten by one send cannot lose another node's update, and a group commit never fails
/// on a conflict. Reads run in a repeatable-read snapshot and take no lock. Delivery claims use
/// `FOR UPDATE SKIP LOCKED`, so two nodes never claim one delivery.
public final class PostgresStateStore: PushStateStore, @unchecked Sendable {
    /// Where it is (no password).
    public let location: PostgresLocation
    /// The writer's connection, reconnected by itself after the server closed it or a deadline passed.
    let writer: PostgresLink
    let lock = NSLock()
    let logger: Logger
    private let readerLock = NSLock()
    private var idleReaders: [PostgresSession] = []
    /// The schema: advisory locks are per schema, so apps sharing a database do not wait for each other.
    let lockScope: String

    /// Connects and brings the schema up to date.
    /// - Parameters:
    ///   - location: the server and database.
    ///   - logger: postgres-nio's logger (quiet by default).
    /// - Throws: `StoreError` (`unreachable` when the server cannot be reached; `newer-schema`).
    public init(location: PostgresLocation, logger: Logger = Logger(label: "pushbridge.postgres", factory: { _ in SwiftLogNoOpLogHandler() })) throws {
        self.location = location
        self.logger = logger
        writer = PostgresLink(location: location, logger: logger) { try Self.prepare($0, location, migrations: Self.migrations) }
        lockScope = location.schema ?? "public"
        try lock.withLock { try writer.use { _ in } }  // connects and migrates now: a bad database fails here
    }

    /// The first key of the advisory lock every write takes ("PBWR"); the second is the schema's hash.
    static let writeLock: Int32 = 1_346_524_994
    /// The first key of the lock that creates a schema ("PBSC").
    static let schemaLock: Int32 = 1_346_524_995

    public func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try lock.withLock {
            try writer.use { session in
                try Self.transaction(session) {
                    try session.query("SELECT pg_advisory_xact_lock(\(Self.writeLock), hashtext(\(lockScope)))")
                    return try body(Transaction(session, writable: true))
                }
            }
        }
    }

    /// Reads run on connections of their own, so they never wait for a write: a snapshot
    /// (repeatable read, read only) on an idle reader, or on a new one.
    public func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        let reader = try takeReader()
        do {
            let result = try Self.transaction(reader, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                try body(Transaction(reader, writable: false))
            }
            readerLock.withLock { idleReaders.append(reader) }
            return result
        } catch let error as StoreError where error.code == .unreachable {
            throw error  // a broken connection is not kept
        } catch {
            readerLock.withLock { idleReaders.append(reader) }
            throw error
        }
    }

    /// An idle reader connection, or a new one (in the store's schema, already migrated).
    private func takeReader() throws -> PostgresSession {
        while let reader = readerLock.withLock({ idleReaders.popLast() }) {
            if !reader.isBroken { return reader }  // one the server closed is dropped
        }
        let reader = try PostgresSession(configuration: location.configuration, target: location.description, logger: logger)
        if let schema = location.schema { try reader.execute("SET search_path TO \(schema)") }
        return reader
    }

    /// Group commit: one transaction around all writers, each in a savepoint.
    public func writeGroup(_ writers: [(any PushStateStore) -> Void]) throws {
        try lock.withLock {
            try writer.use { session in
                try Self.transaction(session) {
                    try session.query("SELECT pg_advisory_xact_lock(\(Self.writeLock), hashtext(\(lockScope)))")
                    let savepoints = PostgresSavepointStore(session)
                    for writer in writers { writer(savepoints) }
                }
            }
        }
    }

    /// Runs `body` between `begin` and `COMMIT`; rolls back when either throws.
    static func transaction<T>(_ session: PostgresSession, begin: String = "BEGIN", _ body: () throws -> T) throws -> T {
        try session.execute(begin)
        do {
            let result = try body()
            try session.execute("COMMIT")
            return result
        } catch {
            try? session.execute("ROLLBACK")
            throw error
        }
    }

    /// Creates the location's schema when missing, sets the session's `search_path` to it, and
    /// applies the migrations the schema lacks.
    static func prepare(_ session: PostgresSession, _ location: PostgresLocation, migrations: [Migration]) throws {
        let schema = location.schema ?? "public"
        if location.schema != nil {
            // Checked to be a plain identifier (PostgresLocation.checkSchema), so it can be spelled in SQL.
            try transaction(session) {
                try session.query("SELECT pg_advisory_xact_lock(\(schemaLock), hashtext(\(schema)))")
                try session.execute("CREATE SCHEMA IF NOT EXISTS \(schema)")
            }
            try session.execute("SET search_path TO \(schema)")
        }
        try migrate(session, scope: schema, migrations: migrations)
    }

    /// The identifiers of the migrations the database has, in the order applied.
    public func appliedMigrations() throws -> [String] {
        try lock.withLock {
            try writer.use { session in
                try session.query("SELECT identifier FROM pushbridge_migrations ORDER BY position").map { try $0.decode(String.self) }
            }
        }
    }
}

/// The store one writer of a group commit sees: its ``write(_:)`` is a savepoint inside the group's
/// transaction, rolled back alone when its body throws.
final class PostgresSavepointStore: PushStateStore, @unchecked Sendable {
    let session: PostgresSession

    init(_ session: PostgresSession) { self.session = session }

    func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try savepoint("pushbridge_write") { try body(PostgresStateStore.Transaction(session, writable: true)) }
    }

    func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try body(PostgresStateStore.Transaction(session, writable: false))
    }

    func atomically<T>(_ body: (any PushStateStore) throws -> T) throws -> T {
        try savepoint("pushbridge_request") { try body(self) }
    }

    private func savepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        try session.execute("SAVEPOINT " + name)
        do {
            let result = try body()
            try session.execute("RELEASE " + name)
            return result
        } catch {
            try? session.execute("ROLLBACK TO " + name)
            try? session.execute("RELEASE " + name)
            throw error
        }
    }
}
