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
            // A range on the key, so each page starts where the last ended (no OR: it would scan from the first).
            let list = try connection.statement(
                """
                SELECT key, name, description, created_at, (SELECT count(*) FROM push_label_users WHERE label = l.key)
                FROM push_labels l WHERE key > ?1 ORDER BY key LIMIT ?2
                """)
            list.bind(1, after ?? "").bind(2, limit)
            var labels: [PushLabel] = []
            while try list.step() {
                labels.append(
                    PushLabel(key: list.string(0), name: list.string(1), description: list.string(2), createdAt: Instant(milliseconds: list.int64(3)), count: list.int(4)))
            }
            return .labels(labels)
        case .users(let label, let after, let limit):
            let list = try connection.statement(
                "SELECT user_name, added_at FROM push_label_users WHERE label = ?1 AND user_name > ?2 ORDER BY user_name LIMIT ?3")
            list.bind(1, label).bind(2, after ?? "").bind(3, limit)
            var users: [LabelUser] = []
            while try list.step() { users.append(LabelUser(user: list.string(0), addedAt: Instant(milliseconds: list.int64(1)))) }
            return .users(users)
        case .user(let label, let user):
            let row = try connection.statement("SELECT added_at FROM push_label_users WHERE label = ? AND user_name = ?")
            row.bind(1, label).bind(2, user)
            guard try row.step() else { return .users([]) }
            defer { row.reset() }
            return .users([LabelUser(user: user, addedAt: Instant(milliseconds: row.int64(0)))])
        case .audience(let audience, let after, let limit):
            let list: Statement
            if audience.isEveryUser {
                list = try connection.statement("SELECT name, 0 FROM users WHERE name > ?1 ORDER BY name LIMIT ?2")
                list.bind(1, after ?? "")
            } else {
                let query = AudienceQuery(audience, placeholder: { "?\($0 + 2)" })
                list = try connection.statement(query.sql(cursor: "?1", limit: "?2"))
                list.bind(1, after ?? "")
                for (i, text) in query.texts.enumerated() { list.bind(Int32(i + 3), text) }
            }
            list.bind(2, limit)
            var users: [LabelUser] = []
            while try list.step() { users.append(LabelUser(user: list.string(0), addedAt: Instant(milliseconds: list.int64(1)))) }
            return .users(users)
        case .labelsOf(let user):
            let list = try connection.statement(
                """
                SELECT key, name, description, created_at, (SELECT count(*) FROM push_label_users WHERE label = l.key)
                FROM push_labels l WHERE key IN (SELECT label FROM push_label_users WHERE user_name = ?1) ORDER BY key
                """)
            list.bind(1, user)
            var labels: [PushLabel] = []
            while try list.step() {
                labels.append(
                    PushLabel(key: list.string(0), name: list.string(1), description: list.string(2), createdAt: Instant(milliseconds: list.int64(3)), count: list.int(4)))
            }
            return .labels(labels)
        case .attributeNames:
            let list = try connection.statement("SELECT slot, name FROM push_attribute_names ORDER BY slot")
            var names: [(key: String, value: String)] = []
            while try list.step() { names.append((String(list.int(0)), list.string(1))) }
            return .attributes(names)
        case .attributesOf(let user):
            let list = try connection.statement("SELECT name, value FROM user_attributes WHERE user_name = ? ORDER BY name").bind(1, user)
            var values: [(key: String, value: String)] = []
            while try list.step() { values.append((list.string(0), list.string(1))) }
            return .attributes(values)
        }
    }

    func tasks(_ query: TaskQuery) throws -> [PushTask] {
        let columns = "id, family, audience, request, created_at, start_at, state, cursor, targets, pushed, suppressed, ended_at"
        let list: Statement
        switch query {
        case .task(let id): list = try connection.statement("SELECT \(columns) FROM push_tasks WHERE id = ?").bind(1, id)
        case .pending: list = try connection.statement("SELECT \(columns) FROM push_tasks WHERE state = 0 ORDER BY id")
        case .createdSince(let instant): list = try connection.statement("SELECT \(columns) FROM push_tasks WHERE created_at >= ? ORDER BY id").bind(1, instant.milliseconds)
        case .recent(let limit): list = try connection.statement("SELECT \(columns) FROM push_tasks ORDER BY id DESC LIMIT ?").bind(1, limit)
        }
        var tasks: [PushTask] = []
        while try list.step() {
            guard let state = PushTask.State(rawValue: list.int(6)) else {
                list.reset()
                throw StoreError(.unexpectedValue, "a push task's state is \(list.int(6))", context: "push_tasks.state")
            }
            tasks.append(
                PushTask(
                    id: list.int64(0), family: list.string(1), audience: try TaskAudience.decoded(list.string(2)), request: list.bytes(3),
                    createdAt: Instant(milliseconds: list.int64(4)), startAt: Instant(milliseconds: list.int64(5)), state: state, cursor: list.optionalString(7),
                    progress: TaskProgress(targets: list.int(8), pushed: list.int(9), suppressed: try TaskProgress.suppressed(from: list.string(10))),
                    endedAt: list.optionalInt64(11).map(Instant.init(milliseconds:))))
        }
        return tasks
    }

    func saveTask(_ task: PushTask) throws {
        try checkWritable()
        try connection.statement(
            """
            INSERT OR REPLACE INTO push_tasks (id, family, audience, request, created_at, start_at, state, cursor, targets, pushed, suppressed, ended_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(1, task.id).bind(2, task.family).bind(3, task.audience.encoded).bind(4, blob: task.request).bind(5, task.createdAt.milliseconds)
            .bind(6, task.startAt.milliseconds).bind(7, task.state.rawValue).bind(8, task.cursor).bind(9, task.progress.targets).bind(10, task.progress.pushed)
            .bind(11, task.progress.encodedSuppressed).bind(12, task.endedAt?.milliseconds).run()
    }

    func outboxCounts(ofMessagesStartingWith prefix: String) throws -> OutboxCounts {
        // The ids from the prefix up to (not including) the prefix with its last byte one higher: an index range.
        var end = Array(prefix.utf8)
        if let last = end.popLast() { end.append(last &+ 1) }
        let rows = try connection.statement("SELECT state, count(*) FROM deliveries WHERE message_id >= ? AND message_id < ? GROUP BY state")
        return try counts(rows.bind(1, prefix).bind(2, bytes: end))
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
        case .nameAttributes(let names):
            let insert = try connection.statement("INSERT OR REPLACE INTO push_attribute_names (slot, name) VALUES (?, ?)")
            for (slot, name) in names { try insert.bind(1, slot).bind(2, name).run() }
        case .setAttributes(let user, let values):
            let insert = try connection.statement("INSERT OR REPLACE INTO user_attributes (user_name, name, value) VALUES (?, ?, ?)")
            for value in values { try insert.bind(1, user).bind(2, value.name).bind(3, value.value).run() }
        case .removeAttributes(let user, let names):
            let delete = try connection.statement("DELETE FROM user_attributes WHERE user_name = ? AND name = ?")
            for name in names { try delete.bind(1, user).bind(2, name).run() }
        }
    }
}
