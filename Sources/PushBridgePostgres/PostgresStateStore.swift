import Foundation
import Logging
import PostgresNIO
import PushBridgeCore
import PushBridgeStore
import Synchronization

/// Push state in PostgreSQL, shared by several service nodes.
///
/// The apps of a database share its tables, every row keyed by its app. Writers take one
/// transaction-scoped advisory lock per app before they change anything, so an app's writes are
/// serialised across nodes as SQLite serialises them across processes: a badge counter read and
/// rewritten by one send cannot lose another node's update. Reads run in a repeatable-read
/// snapshot and take no lock. Delivery claims use `FOR UPDATE SKIP LOCKED`, and a push task's
/// deliveries a cursor the app's nodes share (ruling 198), so two nodes never claim one delivery.
///
/// No thread waits for the server: every statement is awaited. A write is
/// ``update(reading:deciding:)``: its keys read (from what the node keeps when it can, else under the
/// lock), its decision made on the snapshot, its changes committed — in one round trip that checks
/// what was read when the node kept it all, else in the locked transaction that read it. Reads are
/// ``snapshot(_:)``; the outbox is ``outbox``.
public final class PostgresStateStore: PushStateStore, @unchecked Sendable {
    /// Where it is (no password).
    public let location: PostgresLocation
    /// The node's connections (shared with its other apps' stores when the service opened it).
    let pool: PostgresConnections
    /// The schema of its tables, shared by the apps of the location.
    let schema: String
    /// The app's id (`""`: the store of a location with no app).
    let appID: String
    /// The app as the node's commit combiner knows it.
    var commitScope: CommitScope { CommitScope(schema: schema, app: app) }
    /// The app's key in the shared tables (`apps.key`), the scope of its advisory lock: apps
    /// sharing a database do not wait for each other.
    private(set) var app: Int32 = 0
    /// One writer of this store at a time on this node, awaited (the advisory lock orders the nodes).
    let gate = WriterGate()
    /// The app's configuration between writes, checked by its version.
    let keptApp = AppConfigurationCache()
    /// Certificate rows by id as this node has read or interned them (rows never change).
    let knownCertificates = Mutex<[Int64: Certificate]>([:])
    /// Sent-message records older than this (epoch ms) were last pruned; writes only (under ``gate``).
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
    /// Counters a fold writes in one statement at most (each statement has the location's deadline).
    let foldedAtOnce: Int

    /// Connects (a pool of its own, at most four connections) and brings the schema up to date.
    /// - Parameters:
    ///   - location: the server and database.
    ///   - logger: postgres-nio's logger (quiet by default).
    /// - Throws: `StoreError` (`unreachable` when the server cannot be reached; `newer-schema`).
    public static func open(location: PostgresLocation, logger: Logger = Logger(label: "pushbridge.postgres", factory: { _ in SwiftLogNoOpLogHandler() })) async throws -> PostgresStateStore {
        try await open(location: location, app: "", pool: PostgresConnections(location: location, limit: 4, logger: logger, runsItself: true))
    }

    /// Opens the store on a node's pool and brings its schema up to date.
    /// - Parameters:
    ///   - location: the server, database and schema of the shared tables.
    ///   - app: the app's id (`""`: none).
    ///   - oldSchema: the schema of the app's tables before apps shared them, moved in when found.
    ///   - pool: the node's connections to that server and database.
    ///   - keptReceivers: group members' rows kept between sends (SQLite's store's default).
    ///   - badgeLogLimit: badge counters logged before the log is folded.
    ///   - badgeLogRowLimit: badge log rows before the log is folded.
    ///   - foldedAtOnce: counters a fold writes in one statement at most.
    static func open(
        location: PostgresLocation, app: String, oldSchema: String? = nil, pool: PostgresConnections, keptReceivers: Int = 400_000,
        badgeLogLimit: Int = 1_000_000, badgeLogRowLimit: Int = 100_000, foldedAtOnce: Int = 50_000
    ) async throws -> PostgresStateStore {
        let store = PostgresStateStore(
            unprepared: location, app: app, pool: pool, keptReceivers: keptReceivers, badgeLogLimit: badgeLogLimit, badgeLogRowLimit: badgeLogRowLimit,
            foldedAtOnce: foldedAtOnce)
        try await store.prepare(oldSchema: oldSchema)  // a bad database fails here
        return store
    }

    private init(
        unprepared location: PostgresLocation, app: String, pool: PostgresConnections, keptReceivers: Int, badgeLogLimit: Int, badgeLogRowLimit: Int,
        foldedAtOnce: Int
    ) {
        self.location = location
        appID = app
        self.pool = pool
        kept = KeptData(limit: keptReceivers)
        self.badgeLogLimit = badgeLogLimit
        self.badgeLogRowLimit = badgeLogRowLimit
        self.foldedAtOnce = foldedAtOnce
        schema = location.schema ?? "public"
    }

    /// Creates the schema when missing, applies the migrations it lacks, finds the app's key (made
    /// when new) and moves the app's old schema in.
    private func prepare(oldSchema: String?) async throws {
        app = try await pool.use(schema: nil) { session in
            try await Self.prepare(session, location, migrations: Self.migrations)
            if let oldSchema, let moved = try await Self.moveInOldSchema(oldSchema, app: appID, into: schema, session: session) {
                return moved
            }
            return try await Self.appKey(appID, session: session)
        }
    }

    /// Whether the badge log, with `adding` more entries in one row, is past either limit (folded under the lock).
    func logIsFull(_ overlay: BadgeOverlay, adding: Int) -> Bool {
        overlay.entries + adding > badgeLogLimit || (overlay.firstID > 0 && overlay.lastID - overlay.firstID + 1 >= badgeLogRowLimit)
    }

    /// The first key of the advisory lock the app directory's binding takes ("PBWR"); an app's writes
    /// take one 64-bit key, the schema's hash and the app's key (`pushbridge_write_lock`).
    static let writeLock: Int32 = 1_346_524_994
    /// The first key of the lock that creates a schema or moves an old one in ("PBSC").
    static let schemaLock: Int32 = 1_346_524_995

    /// The statement that takes the app's write lock alone, as `pushbridge_write_lock` takes it.
    var writeLockQuery: PostgresQuery { "SELECT pg_advisory_xact_lock(hashtext(\(schema))::bigint << 32 | \(app))" }

    /// The identifiers of the migrations the database has, in the order applied.
    public func appliedMigrations() async throws -> [String] {
        try await pool.use(schema: schema) { session in
            try await session.query("SELECT identifier FROM pushbridge_migrations ORDER BY position").map { try $0.decode(String.self) }
        }
    }

    /// A read: a snapshot (repeatable read, read only) on a connection of its own, so it never waits
    /// for a write. What it would keep for later (the app's configuration, certificates) is kept
    /// when it ends.
    func reading<T>(_ body: (Transaction) async throws -> T) async throws -> T {
        try await pool.use(schema: schema) { session in
            try await Self.transaction(session, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                let transaction = Transaction(session, app: app, writable: false, context: TransactionContext(store: self, start: startingPoint()))
                let result = try await body(transaction)
                return (result, { transaction.context.keepStoreChanges() })
            }
        }
    }

    /// Runs `body` in a transaction under the schema's write lock, taken first
    /// (``lockForWriting(_:readingRecordsOf:)``), with what the node keeps; commits, then the store's
    /// caches and what the node keeps take its changes. A failure drops what the node keeps. The
    /// caller holds ``gate``.
    /// - Parameters:
    ///   - ids: the message ids whose records the lock reads in its round trip.
    ///   - body: the transaction's work.
    func inWriteTransaction<T>(readingRecordsOf ids: [String], _ body: (Transaction) async throws -> T) async throws -> T {
        try await pool.use(schema: schema) { session in
            try await Self.transaction(session, failed: { kept.forget() }) {
                let lock = try await lockForWriting(session, readingRecordsOf: ids)
                let transaction = Transaction(session, app: app, writable: true, context: TransactionContext(store: self, lock: lock, start: startingPoint()))
                let result = try await body(transaction)
                return (result, { [self] in committed(transaction.context) })
            }
        }
    }

    /// Runs `body` between `begin` and `COMMIT` on `session`, then what it returned for after the
    /// commit. A failure runs `failed` and rolls back.
    private static func transaction<T>(
        _ session: PostgresLease, begin: String = "BEGIN", failed: () -> Void = {}, _ body: () async throws -> (T, () throws -> Void)
    ) async throws -> T {
        try await session.execute(begin)
        do {
            let (result, afterCommit) = try await body()
            try await session.execute("COMMIT")
            try afterCommit()
            return result
        } catch {
            failed()
            try await rollBack(session)
            throw error
        }
    }

    /// Rolls back after a failure; a connection that cannot roll back is never given back.
    static func rollBack(_ session: PostgresLease) async throws {
        do { try await session.execute("ROLLBACK") } catch { session.closeNow() }
    }

    /// What the store's caches held when a transaction began: it reads them as they were then.
    func startingPoint() -> TransactionContext.StartingPoint {
        TransactionContext.StartingPoint(
            app: keptApp.current, certificates: knownCertificates.withLock { $0 }, published: kept.published.withLock { $0 })
    }

    /// A write committed: the store's caches take what it read, and what the node keeps (changed as
    /// the write went) is true at the version it left.
    private func committed(_ context: TransactionContext) {
        context.keepStoreChanges()
        kept.committed(at: context.committedDataVersion)
    }

    /// The write lock's answer: the app configuration's and the data's versions, and the records of
    /// the ids named (`nil` for an id without one; `nil` in all: none named).
    struct WriteLock {
        var appVersion: Int64
        var dataVersion: Int64
        var firstLog: Int64?
        var lastLog: Int64?
        var records: [String: StoredSentMessage?]?
    }

    /// The statement that takes the app's write lock and reads the versions, where
    /// the badge log starts and ends, and the records of `ids` (the schema's function `pushbridge_write_lock`).
    private func lockQuery(_ ids: [String]) -> PostgresQuery {
"SELECT * FROM pushbridge_write_lock(\(app), \(ids)::text[])"
    }

    private static func writeLock(_ rows: [PostgresRow], readingRecordsOf ids: [String]) throws -> WriteLock {
        let found = rows.map(Cells.init)
        guard let row = found.first else {
            throw StoreError(.postgres, "the write lock returned no row", context: "pushbridge_write_lock")
        }
        var lock = WriteLock(appVersion: try row.int64(0), dataVersion: try row.int64(1), firstLog: try row.optionalInt64(2), lastLog: try row.optionalInt64(3))
        if !ids.isEmpty {
            var records: [String: StoredSentMessage?] = Dictionary(uniqueKeysWithValues: ids.map { ($0, nil) })
            for record in found.dropFirst() { records[try record.string(4)] = StoredSentMessage(sentAt: try record.int64(5), decisions: try record.bytes(6)) }
            lock.records = records
        }
        return lock
    }

    /// Takes the write lock (one round trip, awaited) and brings what the node keeps to the data it
    /// finds: drops what another node changed, and reads the badge log on (counters move no version).
    func lockForWriting(_ session: PostgresLease, readingRecordsOf ids: [String] = []) async throws -> WriteLock {
        let lock = try Self.writeLock(try await session.query(lockQuery(ids)), readingRecordsOf: ids)
        kept.check(version: lock.dataVersion, firstLog: lock.firstLog, lastLog: lock.lastLog)
        if kept.badges == nil || kept.badges?.isStale == true {
            if kept.badges == nil { kept.badges = BadgeOverlay() }
            let rows = try await session.query("SELECT id, entries FROM badge_log WHERE app = \(app) AND id > \(kept.badges?.lastID ?? 0) ORDER BY id").map(Cells.init)
            for row in rows { try kept.readOn(BadgeLogRow(id: try row.int64(0), entries: try row.row[1].decode(ByteBuffer.self))) }
            kept.badges?.isStale = false
        }
        return lock
    }

    /// Creates the location's schema when missing, sets the session's `search_path` to it, and
    /// applies the migrations the schema lacks.
    static func prepare(_ session: PostgresLease, _ location: PostgresLocation, migrations: [Migration]) async throws {
        let schema = location.schema ?? "public"
        if location.schema != nil {
            // Checked to be a plain identifier (PostgresLocation.checkSchema), so it can be spelled in SQL.
            try await session.execute("BEGIN")
            do {
                try await session.query("SELECT pg_advisory_xact_lock(\(schemaLock), hashtext(\(schema)))")
                try await session.execute("CREATE SCHEMA IF NOT EXISTS \(schema)")
                try await session.execute("COMMIT")
            } catch {
                try await rollBack(session)
                throw error
            }
            session.schema = nil
            try await session.execute("SET search_path TO \(schema)")
            session.schema = schema
        }
        try await migrate(session, scope: schema, migrations: migrations)
    }
}
