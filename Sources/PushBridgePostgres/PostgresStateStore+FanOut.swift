import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// A send's receivers (a group's members or listed users, with their devices and settings), and
// their badge counters written back.

extension PostgresStateStore.Transaction {
    func receivers(of audience: Audience, excluding sender: UserID, conversation: ConversationKey) throws -> StoredReceivers {
        let deviceOffset = Self.receiverColumnCount + 3
        switch audience {
        case .group(let group):
            let found = try rows(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT \(Self.receiverColumns), c.remind, c.silent_start, c.silent_until, \(Self.deviceColumns)
                        FROM members m JOIN users u ON u.id = m.user_id \(Self.badgeJoin)
                        LEFT JOIN conversation_settings c ON c.user_id = m.user_id AND c.group_chat = $2 AND c.conversation = $3
                        LEFT JOIN devices d ON d.user_id = m.user_id
                        WHERE m.group_id = $1 AND u.name <> $4 ORDER BY m.position, d.sequence DESC
                        """,
                    binds: try binds(group, conversation.kind == .group, conversation.id, sender)))
            var out: [StoredReceiver] = []
            for row in found {
                let key = try row.int64(0)
                if out.last?.key?.rawValue != key { out.append(try receiver(row, conversation: conversation)) }
                if let device = try device(row, offset: deviceOffset) { out[out.count - 1].state.devices.append(device) }
            }
            return StoredReceivers(out)
        case .users(let users):
            var seen = Set<UserID>()
            let wanted = users.filter { $0 != sender && seen.insert($0).inserted }
            guard !wanted.isEmpty else { return StoredReceivers([]) }
            let found = try rows(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT \(Self.receiverColumns), c.remind, c.silent_start, c.silent_until, \(Self.deviceColumns), j.position, j.name
                        FROM unnest($1::text[]) WITH ORDINALITY AS j(name, position) LEFT JOIN users u ON u.name = j.name \(Self.badgeJoin)
                        LEFT JOIN conversation_settings c ON c.user_id = u.id AND c.group_chat = $2 AND c.conversation = $3
                        LEFT JOIN devices d ON d.user_id = u.id
                        ORDER BY j.position, d.sequence DESC
                        """,
                    binds: try binds(wanted, conversation.kind == .group, conversation.id)))
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
                        out.append(try receiver(row, conversation: conversation))
                    }
                }
                if let device = try device(row, offset: deviceOffset) { out[out.count - 1].state.devices.append(device) }
            }
            return StoredReceivers(out)
        }
    }

    func setBadges(_ badges: [(key: UserKey, badge: Int)]) throws {
        try checkWritable()
        guard !badges.isEmpty else { return }
        // One statement for the whole fan-out: two arrays, unnested together.
        try session.query(
            """
            INSERT INTO badge_counters (user_id, badge) SELECT * FROM unnest(\(badges.map(\.key.rawValue))::bigint[], \(badges.map { Int64($0.badge) })::bigint[])
            ON CONFLICT (user_id) DO UPDATE SET badge = excluded.badge
            """)
    }
}
