import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// A send's receivers (a group's members or listed users, with their devices and settings), and
// their badge counters written back; a group's kept between this node's writes (``PostgresStateStore/KeptData``).

extension PostgresStateStore.Transaction {
    func receivers(of audience: Audience, excluding sender: UserID, conversation: ConversationKey) async throws -> StoredReceivers {
        switch audience {
        case .group(let group):
            guard let kept = context.keptData else {  // a read: the sender left out by the query
                return await StoredReceivers(try groupReceivers(group, conversation: conversation, filter: "u.name <> $4", binds: try binds(group, conversation.kind == .group, conversation.id, sender)))
            }
            // A write: every member, kept for the next sends while this node's writes keep it true.
            let tableKey = ReceiverTable.Key(group: group, conversation: conversation)
            if let table = kept.receivers.tables[tableKey] { return table.receivers(excluding: sender) }
            let table = await ReceiverTable(rows: try groupReceivers(group, conversation: conversation, filter: nil, binds: try binds(group, conversation.kind == .group, conversation.id)))
            // A table not kept has no stored roll to share with the next send: no roll.
            return table.receivers(excluding: sender, asRoll: kept.receivers.keep(table, for: tableKey))
        case .users(let users):
            let wanted = PostgresStateStore.KeptOneToOne.wanted(users, excluding: sender)
            guard !wanted.isEmpty else { return StoredReceivers([]) }
            let kept = context.keptData?.users
            if let known = kept?.receivers(wanted, in: conversation) { return StoredReceivers(known) }
            let out = try await oneToOneReceivers(wanted, conversation: conversation)
            if let kept { for receiver in out { kept.keep(receiver, in: conversation) } }
            return StoredReceivers(out)
        }
    }

    /// One-to-one receivers by name, in the order given, each with its settings for `conversation` and
    /// its devices newest first, the badge log's counters applied; a name with no user is a placeholder.
    /// One statement whatever their number; each name's row found by its key (the `OFFSET 0` keeps
    /// the lookup a name's: the apps share the table, and statistics that lag an app's growth made
    /// the planner read the app's rows once and filter them for every name).
    func oneToOneReceivers(_ wanted: [UserID], conversation: ConversationKey) async throws -> [StoredReceiver] {
        let deviceOffset = Self.receiverColumnCount + 3
        let found = try await rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(Self.receiverColumns), c.remind, c.silent_start, c.silent_until, \(Self.deviceColumns), j.position, j.name
                    FROM unnest($1::text[]) WITH ORDINALITY AS j(name, position)
                    LEFT JOIN LATERAL (SELECT * FROM users WHERE name = j.name AND app = $4 OFFSET 0) u ON true \(Self.badgeJoin)
                    LEFT JOIN conversation_settings c ON c.app = u.app AND c.user_id = u.id AND c.group_chat = $2 AND c.conversation = $3
                    LEFT JOIN devices d ON d.app = u.app AND d.user_id = u.id
                    ORDER BY j.position, d.sequence DESC
                    """,
                binds: try binds(wanted, conversation.kind == .group, conversation.id, app)))
        let overlay = try await badgeOverlay()
        var out: [StoredReceiver] = []
        var lastPosition: Int64 = -1
        for row in found {
            let position = try row.int64(deviceOffset + 3)
            if position != lastPosition {
                lastPosition = position
                if row.isNull(0) {
                    let placeholder = UserRecord.placeholder(try row.string(deviceOffset + 4))
                    out.append(StoredReceiver(key: nil, state: placeholder.state, isConfigured: false))
                } else {
                    out.append(try receiver(row, conversation: conversation, overlay: overlay))
                }
            }
            if let device = try await device(row, offset: deviceOffset) { out[out.count - 1].state.devices.append(device) }
        }
        return out
    }

    /// A group's members as receivers in membership order, each with its devices newest first,
    /// the badge log's counters applied.
    /// - Parameters:
    ///   - filter: a condition on the members (`u`), with parameters from `$4`, if any.
    ///   - binds: the group, whether the conversation is a group's, its id, then the filter's (the app's follows).
    func groupReceivers(_ group: String, conversation: ConversationKey, filter: String?, binds: PostgresBindings) async throws -> [StoredReceiver] {
        var binds = binds
        binds.append(app)
        let found = try await rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(Self.receiverColumns), c.remind, c.silent_start, c.silent_until, \(Self.deviceColumns)
                    FROM members m JOIN users u ON u.app = m.app AND u.id = m.user_id \(Self.badgeJoin)
                    LEFT JOIN conversation_settings c ON c.app = m.app AND c.user_id = m.user_id AND c.group_chat = $2 AND c.conversation = $3
                    LEFT JOIN devices d ON d.app = m.app AND d.user_id = m.user_id
                    WHERE m.app = $\(binds.count) AND m.group_id = $1\(filter.map { " AND " + $0 } ?? "") ORDER BY m.position, d.sequence DESC
                    """,
                binds: binds))
        let overlay = try await badgeOverlay()
        let deviceOffset = Self.receiverColumnCount + 3
        var out: [StoredReceiver] = []
        out.reserveCapacity(found.count)
        for row in found {
            let key = try row.int64(0)
            if out.last?.key?.rawValue != key { out.append(try receiver(row, conversation: conversation, overlay: overlay)) }
            if let device = try await device(row, offset: deviceOffset) { out[out.count - 1].state.devices.append(device) }
        }
        return out
    }

    /// Drops the kept receiver tables that hold a user's row (after a change to it), when the
    /// transaction commits: the next send to them reads them again.
    func dropKeptReceiver(_ key: Int64) {
        context.changeKept { kept in kept.receivers.tables = kept.receivers.tables.filter { $0.value.position(of: key) == nil } }
    }
}
