import PushBridgeCore

extension SQLiteStateStore.Transaction {
    func label(_ key: String) throws -> PushLabel? {
        let row = try connection.statement(
            "SELECT name, description, created_at, (SELECT count(*) FROM push_label_users WHERE label = l.key) FROM push_labels l WHERE key = ?")
        row.bind(1, key)
        guard try row.step() else { return nil }
        defer { row.reset() }
        return PushLabel(key: key, name: row.string(0), description: row.string(1), createdAt: Instant(milliseconds: row.int64(2)), count: row.int(3))
    }

    func page(_ page: LabelPage) throws -> LabelPageRows {
        switch page {
        case .labels(let after, let limit):
            let list = try connection.statement(
                """
                SELECT key, name, description, created_at, (SELECT count(*) FROM push_label_users WHERE label = l.key)
                FROM push_labels l WHERE ?1 IS NULL OR key > ?1 ORDER BY key LIMIT ?2
                """)
            list.bind(1, after).bind(2, limit)
            var labels: [PushLabel] = []
            while try list.step() {
                labels.append(
                    PushLabel(key: list.string(0), name: list.string(1), description: list.string(2), createdAt: Instant(milliseconds: list.int64(3)), count: list.int(4)))
            }
            return .labels(labels)
        case .users(let label, let after, let limit):
            let list = try connection.statement(
                "SELECT user_name, added_at FROM push_label_users WHERE label = ?1 AND (?2 IS NULL OR user_name > ?2) ORDER BY user_name LIMIT ?3")
            list.bind(1, label).bind(2, after).bind(3, limit)
            var users: [LabelUser] = []
            while try list.step() { users.append(LabelUser(user: list.string(0), addedAt: Instant(milliseconds: list.int64(1)))) }
            return .users(users)
        case .user(let label, let user):
            let row = try connection.statement("SELECT added_at FROM push_label_users WHERE label = ? AND user_name = ?")
            row.bind(1, label).bind(2, user)
            guard try row.step() else { return .users([]) }
            defer { row.reset() }
            return .users([LabelUser(user: user, addedAt: Instant(milliseconds: row.int64(0)))])
        }
    }

    func apply(_ change: LabelChange) throws {
        try checkWritable()
        switch change {
        case .create(let label):
            try connection.statement("INSERT INTO push_labels (key, name, description, created_at) VALUES (?, ?, ?, ?)")
                .bind(1, label.key).bind(2, label.name).bind(3, label.description).bind(4, label.createdAt.milliseconds).run()
        case .delete(let key):
            try connection.statement("DELETE FROM push_label_users WHERE label = ?").bind(1, key).run()
            try connection.statement("DELETE FROM push_labels WHERE key = ?").bind(1, key).run()
        case .addUsers(let label, let users, let at):
            let insert = try connection.statement("INSERT INTO push_label_users (label, user_name, added_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
            for user in users { try insert.bind(1, label).bind(2, user).bind(3, at.milliseconds).run() }
        case .removeUsers(let label, let users):
            let delete = try connection.statement("DELETE FROM push_label_users WHERE label = ? AND user_name = ?")
            for user in users { try delete.bind(1, label).bind(2, user).run() }
        }
    }
}
