import PostgresNIO
import PushBridgeStore

// The apps of a database share its tables (migration `2026-12-06-tables-shared-by-apps`): an app's key,
// and an app's tables from before, in a schema of their own, moved in.

extension PostgresStateStore {
    /// Tables shared by the apps of a database: every row keyed by its app (`apps.key`), one
    /// migration history, one commit function and one write lock an app (no longer a schema an
    /// app). A schema migrated in place keeps its rows as app 1, the app with id '' (a store
    /// opened on a location with no app); a service's apps move in from their old schemas when
    /// each first opens (`PostgresStateStore.moveInOldSchema`). Row ids stay: keys are (app, id),
    /// and the sequences stay above every id moved in. `app` has no default, so a statement that
    /// forgets it fails rather than writing another app's rows. A key leads with what names a row
    /// (an id, a name, a group) and the app follows; only what is read as a range of an app's rows
    /// (its configuration, badge log, queued and settled deliveries, labels, tasks) leads with the
    /// app, and users in code-point order for a push task's pages lead with the name too (a page
    /// reads past other apps' names in its range, in the index alone). An index leading with the app served lookups by id as a scan of the
    /// app's rows whenever the planner's statistics lagged an app's growth, and always in the
    /// commit function, whose statements keep one plan made while the tables are nearly empty
    /// (2 ms a repeat check after a few thousand sends; a one-to-one read 43 ms at 1,000 users).
    static let tablesSharedByApps = Migration(
        identifier: "2026-12-06-tables-shared-by-apps",
        sql: """
            CREATE TABLE apps (
                key serial PRIMARY KEY,
                id text NOT NULL UNIQUE,
                version bigint NOT NULL DEFAULT 0,
                data_version bigint NOT NULL DEFAULT 0
            );
            INSERT INTO apps (id, version, data_version) SELECT '', version, data_version FROM app_version;
            DROP TABLE app_version;
            DROP FUNCTION pushbridge_write_lock(text);
            DROP FUNCTION pushbridge_write_lock(text, text[]);
            DROP FUNCTION IF EXISTS pushbridge_commit_logged(text, bigint, bigint, bigint, bigint[], text[], bigint[], bigint[], bigint[], bytea, bigint[],
                text[], text[], text[], text[], bigint[], bytea[], bytea[], bigint[], text[], bigint[], bytea[], bigint);
            ALTER TABLE certificates DROP CONSTRAINT certificates_pkey CASCADE;
            ALTER TABLE users DROP CONSTRAINT users_pkey CASCADE, DROP CONSTRAINT users_name_key;
            ALTER TABLE push_labels DROP CONSTRAINT push_labels_pkey CASCADE;
            ALTER TABLE app_certificates DROP CONSTRAINT app_certificates_pkey;
            ALTER TABLE app_templates DROP CONSTRAINT app_templates_pkey;
            ALTER TABLE badge_counters DROP CONSTRAINT badge_counters_pkey;
            ALTER TABLE conversation_settings DROP CONSTRAINT conversation_settings_pkey;
            ALTER TABLE name_cards DROP CONSTRAINT name_cards_pkey;
            ALTER TABLE members DROP CONSTRAINT members_pkey, DROP CONSTRAINT members_group_id_user_id_key;
            ALTER TABLE devices DROP CONSTRAINT devices_pkey, DROP CONSTRAINT devices_sequence_key;
            ALTER TABLE sent_messages DROP CONSTRAINT sent_messages_pkey;
            ALTER TABLE deliveries DROP CONSTRAINT deliveries_pkey;
            ALTER TABLE badge_log DROP CONSTRAINT badge_log_pkey;
            ALTER TABLE receiver_rolls DROP CONSTRAINT receiver_rolls_pkey;
            ALTER TABLE group_profiles DROP CONSTRAINT group_profiles_pkey;
            ALTER TABLE push_bindings DROP CONSTRAINT push_bindings_pkey;
            ALTER TABLE push_label_users DROP CONSTRAINT push_label_users_pkey;
            ALTER TABLE push_tasks DROP CONSTRAINT push_tasks_pkey;
            ALTER TABLE push_attribute_names DROP CONSTRAINT push_attribute_names_pkey, DROP CONSTRAINT push_attribute_names_name_key;
            ALTER TABLE user_attributes DROP CONSTRAINT user_attributes_pkey;
            DROP INDEX users_by_name_c, devices_by_user, sent_messages_by_time, deliveries_due, deliveries_by_message, deliveries_settled,
                receiver_rolls_by_time, push_label_users_by_user, push_tasks_pending, push_tasks_by_creation, user_attributes_by_value;
            ALTER TABLE certificates ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE app_certificates ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE app_templates ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE users ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE badge_counters ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE conversation_settings ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE name_cards ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE members ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE devices ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE sent_messages ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE deliveries ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE badge_log ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE receiver_rolls ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE group_profiles ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE push_bindings ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE push_labels ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE push_label_users ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE push_tasks ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE push_attribute_names ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE user_attributes ADD COLUMN app integer NOT NULL DEFAULT 1;
            ALTER TABLE certificates ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE app_certificates ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE app_templates ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE users ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE badge_counters ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE conversation_settings ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE name_cards ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE members ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE devices ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE sent_messages ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE deliveries ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE badge_log ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE receiver_rolls ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE group_profiles ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE push_bindings ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE push_labels ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE push_label_users ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE push_tasks ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE push_attribute_names ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE user_attributes ALTER COLUMN app DROP DEFAULT;
            ALTER TABLE certificates ADD PRIMARY KEY (id, app);
            ALTER TABLE app_certificates ADD PRIMARY KEY (app, position),
                ADD FOREIGN KEY (app, certificate_id) REFERENCES certificates (app, id);
            ALTER TABLE app_templates ADD PRIMARY KEY (app, position);
            ALTER TABLE users ADD PRIMARY KEY (id, app), ADD UNIQUE (name, app),
                ADD FOREIGN KEY (app, bound_certificate) REFERENCES certificates (app, id);
            ALTER TABLE badge_counters ADD PRIMARY KEY (user_id, app), ADD FOREIGN KEY (app, user_id) REFERENCES users (app, id);
            ALTER TABLE conversation_settings ADD PRIMARY KEY (user_id, group_chat, conversation, app),
                ADD FOREIGN KEY (app, user_id) REFERENCES users (app, id);
            ALTER TABLE name_cards ADD PRIMARY KEY (user_id, group_id, app), ADD FOREIGN KEY (app, user_id) REFERENCES users (app, id);
            ALTER TABLE members ADD PRIMARY KEY (group_id, app, position), ADD UNIQUE (group_id, app, user_id),
                ADD FOREIGN KEY (app, user_id) REFERENCES users (app, id);
            ALTER TABLE devices ADD PRIMARY KEY (token, app), ADD UNIQUE (sequence, app),
                ADD FOREIGN KEY (app, user_id) REFERENCES users (app, id), ADD FOREIGN KEY (app, certificate_id) REFERENCES certificates (app, id);
            ALTER TABLE sent_messages ADD PRIMARY KEY (message_id, app);
            ALTER TABLE deliveries ADD PRIMARY KEY (id, app);
            ALTER TABLE badge_log ADD PRIMARY KEY (app, id);
            ALTER TABLE receiver_rolls ADD PRIMARY KEY (id, app);
            ALTER TABLE group_profiles ADD PRIMARY KEY (group_id, app);
            ALTER TABLE push_bindings ADD PRIMARY KEY (user_name, app, position);
            ALTER TABLE push_labels ADD PRIMARY KEY (app, key);
            ALTER TABLE push_label_users ADD PRIMARY KEY (label, app, user_name),
                ADD FOREIGN KEY (app, label) REFERENCES push_labels (app, key);
            ALTER TABLE push_tasks ADD PRIMARY KEY (app, id);
            ALTER TABLE push_attribute_names ADD PRIMARY KEY (app, slot), ADD UNIQUE (app, name);
            ALTER TABLE user_attributes ADD PRIMARY KEY (user_name, app, name);
            CREATE INDEX users_by_name_c ON users (name COLLATE "C", app);
            CREATE INDEX devices_by_user ON devices (user_id, app, sequence);
            CREATE INDEX sent_messages_by_time ON sent_messages (sent_at, app);
            CREATE INDEX deliveries_due ON deliveries (app, lane, due_at) WHERE state = 0;
            CREATE INDEX deliveries_by_message ON deliveries (message_id, app);
            CREATE INDEX deliveries_settled ON deliveries (app, updated_at) WHERE state <> 0;
            CREATE INDEX receiver_rolls_by_time ON receiver_rolls (used_at, app);
            CREATE INDEX push_label_users_by_user ON push_label_users (user_name, app);
            CREATE INDEX push_tasks_pending ON push_tasks (app, id) WHERE state = 0;
            CREATE INDEX push_tasks_by_creation ON push_tasks (app, created_at);
            CREATE INDEX user_attributes_by_value ON user_attributes (name, value, app, user_name);
            CREATE FUNCTION pushbridge_write_lock(app_key integer, ids text[]) RETURNS TABLE (configuration bigint, data bigint, first_log bigint, last_log bigint, message_id text, sent_at bigint, decisions bytea)
                LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$ BEGIN
                PERFORM pg_advisory_xact_lock(hashtext(current_schema())::bigint << 32 | app_key);  -- the app's lock
                RETURN QUERY SELECT a.version, a.data_version, (SELECT min(l.id) FROM badge_log l WHERE l.app = app_key), (SELECT max(l.id) FROM badge_log l WHERE l.app = app_key),
                    NULL::text, NULL::bigint, NULL::bytea FROM apps a WHERE a.key = app_key;  -- the versions
                RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, s.message_id, s.sent_at, s.decisions FROM sent_messages s
                    WHERE s.app = app_key AND s.message_id = ANY(ids); END $$;
            \(commitLoggedFunction)
            """)

    /// The tables an app's rows live in, in the order their foreign keys allow filling them.
    static let appTables = [
        "certificates", "app_certificates", "app_templates", "users", "badge_counters", "conversation_settings", "name_cards", "members",
        "devices", "sent_messages", "deliveries", "badge_log", "receiver_rolls", "group_profiles", "push_bindings", "push_labels",
        "push_label_users", "push_tasks", "push_attribute_names", "user_attributes",
    ]

    /// The columns whose values a sequence gives, kept above every value moved in.
    static let sequencedColumns = [
        ("certificates", "id"), ("users", "id"), ("devices", "sequence"), ("deliveries", "id"), ("badge_log", "id"), ("receiver_rolls", "id"),
    ]

    /// The key of app `id` in the session's schema, made when the app is new.
    /// - Parameters:
    ///   - id: the app's id.
    ///   - session: a connection whose search path is the shared tables' schema.
    static func appKey(_ id: String, session: PostgresLease) async throws -> Int32 {
        for _ in 0..<2 {  // a node that made it at the same moment is seen the second time
            let rows = try await session.query(
                """
                WITH made AS (INSERT INTO apps (id) VALUES (\(id)) ON CONFLICT (id) DO NOTHING RETURNING key),
                cursor AS (INSERT INTO delivery_cursors (app) SELECT key FROM made)
                SELECT key FROM made UNION ALL SELECT key FROM apps WHERE id = \(id)
                """
            ).map(Cells.init)
            if let row = rows.first { return Int32(try row.int64(0)) }
        }
        throw StoreError(.postgres, "no key for app \"\(id)\"", context: "apps")
    }

    /// Moves an app's tables from the schema it had before apps shared tables (`oldSchema`) into
    /// the shared ones, in one transaction, and drops that schema; answers the app's key, or `nil`
    /// when there is no such schema. The old schema is brought up to date first (its rows become
    /// its own app 1), so a schema any PushBridge made moves alike; row ids stay (keys are the app
    /// and the id), the sequences are moved past them, and the versions move on so no node keeps
    /// what it read before. Two nodes opening the app at once move it once (an advisory lock a schema).
    /// - Parameters:
    ///   - oldSchema: the app's old schema (a checked identifier).
    ///   - app: the app's id.
    ///   - schema: the shared tables' schema, the session's search path on return.
    ///   - session: a connection of the store's pool.
    static func moveInOldSchema(_ oldSchema: String, app: String, into schema: String, session: PostgresLease) async throws -> Int32? {
        guard try await exists(oldSchema, session) else { return nil }
        session.schema = nil  // unknown until the transaction ends well
        try await session.execute("BEGIN")
        do {
            try await session.query("SELECT pg_advisory_xact_lock(\(schemaLock), hashtext(\(oldSchema)))")
            guard try await exists(oldSchema, session) else {  // moved by another node meanwhile
                try await session.execute("COMMIT")
                return nil
            }
            try await session.execute("SET search_path TO \(oldSchema)")
            try await migrateInTransaction(session, scope: oldSchema)
            try await session.execute("SET search_path TO \(schema)")
            let key = try await appKey(app, session: session)
            var columns: [String: [String]] = [:]
            for row in try await session.query(
                """
                SELECT table_name::text, column_name::text FROM information_schema.columns
                WHERE table_schema = \(oldSchema) AND column_name <> 'app' AND is_generated = 'NEVER' ORDER BY table_name, ordinal_position
                """
            ).map(Cells.init) {
                columns[try row.string(0), default: []].append("\"" + (try row.string(1)) + "\"")
            }
            // Identifiers are checked names and the catalogue's columns (quoted); the key is a number.
            var script = ""
            for table in appTables {
                guard let names = columns[table]?.joined(separator: ", ") else {
                    throw StoreError(.unexpectedValue, "schema \(oldSchema) has no table \(table)", context: oldSchema)
                }
                script += "INSERT INTO \(schema).\(table) (app, \(names)) SELECT \(key), \(names) FROM \(oldSchema).\(table) WHERE app = 1;\n"
            }
            for (table, column) in sequencedColumns {
                let sequence = "pg_get_serial_sequence('\(schema).\(table)', '\(column)')"
                script += "PERFORM setval(\(sequence), greatest(nextval(\(sequence)), (SELECT coalesce(max(\(column)), 0) FROM \(schema).\(table))));\n"
            }
            script += """
                UPDATE \(schema).apps a SET version = greatest(a.version, o.version) + 1, data_version = greatest(a.data_version, o.data_version) + 1
                    FROM \(oldSchema).apps o WHERE o.key = 1 AND a.key = \(key);
                DROP SCHEMA \(oldSchema) CASCADE;

                """
            try await session.run(scripts: [script])
            try await session.execute("COMMIT")
            session.schema = schema
            return key
        } catch {
            try await rollBack(session)
            throw error
        }
    }

    private static func exists(_ schema: String, _ session: PostgresLease) async throws -> Bool {
        try await !session.query("SELECT 1 FROM pg_namespace WHERE nspname = \(schema)").isEmpty
    }
}
