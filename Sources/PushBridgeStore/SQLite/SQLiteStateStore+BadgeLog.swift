import CSQLite
import PushBridgeCore
import PushBridgeRecordCoding

extension SQLiteStateStore.Transaction {
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

    /// Whether counters go to the badge log (``BadgeOverlay/logs(_:overlay:)``).
    func logs(_ badges: [(key: UserKey, badge: Int)]) throws -> Bool {
        try BadgeOverlay.logs(badges, overlay: badgeOverlay)
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
