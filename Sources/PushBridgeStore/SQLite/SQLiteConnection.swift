import Foundation
import CSQLite
import PushBridgeCore

/// `SQLITE_TRANSIENT` is a macro Swift does not import: SQLite copies the bound bytes.
let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection with a cache of prepared statements. Not thread-safe: its owner serialises use.
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    private var statements: [String: Statement] = [:]
    /// How many statements have been started on this connection (diagnostics: fan-out stays bounded).
    private(set) var statementsStarted = 0

    /// Opens (creating if needed) a database file.
    init(path: String, readOnly: Bool = false) throws {
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw StoreError(.sqlite, "cannot open \(path): \(message)", sqliteCode: rc)
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
        self.path = path
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    func error(_ rc: Int32, _ sql: String?) -> StoreError {
        let code = sqlite3_extended_errcode(handle)
        let message = String(cString: sqlite3_errmsg(handle))
        let primary = rc & 0xff
        return StoreError(primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? .busy : .sqlite, message, sqliteCode: code, context: sql)
    }

    /// Runs one or more statements without results.
    func execute(_ sql: String) throws {
        statementsStarted += 1
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql) }
    }

    /// A cached prepared statement, reset and with its bindings cleared.
    func statement(_ sql: String) throws -> Statement {
        statementsStarted += 1
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else { throw error(rc, sql) }
        let statement = Statement(raw, connection: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Resets every cached statement, so that none holds a read snapshot past the transaction
    /// (a pending statement would turn the next `BEGIN IMMEDIATE` into `SQLITE_BUSY_SNAPSHOT`).
    func resetAll() {
        for statement in statements.values { sqlite3_reset(statement.raw) }
    }

    // MARK: State reused across transactions

    /// The app configuration and the certificates, kept between transactions of this connection
    /// while no other connection commits (SQLite's `data_version`, checked when a transaction
    /// begins), and dropped on any rollback: every message reads them.
    var sharedApp: AppConfiguration?
    /// The cutoff of the last pruning of `sent_messages` on this connection (milliseconds).
    var sentMessagesPrunedBefore: Int64 = .min / 2
    /// Time zones by identifier, made once per connection (identifiers name the same zone forever).
    private var timeZones: [String: TimeZone] = [:]
    /// The first few zones made, found by comparing their names' bytes (a load of 100,000 members
    /// made a string of each one's and hashed it).
    private var firstTimeZones: [(name: [UInt8], zone: TimeZone)] = []

    /// The zone an identifier names, made once per connection; `nil` when it names none.
    /// - Parameter name: the identifier's UTF-8 bytes.
    func timeZone(named name: UnsafeBufferPointer<UInt8>) -> TimeZone? {
        for entry in firstTimeZones where entry.name.elementsEqual(name) { return entry.zone }
        let text = String(decoding: name, as: UTF8.self)
        if let zone = timeZones[text] { return zone }
        guard let zone = TimeZone(identifier: text) else { return nil }
        if firstTimeZones.count < 8 { firstTimeZones.append((Array(name), zone)) } else { timeZones[text] = zone }
        return zone
    }
    var sharedCertificates: [Int64: Certificate]?
    /// The store's receiver cache on its writer (``ReceiverCache``), dropped under the same rule; a
    /// reader's keeps nothing.
    var receivers = ReceiverCache.none
    /// The badge log as the latest counter per user row (`nil`: not read yet), and how far it is read.
    var badgeOverlay: BadgeOverlay?
    /// Past this many entries the badge log is folded (``SQLiteStateStore/Options/badgeLogLimit``).
    var badgeLogLimit = 1_000_000
    /// How group members are read (``SQLiteStateStore/Options/groupLoad``).
    var groupLoad = GroupLoad.automatic
    private var dataVersion: Int64 = -1
    /// The outbox's shared requests by `delivery_contents` id, as claims have read or enqueues
    /// written them, at most 1,024 (rows never change; dropped under the same rule, and when
    /// contents are pruned).
    var deliveryContents: [Int64: DeliveryContent] = [:]

    /// Drops what other connections may have changed; call right after `BEGIN`.
    func checkSharedState() throws {
        let row = try statement("PRAGMA data_version")
        let version = try row.step() ? row.int64(0) : -1
        row.reset()
        if version != dataVersion {
            dataVersion = version
            dropSharedState(readingBadgeLogOn: true)
        }
    }

    /// Forgets the shared state (after a rollback, or a change to it).
    /// - Parameter readingBadgeLogOn: another connection committed: the badge log read so far stays
    ///   true (the log only grows until a fold, which the next read notices), so it is read on from
    ///   where it was instead of again.
    func dropSharedState(readingBadgeLogOn: Bool = false) {
        sharedApp = nil
        sharedCertificates = nil
        receivers.removeAll()
        deliveryContents.removeAll()
        if readingBadgeLogOn { badgeOverlay?.isStale = true } else { badgeOverlay = nil }
    }

    /// How many rows the last statement changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last insert.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}

/// A prepared statement: bind by 1-based index, step, read columns by 0-based index.
final class Statement {
    let raw: OpaquePointer
    unowned let connection: SQLiteConnection
    let sql: String

    init(_ raw: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.raw = raw
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(raw) }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    @discardableResult
    func bind(_ index: Int32, _ value: Int64?) -> Statement {
        if let value { sqlite3_bind_int64(raw, index, value) } else { sqlite3_bind_null(raw, index) }
        return self
    }

    @discardableResult
    func bind(_ index: Int32, _ value: Int?) -> Statement { bind(index, value.map(Int64.init)) }

    @discardableResult
    func bind(_ index: Int32, _ value: String?) -> Statement {
        if let value {
            var copy = value
            copy.withUTF8 { bindText(index, UnsafeRawBufferPointer($0)) }
        } else {
            sqlite3_bind_null(raw, index)
        }
        return self
    }

    @discardableResult
    func bind(_ index: Int32, bytes: [UInt8]) -> Statement {
        bytes.withUnsafeBytes { bindText(index, $0) }
        return self
    }

    /// Binds bytes as a BLOB (copied), for data that is not text.
    @discardableResult
    func bind(_ index: Int32, blob: [UInt8]) -> Statement {
        _ = blob.withUnsafeBytes { raw in
            if let base = raw.baseAddress, raw.count > 0 {
                sqlite3_bind_blob(self.raw, index, base, Int32(raw.count), transientDestructor)
            } else {
                sqlite3_bind_zeroblob(self.raw, index, 0)
            }
        }
        return self
    }

    private func bindText(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        if let base = bytes.baseAddress, bytes.count > 0 {
            sqlite3_bind_text(raw, index, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), transientDestructor)
        } else {
            sqlite3_bind_text(raw, index, "", 0, transientDestructor)
        }
    }

    /// Steps once: `true` when a row is available, `false` when done.
    func step() throws -> Bool {
        let rc = sqlite3_step(raw)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(rc, sql)
            sqlite3_reset(raw)
            throw error
        }
    }

    /// Steps to the end, for statements without results, and resets the statement: bound again
    /// without a reset, a finished statement keeps its old values (`sqlite3_bind_*` answers
    /// `SQLITE_MISUSE`), so a loop reusing one insert would insert its first row again.
    func run() throws {
        while try step() {}
        sqlite3_reset(raw)
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(raw, column)) }

    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func optionalInt(_ column: Int32) -> Int? { isNull(column) ? nil : int(column) }

    func string(_ column: Int32) -> String { String(decoding: text(column), as: UTF8.self) }

    func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }

    /// A text column's UTF-8 bytes, valid until the statement steps or is reset.
    func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let text = sqlite3_column_text(raw, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(raw, column)))
    }

    /// A text or blob column's bytes, as stored.
    func bytes(_ column: Int32) -> [UInt8] {
        guard let base = sqlite3_column_blob(raw, column) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(raw, column))))
    }
}
