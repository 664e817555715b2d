/// The receivers a store keeps between transactions — groups' receivers (``ReceiverTable``) and
/// users for one-to-one messages (``KeptUsers``) — within one budget of rows for the whole store
/// (``SQLiteStateStore/Options/keptReceivers``; a quarter of it is the most users kept).
///
/// On PostgreSQL a node keeps one per app under the data version (`PostgresStateStore.KeptData`).
/// On SQLite it is owned by the store and used by its writer only: every send is a write, so the cache follows the
/// writer's snapshot — kept true by the writer's own writes, dropped when another connection commits
/// (`PRAGMA data_version`, checked when a transaction begins) or a transaction rolls back. Reader
/// connections keep none (``none``): a read sees its own snapshot's rows, and the memory a store
/// spends on receivers is one budget however many readers it has opened (it was a budget per
/// connection, readers included). Not thread-safe: the writer's lock serialises its use.
package final class ReceiverCache {
    /// Groups' receivers, by group and conversation.
    package var tables: [ReceiverTable.Key: ReceiverTable] = [:]
    /// One-to-one receivers and senders.
    package let users = KeptUsers()
    /// The most receiver rows kept across groups (`0`: nothing is kept).
    package let limit: Int

    /// - Parameter limit: the most receiver rows kept across groups; a quarter of it is the most users kept.
    package init(limit: Int) {
        self.limit = limit
    }

    /// A reader connection's: keeps nothing.
    package static var none: ReceiverCache { ReceiverCache(limit: 0) }

    /// Whether anything is kept.
    package var isEmpty: Bool { tables.isEmpty && users.count == 0 }

    /// Keeps a group's receivers, within ``limit`` rows across groups (a table that would pass it
    /// drops the others; one bigger than the limit is not kept).
    /// - Returns: whether the table is kept.
    package func keep(_ table: ReceiverTable, for key: ReceiverTable.Key) -> Bool {
        guard table.rows.count <= limit else { return false }
        if tables.values.reduce(table.rows.count, { $0 + $1.rows.count }) > limit { tables.removeAll() }
        tables[key] = table
        return true
    }

    /// Keeps a user for one-to-one messages, within a quarter of ``limit`` users.
    package func keep(_ user: KeptUsers.User) {
        users.keep(user, limit: limit / 4)
    }

    /// Sets counted badges in the kept tables and users that hold their rows.
    package func setBadges(_ badges: [(key: UserKey, badge: Int)]) {
        for table in tables.values {
            for (key, badge) in badges { if let position = table.position(of: key.rawValue) { table.setBadge(badge, at: position) } }
        }
        users.setBadges(badges)
    }

    /// Forgets everything kept.
    package func removeAll() {
        tables.removeAll()
        users.removeAll()
    }
}
