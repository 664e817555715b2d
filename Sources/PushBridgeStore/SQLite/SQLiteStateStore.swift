import CSQLite
import Foundation
import Synchronization
import PushBridgeCore

/// Push state in one SQLite file: WAL journal, identified migrations, `BEGIN IMMEDIATE` writes
/// with a busy timeout and bounded retries, so several processes can share one database.
///
/// Durability (``Options/synchronous``): with the default `.normal` a committed transaction
/// survives the process being killed (SIGKILL, a crash) and the file is never corrupted; only an
/// operating-system crash or power loss can drop the last commits. `.full` also syncs the WAL on
/// every commit, for power-loss durability, at the cost of one `fsync` per transaction.
public final class SQLiteStateStore: TransactionStore, @unchecked Sendable {
    /// How the database is opened.
    public struct Options: Sendable {
        /// SQLite's `synchronous` setting in WAL mode.
        public enum Synchronous: String, Sendable, CaseIterable {
            /// Commits survive a killed process; power loss may drop the most recent ones.
            case normal = "NORMAL"
            /// Every commit is synced to disk before it returns.
            case full = "FULL"
        }

        public var synchronous: Synchronous
        /// How long one attempt waits for another writer's lock (SQLite's busy timeout).
        public var busyTimeoutMilliseconds: Int32
        /// How many more times a write is attempted after the busy timeout expires.
        public var busyRetries: Int
        /// How many group members' rows the store keeps between sends, across groups, in its one
        /// receiver cache (about 1 KB each; a quarter of it is the most one-to-one users kept): a
        /// warm group send reads none of them. The writer uses it; readers keep none, so this is the
        /// store's whole budget for receivers. A group with more members is loaded anew for every
        /// send; 0 keeps none.
        public var keptReceivers: Int
        /// How many counters the badge log holds before the send that passes it folds it into the
        /// counters table (16 bytes each; a fold writes each user once, however many sends it holds).
        public var badgeLogLimit: Int
        /// The WAL size, in pages, past which a commit has the WAL checkpointed (copied into the
        /// database file) on a thread of the store's own instead of inside that commit; 0 leaves it
        /// to SQLite's automatic checkpoint, inside the commit that passes 1,000 pages.
        public var backgroundCheckpointPages: Int
        /// How a group's members are read when no kept table holds them (tests pin one plan to
        /// check it against the other; see ``SQLiteStateStore/Transaction/groupReceivers(_:conversation:)``).
        var groupLoad = GroupLoad.automatic

        /// - Parameters:
        ///   - synchronous: durability against power loss (`.normal` is durable against a killed process).
        ///   - busyTimeoutMilliseconds: per-attempt wait for the write lock.
        ///   - busyRetries: further attempts, with a growing pause, before ``StoreError/Code/busy``.
        ///   - keptReceivers: group members' rows kept between sends.
        ///   - badgeLogLimit: badge counters logged before the log is folded.
        ///   - backgroundCheckpointPages: the WAL size that has a background checkpoint run (0: none).
        public init(
            synchronous: Synchronous = .normal, busyTimeoutMilliseconds: Int32 = 5_000, busyRetries: Int = 5, keptReceivers: Int = 400_000,
            badgeLogLimit: Int = 1_000_000, backgroundCheckpointPages: Int = 1_000
        ) {
            self.synchronous = synchronous
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.busyRetries = busyRetries
            self.keptReceivers = keptReceivers
            self.badgeLogLimit = badgeLogLimit
            self.backgroundCheckpointPages = backgroundCheckpointPages
        }
    }

    /// The writer: every write and group commit, one at a time under `lock`.
    let connection: SQLiteConnection
    let lock = NSLock()
    public let options: Options
    /// Reads run on connections of their own (WAL readers never wait for the writer); idle ones
    /// are kept here. A private in-memory database has no second connection: it reads on the writer.
    private let readerLock = NSLock()
    private var idleReaders: [SQLiteConnection] = []
    private let readsOnWriter: Bool
    /// Where ``update(reading:deciding:)`` and the outbox run their transactions, one at a time,
    /// requests' first.
    private let updates = WriteTurns(DispatchQueue(label: "pushbridge-sqlite-updates"))
    /// The outbox, made on first use (its writes wait together for their transaction).
    private let outboxWrites = Mutex<TransactionOutbox?>(nil)
    /// Runs the WAL's checkpoints off the writer's commits (`nil`: SQLite's own, in the commit).
    private var checkpointer: WALCheckpointer?  // set once, in `init`

    /// Opens or creates a database and brings its schema up to date.
    /// - Parameters:
    ///   - path: the database file (`:memory:` for a private in-memory database).
    ///   - options: durability and busy handling.
    /// - Throws: ``StoreError`` when the file cannot be opened or was written by a newer PushBridge.
    public init(path: String, options: Options = Options()) throws {
        self.options = options
        readsOnWriter = path.isEmpty || path == ":memory:" || path.hasPrefix("file::memory:")
        connection = try SQLiteConnection(path: path)
        connection.receivers = ReceiverCache(limit: options.keptReceivers)
        connection.badgeLogLimit = options.badgeLogLimit
        connection.groupLoad = options.groupLoad
        sqlite3_busy_timeout(connection.handle, options.busyTimeoutMilliseconds)
        try Self.retryingBusy(retries: options.busyRetries) {
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        try connection.execute("PRAGMA synchronous = \(options.synchronous.rawValue); PRAGMA foreign_keys = ON")
        try Self.retryingBusy(retries: options.busyRetries) { try Self.migrate(connection) }
        if !readsOnWriter && options.backgroundCheckpointPages > 0 {
            let checkpointer = try WALCheckpointer(path: path, pages: Int32(clamping: options.backgroundCheckpointPages))
            checkpointer.attach(to: connection)
            self.checkpointer = checkpointer
        }
    }

    deinit {
        if let checkpointer {
            checkpointer.detach(from: connection)
            checkpointer.stop()
        }
    }

    /// How many background WAL checkpoints have completed (diagnostics; see ``Options/backgroundCheckpointPages``).
    public var backgroundCheckpoints: Int { checkpointer?.checkpointsCompleted ?? 0 }

    /// How many SQL statements this store has started: diagnostics, so that tests can check that a
    /// group message costs a bounded number of statements, not one per member.
    public var statementsStarted: Int { lock.withLock { connection.statementsStarted } }

    package func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try lock.withLock {
            try Self.retryingBusy(retries: options.busyRetries) {
                try Self.withImmediateTransaction(connection) {
                    try body(Transaction(connection, writable: true))
                }
            }
        }
    }

    /// Reads, decides and commits in one `BEGIN IMMEDIATE` transaction on the store's own serial
    /// queue (as GRDB runs a synchronous body behind an async call): nothing else writes meanwhile,
    /// so the decision runs once, and the caller holds no thread while it waits.
    public func update<Outcome: Sendable>(
        reading keys: StateKeys, deciding decide: @escaping @Sendable (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)
    ) async throws -> Outcome {
        try await updates.transaction(.request) { try self.write { try $0.update(reading: keys, deciding: decide) } }
    }

    /// As ``update(reading:deciding:)``, the updates one after another in the queue's background turn
    /// (it runs when no request's write nor a delivery claim is waiting), in one transaction until a
    /// request's write waits (a delivery claim does not stop it): then what ran is committed, the
    /// request goes next, and the rest follows in a transaction of its own ahead of the other
    /// background work. A page of a push task written in parts holds a request back for one part.
    public func backgroundUpdates<Outcome: Sendable>(_ planned: [StateUpdate<Outcome>]) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(planned.count)
        return try await updates.backgroundSteps { [updates] () throws -> [Outcome]? in
            outcomes += try self.write { transaction in
                var ran: [Outcome] = []
                for update in planned[outcomes.count...] {
                    ran.append(try transaction.update(reading: update.keys, deciding: update.decide))
                    if updates.requestWaits { break }
                }
                return ran
            }
            return outcomes.count == planned.count ? outcomes : nil
        }
    }

    /// Whether a request's write waits for the store's queue (tests).
    package var requestWaits: Bool { updates.requestWaits }

    /// `true`: requests' writes go between ``backgroundUpdates(_:)``'s updates.
    public var interleavesBackgroundUpdates: Bool { true }

    /// The outbox: its writes as transactions on the store's update queue, in turn with its updates,
    /// those that wait together in one.
    public var outbox: any PushOutbox { outboxWrites.withLock { $0 } ?? makeOutbox() }

    private func makeOutbox() -> any PushOutbox {
        outboxWrites.withLock { kept in
            if let kept { return kept }
            let made = TransactionOutbox(store: self, turns: updates, holdsStore: false)
            kept = made
            return made
        }
    }

    /// Folds the badge log into the counters table now (a send that passes
    /// ``Options/badgeLogLimit`` does it too): for a quiet moment, or before reading the table with
    /// other tools.
    public func foldBadgeLog() throws {
        try lock.withLock {
            try Self.retryingBusy(retries: options.busyRetries) {
                try Self.withImmediateTransaction(connection) { try Transaction(connection, writable: true).foldBadgeLog() }
            }
        }
    }

    package func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        if readsOnWriter { return try lock.withLock { try Self.withSnapshot(connection, body) } }
        let reader = try takeReader()
        defer { readerLock.withLock { idleReaders.append(reader) } }
        return try Self.retryingBusy(retries: options.busyRetries) { try Self.withSnapshot(reader, body) }
    }

    /// An idle reader connection, or a new one.
    private func takeReader() throws -> SQLiteConnection {
        if let reader = readerLock.withLock({ idleReaders.popLast() }) { return reader }
        let reader = try SQLiteConnection(path: connection.path)
        reader.groupLoad = options.groupLoad
        sqlite3_busy_timeout(reader.handle, options.busyTimeoutMilliseconds)
        try reader.execute("PRAGMA query_only = ON")
        return reader
    }

    /// Runs `body` in a read transaction on `connection`.
    static func withSnapshot<T>(_ connection: SQLiteConnection, _ body: (any PushStateTransaction) throws -> T) throws -> T {
        try connection.execute("BEGIN DEFERRED")
        defer {
            connection.resetAll()
            try? connection.execute("COMMIT")
        }
        try connection.checkSharedState()
        return try body(Transaction(connection, writable: false))
    }

    /// Runs `body` between `BEGIN IMMEDIATE` and `COMMIT`; rolls back when it throws.
    static func withImmediateTransaction<T>(_ connection: SQLiteConnection, _ body: () throws -> T) throws -> T {
        try connection.execute("BEGIN IMMEDIATE")
        return try committing(connection, body)
    }

    /// Inside a transaction just begun: runs `body`, then `COMMIT`; rolls back when either throws.
    static func committing<T>(_ connection: SQLiteConnection, _ body: () throws -> T) throws -> T {
        do {
            try connection.checkSharedState()
            let result = try body()
            connection.resetAll()
            try connection.execute("COMMIT")
            return result
        } catch {
            connection.resetAll()
            try? connection.execute("ROLLBACK")
            connection.dropSharedState()
            throw error
        }
    }

    /// Repeats `body` while it fails with ``StoreError/Code/busy``, pausing 50 ms, 100 ms, 200 ms…
    /// between attempts (each attempt has already waited the busy timeout).
    static func retryingBusy<T>(retries: Int, _ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch let error as StoreError where error.code == .busy && attempt < retries {
                usleep(useconds_t(50_000 << min(attempt, 5)))
                attempt += 1
            }
        }
    }
}
