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
}
