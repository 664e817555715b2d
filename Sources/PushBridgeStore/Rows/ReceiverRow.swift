import Foundation
import PushBridgeCore

/// A row of a store's query result, read by column: a SQLite statement's current row and a
/// PostgreSQL row both, so that both stores decode the same columns with one decoder.
package protocol StoredRow {
    /// Whether the cell is NULL.
    func isNull(_ column: Int) -> Bool
    /// An integer cell.
    func int64(_ column: Int) throws -> Int64
    /// An integer cell.
    func int(_ column: Int) throws -> Int
    /// A boolean cell (`0`/`1` on SQLite).
    func bool(_ column: Int) throws -> Bool
    /// A text cell.
    func string(_ column: Int) throws -> String
    /// An integer cell that may be NULL.
    func optionalInt64(_ column: Int) throws -> Int64?
    /// An integer cell that may be NULL.
    func optionalInt(_ column: Int) throws -> Int?
    /// A text cell that may be NULL.
    func optionalString(_ column: Int) throws -> String?
    /// A blob (SQLite) or `bytea` (PostgreSQL) cell.
    func bytes(_ column: Int) throws -> [UInt8]
}

/// A table's columns, by name, in the order a store selects them: the enum's cases are the row's
/// columns, so a column's place and its reader cannot drift apart.
package protocol StoredColumn: CaseIterable, RawRepresentable<Int> {
    /// The column's name in its table.
    var columnName: String { get }
}

extension StoredColumn {
    /// The select (or `RETURNING`) list, every column in order.
    package static var sql: String { allCases.map(\.columnName).joined(separator: ", ") }
}

/// The `users` columns a decision reads of a receiver, by name, in the order every store selects
/// them (``sql(badge:)``) and ``ReceiverRow`` reads them.
package enum ReceiverColumn: Int, CaseIterable, Sendable {
    case key, name, configured, presence, backgroundSince, backgroundGrace, badge, appRemind, windowStart, windowEnd
    case appSilentStart, appSilentUntil, displayStyle, language, oneToOneSound, groupSound, timeZone

    /// How many there are: the conversation's columns follow them.
    package static let count = allCases.count

    /// The select list of the users table `u`, with the stored counter's expression for `badge`.
    /// - Parameter badge: the counter's SQL expression (its table's join is the query's).
    package static func sql(badge: String) -> String {
        allCases.map { $0 == .badge ? badge : "u." + $0.columnName }.joined(separator: ", ")
    }

    /// The column's name in the `users` table.
    package var columnName: String {
        switch self {
        case .key: "id"
        case .name: "name"
        case .configured: "configured"
        case .presence: "presence"
        case .backgroundSince: "background_since"
        case .backgroundGrace: "background_grace"
        case .badge: "badge"
        case .appRemind: "app_remind"
        case .windowStart: "window_start"
        case .windowEnd: "window_end"
        case .appSilentStart: "app_silent_start"
        case .appSilentUntil: "app_silent_until"
        case .displayStyle: "display_style"
        case .language: "language"
        case .oneToOneSound: "one_to_one_sound"
        case .groupSound: "group_sound"
        case .timeZone: "time_zone"
        }
    }
}

/// The `users` columns only a whole user's read selects, right after ``ReceiverColumn``'s.
package enum UserDetailColumn: Int, CaseIterable, Sendable {
    case boundCertificate, displayName

    /// The select list of the users table `u`.
    package static let sql = "u.bound_certificate, u.display_name"

    /// The column's place in a row that starts with ``ReceiverColumn``'s.
    package var column: Int { ReceiverColumn.count + rawValue }
}

/// The conversation settings a decision reads (`remind, silent_start, silent_until` of
/// `conversation_settings`), selected right after the receiver's columns or on their own.
package enum ConversationColumn: Int, CaseIterable, Sendable {
    case remind, silentStart, silentUntil
}

/// Reads a receiver's row into the core's values: the decoder both stores share.
package struct ReceiverRow<Row: StoredRow> {
    /// The row.
    package let row: Row

    /// - Parameter row: a row whose first columns are ``ReceiverColumn``'s.
    package init(_ row: Row) { self.row = row }

    private func int64(_ column: ReceiverColumn) throws -> Int64 { try row.int64(column.rawValue) }
    private func int(_ column: ReceiverColumn) throws -> Int { try row.int(column.rawValue) }
    private func string(_ column: ReceiverColumn) throws -> String { try row.string(column.rawValue) }
    private func optionalInt64(_ column: ReceiverColumn) throws -> Int64? { try row.optionalInt64(column.rawValue) }
    private func optionalInt(_ column: ReceiverColumn) throws -> Int? { try row.optionalInt(column.rawValue) }
    private func optionalString(_ column: ReceiverColumn) throws -> String? { try row.optionalString(column.rawValue) }

    /// The user's state without devices, conversations, name cards, bound certificate or display name,
    /// and whether it is configured.
    /// - Parameters:
    ///   - timeZone: the user's time zone, read by the store from ``ReceiverColumn/timeZone`` (each
    ///     store keeps the zones it has made).
    ///   - badge: the user's counter (the store's, from ``ReceiverColumn/badge`` or its badge log).
    package func state(timeZone: TimeZone, badge: Int) throws -> (UserState, configured: Bool) {
        let style: DisplayStyle = try int(.displayStyle) == 1 ? .messageSummary : .simpleBanner
        var state = UserState(user: try string(.name), displayStyle: style, backgroundGraceSeconds: try int64(.backgroundGrace), timeZone: timeZone)
        switch try int(.presence) {
        case 1: state.presence = .online
        case 2: state.presence = .background(since: Instant(milliseconds: try int64(.backgroundSince)))
        default: state.presence = .offline
        }
        state.badge = badge
        state.app.remindType = try StoredCodes.decodeRemind(try optionalInt(.appRemind), column: "users.app_remind")
        if let start = try optionalInt(.windowStart), let end = try optionalInt(.windowEnd) {
            guard (0..<1440).contains(start), (1...1440).contains(end) else {
                throw StoreError(.unexpectedValue, "window \(start)–\(end)", context: "users.window_start")
            }
            state.app.window = DoNotDisturbWindow(startMinute: start, endMinute: end)
        }
        if let start = try optionalInt64(.appSilentStart), let until = try optionalInt64(.appSilentUntil) {
            state.app.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
        }
        state.language = try optionalString(.language)
        state.oneToOneSound = try optionalString(.oneToOneSound)
        state.groupSound = try optionalString(.groupSound)
        return (state, try row.bool(ReceiverColumn.configured.rawValue))
    }

    /// The user's row id (``ReceiverColumn/key``).
    package func key() throws -> Int64 { try int64(.key) }

    /// The bound certificate's id and the display name (``UserDetailColumn``'s, after the receiver's).
    package func details() throws -> (boundCertificate: Int64?, displayName: String?) {
        (try row.optionalInt64(UserDetailColumn.boundCertificate.column), try row.optionalString(UserDetailColumn.displayName.column))
    }

    /// The conversation's settings, whose columns (``ConversationColumn``) start at `offset`.
    /// - Parameter offset: the first one's column (``ReceiverColumn/count`` after a receiver's).
    package func conversation(at offset: Int) throws -> ConversationPushSettings {
        var settings = ConversationPushSettings()
        settings.remindType = try StoredCodes.decodeRemind(
            try row.optionalInt(offset + ConversationColumn.remind.rawValue), column: "conversation_settings.remind")
        if let start = try row.optionalInt64(offset + ConversationColumn.silentStart.rawValue),
            let until = try row.optionalInt64(offset + ConversationColumn.silentUntil.rawValue)
        {
            settings.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
        }
        return settings
    }
}
