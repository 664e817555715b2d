import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// Group membership.

extension PostgresStateStore.Transaction {
    func members(of group: String) async throws -> [UserID] {
        try await rows("SELECT u.name FROM members m JOIN users u ON u.app = m.app AND u.id = m.user_id WHERE m.app = \(app) AND m.group_id = \(group) ORDER BY m.position").map { try $0.string(0) }
    }

    func setMembers(_ members: [UserID], of group: String) async throws {
        try checkWritable()
        context.changeKept { kept in
            kept.receivers.tables = kept.receivers.tables.filter { $0.key.group != group }
            kept.users.removeAll()  // a one-to-one receiver kept unknown may be made a user here
        }
        try await session.query("\(unescaped: context.bumping())DELETE FROM members WHERE app = \(app) AND group_id = \(group)")
        guard !members.isEmpty else { return }
        // Unknown users are created unconfigured; then one insert for the whole list, in order.
        try await session.query("INSERT INTO users (app, name) SELECT \(app), unnest(\(members)::text[]) ON CONFLICT (app, name) DO NOTHING")
        try await session.query(
            """
            INSERT INTO members (app, group_id, position, user_id)
            SELECT \(app), \(group), j.position - 1, u.id FROM unnest(\(members)::text[]) WITH ORDINALITY AS j(name, position)
                JOIN users u ON u.app = \(app) AND u.name = j.name
            """)
    }

    /// A write keeps what it read for the node's next sends (``PostgresStateStore/KeptData``).
    func groupProfile(of group: String) async throws -> [UInt8]? {
        if let kept = context.keptData?.profiles[group] { return kept }
        let profile = try await rows("SELECT profile FROM group_profiles WHERE app = \(app) AND group_id = \(group)").first?.optionalBytes(0)
        context.keptData?.profiles[group] = .some(profile)
        return profile
    }

    /// Moves the data version: nodes keep profiles.
    func setGroupProfile(_ profile: [UInt8]?, of group: String) async throws {
        try checkWritable()
        context.changeKept { $0.profiles[group] = nil }
        guard let profile else {
            try await session.query("\(unescaped: context.bumping())DELETE FROM group_profiles WHERE app = \(app) AND group_id = \(group)")
            return
        }
        try await session.query(
            """
            \(unescaped: context.bumping())INSERT INTO group_profiles (app, group_id, profile) VALUES (\(app), \(group), \(ByteBuffer(bytes: profile)))
            ON CONFLICT (app, group_id) DO UPDATE SET profile = excluded.profile
            """)
    }

    func groups(containing user: UserID?) async throws -> [String] {
        if let user {
            return try await rows(
                """
                SELECT m.group_id FROM members m JOIN users u ON u.app = m.app AND u.id = m.user_id WHERE m.app = \(app) AND u.name = \(user)
                ORDER BY m.group_id COLLATE "C"
                """).map { try $0.string(0) }
        }
        return try await rows(
            """
            SELECT group_id FROM (SELECT group_id FROM members WHERE app = \(app) UNION SELECT group_id FROM group_profiles WHERE app = \(app) AND profile IS NOT NULL) g
            ORDER BY group_id COLLATE "C"
            """
        ).map { try $0.string(0) }
    }

    func messageSequence(of group: String, advancing: Bool) async throws -> Int64 {
        guard advancing else { return try await rows("SELECT last_sequence FROM group_profiles WHERE app = \(app) AND group_id = \(group)").first?.int64(0) ?? 0 }
        try checkWritable()
        let row = try await rows(
            """
            INSERT INTO group_profiles (app, group_id, last_sequence) VALUES (\(app), \(group), 1)
            ON CONFLICT (app, group_id) DO UPDATE SET last_sequence = group_profiles.last_sequence + 1 RETURNING last_sequence
            """)
        guard let value = try row.first?.int64(0) else { throw StoreError(.unexpectedValue, "no message sequence for group \"\(group)\"") }
        return value
    }
}
