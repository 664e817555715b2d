import PostgresNIO
import PushBridgeStore

extension PostgresStateStore {
    /// One schema change, applied once and recorded under its identifier in `pushbridge_migrations`.
    struct Migration: Sendable {
        let identifier: String
        let sql: String
    }

    /// Every migration, oldest first. Never change what a shipped one does to tables and rows: append a
    /// new identifier. A function a later migration drops or rewrites whole is written only as it is
    /// now, or not at all where it was dropped (ruling 195): every database ends the same. The first is
    /// SQLite's schema as of its `2026-11-23-delivery-outbox` migration, in PostgreSQL's types: the
    /// same tables and columns, so the two stores answer alike. Instants are epoch milliseconds
    /// (`bigint`); small vocabularies are checked integers, as in SQLite.
    static let migrations: [Migration] = appSchemaMigrations + [tablesSharedByApps, oneCommitForApps, commitFunctionsByKey, taskClaimCursor]

    /// The migrations of the tables as they were when each app had a schema of its own.
    static let appSchemaMigrations: [Migration] = [
        Migration(
            identifier: "2026-11-23-postgres-schema",
            sql: """
                CREATE TABLE certificates (
                    id bigserial PRIMARY KEY,
                    name text,
                    busi_id text,
                    bundle_id text NOT NULL,
                    environment text NOT NULL CHECK (environment IN ('development', 'production')),
                    CHECK (name IS NOT NULL OR busi_id IS NOT NULL)
                );
                CREATE TABLE app_certificates (
                    position integer PRIMARY KEY,
                    certificate_id bigint NOT NULL REFERENCES certificates(id)
                );
                CREATE TABLE app_templates (
                    position integer PRIMARY KEY,
                    name text NOT NULL,
                    title_pattern text,
                    content_pattern text
                );
                CREATE TABLE users (
                    id bigserial PRIMARY KEY,
                    name text NOT NULL UNIQUE,
                    configured boolean NOT NULL DEFAULT false,
                    bound_certificate bigint REFERENCES certificates(id),
                    presence smallint NOT NULL DEFAULT 0 CHECK (presence IN (0, 1, 2)),
                    background_since bigint,
                    background_grace bigint NOT NULL DEFAULT 0,
                    app_remind smallint CHECK (app_remind IN (0, 1, 2)),
                    window_start integer,
                    window_end integer,
                    app_silent_start bigint,
                    app_silent_until bigint,
                    display_style smallint NOT NULL DEFAULT 0 CHECK (display_style IN (0, 1)),
                    display_name text,
                    language text,
                    one_to_one_sound text,
                    group_sound text,
                    time_zone text NOT NULL DEFAULT 'UTC',
                    CHECK ((presence = 2) = (background_since IS NOT NULL)),
                    CHECK ((window_start IS NULL) = (window_end IS NULL)),
                    CHECK ((app_silent_start IS NULL) = (app_silent_until IS NULL))
                );
                CREATE TABLE badge_counters (
                    user_id bigint PRIMARY KEY REFERENCES users(id),
                    badge bigint NOT NULL
                );
                CREATE TABLE conversation_settings (
                    user_id bigint NOT NULL REFERENCES users(id),
                    group_chat boolean NOT NULL,
                    conversation text NOT NULL,
                    remind smallint CHECK (remind IN (0, 1, 2)),
                    silent_start bigint,
                    silent_until bigint,
                    PRIMARY KEY (user_id, group_chat, conversation)
                );
                CREATE TABLE name_cards (
                    user_id bigint NOT NULL REFERENCES users(id),
                    group_id text NOT NULL,
                    card text NOT NULL,
                    PRIMARY KEY (user_id, group_id)
                );
                CREATE TABLE members (
                    group_id text NOT NULL,
                    position integer NOT NULL,
                    user_id bigint NOT NULL REFERENCES users(id),
                    PRIMARY KEY (group_id, position),
                    UNIQUE (group_id, user_id)
                );
                CREATE TABLE devices (
                    token text PRIMARY KEY,
                    user_id bigint NOT NULL REFERENCES users(id),
                    certificate_id bigint NOT NULL REFERENCES certificates(id),
                    bound_at bigint NOT NULL,
                    sequence bigserial NOT NULL UNIQUE
                );
                CREATE INDEX devices_by_user ON devices (user_id, sequence);
                CREATE TABLE sent_messages (
                    message_id text PRIMARY KEY,
                    sent_at bigint NOT NULL,
                    decisions bytea NOT NULL
                );
                CREATE INDEX sent_messages_by_time ON sent_messages (sent_at);
                CREATE TABLE deliveries (
                    id bigserial PRIMARY KEY,
                    message_id text NOT NULL,
                    receiver text NOT NULL,
                    token text NOT NULL,
                    environment text NOT NULL CHECK (environment IN ('development', 'production')),
                    bound_at bigint NOT NULL,
                    headers bytea NOT NULL,
                    payload bytea NOT NULL,
                    queued_at bigint NOT NULL,
                    due_at bigint NOT NULL,
                    claimed_until bigint NOT NULL DEFAULT 0,
                    attempts integer NOT NULL DEFAULT 0,
                    state smallint NOT NULL DEFAULT 0 CHECK (state IN (0, 1, 2)),
                    status integer,
                    reason text,
                    updated_at bigint NOT NULL,
                    device_removed boolean NOT NULL DEFAULT false
                );
                CREATE INDEX deliveries_due ON deliveries (due_at) WHERE state = 0;
                CREATE INDEX deliveries_by_message ON deliveries (message_id);
                CREATE INDEX deliveries_settled ON deliveries (updated_at) WHERE state <> 0;
                """),
        // A node keeps the app's configuration between sends and reads this one row with the write
        // lock to know it is still current (round trips). The function takes the lock and
        // then reads the version in one round trip; as a volatile PL/pgSQL function its read takes a
        // snapshot after the lock is held (one SELECT would read the version as of before the wait).
        Migration(
            identifier: "2026-11-26-postgres-app-version",
            sql: """
                CREATE TABLE app_version (
                    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                    version bigint NOT NULL
                );
                INSERT INTO app_version (singleton, version) VALUES (true, 0);
                CREATE FUNCTION pushbridge_write_lock(scope text) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$ BEGIN PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope)); RETURN (SELECT version FROM app_version); END $$;
                """),
        // A node keeps a group's receivers and the badge log between its writes (the
        // receiver cache). Every write that changes what a node keeps moves `data_version` (once per
        // transaction); the lock function now also answers it and the badge log's first and last row,
        // so a node knows in the statement it makes anyway whether what it keeps is still true. A
        // group send logs its badge counters as one row (as SQLite's store does), and its record
        // refers to one stored roll of the group's names and devices.
        Migration(
            identifier: "2026-11-27-postgres-receiver-cache",
            sql: """
                ALTER TABLE app_version ADD COLUMN data_version bigint NOT NULL DEFAULT 0;
                CREATE TABLE badge_log (
                    id bigserial PRIMARY KEY,
                    entries bytea NOT NULL
                );
                CREATE TABLE receiver_rolls (
                    id bigserial PRIMARY KEY,
                    used_at bigint NOT NULL,
                    rows bytea NOT NULL
                );
                CREATE INDEX receiver_rolls_by_time ON receiver_rolls (used_at);
                DROP FUNCTION pushbridge_write_lock(text);
                CREATE FUNCTION pushbridge_write_lock(scope text) RETURNS TABLE (configuration bigint, data bigint, first_log bigint, last_log bigint)
                    LANGUAGE plpgsql VOLATILE AS $$ BEGIN PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope)); RETURN QUERY SELECT a.version, a.data_version, (SELECT min(id) FROM badge_log), (SELECT max(id) FROM badge_log) FROM app_version a; END $$;
                """),
        // A group commit knows its messages' ids before it locks: the lock's function reads their
        // sent-message records too, after the lock as the function's own statements do (the
        // repeat check needs no round trip of its own). The first row is the lock's, the others
        // the records found.
        Migration(
            identifier: "2026-11-27-postgres-lock-with-records",
            sql: """
                CREATE FUNCTION pushbridge_write_lock(scope text, ids text[]) RETURNS TABLE (configuration bigint, data bigint, first_log bigint, last_log bigint, message_id text, sent_at bigint, decisions bytea)
                    LANGUAGE plpgsql VOLATILE AS $$ BEGIN PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope)); RETURN QUERY SELECT a.version, a.data_version, (SELECT min(id) FROM badge_log), (SELECT max(id) FROM badge_log), NULL::text, NULL::bigint, NULL::bytea FROM app_version a; RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, s.message_id, s.sent_at, s.decisions FROM sent_messages s WHERE s.message_id = ANY(ids); END $$;
                """),
        // Vendor REST groups and device binding (Specification §14): a group's profile (NULL for a group
        // that only has a message sequence) and Tencent's per-group message sequence; the devices
        // bound by Easemob device id and certificate name, by user name.
        Migration(
            identifier: "2026-11-29-group-profiles-and-push-bindings",
            sql: """
                CREATE TABLE group_profiles (
                    group_id text PRIMARY KEY,
                    profile bytea,
                    last_sequence bigint NOT NULL DEFAULT 0
                );
                CREATE TABLE push_bindings (
                    user_name text NOT NULL,
                    position integer NOT NULL,
                    device_id text NOT NULL,
                    notifier text NOT NULL,
                    token text NOT NULL,
                    PRIMARY KEY (user_name, position)
                );
                """),
        // Made the first commit function, `pushbridge_commit_sends`, which no PushBridge calls and
        // `2026-11-28-drop-unused-commit-function` drops: it makes nothing now (ruling 195).
        Migration(identifier: "2026-11-26-postgres-commit-sends", sql: ""),
        // Counters no longer move the data version (one app on two nodes): every counter goes to the
        // badge log as one row of a commit, with the user rows it counted (NULL: many, or written
        // before — read as touching everyone). It also made the app schema's `pushbridge_commit_logged`,
        // which `2026-12-06-tables-shared-by-apps` replaces: it makes that no more (ruling 195).
        Migration(identifier: "2026-11-26-postgres-counters-logged", sql: "ALTER TABLE badge_log ADD COLUMN users bigint[];"),
        // Remade the app schema's `pushbridge_commit_logged` with one plan a connection; the shared
        // tables' function (``commitLoggedFunction``) is what it became: it makes nothing now (ruling 195).
        Migration(identifier: "2026-11-27-postgres-commit-one-plan", sql: ""),
        // What no PushBridge calls any more: the first commit function, in a database made before
        // `2026-11-26-postgres-commit-sends` stopped making it.
        Migration(
            identifier: "2026-11-28-drop-unused-commit-function",
            sql: """
                DROP FUNCTION IF EXISTS pushbridge_commit_sends(text, bigint, bigint, bigint, text[], bigint[], bigint[], bigint[], bytea, bigint[], bigint[], text[], text[], text[], text[], bigint[], bytea[], bytea[], bigint[], text[], bigint[], bytea[], bigint);
                """),
        // Push campaigns (labels and tasks), as SQLite's `2026-11-30-push-campaigns`: keys and user
        // names in the `C` collation, so pages follow code-point order as SQLite's do.
        Migration(
            identifier: "2026-11-30-push-campaigns",
            sql: """
                CREATE TABLE push_labels (
                    key text COLLATE "C" PRIMARY KEY,
                    name text NOT NULL,
                    description text NOT NULL,
                    created_at bigint NOT NULL
                );
                CREATE TABLE push_label_users (
                    label text COLLATE "C" NOT NULL REFERENCES push_labels(key),
                    user_name text COLLATE "C" NOT NULL,
                    added_at bigint NOT NULL,
                    PRIMARY KEY (label, user_name)
                );
                CREATE INDEX push_label_users_by_user ON push_label_users (user_name);
                CREATE TABLE push_tasks (
                    id bigint PRIMARY KEY,
                    family text NOT NULL,
                    audience text NOT NULL,
                    request bytea NOT NULL,
                    created_at bigint NOT NULL,
                    start_at bigint NOT NULL,
                    state smallint NOT NULL CHECK (state IN (0, 1, 2)),
                    cursor text COLLATE "C",
                    targets bigint NOT NULL,
                    pushed bigint NOT NULL,
                    suppressed text NOT NULL,
                    ended_at bigint
                );
                CREATE INDEX push_tasks_pending ON push_tasks (id) WHERE state = 0;
                CREATE INDEX push_tasks_by_creation ON push_tasks (created_at);
                CREATE INDEX users_by_name_c ON users (name COLLATE "C");
                CREATE TABLE push_attribute_names (
                    slot smallint PRIMARY KEY CHECK (slot BETWEEN 0 AND 9),
                    name text NOT NULL UNIQUE
                );
                CREATE TABLE user_attributes (
                    user_name text COLLATE "C" NOT NULL,
                    name text COLLATE "C" NOT NULL,
                    value text COLLATE "C" NOT NULL,
                    PRIMARY KEY (user_name, name)
                );
                CREATE INDEX user_attributes_by_value ON user_attributes (name, value, user_name);
                """),
        // Delivery lanes: a push task's deliveries (message ids beginning `pushtask-`) are lane 1,
        // every other lane 0; a claim takes lane 0 first. Computed from the id; the queued rows'
        // index leads with it.
        Migration(
            identifier: "2026-12-01-delivery-lanes",
            sql: """
                ALTER TABLE deliveries ADD COLUMN lane smallint NOT NULL
                    GENERATED ALWAYS AS (CASE WHEN left(message_id, 9) = 'pushtask-' THEN 1 ELSE 0 END) STORED;
                DROP INDEX deliveries_due;
                CREATE INDEX deliveries_due ON deliveries (lane, due_at) WHERE state = 0;
                """),
    ]
}
