import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// Rows read by column into the core's values, shared by every read above.

extension PostgresStateStore.Transaction {
    /// Reads ``deviceColumns`` starting at `offset`; `nil` for the NULLs of a receiver without devices.
    func device(_ row: Cells, offset: Int) async throws -> Device? {
        guard !row.isNull(offset + DeviceColumn.token.rawValue) else { return nil }
        let certificate = try await self.certificate(try row.int64(offset + DeviceColumn.certificate.rawValue), column: "devices.certificate_id")
        return try row.device(at: offset) { _ in certificate }
    }

    /// A receiver's row, its counter the badge log's when it has one.
    func receiver(_ row: Cells, conversation: ConversationKey, overlay: BadgeOverlay) throws -> StoredReceiver {
        var (state, configured) = try readReceiver(row)
        let key = try row.int64(ReceiverColumn.key.rawValue)
        state.badge = overlay.badge(of: key, stored: state.badge)
        let settings = try readConversation(row, offset: Self.receiverColumnCount)
        if !settings.isEmpty { state.conversations[conversation] = settings }
        return StoredReceiver(key: UserKey(rawValue: key), state: state, isConfigured: configured)
    }

    /// Reads `ReceiverColumn`'s columns (from column 0) into a state without devices,
    /// conversations, name cards, bound certificate or display name (`ReceiverRow`, the decoder the
    /// SQLite store shares).
    func readReceiver(_ row: Cells) throws -> (UserState, configured: Bool) {
        let zoneName = try row.string(ReceiverColumn.timeZone.rawValue)
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
        return try ReceiverRow(row).state(timeZone: zone, badge: try row.int(ReceiverColumn.badge.rawValue))
    }

    /// Reads `ConversationColumn`'s columns starting at `offset`.
    func readConversation(_ row: Cells, offset: Int) throws -> ConversationPushSettings {
        try ReceiverRow(row).conversation(at: offset)
    }
}

/// A row read by index, as the SQLite store reads its statements (NULL-aware): the `StoredRow`
/// the shared decoders read.
struct Cells: StoredRow {
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
    func optionalBytes(_ i: Int) throws -> [UInt8]? { try row[i].decode(ByteBuffer?.self).map { Array(buffer: $0) } }
}

/// Bindings for a query whose SQL is built from constants (column lists) and takes `$n` parameters.
func binds(_ values: any PostgresEncodable...) throws -> PostgresBindings {
    var bindings = PostgresBindings()
    for value in values { try bindings.append(value, context: .default) }
    return bindings
}
