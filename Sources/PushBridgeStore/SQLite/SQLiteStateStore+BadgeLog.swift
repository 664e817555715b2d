import CSQLite
import PushBridgeCore
import PushBridgeRecordCoding

/// The badge log read on a connection: each user row's latest logged counter.
struct BadgeOverlay {
    /// The latest logged counter per user row.
    var counters = UserRowMap()
    /// How many entries the log holds (counting repeats of a user).
    var entries = 0
    /// The first and last log rows read (`0`: none).
    var firstID: Int64 = 0
    var lastID: Int64 = 0
    /// Another connection committed since: rows after `lastID` may have been added, or the log folded.
    var isStale = false

    /// Adds one log row's entries, latest last.
    /// - Parameters:
    ///   - blob: the row's `entries`, in either format (``BadgeLogEntries``).
    ///   - id: the row's id.
    /// - Throws: ``StoreError`` when the bytes are not entries PushBridge wrote.
    mutating func add(_ blob: UnsafeRawBufferPointer, id: Int64) throws {
        entries += try BadgeLogEntries.read(blob) { key, badge in counters.set(badge, for: key) }
        read(id)
    }

    /// Adds the entries of a row just written.
    mutating func add(_ badges: [(key: UserKey, badge: Int)], id: Int64) {
        for entry in badges { counters.set(entry.badge, for: entry.key.rawValue) }
        entries += badges.count
        read(id)
    }

    /// Notes that log row `id` is read.
    private mutating func read(_ id: Int64) {
        if firstID == 0 { firstID = id }
        lastID = id
    }
}

/// The bytes of one badge log row (`badge_log.entries`, whose length the schema keeps a multiple of 16).
///
/// Written since 0.17 as varints (``Varint``, shared with the sent-message record): a 16-byte header (row id `-1`, which no user row has, then the
/// number of entries, both 8 bytes little-endian), then per entry the zigzag varint of its row id
/// less the previous entry's and the zigzag varint of its counter, then zeros to a multiple of 16.
/// A group send's rows come in order, so an entry is mostly 2 bytes instead of 16 (1.2 MB less
/// written to the WAL for 77,000 counters). Rows of 0.10–0.16 (each entry the row id and the counter,
/// 8 bytes little-endian each) are still read.
enum BadgeLogEntries {
    /// The row id of the header entry that marks varint entries.
    static let varintMark: Int64 = -1

    /// The entries of `badges`, as varints.
    static func write(_ badges: [(key: UserKey, badge: Int)]) -> [UInt8] {
        let capacity = 16 + badges.count * 20 + 16
        return [UInt8](unsafeUninitializedCapacity: capacity) { out, written in
            let raw = UnsafeMutableRawBufferPointer(out)
            raw.storeBytes(of: varintMark.littleEndian, toByteOffset: 0, as: Int64.self)
            raw.storeBytes(of: Int64(badges.count).littleEndian, toByteOffset: 8, as: Int64.self)
            var at = 16
            var previous: Int64 = 0
            badges.withUnsafeBufferPointer { badges in
                for entry in badges {
                    Varint.write(Varint.zigzag(entry.key.rawValue &- previous), into: out, at: &at)
                    Varint.write(Varint.zigzag(Int64(entry.badge)), into: out, at: &at)
                    previous = entry.key.rawValue
                }
            }
            while at % 16 != 0 {
                out[at] = 0
                at += 1
            }
            written = at
        }
    }

    /// Reads one row's entries in order.
    /// - Parameters:
    ///   - blob: the row's bytes.
    ///   - entry: called with each entry's row id and counter.
    /// - Returns: the number of entries.
    /// - Throws: ``StoreError`` when the bytes are not entries PushBridge wrote.
    static func read(_ blob: UnsafeRawBufferPointer, _ entry: (Int64, Int) -> Void) throws -> Int {
        func damaged(_ what: String) -> StoreError {
            StoreError(.unexpectedValue, "a badge log row of \(blob.count) bytes: \(what)", context: "badge_log.entries")
        }
        guard blob.count % 16 == 0 else { throw damaged("not a multiple of 16") }
        guard blob.count >= 16, Int64(littleEndian: blob.loadUnaligned(fromByteOffset: 0, as: Int64.self)) == varintMark else {
            let count = blob.count / 16
            for i in 0..<count {
                entry(Int64(littleEndian: blob.loadUnaligned(fromByteOffset: i * 16, as: Int64.self)),
                    Int(Int64(littleEndian: blob.loadUnaligned(fromByteOffset: i * 16 + 8, as: Int64.self))))
            }
            return count
        }
        let count = Int64(littleEndian: blob.loadUnaligned(fromByteOffset: 8, as: Int64.self))
        guard count >= 0, count <= (blob.count - 16) / 2 else { throw damaged("\(count) entries") }
        var at = 16
        func varint() throws -> Int64 {
            guard let bits = Varint.read(from: blob, at: &at) else { throw damaged("an entry runs past its end") }
            return Varint.unzigzag(bits)
        }
        var key: Int64 = 0
        for _ in 0..<count {
            key &+= try varint()
            entry(key, Int(try varint()))
        }
        guard blob.count - at < 16, blob[at...].allSatisfy({ $0 == 0 }) else { throw damaged("bytes after the last entry") }
        return Int(count)
    }
}

extension SQLiteStateStore.Transaction {
    /// Counters written at once from this many up go to the badge log as one row (a group send);
    /// fewer are updated in place (while the log holds none of them).
    static let badgeLogThreshold = 64

    /// The badge log as each user row's latest counter: read once per connection, then only
    /// the rows other connections add (all of it again after a fold).
    func badgeOverlay() throws -> BadgeOverlay {
        if var overlay = connection.badgeOverlay {
            guard overlay.isStale else { return overlay }
            connection.badgeOverlay = nil  // one owner while it is read on
            overlay.isStale = false
            let first = try connection.statement("SELECT ifnull(min(id), 0) FROM badge_log")
            let firstID = try first.step() ? first.int64(0) : 0
            first.reset()
            if overlay.firstID == 0 || firstID == overlay.firstID {
                try readBadgeLog(into: &overlay, after: overlay.lastID)
                connection.badgeOverlay = overlay
                return overlay
            }
        }
        var overlay = BadgeOverlay()
        try readBadgeLog(into: &overlay, after: 0)
        connection.badgeOverlay = overlay
        return overlay
    }

    private func readBadgeLog(into overlay: inout BadgeOverlay, after id: Int64) throws {
        let rows = try connection.statement("SELECT id, entries FROM badge_log WHERE id > ? ORDER BY id")
        rows.bind(1, id)
        while try rows.step() {
            let length = Int(sqlite3_column_bytes(rows.raw, 1))
            try overlay.add(UnsafeRawBufferPointer(start: sqlite3_column_blob(rows.raw, 1), count: length), id: rows.int64(0))
        }
    }

    /// A user row's badge counter: its latest log entry, else `stored` (badge_counters').
    func badge(of key: Int64, stored: Int, in overlay: BadgeOverlay) -> Int {
        overlay.entries == 0 ? stored : overlay.counters[key] ?? stored
    }

    /// Whether counters go to the badge log: many at once, or any of a user the log already has.
    func logs(_ badges: [(key: UserKey, badge: Int)]) throws -> Bool {
        if badges.count >= Self.badgeLogThreshold { return true }
        let overlay = try badgeOverlay()
        return overlay.entries > 0 && badges.contains { overlay.counters[$0.key.rawValue] != nil }
    }

    /// Appends counters to the badge log as one row, and to this connection's read of it.
    func logBadges(_ badges: [(key: UserKey, badge: Int)]) throws {
        _ = try badgeOverlay()
        try connection.statement("INSERT INTO badge_log (entries) VALUES (?)").bind(1, blob: BadgeLogEntries.write(badges)).run()
        connection.badgeOverlay!.add(badges, id: connection.lastInsertRowID)
    }

    /// Writes counters into badge_counters: one prepared statement stepped per user (UPDATE
    /// rewrites a row in place, where INSERT OR REPLACE deletes and inserts it: twice as slow); a
    /// user never counted before has no row yet and gets one.
    /// - Parameters:
    ///   - counters: user row ids and their counters.
    ///   - skippingForgottenUsers: a user row that no longer exists is skipped (else it is a
    ///     foreign-key failure).
    func writeCounters(_ counters: some Sequence<(Int64, Int)>, skippingForgottenUsers: Bool) throws {
        let update = try connection.statement("UPDATE badge_counters SET badge = ?2 WHERE user_id = ?1")
        let insert = skippingForgottenUsers
            ? "INSERT INTO badge_counters (user_id, badge) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM users WHERE id = ?1)"
            : "INSERT INTO badge_counters (user_id, badge) VALUES (?1, ?2)"
        for (key, badge) in counters {
            update.reset()
            try update.bind(1, key).bind(2, badge).run()
            if connection.changes == 0 { try connection.statement(insert).bind(1, key).bind(2, badge).run() }
        }
    }

    /// Folds the badge log into badge_counters (each user's latest counter, once) and empties it.
    func foldBadgeLog() throws {
        try checkWritable()
        let overlay = try badgeOverlay()
        guard overlay.entries > 0 else { return }
        // The log may hold users since forgotten: nothing of theirs to keep.
        try writeCounters(overlay.counters.sorted().lazy.map { ($0.key, $0.value) }, skippingForgottenUsers: true)
        try connection.statement("DELETE FROM badge_log").run()
        connection.badgeOverlay = BadgeOverlay()
    }
}
