import Foundation
import CSQLite
import PushBridgeCore
import PushBridgeJSON

// Rows read by column into the core's values, shared by every read above.

extension SQLiteStateStore.Transaction {
    func receiver(_ row: Statement, conversation: ConversationKey, overlay: BadgeOverlay) throws -> StoredReceiver {
        var (state, configured) = try readReceiver(row, overlay: overlay)
        let settings = try readConversation(row, offset: Self.receiverColumnCount)
        if !settings.isEmpty { state.conversations[conversation] = settings }
        return StoredReceiver(key: UserKey(rawValue: row.int64(Int32(ReceiverColumn.key.rawValue))), state: state, isConfigured: configured)
    }

    /// Reads ``ReceiverColumn``'s columns (from column 0) into a state without devices,
    /// conversations, name cards, bound certificate or display name (``ReceiverRow``, the decoder
    /// the PostgreSQL store shares).
    /// - Parameters:
    ///   - row: the row.
    ///   - overlay: the badge log.
    ///   - storedBadge: the stored counter (badge_counters'), when not read from its column.
    func readReceiver(_ row: Statement, overlay: BadgeOverlay, storedBadge: Int? = nil) throws -> (UserState, configured: Bool) {
        let zoneColumn = Int32(ReceiverColumn.timeZone.rawValue)
        guard let zone = connection.timeZone(named: row.text(zoneColumn)) else {
            throw StoreError(.unexpectedValue, "time zone \"\(row.string(zoneColumn))\"", context: "users.time_zone")
        }
        let stored = storedBadge ?? row.int(Int32(ReceiverColumn.badge.rawValue))
        let badge = overlay.badge(of: row.int64(Int32(ReceiverColumn.key.rawValue)), stored: stored)
        return try ReceiverRow(SQLiteRow(row)).state(timeZone: zone, badge: badge)
    }

    /// Reads ``ConversationColumn``'s columns starting at `offset`.
    func readConversation(_ row: Statement, offset: Int32) throws -> ConversationPushSettings {
        try ReceiverRow(SQLiteRow(row)).conversation(at: Int(offset))
    }

    static func jsonArray(_ strings: [String]) -> [UInt8] {
        var w = JSONWriter(capacity: strings.count * 12)
        w.raw("[")
        for (i, s) in strings.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(s)
        }
        w.raw("]")
        return w.bytes
    }
}

/// A SQLite statement's current row as a ``StoredRow`` (its cells by `Int` column).
struct SQLiteRow: StoredRow {
    let statement: Statement

    init(_ statement: Statement) { self.statement = statement }

    func isNull(_ column: Int) -> Bool { statement.isNull(Int32(column)) }
    func int64(_ column: Int) -> Int64 { statement.int64(Int32(column)) }
    func int(_ column: Int) -> Int { statement.int(Int32(column)) }
    func bool(_ column: Int) -> Bool { statement.int(Int32(column)) == 1 }
    func string(_ column: Int) -> String { statement.string(Int32(column)) }
    func optionalInt64(_ column: Int) -> Int64? { statement.optionalInt64(Int32(column)) }
    func optionalInt(_ column: Int) -> Int? { statement.optionalInt(Int32(column)) }
    func optionalString(_ column: Int) -> String? { statement.optionalString(Int32(column)) }
    func bytes(_ column: Int) -> [UInt8] { statement.bytes(Int32(column)) }
}
