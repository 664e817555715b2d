import Foundation
import CSQLite
import PushBridgeCore
import PushBridgeJSON

// Group membership.

extension SQLiteStateStore.Transaction {
    func members(of group: String) throws -> [UserID] {
        let list = try connection.statement(
            "SELECT u.name FROM members m JOIN users u ON u.id = m.user_id WHERE m.group_id = ? ORDER BY m.position")
        list.bind(1, group)
        var out: [UserID] = []
        while try list.step() { out.append(list.string(0)) }
        return out
    }

    func setMembers(_ members: [UserID], of group: String) throws {
        try checkWritable()
        connection.receivers.tables = connection.receivers.tables.filter { $0.key.group != group }
        try connection.statement("DELETE FROM members WHERE group_id = ?").bind(1, group).run()
        guard !members.isEmpty else { return }
        let names = Self.jsonArray(members)
        // Unknown users are created unconfigured; then one insert for the whole list, in order.
        try connection.statement("INSERT INTO users (name) SELECT value FROM json_each(?1) WHERE true ON CONFLICT (name) DO NOTHING")
            .bind(1, bytes: names).run()
        try connection.statement(
            "INSERT INTO members (group_id, position, user_id) SELECT ?1, j.key, u.id FROM json_each(?2) j JOIN users u ON u.name = j.value")
            .bind(1, group).bind(2, bytes: names).run()
    }

    func groupProfile(of group: String) throws -> [UInt8]? {
        let row = try connection.statement("SELECT profile FROM group_profiles WHERE group_id = ?")
        row.bind(1, group)
        guard try row.step(), !row.isNull(0) else { return nil }
        return row.bytes(0)
    }

    func setGroupProfile(_ profile: [UInt8]?, of group: String) throws {
        try checkWritable()
        guard let profile else {
            try connection.statement("DELETE FROM group_profiles WHERE group_id = ?").bind(1, group).run()
            return
        }
        try connection.statement(
            "INSERT INTO group_profiles (group_id, profile) VALUES (?1, ?2) ON CONFLICT (group_id) DO UPDATE SET profile = excluded.profile")
            .bind(1, group).bind(2, blob: profile).run()
    }

    func groups(containing user: UserID?) throws -> [String] {
        let list: Statement
        if let user {
            list = try connection.statement(
                "SELECT m.group_id FROM members m JOIN users u ON u.id = m.user_id WHERE u.name = ? ORDER BY m.group_id")
            list.bind(1, user)
        } else {
            list = try connection.statement(
                "SELECT group_id FROM members UNION SELECT group_id FROM group_profiles WHERE profile IS NOT NULL ORDER BY 1")
        }
        var out: [String] = []
        while try list.step() { out.append(list.string(0)) }
        return out
    }

    func messageSequence(of group: String, advancing: Bool) throws -> Int64 {
        guard advancing else {
            let row = try connection.statement("SELECT last_sequence FROM group_profiles WHERE group_id = ?")
            row.bind(1, group)
            guard try row.step() else { return 0 }
            let value = row.int64(0)
            row.reset()
            return value
        }
        try checkWritable()
        let row = try connection.statement(
            "INSERT INTO group_profiles (group_id, last_sequence) VALUES (?1, 1) ON CONFLICT (group_id) DO UPDATE SET last_sequence = last_sequence + 1 RETURNING last_sequence")
        row.bind(1, group)
        guard try row.step() else { throw StoreError(.unexpectedValue, "no message sequence for group \"\(group)\"", context: connection.path) }
        let value = row.int64(0)
        row.reset()
        return value
    }
}
