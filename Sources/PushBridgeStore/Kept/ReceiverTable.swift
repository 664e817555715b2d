import PushBridgeCore

/// One group's receivers as a decision reads them (every member, loaded for one conversation),
/// kept on a connection between transactions, so that a warm group send reads no member rows.
///
/// The connection's own writes keep it true: a saved user's row is read again, a counted badge is
/// set in place, a membership change or a removed member drops the table. It is dropped with the
/// rest of the connection's kept state when another connection commits (`PRAGMA data_version`,
/// checked when a transaction begins) or a transaction rolls back.
package final class ReceiverTable {
    /// Which group, loaded for which conversation.
    package struct Key: Hashable {
        package var group: String
        package var conversation: ConversationKey

        package init(group: String, conversation: ConversationKey) {
            self.group = group
            self.conversation = conversation
        }
    }

    /// Every member in membership order, as loaded (their own badge counters are not kept up to date).
    package private(set) var rows: [StoredReceiver]
    /// Each row's current badge counter.
    package private(set) var badges: [Int]
    private var positions: UserRowMap?
    /// Each member's row by name, made when a sender is first looked for past the first rows.
    private var positionsByName: [UserID: Int]?
    /// How many rows a sender is looked for among by a scan before the names are indexed.
    private static let scannedRows = 64
    /// Stands for the rows' names and devices while they stay the same.
    package private(set) var roll = ReceiverRoll()
    /// The id of the roll's stored copy, once a send's record referred to it.
    package var rollID: Int64?

    package init(rows: [StoredReceiver]) {
        self.rows = rows
        badges = rows.map(\.state.badge)
    }

    /// The receivers of a message from `sender` (left out when a member).
    /// - Parameters:
    ///   - sender: the sender.
    ///   - asRoll: whether they come with the table's roll (a kept table's: its stored copy is
    ///     shared by the sends to it).
    package func receivers(excluding sender: UserID, asRoll: Bool = true) -> StoredReceivers {
        StoredReceivers(rows: rows, badges: badges, skipping: position(named: sender), roll: asRoll ? roll : nil)
    }

    /// The first row of a member by name: a scan of the first rows, then (a sender further down a big
    /// group, where a scan would touch every row before it) the names indexed once for later sends.
    package func position(named name: UserID) -> Int? {
        if let positionsByName { return positionsByName[name] }
        // By index through a pointer: each row's name is read alone, not the row copied.
        let (found, scanned) = rows.withUnsafeBufferPointer { rows -> (Int?, Int) in
            let scanned = min(rows.count, Self.scannedRows)
            return ((0..<scanned).first { rows[$0].state.user == name }, scanned)
        }
        if found != nil || scanned == rows.count { return found }
        var byName: [UserID: Int] = [:]
        byName.reserveCapacity(rows.count)
        for position in rows.indices.reversed() { byName[rows[position].state.user] = position }  // the first row wins
        positionsByName = byName
        return byName[name]
    }

    /// The row of a user, by the store's key.
    package func position(of key: Int64) -> Int? {
        if positions == nil { positions = UserRowMap(positionsOf: rows) }
        return positions![key]
    }

    /// Sets a member's badge counter.
    package func setBadge(_ badge: Int, at position: Int) { badges[position] = badge }

    /// Replaces a member's row, read again after a change.
    package func replace(_ row: StoredReceiver, at position: Int) {
        if row.state.user != rows[position].state.user || row.state.devices != rows[position].state.devices {
            roll = ReceiverRoll()  // the stored roll no longer lists this member as it is
            rollID = nil
            if row.state.user != rows[position].state.user { positionsByName = nil }
        }
        rows[position] = row
        badges[position] = row.state.badge
    }
}
