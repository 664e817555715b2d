import Foundation
import Logging
import PostgresNIO
import PushBridgeCore
import PushBridgeStore
import Synchronization

/// Push state in PostgreSQL, shared by several service nodes.
///
/// Writers take one transaction-scoped advisory lock per database before they change anything, so
/// writes are serialised across nodes as SQLite serialises them across processes: a badge counter
/// read and rewritten by one send cannot lose another node's update, and a group commit never fails
/// on a conflict. Reads run in a repeatable-read snapshot and take no lock. Delivery claims use
/// `FOR UPDATE SKIP LOCKED`, so two nodes never claim one delivery.
public final class PostgresStateStore: PushStateStore, @unchecked Sendable {
    /// Where it is (no password).
    public let location: PostgresLocation
    /// The node's connections (shared with its other apps' stores when the service opened it).
    let pool: PostgresPool
    /// The schema of its tables; also the scope of its advisory lock, so apps sharing a database do
    /// not wait for each other.
    let schema: String
    /// One writer of this store at a time on this node (the advisory lock orders the nodes).
    let lock = NSLock()
    /// The app's configuration between writes, checked by its version.
    let keptApp = AppConfigurationCache()
    /// Certificate rows by id as this node has read or interned them (rows never change).
    let knownCertificates = Mutex<[Int64: Certificate]>([:])
    /// Sent-message records older than this (epoch ms) were last pruned; writes only (under ``lock``).
    var sentMessagesPrunedBefore: Int64 = .min
    /// Groups' receivers and the badge log between this node's writes (``KeptData``).
    let kept: KeptData
    /// When a group of sends is decided from what the node keeps and committed in one round trip.
    let oneRoundTrip = OneRoundTripPolicy()
    /// Past this many entries the badge log is folded into the counters (as SQLite's store's
    /// ``SQLiteStateStore/Options/badgeLogLimit``).
    let badgeLogLimit: Int
    /// Past this many rows it is folded too: every commit's counters are a row of their own, and one
    /// fold deleting hundreds of thousands of rows would hold the app's lock long.
    let badgeLogRowLimit: Int

    /// Connects (a pool of its own, at most four connections) and brings the schema up to date.
    /// - Parameters:
    ///   - location: the server and database.
    ///   - logger: postgres-nio's logger (quiet by default).
    /// - Throws: `StoreError` (`unreachable` when the server cannot be reached; `newer-schema`).
    public convenience init(location: PostgresLocation, logger: Logger = Logger(label: "pushbridge.postgres", factory: { _ in SwiftLogNoOpLogHandler() })) throws {
        try self.init(location: location, pool: PostgresPool(location: location, limit: 4, logger: logger))
    }

    /// Opens the store on a node's pool and brings its schema up to date.
    /// - Parameters:
    ///   - location: the server, database and schema.
    ///   - pool: the node's connections to that server and database.
    ///   - keptReceivers: group members' rows kept between sends (SQLite's store's default).
    ///   - badgeLogLimit: badge counters logged before the log is folded.
    ///   - badgeLogRowLimit: badge log rows before the log is folded.
    init(location: PostgresLocation, pool: PostgresPool, keptReceivers: Int = 400_000, badgeLogLimit: Int = 1_000_000, badgeLogRowLimit: Int = 100_000) throws {
        self.location = location
        self.pool = pool
        kept = KeptData(limit: keptReceivers)
        self.badgeLogLimit = badgeLogLimit
        self.badgeLogRowLimit = badgeLogRowLimit
        schema = location.schema ?? "public"
        try pool.use(schema: schema) { try Self.prepare($0, location, migrations: Self.migrations) }  // a bad database fails here
    }

    /// Whether the badge log, with `adding` more entries in one row, is past either limit (folded under the lock).
    func logIsFull(_ overlay: BadgeOverlay, adding: Int) -> Bool {
        overlay.entries + adding > badgeLogLimit || (overlay.firstID > 0 && overlay.lastID - overlay.firstID + 1 >= badgeLogRowLimit)
    }

    /// The first key of the advisory lock every write takes ("PBWR"); the second is the schema's hash.
    static let writeLock: Int32 = 1_346_524_994
    /// The first key of the lock that creates a schema ("PBSC").
    static let schemaLock: Int32 = 1_346_524_995

    public func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try lock.withLock {
            try pool.use(schema: schema) { session in
                try writing(session) { try body(Transaction(session, writable: true, context: $0)) }
            }
        }
    }

    /// One write transaction under the write lock: what the node keeps is checked against the data
    /// version when the lock is held, and is true at the version the commit leaves (dropped when
    /// anything fails). Under ``lock``.
    private func writing<T>(_ session: PostgresSession, readingRecordsOf ids: [String] = [], _ body: (TransactionContext) throws -> T) throws -> T {
        var context: TransactionContext?
        do {
            let result = try Self.transaction(session) {
                let locked = try lockForWriting(session, readingRecordsOf: ids)
                context = locked
                return try body(locked)
            }
            kept.committed(at: context?.committedDataVersion)
            return result
        } catch {
            kept.forget()
            throw error
        }
    }

    /// Reads run on a connection of their own, so they never wait for a write: a snapshot
    /// (repeatable read, read only).
    public func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try pool.use(schema: schema) { session in
            try Self.transaction(session, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                try body(Transaction(session, writable: false, context: TransactionContext(store: self)))
            }
        }
    }

    /// Group commit: one transaction around all writers, each in a savepoint.
    public func writeGroup(_ writers: [(any PushStateStore) -> Void]) throws {
        try writeGroup(writers, readingRecordsOf: [])
    }

    /// Group commit whose write lock reads the records of the messages its writers send, in the
    /// lock's round trip.
    public func writeGroup(_ writers: [(any PushStateStore) -> Void], readingRecordsOf ids: [String]) throws {
        let ids = Array(Set(ids.filter { !$0.isEmpty }))
        try lock.withLock {
            try pool.use(schema: schema) { session in
                try writing(session, readingRecordsOf: ids) { context in
                    context.restart = { [unowned self, unowned context] in  // the context holds it
                        kept.forget()  // what the undone writes changed of it
                        do {
                            try session.execute("ROLLBACK")
                            try session.execute("BEGIN")
                            context.renew(from: try lockForWriting(session, readingRecordsOf: ids))
                        } catch {
                            session.closeNow()  // no later writer's statement may run outside the transaction and the lock
                            throw error
                        }
                    }
                    let savepoints = PostgresSavepointStore(session, context: context)
                    for writer in writers { writer(savepoints) }
                }
            }
        }
    }

    /// Takes the schema's write lock (``writeLock``) and then reads the app configuration's version,
    /// the data version and where the badge log starts and ends — and the sent-message records of
    /// `ids`, when given — in one round trip (the schema's function `pushbridge_write_lock`); drops
    /// what the node keeps that another node changed.
    private func lockForWriting(_ session: PostgresSession, readingRecordsOf ids: [String] = []) throws -> TransactionContext {
        let found = try session.query(
            ids.isEmpty ? "SELECT * FROM pushbridge_write_lock(\(schema))" : "SELECT * FROM pushbridge_write_lock(\(schema), \(ids)::text[])"
        ).map(Cells.init)
        guard let row = found.first else {
            throw StoreError(.postgres, "the write lock returned no row", context: "pushbridge_write_lock")
        }
        let data = try row.int64(1)
        kept.check(version: data, firstLog: try row.optionalInt64(2), lastLog: try row.optionalInt64(3))
        let context = TransactionContext(store: self, appVersion: try row.int64(0), dataVersion: data, holdsWriteLock: true)
        // Another node counted since: the kept rows take its counters before any is used.
        if kept.badges?.isStale == true { _ = try Transaction(session, writable: false, context: context).badgeOverlay() }
        if !ids.isEmpty {
            var records: [String: StoredSentMessage?] = Dictionary(uniqueKeysWithValues: ids.map { ($0, nil) })
            for record in found.dropFirst() { records[try record.string(4)] = StoredSentMessage(sentAt: try record.int64(5), decisions: try record.bytes(6)) }
            context.records = records
        }
        return context
    }

    /// Runs `body` between `begin` and `COMMIT`; rolls back when either throws.
    static func transaction<T>(_ session: PostgresSession, begin: String = "BEGIN", _ body: () throws -> T) throws -> T {
        try session.execute(begin)
        do {
            let result = try body()
            try session.execute("COMMIT")
            return result
        } catch {
            // A connection left inside a transaction is never given back.
            do { try session.execute("ROLLBACK") } catch { session.closeNow() }
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
        try pool.use(schema: schema) { session in
            try session.query("SELECT identifier FROM pushbridge_migrations ORDER BY position").map { try $0.decode(String.self) }
        }
    }
}

/// The store one writer of a group commit sees: its ``write(_:)`` is a savepoint inside the group's
/// transaction, rolled back alone when its body throws. A write made before anything changed in the
/// transaction takes no savepoint: when it throws, the transaction is rolled back and begun again
/// under the lock, which undoes the same.
final class PostgresSavepointStore: PushStateStore, @unchecked Sendable {
    let session: PostgresSession
    let context: PostgresStateStore.TransactionContext

    init(_ session: PostgresSession, context: PostgresStateStore.TransactionContext) {
        self.session = session
        self.context = context
    }

    func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try savepoint("pushbridge_write") { try body(PostgresStateStore.Transaction(session, writable: true, context: context)) }
    }

    func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try body(PostgresStateStore.Transaction(session, writable: false, context: context))
    }

    func atomically<T>(_ body: (any PushStateStore) throws -> T) throws -> T {
        try savepoint("pushbridge_request") { try body(self) }
    }

    private func savepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        if !context.hasChanges, let restart = context.restart {
            // Nothing changed since the lock: undoing the body is rolling the transaction back and
            // taking the lock again, so the savepoint and its release (two round trips a group
            // commit, most of which succeed) are spared.
            do {
                return try body()
            } catch {
                try restart()
                throw error
            }
        }
        try session.execute("SAVEPOINT " + name)
        do {
            let result = try body()
            try session.execute("RELEASE " + name)
            return result
        } catch {
            try? session.execute("ROLLBACK TO " + name)
            try? session.execute("RELEASE " + name)
            context.savepointRolledBack()
            throw error
        }
    }
}
