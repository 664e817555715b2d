import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// Rows read by column into the core's values, shared by every read above.

extension PostgresStateStore.Transaction {
    /// Reads ``deviceColumns`` starting at `offset`; `nil` for the NULLs of a receiver without devices.
    func device(_ row: Cells, offset: Int) throws -> Device? {
        guard !row.isNull(offset), let certificate = try certificate(try row.int64(offset + 1), column: "devices.certificate_id") else { return nil }
        return Device(token: try row.string(offset), certificate: certificate, boundAt: Instant(milliseconds: try row.int64(offset + 2)))
    }

    func receiver(_ row: Cells, conversation: ConversationKey) throws -> StoredReceiver {
        var (state, configured) = try readReceiver(row)
        let settings = try readConversation(row, offset: Self.receiverColumnCount)
        if !settings.isEmpty { state.conversations[conversation] = settings }
        return StoredReceiver(key: UserKey(rawValue: try row.int64(0)), state: state, isConfigured: configured)
    }

    /// Reads ``receiverColumns`` (from column 0) into a state without devices, conversations,
    /// name cards, bound certificate or display name.
    func readReceiver(_ row: Cells) throws -> (UserState, configured: Bool) {
        let zoneName = try row.string(16)
        let zone: TimeZone
        if let cached = timeZones[zoneName] {
            zone = cached
        } else {
            guard let made = TimeZone(identifier: zoneName) else {
                throw StoreError(.unexpectedValue, "time zone \"\(zoneName)\"", context: "users.time_zone")
            }
            timeZones[zoneName] = made
            zone = made
        }
        let style: DisplayStyle = try row.int(12) == 1 ? .messageSummary : .simpleBanner
        var state = UserState(user: try row.string(1), displayStyle: style, backgroundGraceSeconds: try row.int64(5), timeZone: zone)
        switch try row.int(3) {
        case 1: state.presence = .online
        case 2: state.presence = .background(since: Instant(milliseconds: try row.int64(4)))
        default: state.presence = .offline
        }
        state.badge = try row.int(6)
        state.app.remindType = try StoredCodes.decodeRemind(try row.optionalInt(7), column: "users.app_remind")
        if let start = try row.optionalInt(8), let end = try row.optionalInt(9) {
            guard (0..<1440).contains(start), (1...1440).contains(end) else {
                throw StoreError(.unexpectedValue, "window \(start)–\(end)", context: "users.window_start")
            }
            state.app.window = DoNotDisturbWindow(startMinute: start, endMinute: end)
        }
        if let start = try row.optionalInt64(10), let until = try row.optionalInt64(11) {
            state.app.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
        }
        state.language = try row.optionalString(13)
        state.oneToOneSound = try row.optionalString(14)
        state.groupSound = try row.optionalString(15)
        return (state, try row.bool(2))
    }

    /// Reads (remind, silent_start, silent_until) starting at `offset`.
    func readConversation(_ row: Cells, offset: Int) throws -> ConversationPushSettings {
        var settings = ConversationPushSettings()
        settings.remindType = try StoredCodes.decodeRemind(try row.optionalInt(offset), column: "conversation_settings.remind")
        if let start = try row.optionalInt64(offset + 1), let until = try row.optionalInt64(offset + 2) {
            settings.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
        }
        return settings
    }
}

/// A row read by index, as the SQLite store reads its statements (NULL-aware).
struct Cells {
    let row: PostgresRandomAccessRow

    init(_ row: PostgresRow) { self.row = row.makeRandomAccess() }

    func isNull(_ i: Int) -> Bool { row[i].bytes == nil }
    func int64(_ i: Int) throws -> Int64 { try row[i].decode(Int64.self) }
    func int(_ i: Int) throws -> Int { try row[i].decode(Int.self) }
    func bool(_ i: Int) throws -> Bool { try row[i].decode(Bool.self) }
    func string(_ i: Int) throws -> String { try row[i].decode(String.self) }
    func optionalInt64(_ i: Int) throws -> Int64? { try row[i].decode(Int64?.self) }
    func optionalInt(_ i: Int) throws -> Int? { try row[i].decode(Int?.self) }
    func optionalString(_ i: Int) throws -> String? { try row[i].decode(String?.self) }
    func bytes(_ i: Int) throws -> [UInt8] { Array(buffer: try row[i].decode(ByteBuffer.self)) }
}

/// Bindings for a query whose SQL is built from constants (column lists) and takes `$n` parameters.
func binds(_ values: any PostgresEncodable...) throws -> PostgresBindings {
    var bindings = PostgresBindings()
    for value in values { try bindings.append(value, context: .default) }
    return bindings
}
