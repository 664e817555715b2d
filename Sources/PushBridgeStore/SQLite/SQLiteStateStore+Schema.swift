/// One schema change, applied once and recorded under its identifier in `pushbridge_migrations`.
struct Migration: Sendable {
    let identifier: String
    let sql: String
}

extension SQLiteStateStore {
    /// Every migration, oldest first. Never edit a shipped one: append a new identifier.
    ///
    /// Small closed vocabularies are stored as integers (checked): presence 0 offline, 1 online,
    /// 2 background; remind type 0 All, 1 MentionOnly, 2 None, NULL inherited; display style
    /// 0 SimpleBanner, 1 MessageSummary. Instants are epoch milliseconds.
    static let migrations: [Migration] = [
        Migration(
            identifier: "2026-11-21-canonical-state",
            sql: """
                CREATE TABLE certificates (
                    id INTEGER PRIMARY KEY,
                    name TEXT,
                    busi_id TEXT,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL CHECK (environment IN ('development', 'production')),
                    CHECK (name IS NOT NULL OR busi_id IS NOT NULL)
                );
                CREATE TABLE app_certificates (
                    position INTEGER PRIMARY KEY,
                    certificate_id INTEGER NOT NULL REFERENCES certificates(id)
                );
                CREATE TABLE app_templates (
                    position INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    title_pattern TEXT,
                    content_pattern TEXT
                );
                CREATE TABLE users (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    configured INTEGER NOT NULL DEFAULT 0 CHECK (configured IN (0, 1)),
                    device_token TEXT,
                    device_certificate INTEGER REFERENCES certificates(id),
                    bound_certificate INTEGER REFERENCES certificates(id),
                    presence INTEGER NOT NULL DEFAULT 0 CHECK (presence IN (0, 1, 2)),
                    background_since INTEGER,
                    background_grace INTEGER NOT NULL DEFAULT 0,
                    badge INTEGER NOT NULL DEFAULT 0,
                    app_remind INTEGER CHECK (app_remind IN (0, 1, 2)),
                    window_start INTEGER,
                    window_end INTEGER,
                    app_silent_start INTEGER,
                    app_silent_until INTEGER,
                    display_style INTEGER NOT NULL DEFAULT 0 CHECK (display_style IN (0, 1)),
                    display_name TEXT,
                    language TEXT,
                    one_to_one_sound TEXT,
                    group_sound TEXT,
                    time_zone TEXT NOT NULL DEFAULT 'UTC',
                    CHECK ((device_token IS NULL) = (device_certificate IS NULL)),
                    CHECK ((presence = 2) = (background_since IS NOT NULL)),
                    CHECK ((window_start IS NULL) = (window_end IS NULL)),
                    CHECK ((app_silent_start IS NULL) = (app_silent_until IS NULL))
                );
                CREATE TABLE conversation_settings (
                    user_id INTEGER NOT NULL REFERENCES users(id),
                    group_chat INTEGER NOT NULL CHECK (group_chat IN (0, 1)),
                    conversation TEXT NOT NULL,
                    remind INTEGER CHECK (remind IN (0, 1, 2)),
                    silent_start INTEGER,
                    silent_until INTEGER,
                    PRIMARY KEY (user_id, group_chat, conversation)
                ) WITHOUT ROWID;
                CREATE TABLE name_cards (
                    user_id INTEGER NOT NULL REFERENCES users(id),
                    group_id TEXT NOT NULL,
                    card TEXT NOT NULL,
                    PRIMARY KEY (user_id, group_id)
                ) WITHOUT ROWID;
                CREATE TABLE members (
                    group_id TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    user_id INTEGER NOT NULL REFERENCES users(id),
                    PRIMARY KEY (group_id, position),
                    UNIQUE (group_id, user_id)
                ) WITHOUT ROWID;
                """),
        // A fan-out rewrote every wide user row it pushed to (the WAL grew by ~15 MB for 100,000
        // members); counters in a narrow table of their own touch ~20 times fewer pages.
        Migration(
            identifier: "2026-11-21-badge-counters-table",
            sql: """
                CREATE TABLE badge_counters (
                    user_id INTEGER PRIMARY KEY REFERENCES users(id),
                    badge INTEGER NOT NULL
                );
                INSERT INTO badge_counters (user_id, badge) SELECT id, badge FROM users;
                ALTER TABLE users DROP COLUMN badge;
                """),
        // Several devices per user (Specification §10), keyed by token: a token belongs to one user at a time.
        // `sequence` orders bindings (newest = highest); a binding of a migrated device is unknown (0).
        // users.device_token / device_certificate stay (a CHECK names them, so SQLite cannot drop
        // them) and are always NULL from here on. Were one token on two users, the user created
        // last keeps it.
        Migration(
            identifier: "2026-11-22-devices-table",
            sql: """
                CREATE TABLE devices (
                    token TEXT PRIMARY KEY,
                    user_id INTEGER NOT NULL REFERENCES users(id),
                    certificate_id INTEGER NOT NULL REFERENCES certificates(id),
                    bound_at INTEGER NOT NULL,
                    sequence INTEGER NOT NULL UNIQUE
                );
                CREATE INDEX devices_by_user ON devices (user_id, sequence);
                INSERT INTO devices (token, user_id, certificate_id, bound_at, sequence)
                    SELECT device_token, id, device_certificate, 0, id FROM users WHERE device_token IS NOT NULL ORDER BY id DESC
                    ON CONFLICT (token) DO NOTHING;
                UPDATE users SET device_token = NULL, device_certificate = NULL;
                """),
        // Repeated sends (Specification §10): the decisions of each message id, byte for byte, kept for the
        // facade's repeat window and pruned by later sends.
        Migration(
            identifier: "2026-11-22-sent-messages",
            sql: """
                CREATE TABLE sent_messages (
                    message_id TEXT PRIMARY KEY,
                    sent_at INTEGER NOT NULL,
                    decisions BLOB NOT NULL
                );
                CREATE INDEX sent_messages_by_time ON sent_messages (sent_at);
                """),
        // The delivery outbox (Specification §13): one row per APNs request, queued in the transaction that
        // decided it. state 0 queued, 1 delivered, 2 failed. `claimed_until` is a worker's lease
        // (0: unclaimed); `due_at` is when a queued row may be sent (again).
        Migration(
            identifier: "2026-11-23-delivery-outbox",
            sql: """
                CREATE TABLE deliveries (
                    id INTEGER PRIMARY KEY,
                    message_id TEXT NOT NULL,
                    receiver TEXT NOT NULL,
                    token TEXT NOT NULL,
                    environment TEXT NOT NULL CHECK (environment IN ('development', 'production')),
                    bound_at INTEGER NOT NULL,
                    headers BLOB NOT NULL,
                    payload BLOB NOT NULL,
                    queued_at INTEGER NOT NULL,
                    due_at INTEGER NOT NULL,
                    claimed_until INTEGER NOT NULL DEFAULT 0,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    state INTEGER NOT NULL DEFAULT 0 CHECK (state IN (0, 1, 2)),
                    status INTEGER,
                    reason TEXT,
                    updated_at INTEGER NOT NULL,
                    device_removed INTEGER NOT NULL DEFAULT 0 CHECK (device_removed IN (0, 1))
                );
                CREATE INDEX deliveries_due ON deliveries (due_at) WHERE state = 0;
                CREATE INDEX deliveries_by_message ON deliveries (message_id);
                CREATE INDEX deliveries_settled ON deliveries (updated_at) WHERE state <> 0;
                """),
        // The badge log: a group send's counters as one row (a packed list of user id and counter,
        // 16 bytes each, little-endian), not one row each. A user's counter is its latest entry,
        // else badge_counters'. Folded into badge_counters when it grows past a limit.
        // AUTOINCREMENT: ids are never reused after a fold, so a reader can tell one happened.
        Migration(
            identifier: "2026-11-24-badge-log",
            sql: """
                CREATE TABLE badge_log (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    entries BLOB NOT NULL CHECK (length(entries) % 16 = 0)
                );
                """),
        // Receiver rolls: a kept group's receivers (names and devices) stored once for the
        // sent-message records of every send to it while they stay the same, instead of in each
        // record. `used_at` is the latest send that refers to it: a roll is pruned with the last of
        // its records. AUTOINCREMENT: a pruned roll's id is never given to another, so a connection
        // that still knows the id cannot refer to a stranger's.
        Migration(
            identifier: "2026-11-25-receiver-rolls",
            sql: """
                CREATE TABLE receiver_rolls (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    used_at INTEGER NOT NULL,
                    rows BLOB NOT NULL
                );
                CREATE INDEX receiver_rolls_by_use ON receiver_rolls (used_at);
                """),
        // One conversation's settings of every user: a big group read by scans
        // (`groupReceivers(_:conversation:)`) reads them by this index, not by a scan of all settings.
        Migration(
            identifier: "2026-11-26-conversation-settings-by-conversation",
            sql: """
                CREATE INDEX conversation_settings_by_conversation ON conversation_settings (group_chat, conversation);
                """),
        // A roll's bytes in a table of their own: every send to a kept group sets its roll's
        // `used_at`, and an UPDATE of a row that held the bytes read and rebuilt the whole row
        // (≈ 5 MB for 100,000 members: 3–9 ms of each warm send).
        Migration(
            identifier: "2026-11-27-receiver-roll-rows-table",
            sql: """
                CREATE TABLE receiver_roll_rows (
                    roll_id INTEGER PRIMARY KEY REFERENCES receiver_rolls(id),
                    rows BLOB NOT NULL
                );
                INSERT INTO receiver_roll_rows (roll_id, rows) SELECT id, rows FROM receiver_rolls;
                ALTER TABLE receiver_rolls DROP COLUMN rows;
                """),
        // Badge log rows written as varints from here on (`BadgeLogEntries`); rows of the 16-byte
        // format are still read. No table changes: the identifier is what makes a PushBridge that
        // reads only the 16-byte format refuse this database (it does not know the identifier).
        Migration(
            identifier: "2026-11-28-badge-log-varint-entries",
            sql: "-- no schema change: badge_log.entries holds varint rows from here on"),
        // Vendor REST groups and device binding (Specification §14): a group's profile (owner, limits, block
        // list, as the facade encodes it; NULL for a group that only has a message sequence) and
        // Tencent's per-group message sequence; the devices bound by Easemob device id and
        // certificate name, by user name (removing the user deletes them).
        Migration(
            identifier: "2026-11-29-group-profiles-and-push-bindings",
            sql: """
                CREATE TABLE group_profiles (
                    group_id TEXT PRIMARY KEY,
                    profile BLOB,
                    last_sequence INTEGER NOT NULL DEFAULT 0
                ) WITHOUT ROWID;
                CREATE TABLE push_bindings (
                    user_name TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    device_id TEXT NOT NULL,
                    notifier TEXT NOT NULL,
                    token TEXT NOT NULL,
                    PRIMARY KEY (user_name, position)
                ) WITHOUT ROWID;
                """),
        // Push campaigns: labels (Easemob / Agora Chat `/push/label`) by key (the name, or the name in
        // lower case where names ignore case) with their users by name (removing the user takes it
        // out), and push tasks (labels joined by ",": label names hold none). Text orders by its
        // bytes, so pages follow code-point order.
        Migration(
            identifier: "2026-11-30-push-campaigns",
            sql: """
                CREATE TABLE push_labels (
                    key TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    created_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE push_label_users (
                    label TEXT NOT NULL REFERENCES push_labels(key),
                    user_name TEXT NOT NULL,
                    added_at INTEGER NOT NULL,
                    PRIMARY KEY (label, user_name)
                ) WITHOUT ROWID;
                CREATE INDEX push_label_users_by_user ON push_label_users (user_name);
                CREATE TABLE push_tasks (
                    id INTEGER PRIMARY KEY,
                    family TEXT NOT NULL,
                    audience TEXT NOT NULL,
                    request BLOB NOT NULL,
                    created_at INTEGER NOT NULL,
                    start_at INTEGER NOT NULL,
                    state INTEGER NOT NULL CHECK (state IN (0, 1, 2)),
                    cursor TEXT,
                    targets INTEGER NOT NULL,
                    pushed INTEGER NOT NULL,
                    suppressed TEXT NOT NULL,
                    ended_at INTEGER
                );
                CREATE INDEX push_tasks_pending ON push_tasks (id) WHERE state = 0;
                CREATE INDEX push_tasks_by_creation ON push_tasks (created_at);
                CREATE TABLE push_attribute_names (
                    slot INTEGER PRIMARY KEY CHECK (slot BETWEEN 0 AND 9),
                    name TEXT NOT NULL UNIQUE
                );
                CREATE TABLE user_attributes (
                    user_name TEXT NOT NULL,
                    name TEXT NOT NULL,
                    value TEXT NOT NULL,
                    PRIMARY KEY (user_name, name)
                ) WITHOUT ROWID;
                CREATE INDEX user_attributes_by_value ON user_attributes (name, value, user_name);
                """),
        // Delivery lanes: a push task's deliveries (their message ids begin `pushtask-`) are lane 1,
        // every other lane 0; a claim takes lane 0 first, so chat pushes queued behind a campaign go
        // first. Computed from the id (no writer names a lane); the queued rows' index leads with it.
        Migration(
            identifier: "2026-12-01-delivery-lanes",
            sql: """
                ALTER TABLE deliveries ADD COLUMN lane INTEGER GENERATED ALWAYS AS (message_id GLOB 'pushtask-*') VIRTUAL;
                DROP INDEX deliveries_due;
                CREATE INDEX deliveries_due ON deliveries (lane, due_at) WHERE state = 0;
                """),
        // A run of deliveries of one request (a group message's members: one render class's
        // template) stores it once: its headers, and its payload as the render class's template
        // with where each receiver's badge digits and id go (`*_start`/`*_end`, NULL for none: then
        // every delivery sends the bytes as they are). The rows refer to it by `content`, keep empty
        // blobs of their own and their receiver's `badge`. A delivery whose request is its own keeps
        // it in its row (NULL `content`), as before. The index finds the oldest content still referred
        // to (pruning).
        Migration(
            identifier: "2026-12-02-delivery-contents",
            sql: """
                CREATE TABLE delivery_contents (
                    id INTEGER PRIMARY KEY,
                    headers BLOB NOT NULL,
                    payload BLOB NOT NULL,
                    badge_start INTEGER,
                    badge_end INTEGER,
                    receiver_start INTEGER,
                    receiver_end INTEGER,
                    CHECK ((badge_start IS NULL) = (badge_end IS NULL)),
                    CHECK ((receiver_start IS NULL) = (receiver_end IS NULL))
                );
                ALTER TABLE deliveries ADD COLUMN content INTEGER;
                ALTER TABLE deliveries ADD COLUMN badge INTEGER;
                CREATE INDEX deliveries_by_content ON deliveries (content) WHERE content IS NOT NULL;
                """),
    ]

    /// The identifiers of every migration this PushBridge knows, oldest first.
    public static var migrationIdentifiers: [String] { migrations.map(\.identifier) }

    /// Applies the migrations this database lacks, each in its own transaction.
    static func migrate(_ connection: SQLiteConnection, migrations: [Migration] = SQLiteStateStore.migrations) throws {
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS pushbridge_migrations (identifier TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
        try withImmediateTransaction(connection) {
            var applied = Set<String>()
            let list = try connection.statement("SELECT identifier FROM pushbridge_migrations")
            while try list.step() { applied.insert(list.string(0)) }
            let known = Set(migrations.map(\.identifier))
            if let unknown = applied.subtracting(known).sorted().first {
                throw StoreError(.newerSchema, "the database has migration \"\(unknown)\", which this PushBridge does not know; use a newer PushBridge",
                    context: connection.path)
            }
            for migration in migrations where !applied.contains(migration.identifier) {
                try connection.execute(migration.sql)
                try connection.statement("INSERT INTO pushbridge_migrations (identifier, applied_at) VALUES (?, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))")
                    .bind(1, migration.identifier).run()
            }
        }
    }

    /// The identifiers of the migrations a database has, in the order applied.
    public func appliedMigrations() throws -> [String] {
        try lock.withLock {
            let list = try connection.statement("SELECT identifier FROM pushbridge_migrations ORDER BY rowid")
            var out: [String] = []
            while try list.step() { out.append(list.string(0)) }
            return out
        }
    }
}
