import Foundation
import CSQLite
import PushBridgeCore
import PushBridgeJSON

// A send's receivers (a group's members or listed users, with their devices and settings), and
// their badge counters written back.

extension SQLiteStateStore.Transaction {
    func receivers(of audience: Audience, excluding sender: UserID, conversation: ConversationKey) throws -> StoredReceivers {
        switch audience {
        case .group(let group):
            let tableKey = ReceiverTable.Key(group: group, conversation: conversation)
            if let table = connection.receivers.tables[tableKey] { return table.receivers(excluding: sender) }
            // One row per member and device (a member without devices has one row with NULLs),
            // newest binding first: members in position order, each one's devices by index.
            let table = ReceiverTable(rows: try groupReceivers(group, conversation: conversation))
            // A table not kept has no stored roll to share with the next send: no roll.
            return table.receivers(excluding: sender, asRoll: connection.receivers.keep(table, for: tableKey))
        case .users(let users):
            let wanted: [UserID]
            if users.count == 1 {  // one-to-one: nothing to deduplicate
                wanted = users[0] == sender ? [] : users
            } else {
                var seen = Set<UserID>()
                wanted = users.filter { $0 != sender && seen.insert($0).inserted }
            }
            guard !wanted.isEmpty else { return StoredReceivers([]) }
            if connection.receivers.limit > 0 {  // each user's whole state, kept for the next message
                return StoredReceivers(try wanted.map { name in
                    try keptUser(name)?.receiver(in: conversation)
                        ?? StoredReceiver(key: nil, state: UserRecord.placeholder(name).state, isConfigured: false)
                })
            }
            let rows = try connection.statement(Self.listedReceiversQuery)
            rows.bind(1, bytes: Self.jsonArray(wanted)).bind(2, conversation.kind == .group ? 1 : 0).bind(3, conversation.id)
            let deviceOffset = Self.receiverColumnCount + 3
            let overlay = try badgeOverlay()
            var out: [StoredReceiver] = []
            var lastPosition: Int64 = -1
            while try rows.step() {
                let position = rows.int64(deviceOffset + 3)
                if position != lastPosition {
                    lastPosition = position
                    if rows.isNull(0) {
                        let placeholder = UserRecord.placeholder(rows.string(deviceOffset + 4))
                        out.append(StoredReceiver(key: nil, state: placeholder.state, isConfigured: false))
                    } else {
                        out.append(try receiver(rows, conversation: conversation, overlay: overlay))
                    }
                }
                if let device = try device(rows, offset: deviceOffset) { out[out.count - 1].state.devices.append(device) }
            }
            return StoredReceivers(out)
        }
    }

    /// Reads rows of ``receiverColumns``, the conversation's settings and ``deviceColumns``, one
    /// row per receiver and device, into one receiver each.
    func receivers(_ rows: Statement, conversation: ConversationKey) throws -> [StoredReceiver] {
        let overlay = try badgeOverlay()
        var out: [StoredReceiver] = []
        while try rows.step() {
            let key = rows.int64(0)
            if out.last?.key?.rawValue != key { out.append(try receiver(rows, conversation: conversation, overlay: overlay)) }
            if let device = try device(rows, offset: Self.receiverColumnCount + 3) { out[out.count - 1].state.devices.append(device) }
        }
        return out
    }

    /// Reads one user's row again into the kept receiver tables that hold it (after a change).
    func refreshKeptReceiver(_ key: Int64) throws {
        connection.receivers.users.forget(key)
        for (tableKey, table) in connection.receivers.tables {
            guard let position = table.position(of: key) else { continue }
            let rows = try connection.statement(Self.oneReceiverQuery)
            rows.bind(1, key).bind(2, tableKey.conversation.kind == .group ? 1 : 0).bind(3, tableKey.conversation.id)
            guard let row = try receivers(rows, conversation: tableKey.conversation).first else {
                connection.receivers.tables[tableKey] = nil
                continue
            }
            table.replace(row, at: position)
        }
    }

    /// The `devices` columns read by ``device(_:offset:)`` (``DeviceColumn``).
    static let deviceColumns = DeviceColumn.sql

    /// Reads ``deviceColumns`` starting at `offset`; `nil` for the NULLs of a receiver without devices.
    func device(_ row: Statement, offset: Int32) throws -> Device? {
        try SQLiteRow(row).device(at: Int(offset)) { try certificate($0, column: "devices.certificate_id") }
    }

    func setBadges(_ badges: [(key: UserKey, badge: Int)]) throws {
        try checkWritable()
        if try logs(badges) {
            // A group send: one row in the badge log, not one update each (Specification §10's counters
            // either way); folded into badge_counters past the limit.
            try logBadges(badges)
            if connection.badgeOverlay!.entries > connection.badgeLogLimit { try foldBadgeLog() }
        } else {
            try writeCounters(badges.lazy.map { ($0.key.rawValue, $0.badge) }, skippingForgottenUsers: false)
        }
        connection.receivers.setBadges(badges)
    }
}
