import PushBridgeCore

/// One receiver loaded for a decision.
public struct StoredReceiver: Sendable {
    /// The store's handle for the user's row, for `UserTable/setBadges(_:)`; `nil`
    /// for a one-to-one receiver the store has never heard of.
    public var key: UserKey?
    /// The receiver's state. Its `conversations` hold only the conversation the message is in,
    /// and `nameCards` is empty: a decision for a receiver reads nothing else of them.
    public var state: UserState
    /// Whether a dialect call has configured the user. When not, `state` carries placeholder
    /// defaults and the caller applies its dialect's (see ``UserRecord/isConfigured``).
    public var isConfigured: Bool
    public init(key: UserKey?, state: UserState, isConfigured: Bool) {
        self.key = key
        self.state = state
        self.isConfigured = isConfigured
    }
}

/// Everyone a message reaches, loaded for deciding, in audience order.
///
/// A store that keeps a group's receivers between sends hands them out as they are: the rows are
/// shared, not copied; the sender is left out by position; the badge counters (which every send
/// changes) are kept apart from the rows, so that counting a send copies one array of integers.
public struct StoredReceivers: RandomAccessCollection, Sendable {
    private let rows: [StoredReceiver]
    private let badges: [Int]?
    private let skipped: Int
    /// What stands for the names and devices of ``allRows``, when the store keeps them as a roll
    /// that records of sends can refer to (`SentMessageTable/storeRoll(_:usedAt:encoded:)`):
    /// receiver `i` is row `i`, or `i + 1` from ``skippedRow`` on.
    public let roll: ReceiverRoll?

    /// Receivers as loaded.
    /// - Parameter receivers: the receivers, in audience order.
    public init(_ receivers: [StoredReceiver]) {
        rows = receivers
        badges = nil
        skipped = receivers.count
        roll = nil
    }

    /// Kept receivers, leaving one out.
    /// - Parameters:
    ///   - rows: every member, as loaded.
    ///   - badges: each row's current badge counter (it replaces the row's own).
    ///   - skipped: the position of the row left out (the sender); `nil` for none.
    public init(rows: [StoredReceiver], badges: [Int], skipping skipped: Int?) {
        self.init(rows: rows, badges: badges, skipping: skipped, roll: nil)
    }

    /// Kept receivers whose names and devices are a roll, leaving one out.
    /// - Parameters:
    ///   - rows: every member, as loaded.
    ///   - badges: each row's current badge counter (it replaces the row's own).
    ///   - skipped: the position of the row left out (the sender); `nil` for none.
    ///   - roll: what stands for the rows' names and devices while they stay as they are, if anything.
    public init(rows: [StoredReceiver], badges: [Int], skipping skipped: Int?, roll: ReceiverRoll?) {
        precondition(rows.count == badges.count, "one badge counter a row")
        self.rows = rows
        self.badges = badges
        self.skipped = skipped ?? rows.count
        self.roll = roll
    }

    /// Every row, the one left out too: the roll's rows, when there is a roll.
    public var allRows: [StoredReceiver] { rows }

    /// The row left out (the sender), if any.
    public var skippedRow: Int? { skipped < rows.count ? skipped : nil }

    public var startIndex: Int { 0 }
    public var endIndex: Int { skipped < rows.count ? rows.count - 1 : rows.count }

    public subscript(position: Int) -> StoredReceiver {
        let row = position < skipped ? position : position + 1
        guard let badges else { return rows[row] }
        var receiver = rows[row]
        receiver.state.badge = badges[row]
        return receiver
    }

    /// Calls `body` with each receiver in order, borrowed where it is stored (not copied, as the
    /// subscript copies it to set its counter), its current badge counter and its row.
    /// - Parameter body: takes the receiver, valid during the call only (its own `state.badge` may
    ///   be stale), its badge counter, and its row in ``allRows`` (the one in `deviceRows()`).
    package func forEachBorrowed(_ body: (_ receiver: UnsafePointer<StoredReceiver>, _ badge: Int, _ row: Int) throws -> Void) rethrows {
        try rows.withUnsafeBufferPointer { rows in
            guard let first = rows.baseAddress else { return }
            if let badges {
                try badges.withUnsafeBufferPointer { badges in
                    for row in rows.indices where row != skipped { try body(first + row, badges[row], row) }
                }
            } else {
                for row in rows.indices where row != skipped { try body(first + row, rows[row].state.badge, row) }
            }
        }
    }

    /// These receivers with the counters of some user rows replaced (sends decided earlier in the
    /// same transaction counted them), the rows and roll shared; itself when none of them is here.
    /// - Parameter counters: counters by user row (``UserKey/rawValue``).
    package func recounted(_ counters: [Int64: Int]) -> StoredReceivers {
        guard !counters.isEmpty, rows.contains(where: { $0.key.map { counters[$0.rawValue] != nil } ?? false }) else { return self }
        let badges = rows.indices.map { row in
            rows[row].key.flatMap { counters[$0.rawValue] } ?? self.badges?[row] ?? rows[row].state.badge
        }
        return StoredReceivers(rows: rows, badges: badges, skipping: skippedRow, roll: roll)
    }

    /// The devices of ``allRows``, by row, for the requests of a send to refer to instead of each
    /// holding its receiver's list (the rows stay alive as long as a request refers to them).
    package func deviceRows() -> DeviceRows {
        let rows = self.rows
        return DeviceRows { rows[$0].state.devices }
    }
}

/// The names and devices of a group's kept receivers (every member's, in membership order) as
/// long as they stay the same: a store hands out one roll for them, and a new one when a member's
/// name or devices change or the group does. The records of the sends to the group refer to one
/// stored copy of the roll instead of each carrying every receiver's name and devices (the
/// decisions they give back are the same bytes either way, Specification §10).
///
/// Only its identity matters: the rows are those of the ``StoredReceivers`` that hand it out.
public final class ReceiverRoll: Sendable {
    public init() {}
}

/// A store's handle for one user row, stable for the life of the store: what a read hands out for the
/// counters a send changes.
public struct UserKey: Hashable, Sendable {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
}
