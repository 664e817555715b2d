import PushBridgeCore

/// One group's receivers as a decision reads them (every member, loaded for one conversation),
/// kept on a connection between transactions, so that a warm group send reads no member rows.
///
/// The connection's own writes keep it true: a saved user's row is read again, a counted badge is
/// set in place, a membership change or a removed member drops the table. It is dropped with the
/// rest of the connection's kept state when another connection commits (`PRAGMA data_version`,
/// checked when a transaction begins) or a transaction rolls back.
final class ReceiverTable {
    /// Which group, loaded for which conversation.
    struct Key: Hashable {
        var group: String
        var conversation: ConversationKey
    }

    /// Every member in membership order, as loaded (their own badge counters are not kept up to date).
    private(set) var rows: [StoredReceiver]
    /// Each row's current badge counter.
    private(set) var badges: [Int]
    private var positions: Positions?
    /// Stands for the rows' names and devices while they stay the same.
    private(set) var roll = ReceiverRoll()
    /// The id of the roll's stored copy, once a send's record referred to it.
    var rollID: Int64?

    init(rows: [StoredReceiver]) {
        self.rows = rows
        badges = rows.map(\.state.badge)
    }

    /// The receivers of a message from `sender` (left out when a member).
    func receivers(excluding sender: UserID) -> StoredReceivers {
        // By index through a pointer: each row's name is read alone, not the row copied.
        let skipped = rows.withUnsafeBufferPointer { rows in rows.indices.first { rows[$0].state.user == sender } }
        return StoredReceivers(rows: rows, badges: badges, skipping: skipped, roll: roll)
    }

    /// The row of a user, by the store's key.
    func position(of key: Int64) -> Int? {
        if positions == nil { positions = Positions(rows) }
        return positions!.position(of: key)
    }

    /// Sets a member's badge counter.
    func setBadge(_ badge: Int, at position: Int) { badges[position] = badge }

    /// Replaces a member's row, read again after a change.
    func replace(_ row: StoredReceiver, at position: Int) {
        if row.state.user != rows[position].state.user || row.state.devices != rows[position].state.devices {
            roll = ReceiverRoll()  // the stored roll no longer lists this member as it is
            rollID = nil
        }
        rows[position] = row
        badges[position] = row.state.badge
    }
}

/// Where each key's row is: a table indexed by key when the keys are close together (rowids of
/// users mostly are: a counted send looks each one up without hashing), else a dictionary.
private enum Positions {
    case dense(first: Int64, rows: [Int32])
    case sparse([Int64: Int])

    init(_ rows: [StoredReceiver]) {
        let keys = rows.lazy.compactMap { $0.key?.rawValue }
        guard let first = keys.min(), let last = keys.max(), last - first < Int64(max(4 * rows.count, 64)), rows.count < Int32.max else {
            var positions: [Int64: Int] = [:]
            positions.reserveCapacity(rows.count)
            for (i, row) in rows.enumerated() { if let key = row.key { positions[key.rawValue] = i } }
            self = .sparse(positions)
            return
        }
        var table = [Int32](repeating: -1, count: Int(last - first) + 1)
        for (i, row) in rows.enumerated() { if let key = row.key { table[Int(key.rawValue - first)] = Int32(i) } }
        self = .dense(first: first, rows: table)
    }

    func position(of key: Int64) -> Int? {
        switch self {
        case .sparse(let positions): return positions[key]
        case .dense(let first, let rows):
            guard key >= first, key - first < Int64(rows.count), case let row = rows[Int(key - first)], row >= 0 else { return nil }
            return Int(row)
        }
    }
}

extension SQLiteConnection {
    /// Keeps a group's receivers, within ``receiverCacheLimit`` rows across groups (a table that
    /// would pass it drops the others; one bigger than the limit is not kept).
    func keep(_ table: ReceiverTable, for key: ReceiverTable.Key) {
        guard table.rows.count <= receiverCacheLimit else { return }
        if receiverTables.values.reduce(table.rows.count, { $0 + $1.rows.count }) > receiverCacheLimit { receiverTables.removeAll() }
        receiverTables[key] = table
    }
}
