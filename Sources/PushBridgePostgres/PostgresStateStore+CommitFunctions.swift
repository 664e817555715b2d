import PostgresNIO

// The shared tables' two commit functions, as they are now. Each migration that makes or remakes one
// (`2026-12-06-tables-shared-by-apps`, `2026-12-06-one-commit-for-apps`,
// `2026-12-06-commit-functions-look-up-by-key`) writes these texts, `CREATE OR REPLACE`: a function a
// later migration rewrites is written once, as it is now, and every database, whichever version made
// it, ends with the same functions (ruling 195). Changing one means a new migration that writes it
// again (the text here changes with it).

extension PostgresStateStore {
    /// One app's commit of sends decided on what the node keeps: its write lock; its versions and the
    /// badge log's end, read after the lock; the badge log rows other nodes appended, checked against
    /// the users whose state was read (`read_users`; NULL: too many to list); no record of the
    /// messages within their repeat windows; the rolls referred to still stored. Only when nothing
    /// changed: the rolls' times, the prune, the counters as one badge log row, the outbox rows and
    /// the records. It answers one row (committed, the data version it found, the log row written),
    /// then the rows other nodes appended since (committed NULL), which the node reads on. Its plans
    /// are generic, made on a connection's first call when a table may be nearly empty, so rows are
    /// found by key alone (`CROSS JOIN LATERAL … OFFSET 0`, `enable_seqscan = off`): a page's 750 ids
    /// once planned as a scan of `sent_messages` took 20 ms a page at 100,000 records (ruling 194).
    static let commitLoggedFunction = """
        CREATE OR REPLACE FUNCTION pushbridge_commit_logged(
            app_key integer, expected_configuration bigint, expected_data bigint, expected_last_log bigint, read_users bigint[],
            ids text[], cutoffs bigint[], rolls bigint[], rolls_used_at bigint[],
            log_entries bytea, log_users bigint[],
            d_message text[], d_receiver text[], d_token text[], d_environment text[], d_bound_at bigint[],
            d_headers bytea[], d_payload bytea[], d_queued_at bigint[],
            r_message text[], r_sent_at bigint[], r_decisions bytea[], prune_before bigint)
        RETURNS TABLE (committed boolean, data bigint, log_id bigint, entries bytea)
        LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
        DECLARE
            seen_configuration bigint;  -- the app's version once the lock is held
            seen_data bigint;  -- and its data version
            last_log bigint;  -- the app's badge log's last row once the lock is held
            changed boolean;  -- whether anything the decisions read has changed
            logged bigint;  -- the badge log row written, if any
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtext(current_schema())::bigint << 32 | app_key);  -- every write's lock
            SELECT a.version, a.data_version, coalesce((SELECT max(l.id) FROM badge_log l WHERE l.app = app_key), 0)
                INTO seen_configuration, seen_data, last_log FROM apps a WHERE a.key = app_key;  -- read after the lock
            changed := seen_configuration <> expected_configuration OR seen_data <> expected_data OR last_log < expected_last_log;  -- the versions
            IF NOT changed AND last_log > expected_last_log THEN
                changed := read_users IS NULL OR EXISTS (SELECT 1 FROM badge_log l WHERE l.app = app_key AND l.id > expected_last_log AND l.id <= last_log
                    AND (l.users IS NULL OR l.users && read_users));  -- a row that counted one
            END IF;  -- another node counted a user whose state was read
            IF NOT changed AND cardinality(ids) > 0 THEN
                changed := EXISTS (SELECT 1 FROM unnest(ids, cutoffs) AS x(i, c)
                    CROSS JOIN LATERAL (SELECT 1 FROM sent_messages s WHERE s.message_id = x.i AND s.app = app_key AND s.sent_at >= x.c OFFSET 0) f);  -- a record within its repeat window
            END IF;  -- the records
            IF NOT changed AND cardinality(rolls) > 0 THEN
                changed := (SELECT count(*) FROM unnest(rolls) AS x(i)
                    CROSS JOIN LATERAL (SELECT 1 FROM receiver_rolls r WHERE r.id = x.i AND r.app = app_key OFFSET 0) f) <> cardinality(rolls);  -- a roll pruned
            END IF;  -- the rolls
            IF NOT changed THEN
                IF cardinality(rolls) > 0 THEN
                    UPDATE receiver_rolls r SET used_at = greatest(r.used_at, x.u) FROM unnest(rolls, rolls_used_at) AS x(i, u)
                        WHERE r.app = app_key AND r.id = ANY(rolls) AND r.id = x.i;  -- before pruning
                END IF;  -- the rolls' times
                IF prune_before IS NOT NULL THEN
                    DELETE FROM receiver_rolls r WHERE r.app = app_key AND r.used_at < prune_before;  -- the rolls of the records forgotten
                    DELETE FROM sent_messages s WHERE s.app = app_key AND s.sent_at < prune_before;  -- and the records
                END IF;  -- pruned
                IF log_entries IS NOT NULL THEN
                    INSERT INTO badge_log (app, entries, users) VALUES (app_key, log_entries, log_users) RETURNING id INTO logged;  -- the counters, one row
                END IF;  -- logged
                IF cardinality(d_message) > 0 THEN
                    INSERT INTO deliveries (app, message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
                        SELECT app_key, m, r, t, e, b, h, p, q, q, q FROM unnest(d_message, d_receiver, d_token, d_environment, d_bound_at, d_headers, d_payload, d_queued_at)
                        AS x(m, r, t, e, b, h, p, q);  -- the outbox rows
                END IF;  -- queued
                IF cardinality(r_message) > 0 THEN
                    INSERT INTO sent_messages (app, message_id, sent_at, decisions) SELECT app_key, x.* FROM unnest(r_message, r_sent_at, r_decisions) AS x
                        ON CONFLICT (app, message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions;  -- the records
                END IF;  -- recorded
            END IF;  -- written
            RETURN QUERY SELECT NOT changed, seen_data, logged, NULL::bytea;  -- the answer
            IF seen_configuration = expected_configuration AND seen_data = expected_data AND last_log > expected_last_log THEN
                RETURN QUERY SELECT NULL::boolean, NULL::bigint, l.id, l.entries FROM badge_log l
                    WHERE l.app = app_key AND l.id > expected_last_log AND l.id <= last_log ORDER BY l.id;  -- the rows another node appended since
            END IF;  -- read on
        END $$;
        """

    /// `pushbridge_commit_apps`: several apps' commits at once. Each app in turn, in the order given:
    /// its lock, its versions, the badge log rows other nodes appended, its records and rolls checked
    /// as `pushbridge_commit_logged` checks one app's, its prune and badge log row, its answer (`n`,
    /// its place) and the log rows to read on. Then the outbox rows and the records of every app whose
    /// check passed, one insert each. An app's scalars are arrays with one element an app; what it
    /// checks are flat arrays cut by each app's end (`id_ends`: its ids end there); its badge log row,
    /// prune, outbox rows and records are flat arrays beside one naming each element's app by its
    /// place (1-based). The checks were first written as statements over every app at once: their
    /// generic plans (made on the first call, when the tables may be nearly empty) joined a whole
    /// table, and for one app they cost 355 µs a call against the one-app function's 216 µs; an app
    /// checked in turn costs what it costs alone, and the inserts start once a call.
    /// Its lookups are by key, as the one-app function's.
    static let commitAppsFunction = """
        CREATE OR REPLACE FUNCTION pushbridge_commit_apps(
            app_keys integer[], expected_configurations bigint[], expected_data bigint[], expected_last_logs bigint[],
            reads_listed boolean[], read_ends integer[], read_users bigint[], id_ends integer[], ids text[], cutoffs bigint[],
            roll_ends integer[], rolls bigint[], rolls_used_at bigint[],
            l_app integer[], l_entries bytea[], l_listed boolean[], lu_ends integer[], lu_users bigint[],
            d_app integer[], d_message text[], d_receiver text[], d_token text[], d_environment text[], d_bound_at bigint[],
            d_headers bytea[], d_payload bytea[], d_queued_at bigint[],
            r_app integer[], r_message text[], r_sent_at bigint[], r_decisions bytea[], p_app integer[], p_before bigint[])
        RETURNS TABLE (n integer, committed boolean, data bigint, log_id bigint, entries bytea)
        LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
        DECLARE
            app_key integer;  -- the app in turn
            seen_configuration bigint;  -- its version once its lock is held
            seen_data bigint;  -- its data version
            last_log bigint;  -- its badge log's last row
            app_ids text[];  -- the message ids it looked up
            app_rolls bigint[];  -- the rolls it refers to
            j integer;
            changed boolean[] := '{}';  -- whether anything an app's decisions read has changed
        BEGIN
            FOR i IN 1..cardinality(app_keys) LOOP
                app_key := app_keys[i];
                PERFORM pg_advisory_xact_lock(hashtext(current_schema())::bigint << 32 | app_key);  -- every write's lock, in the order given
                SELECT a.version, a.data_version, coalesce((SELECT max(l.id) FROM badge_log l WHERE l.app = app_key), 0)
                    INTO seen_configuration, seen_data, last_log FROM apps a WHERE a.key = app_key;  -- read after the lock
                changed[i] := seen_configuration <> expected_configurations[i] OR seen_data <> expected_data[i] OR last_log < expected_last_logs[i];
                IF NOT changed[i] AND last_log > expected_last_logs[i] THEN
                    changed[i] := NOT reads_listed[i] OR EXISTS (SELECT 1 FROM badge_log l WHERE l.app = app_key AND l.id > expected_last_logs[i]
                        AND l.id <= last_log AND (l.users IS NULL OR l.users && read_users[coalesce(read_ends[i - 1], 0) + 1:read_ends[i]]));
                END IF;  -- another node counted a user whose state was read
                IF NOT changed[i] AND id_ends[i] > coalesce(id_ends[i - 1], 0) THEN
                    app_ids := ids[coalesce(id_ends[i - 1], 0) + 1:id_ends[i]];
                    changed[i] := EXISTS (SELECT 1 FROM unnest(app_ids, cutoffs[coalesce(id_ends[i - 1], 0) + 1:id_ends[i]]) AS x(m, c)
                        CROSS JOIN LATERAL (SELECT 1 FROM sent_messages s WHERE s.message_id = x.m AND s.app = app_key AND s.sent_at >= x.c OFFSET 0) f);  -- a record within its repeat window
                END IF;  -- the records
                IF NOT changed[i] AND roll_ends[i] > coalesce(roll_ends[i - 1], 0) THEN
                    app_rolls := rolls[coalesce(roll_ends[i - 1], 0) + 1:roll_ends[i]];
                    changed[i] := (SELECT count(*) FROM unnest(app_rolls) AS x(r)
                        CROSS JOIN LATERAL (SELECT 1 FROM receiver_rolls r WHERE r.id = x.r AND r.app = app_key OFFSET 0) f) <> cardinality(app_rolls);  -- a roll pruned
                    IF NOT changed[i] THEN
                        UPDATE receiver_rolls r SET used_at = greatest(r.used_at, x.u)
                            FROM unnest(app_rolls, rolls_used_at[coalesce(roll_ends[i - 1], 0) + 1:roll_ends[i]]) AS x(r, u)
                            WHERE r.app = app_key AND r.id = ANY(app_rolls) AND r.id = x.r;  -- before pruning
                    END IF;  -- the rolls' times
                END IF;  -- the rolls
                IF NOT changed[i] AND cardinality(p_app) > 0 THEN
                    j := array_position(p_app, i);
                    IF j IS NOT NULL THEN
                        DELETE FROM receiver_rolls r WHERE r.app = app_key AND r.used_at < p_before[j];  -- the rolls of the records forgotten
                        DELETE FROM sent_messages s WHERE s.app = app_key AND s.sent_at < p_before[j];  -- and the records
                    END IF;
                END IF;  -- pruned
                n := i;
                committed := NOT changed[i];
                data := seen_data;
                log_id := NULL;
                entries := NULL;
                j := CASE WHEN committed THEN array_position(l_app, i) END;
                IF j IS NOT NULL THEN
                    INSERT INTO badge_log (app, entries, users)
                        VALUES (app_key, l_entries[j], CASE WHEN l_listed[j] THEN lu_users[coalesce(lu_ends[j - 1], 0) + 1:lu_ends[j]] END)
                        RETURNING id INTO log_id;  -- the counters, one row
                END IF;  -- logged
                RETURN NEXT;  -- the app's answer
                IF seen_configuration = expected_configurations[i] AND seen_data = expected_data[i] AND last_log > expected_last_logs[i] THEN
                    RETURN QUERY SELECT i, NULL::boolean, NULL::bigint, l.id, l.entries FROM badge_log l
                        WHERE l.app = app_key AND l.id > expected_last_logs[i] AND l.id <= last_log ORDER BY l.id;  -- the rows another node appended since
                END IF;  -- read on
            END LOOP;
            IF cardinality(d_message) > 0 AND false = ANY(changed) THEN
                INSERT INTO deliveries (app, message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
                    SELECT app_keys[x.a], x.m, x.r, x.t, x.e, x.b, x.h, x.p, x.q, x.q, x.q
                    FROM unnest(d_app, d_message, d_receiver, d_token, d_environment, d_bound_at, d_headers, d_payload, d_queued_at) AS x(a, m, r, t, e, b, h, p, q)
                    WHERE NOT changed[x.a];  -- the outbox rows
            END IF;  -- queued
            IF cardinality(r_message) > 0 AND false = ANY(changed) THEN
                INSERT INTO sent_messages (app, message_id, sent_at, decisions)
                    SELECT app_keys[x.a], x.m, x.s, x.d FROM unnest(r_app, r_message, r_sent_at, r_decisions) AS x(a, m, s, d) WHERE NOT changed[x.a]
                    ON CONFLICT (app, message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions;  -- the records
            END IF;  -- recorded
        END $$;
        """
}
