import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// Push labels (Easemob / Agora Chat `/push/label`): nothing a node keeps, so read and written in the
// update's transaction; keys and names compare in the `C` collation (code-point order).

extension PostgresStateStore.Transaction {
    func label(_ key: String) async throws -> PushLabel? {
        try await rows(
            "SELECT key, name, description, created_at, (SELECT count(*) FROM push_label_users WHERE label = l.key) FROM push_labels l WHERE key = \(key)"
        ).first.map(Self.label)
    }

    func page(_ page: LabelPage) async throws -> LabelPageRows {
        switch page {
        case .labels(let after, let limit):
            return .labels(
                try await rows(
                    """
                    SELECT key, name, description, created_at, (SELECT count(*) FROM push_label_users WHERE label = l.key)
                    FROM push_labels l WHERE \(after)::text IS NULL OR key > \(after) ORDER BY key LIMIT \(limit)
                    """
                ).map(Self.label))
        case .users(let label, let after, let limit):
            return .users(
                try await rows(
                    """
                    SELECT user_name, added_at FROM push_label_users WHERE label = \(label) AND (\(after)::text IS NULL OR user_name > \(after))
                    ORDER BY user_name LIMIT \(limit)
                    """
                ).map { LabelUser(user: try $0.string(0), addedAt: Instant(milliseconds: try $0.int64(1))) })
        case .user(let label, let user):
            return .users(
                try await rows("SELECT added_at FROM push_label_users WHERE label = \(label) AND user_name = \(user)").map {
                    LabelUser(user: user, addedAt: Instant(milliseconds: try $0.int64(0)))
                })
        }
    }

    func apply(_ change: LabelChange) async throws {
        try checkWritable()
        switch change {
        case .create(let label):
            try await session.query(
                "INSERT INTO push_labels (key, name, description, created_at) VALUES (\(label.key), \(label.name), \(label.description), \(label.createdAt.milliseconds))")
        case .delete(let key):
            try await session.query("DELETE FROM push_label_users WHERE label = \(key)")
            try await session.query("DELETE FROM push_labels WHERE key = \(key)")
        case .addUsers(let label, let users, let at):
            try await session.query(
                """
                INSERT INTO push_label_users (label, user_name, added_at) SELECT \(label), u, \(at.milliseconds) FROM unnest(\(users)::text[]) AS u
                ON CONFLICT DO NOTHING
                """)
        case .removeUsers(let label, let users):
            try await session.query("DELETE FROM push_label_users WHERE label = \(label) AND user_name = ANY(\(users)::text[])")
        }
    }

    private static func label(_ row: Cells) throws -> PushLabel {
        PushLabel(
            key: try row.string(0), name: try row.string(1), description: try row.string(2), createdAt: Instant(milliseconds: try row.int64(3)),
            count: try row.int(4))
    }
}
