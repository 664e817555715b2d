import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// Push labels and push tasks: nothing a node keeps, so read and written in the update's transaction;
// keys and names compare in the `C` collation (code-point order), each page a range after the last
// key ("" before the first: no key or name is empty).

extension PostgresStateStore.Transaction {
    func label(_ key: String) async throws -> PushLabel? {
        try await rows(
            """
            SELECT key, name, description, created_at, (SELECT count(*) FROM push_label_users u WHERE u.app = l.app AND u.label = l.key)
            FROM push_labels l WHERE app = \(app) AND key = \(key)
            """
        ).first.map(Self.label)
    }

    func page(_ page: LabelPage) async throws -> LabelPageRows {
        switch page {
        case .labels(let after, let limit):
            return .labels(
                try await rows(
                    """
                    SELECT key, name, description, created_at, (SELECT count(*) FROM push_label_users u WHERE u.app = l.app AND u.label = l.key)
                    FROM push_labels l WHERE app = \(app) AND key > \(after ?? "") ORDER BY key LIMIT \(limit)
                    """
                ).map(Self.label))
        case .users(let label, let after, let limit):
            return .users(
                try await rows(
                    """
                    SELECT user_name, added_at FROM push_label_users WHERE app = \(app) AND label = \(label) AND user_name > \(after ?? "")
                    ORDER BY user_name LIMIT \(limit)
                    """
                ).map { LabelUser(user: try $0.string(0), addedAt: Instant(milliseconds: try $0.int64(1))) })
        case .user(let label, let user):
            return .users(
                try await rows("SELECT added_at FROM push_label_users WHERE app = \(app) AND label = \(label) AND user_name = \(user)").map {
                    LabelUser(user: user, addedAt: Instant(milliseconds: try $0.int64(0)))
                })
        case .audience(let audience, let after, let limit):
            let found: [Cells]
            if audience.isEveryUser {
                found = try await rows(
                    """
                    SELECT name, 0::bigint FROM users WHERE app = \(app) AND name COLLATE "C" > \(after ?? "")
                    ORDER BY name COLLATE "C" LIMIT \(limit)
                    """)
            } else {
                let query = AudienceQuery(audience, app: "$3", placeholder: { "$\($0 + 3)" })
                var binds = PostgresBindings()
                binds.append(after ?? "")
                binds.append(limit)
                binds.append(app)
                for text in query.texts { binds.append(text) }
                found = try await rows(PostgresQuery(unsafeSQL: query.sql(cursor: "$1", limit: "$2"), binds: binds))
            }
            return .users(try found.map { LabelUser(user: try $0.string(0), addedAt: Instant(milliseconds: try $0.int64(1))) })
        case .labelsOf(let user):
            return .labels(
                try await rows(
                    """
                    SELECT key, name, description, created_at, (SELECT count(*) FROM push_label_users u WHERE u.app = l.app AND u.label = l.key)
                    FROM push_labels l WHERE app = \(app) AND key IN (SELECT label FROM push_label_users WHERE app = \(app) AND user_name = \(user)) ORDER BY key
                    """
                ).map(Self.label))
        case .attributeNames:
            return .attributes(try await rows("SELECT slot::bigint, name FROM push_attribute_names WHERE app = \(app) ORDER BY slot").map { (String(try $0.int(0)), try $0.string(1)) })
        case .attributesOf(let user):
            return .attributes(try await rows("SELECT name, value FROM user_attributes WHERE app = \(app) AND user_name = \(user) ORDER BY name").map { (try $0.string(0), try $0.string(1)) })
        }
    }

    func tasks(_ query: TaskQuery) async throws -> [PushTask] {
        let columns = "id, family, audience, request, created_at, start_at, state, cursor, targets, pushed, suppressed, ended_at"
        let found: [Cells]
        switch query {
        case .task(let id): found = try await rows(PostgresQuery(unsafeSQL: "SELECT \(columns) FROM push_tasks WHERE app = $1 AND id = $2", binds: try binds(app, id)))
        case .pending: found = try await rows(PostgresQuery(unsafeSQL: "SELECT \(columns) FROM push_tasks WHERE app = $1 AND state = 0 ORDER BY id", binds: try binds(app)))
        case .createdSince(let instant):
            found = try await rows(
                PostgresQuery(unsafeSQL: "SELECT \(columns) FROM push_tasks WHERE app = $1 AND created_at >= $2 ORDER BY id", binds: try binds(app, instant.milliseconds)))
        case .recent(let limit):
            found = try await rows(PostgresQuery(unsafeSQL: "SELECT \(columns) FROM push_tasks WHERE app = $1 ORDER BY id DESC LIMIT $2", binds: try binds(app, limit)))
        }
        return try found.map { row in
            guard let state = PushTask.State(rawValue: try row.int(6)) else {
                throw StoreError(.unexpectedValue, "a push task's state is \(try row.int(6))", context: "push_tasks.state")
            }
            return PushTask(
                id: try row.int64(0), family: try row.string(1), audience: try TaskAudience.decoded(try row.string(2)), request: try row.bytes(3),
                createdAt: Instant(milliseconds: try row.int64(4)), startAt: Instant(milliseconds: try row.int64(5)), state: state, cursor: try row.optionalString(7),
                progress: TaskProgress(targets: try row.int(8), pushed: try row.int(9), suppressed: try TaskProgress.suppressed(from: try row.string(10))),
                endedAt: try row.optionalInt64(11).map(Instant.init(milliseconds:)))
        }
    }

    func saveTask(_ task: PushTask) async throws {
        try checkWritable()
        try await session.query(
            """
            INSERT INTO push_tasks (app, id, family, audience, request, created_at, start_at, state, cursor, targets, pushed, suppressed, ended_at)
            VALUES (\(app), \(task.id), \(task.family), \(task.audience.encoded), \(ByteBuffer(bytes: task.request)), \(task.createdAt.milliseconds),
                \(task.startAt.milliseconds), \(task.state.rawValue), \(task.cursor), \(task.progress.targets), \(task.progress.pushed),
                \(task.progress.encodedSuppressed), \(task.endedAt?.milliseconds))
            ON CONFLICT (app, id) DO UPDATE SET state = excluded.state, cursor = excluded.cursor, targets = excluded.targets, pushed = excluded.pushed,
                suppressed = excluded.suppressed, ended_at = excluded.ended_at
            """)
    }

    func outboxCounts(ofMessagesStartingWith prefix: String) async throws -> OutboxCounts {
        try await OutboxStatement.counts(rows("SELECT state, count(*) FROM deliveries WHERE app = \(app) AND starts_with(message_id, \(prefix)) GROUP BY state"))
    }

    func apply(_ change: LabelChange) async throws {
        try checkWritable()
        switch change {
        case .create(let label):
            try await session.query(
                """
                INSERT INTO push_labels (app, key, name, description, created_at)
                VALUES (\(app), \(label.key), \(label.name), \(label.description), \(label.createdAt.milliseconds))
                """)
        case .delete(let key):
            try await session.query("DELETE FROM push_label_users WHERE app = \(app) AND label = \(key)")
            try await session.query("DELETE FROM push_labels WHERE app = \(app) AND key = \(key)")
        case .addUsers(let label, let users, let at):
            try await session.query(
                """
                INSERT INTO push_label_users (app, label, user_name, added_at) SELECT \(app), \(label), u, \(at.milliseconds) FROM unnest(\(users)::text[]) AS u
                ON CONFLICT DO NOTHING
                """)
        case .removeUsers(let label, let users):
            try await session.query("DELETE FROM push_label_users WHERE app = \(app) AND label = \(label) AND user_name = ANY(\(users)::text[])")
        case .nameAttributes(let names):
            for (slot, name) in names {
                try await session.query(
                    "INSERT INTO push_attribute_names (app, slot, name) VALUES (\(app), \(slot), \(name)) ON CONFLICT (app, slot) DO UPDATE SET name = excluded.name")
            }
        case .setAttributes(let user, let values):
            try await session.query(
                """
                INSERT INTO user_attributes (app, user_name, name, value)
                SELECT \(app), \(user), n, v FROM unnest(\(values.map(\.name))::text[], \(values.map(\.value))::text[]) AS t(n, v)
                ON CONFLICT (app, user_name, name) DO UPDATE SET value = excluded.value
                """)
        case .removeAttributes(let user, let names):
            try await session.query("DELETE FROM user_attributes WHERE app = \(app) AND user_name = \(user) AND name = ANY(\(names)::text[])")
        }
    }

    private static func label(_ row: Cells) throws -> PushLabel {
        PushLabel(
            key: try row.string(0), name: try row.string(1), description: try row.string(2), createdAt: Instant(milliseconds: try row.int64(3)),
            count: try row.int(4))
    }
}
