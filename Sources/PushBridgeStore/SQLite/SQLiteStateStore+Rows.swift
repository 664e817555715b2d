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
        return StoredReceiver(key: UserKey(rawValue: row.int64(0)), state: state, isConfigured: configured)
    }

    /// Reads ``receiverColumns`` (from column 0) into a state without devices, conversations,
    /// name cards, bound certificate or display name.
    /// - Parameters:
    ///   - row: the row.
    ///   - overlay: the badge log.
    ///   - storedBadge: the stored counter (badge_counters'), when not read from column 6.
    func readReceiver(_ row: Statement, overlay: BadgeOverlay, storedBadge: Int? = nil) throws -> (UserState, configured: Bool) {
        let name = row.string(1)
        let configured = row.int(2) == 1
        let style: DisplayStyle = row.int(12) == 1 ? .messageSummary : .simpleBanner
        guard let zone = connection.timeZone(named: row.text(16)) else {
            throw StoreError(.unexpectedValue, "time zone \"\(row.string(16))\"", context: "users.time_zone")
        }
        var state = UserState(user: name, displayStyle: style, backgroundGraceSeconds: row.int64(5), timeZone: zone)
        switch row.int(3) {
        case 1: state.presence = .online
        case 2: state.presence = .background(since: Instant(milliseconds: row.int64(4)))
        default: state.presence = .offline
        }
        state.badge = badge(of: row.int64(0), stored: storedBadge ?? row.int(6), in: overlay)
        state.app.remindType = try StoredCodes.decodeRemind(row.optionalInt(7), column: "users.app_remind")
        if let start = row.optionalInt(8), let end = row.optionalInt(9) {
            guard (0..<1440).contains(start), (1...1440).contains(end) else {
                throw StoreError(.unexpectedValue, "window \(start)–\(end)", context: "users.window_start")
            }
            state.app.window = DoNotDisturbWindow(startMinute: start, endMinute: end)
        }
        if let start = row.optionalInt64(10), let until = row.optionalInt64(11) {
            state.app.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
        }
        state.language = row.optionalString(13)
        state.oneToOneSound = row.optionalString(14)
        state.groupSound = row.optionalString(15)
        return (state, configured)
    }

    /// Reads (remind, silent_start, silent_until) starting at `offset`.
    func readConversation(_ row: Statement, offset: Int32) throws -> ConversationPushSettings {
        var settings = ConversationPushSettings()
        settings.remindType = try StoredCodes.decodeRemind(row.optionalInt(offset), column: "conversation_settings.remind")
        if let start = row.optionalInt64(offset + 1), let until = row.optionalInt64(offset + 2) {
            settings.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
        }
        return settings
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
