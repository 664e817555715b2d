--
-- PostgreSQL database dump
--

\restrict hogT1Ds5wm9SgxykZ8S7TRmQ8rB81S8sV9gZV5VvE9YEhqXUyZcilZiIGP8ygjn

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: app_demo_2a97516c; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app_demo_2a97516c;


--
-- Name: app_other_d9298a10; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app_other_d9298a10;


--
-- Name: pushbridge_service; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA pushbridge_service;


--
-- Name: pushbridge_commit_logged(text, bigint, bigint, bigint, bigint[], text[], bigint[], bigint[], bigint[], bytea, bigint[], text[], text[], text[], text[], bigint[], bytea[], bytea[], bigint[], text[], bigint[], bytea[], bigint); Type: FUNCTION; Schema: app_demo_2a97516c; Owner: -
--

CREATE FUNCTION app_demo_2a97516c.pushbridge_commit_logged(scope text, expected_configuration bigint, expected_data bigint, expected_last_log bigint, read_users bigint[], ids text[], cutoffs bigint[], rolls bigint[], rolls_used_at bigint[], log_entries bytea, log_users bigint[], d_message text[], d_receiver text[], d_token text[], d_environment text[], d_bound_at bigint[], d_headers bytea[], d_payload bytea[], d_queued_at bigint[], r_message text[], r_sent_at bigint[], r_decisions bytea[], prune_before bigint) RETURNS TABLE(committed boolean, data bigint, log_id bigint, entries bytea)
    LANGUAGE plpgsql
    SET search_path TO 'app_demo_2a97516c'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    seen_configuration bigint;  -- the app's version once the lock is held
    seen_data bigint;  -- and its data version
    last_log bigint;  -- the badge log's last row once the lock is held
    changed boolean;  -- whether anything the decisions read has changed
    logged bigint;  -- the badge log row written, if any
BEGIN
    PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope));  -- every write's lock
    SELECT a.version, a.data_version, coalesce((SELECT max(id) FROM badge_log), 0)
        INTO seen_configuration, seen_data, last_log FROM app_version a;  -- read after the lock
    changed := seen_configuration <> expected_configuration OR seen_data <> expected_data OR last_log < expected_last_log;  -- the versions
    IF NOT changed AND last_log > expected_last_log THEN
        changed := read_users IS NULL OR EXISTS (SELECT 1 FROM badge_log WHERE id > expected_last_log AND id <= last_log
            AND (users IS NULL OR users && read_users));  -- a row that counted one
    END IF;  -- another node counted a user whose state was read
    IF NOT changed AND cardinality(ids) > 0 THEN
        changed := EXISTS (SELECT 1 FROM sent_messages s JOIN unnest(ids, cutoffs) AS x(i, c) ON s.message_id = x.i
            WHERE s.message_id = ANY(ids) AND s.sent_at >= x.c);  -- a record within its repeat window
    END IF;  -- the records
    IF NOT changed AND cardinality(rolls) > 0 THEN
        changed := (SELECT count(*) FROM receiver_rolls WHERE id = ANY(rolls)) <> cardinality(rolls);  -- a roll pruned
    END IF;  -- the rolls
    IF NOT changed THEN
        IF cardinality(rolls) > 0 THEN
            UPDATE receiver_rolls r SET used_at = greatest(r.used_at, x.u) FROM unnest(rolls, rolls_used_at) AS x(i, u)
                WHERE r.id = ANY(rolls) AND r.id = x.i;  -- before pruning
        END IF;  -- the rolls' times
        IF prune_before IS NOT NULL THEN
            DELETE FROM receiver_rolls WHERE used_at < prune_before;  -- the rolls of the records forgotten
            DELETE FROM sent_messages WHERE sent_at < prune_before;  -- and the records
        END IF;  -- pruned
        IF log_entries IS NOT NULL THEN
            INSERT INTO badge_log (entries, users) VALUES (log_entries, log_users) RETURNING id INTO logged;  -- the counters, one row
        END IF;  -- logged
        IF cardinality(d_message) > 0 THEN
            INSERT INTO deliveries (message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
                SELECT m, r, t, e, b, h, p, q, q, q FROM unnest(d_message, d_receiver, d_token, d_environment, d_bound_at, d_headers, d_payload, d_queued_at)
                AS x(m, r, t, e, b, h, p, q);  -- the outbox rows
        END IF;  -- queued
        IF cardinality(r_message) > 0 THEN
            INSERT INTO sent_messages (message_id, sent_at, decisions) SELECT * FROM unnest(r_message, r_sent_at, r_decisions)
                ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions;  -- the records
        END IF;  -- recorded
    END IF;  -- written
    RETURN QUERY SELECT NOT changed, seen_data, logged, NULL::bytea;  -- the answer
    IF seen_configuration = expected_configuration AND seen_data = expected_data AND last_log > expected_last_log THEN
        RETURN QUERY SELECT NULL::boolean, NULL::bigint, l.id, l.entries FROM badge_log l
            WHERE l.id > expected_last_log AND l.id <= last_log ORDER BY l.id;  -- the rows another node appended since
    END IF;  -- read on
END $$;


--
-- Name: pushbridge_commit_sends(text, bigint, bigint, bigint, text[], bigint[], bigint[], bigint[], bytea, bigint[], bigint[], text[], text[], text[], text[], bigint[], bytea[], bytea[], bigint[], text[], bigint[], bytea[], bigint); Type: FUNCTION; Schema: app_demo_2a97516c; Owner: -
--

CREATE FUNCTION app_demo_2a97516c.pushbridge_commit_sends(scope text, expected_configuration bigint, expected_data bigint, expected_last_log bigint, ids text[], cutoffs bigint[], rolls bigint[], rolls_used_at bigint[], log_entries bytea, counter_users bigint[], counter_badges bigint[], d_message text[], d_receiver text[], d_token text[], d_environment text[], d_bound_at bigint[], d_headers bytea[], d_payload bytea[], d_queued_at bigint[], r_message text[], r_sent_at bigint[], r_decisions bytea[], prune_before bigint) RETURNS TABLE(committed boolean, data bigint, log_id bigint)
    LANGUAGE plpgsql
    SET search_path TO 'app_demo_2a97516c'
    AS $$
DECLARE
    seen app_version%ROWTYPE;  -- the versions once the lock is held
    changed boolean;  -- whether anything the decisions read has changed
    logged bigint;  -- the badge log row written, if any
BEGIN
    PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope));  -- every write's lock
    SELECT * INTO seen FROM app_version;  -- read after the lock (a volatile function's own snapshot)
    changed := seen.version <> expected_configuration OR seen.data_version <> expected_data
        OR coalesce((SELECT max(id) FROM badge_log), 0) <> expected_last_log;  -- the versions and the log
    IF NOT changed AND cardinality(ids) > 0 THEN
        changed := EXISTS (SELECT 1 FROM sent_messages s JOIN unnest(ids, cutoffs) AS x(i, c) ON s.message_id = x.i
            WHERE s.message_id = ANY(ids) AND s.sent_at >= x.c);  -- a record within its repeat window
    END IF;  -- the records
    IF NOT changed AND cardinality(rolls) > 0 THEN
        changed := (SELECT count(*) FROM receiver_rolls WHERE id = ANY(rolls)) <> cardinality(rolls);  -- a roll pruned
    END IF;  -- the rolls
    IF changed THEN
        RETURN QUERY SELECT false, seen.data_version, NULL::bigint;  -- changed since read: nothing written
        RETURN;  -- the node decides again under the lock
    END IF;  -- the check passed
    IF cardinality(rolls) > 0 THEN
        UPDATE receiver_rolls r SET used_at = greatest(r.used_at, x.u) FROM unnest(rolls, rolls_used_at) AS x(i, u)
            WHERE r.id = ANY(rolls) AND r.id = x.i;  -- before pruning
    END IF;  -- the rolls' times
    IF prune_before IS NOT NULL THEN
        DELETE FROM receiver_rolls WHERE used_at < prune_before;  -- the rolls of the records forgotten
        DELETE FROM sent_messages WHERE sent_at < prune_before;  -- and the records
    END IF;  -- pruned
    IF log_entries IS NOT NULL THEN
        INSERT INTO badge_log (entries) VALUES (log_entries) RETURNING id INTO logged;  -- a group send's counters
    END IF;  -- logged
    IF cardinality(counter_users) > 0 THEN
        INSERT INTO badge_counters (user_id, badge) SELECT * FROM unnest(counter_users, counter_badges)
            ON CONFLICT (user_id) DO UPDATE SET badge = excluded.badge;  -- a few counters, in place
    END IF;  -- counted
    IF log_entries IS NOT NULL OR cardinality(counter_users) > 0 THEN
        UPDATE app_version SET data_version = data_version + 1;  -- counters change what nodes keep
        seen.data_version := seen.data_version + 1;  -- as committed
    END IF;  -- the version moved
    IF cardinality(d_message) > 0 THEN
        INSERT INTO deliveries (message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
            SELECT m, r, t, e, b, h, p, q, q, q FROM unnest(d_message, d_receiver, d_token, d_environment, d_bound_at, d_headers, d_payload, d_queued_at)
            AS x(m, r, t, e, b, h, p, q);  -- the outbox rows
    END IF;  -- queued
    IF cardinality(r_message) > 0 THEN
        INSERT INTO sent_messages (message_id, sent_at, decisions) SELECT * FROM unnest(r_message, r_sent_at, r_decisions)
            ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions;  -- the records
    END IF;  -- recorded
    RETURN QUERY SELECT true, seen.data_version, logged;  -- committed
END $$;


--
-- Name: pushbridge_write_lock(text); Type: FUNCTION; Schema: app_demo_2a97516c; Owner: -
--

CREATE FUNCTION app_demo_2a97516c.pushbridge_write_lock(scope text) RETURNS TABLE(configuration bigint, data bigint, first_log bigint, last_log bigint)
    LANGUAGE plpgsql
    AS $$ BEGIN PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope)); RETURN QUERY SELECT a.version, a.data_version, (SELECT min(id) FROM badge_log), (SELECT max(id) FROM badge_log) FROM app_version a; END $$;


--
-- Name: pushbridge_write_lock(text, text[]); Type: FUNCTION; Schema: app_demo_2a97516c; Owner: -
--

CREATE FUNCTION app_demo_2a97516c.pushbridge_write_lock(scope text, ids text[]) RETURNS TABLE(configuration bigint, data bigint, first_log bigint, last_log bigint, message_id text, sent_at bigint, decisions bytea)
    LANGUAGE plpgsql
    AS $$ BEGIN PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope)); RETURN QUERY SELECT a.version, a.data_version, (SELECT min(id) FROM badge_log), (SELECT max(id) FROM badge_log), NULL::text, NULL::bigint, NULL::bytea FROM app_version a; RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, s.message_id, s.sent_at, s.decisions FROM sent_messages s WHERE s.message_id = ANY(ids); END $$;


--
-- Name: pushbridge_commit_logged(text, bigint, bigint, bigint, bigint[], text[], bigint[], bigint[], bigint[], bytea, bigint[], text[], text[], text[], text[], bigint[], bytea[], bytea[], bigint[], text[], bigint[], bytea[], bigint); Type: FUNCTION; Schema: app_other_d9298a10; Owner: -
--

CREATE FUNCTION app_other_d9298a10.pushbridge_commit_logged(scope text, expected_configuration bigint, expected_data bigint, expected_last_log bigint, read_users bigint[], ids text[], cutoffs bigint[], rolls bigint[], rolls_used_at bigint[], log_entries bytea, log_users bigint[], d_message text[], d_receiver text[], d_token text[], d_environment text[], d_bound_at bigint[], d_headers bytea[], d_payload bytea[], d_queued_at bigint[], r_message text[], r_sent_at bigint[], r_decisions bytea[], prune_before bigint) RETURNS TABLE(committed boolean, data bigint, log_id bigint, entries bytea)
    LANGUAGE plpgsql
    SET search_path TO 'app_other_d9298a10'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    seen_configuration bigint;  -- the app's version once the lock is held
    seen_data bigint;  -- and its data version
    last_log bigint;  -- the badge log's last row once the lock is held
    changed boolean;  -- whether anything the decisions read has changed
    logged bigint;  -- the badge log row written, if any
BEGIN
    PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope));  -- every write's lock
    SELECT a.version, a.data_version, coalesce((SELECT max(id) FROM badge_log), 0)
        INTO seen_configuration, seen_data, last_log FROM app_version a;  -- read after the lock
    changed := seen_configuration <> expected_configuration OR seen_data <> expected_data OR last_log < expected_last_log;  -- the versions
    IF NOT changed AND last_log > expected_last_log THEN
        changed := read_users IS NULL OR EXISTS (SELECT 1 FROM badge_log WHERE id > expected_last_log AND id <= last_log
            AND (users IS NULL OR users && read_users));  -- a row that counted one
    END IF;  -- another node counted a user whose state was read
    IF NOT changed AND cardinality(ids) > 0 THEN
        changed := EXISTS (SELECT 1 FROM sent_messages s JOIN unnest(ids, cutoffs) AS x(i, c) ON s.message_id = x.i
            WHERE s.message_id = ANY(ids) AND s.sent_at >= x.c);  -- a record within its repeat window
    END IF;  -- the records
    IF NOT changed AND cardinality(rolls) > 0 THEN
        changed := (SELECT count(*) FROM receiver_rolls WHERE id = ANY(rolls)) <> cardinality(rolls);  -- a roll pruned
    END IF;  -- the rolls
    IF NOT changed THEN
        IF cardinality(rolls) > 0 THEN
            UPDATE receiver_rolls r SET used_at = greatest(r.used_at, x.u) FROM unnest(rolls, rolls_used_at) AS x(i, u)
                WHERE r.id = ANY(rolls) AND r.id = x.i;  -- before pruning
        END IF;  -- the rolls' times
        IF prune_before IS NOT NULL THEN
            DELETE FROM receiver_rolls WHERE used_at < prune_before;  -- the rolls of the records forgotten
            DELETE FROM sent_messages WHERE sent_at < prune_before;  -- and the records
        END IF;  -- pruned
        IF log_entries IS NOT NULL THEN
            INSERT INTO badge_log (entries, users) VALUES (log_entries, log_users) RETURNING id INTO logged;  -- the counters, one row
        END IF;  -- logged
        IF cardinality(d_message) > 0 THEN
            INSERT INTO deliveries (message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
                SELECT m, r, t, e, b, h, p, q, q, q FROM unnest(d_message, d_receiver, d_token, d_environment, d_bound_at, d_headers, d_payload, d_queued_at)
                AS x(m, r, t, e, b, h, p, q);  -- the outbox rows
        END IF;  -- queued
        IF cardinality(r_message) > 0 THEN
            INSERT INTO sent_messages (message_id, sent_at, decisions) SELECT * FROM unnest(r_message, r_sent_at, r_decisions)
                ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions;  -- the records
        END IF;  -- recorded
    END IF;  -- written
    RETURN QUERY SELECT NOT changed, seen_data, logged, NULL::bytea;  -- the answer
    IF seen_configuration = expected_configuration AND seen_data = expected_data AND last_log > expected_last_log THEN
        RETURN QUERY SELECT NULL::boolean, NULL::bigint, l.id, l.entries FROM badge_log l
            WHERE l.id > expected_last_log AND l.id <= last_log ORDER BY l.id;  -- the rows another node appended since
    END IF;  -- read on
END $$;


--
-- Name: pushbridge_commit_sends(text, bigint, bigint, bigint, text[], bigint[], bigint[], bigint[], bytea, bigint[], bigint[], text[], text[], text[], text[], bigint[], bytea[], bytea[], bigint[], text[], bigint[], bytea[], bigint); Type: FUNCTION; Schema: app_other_d9298a10; Owner: -
--

CREATE FUNCTION app_other_d9298a10.pushbridge_commit_sends(scope text, expected_configuration bigint, expected_data bigint, expected_last_log bigint, ids text[], cutoffs bigint[], rolls bigint[], rolls_used_at bigint[], log_entries bytea, counter_users bigint[], counter_badges bigint[], d_message text[], d_receiver text[], d_token text[], d_environment text[], d_bound_at bigint[], d_headers bytea[], d_payload bytea[], d_queued_at bigint[], r_message text[], r_sent_at bigint[], r_decisions bytea[], prune_before bigint) RETURNS TABLE(committed boolean, data bigint, log_id bigint)
    LANGUAGE plpgsql
    SET search_path TO 'app_other_d9298a10'
    AS $$
DECLARE
    seen app_version%ROWTYPE;  -- the versions once the lock is held
    changed boolean;  -- whether anything the decisions read has changed
    logged bigint;  -- the badge log row written, if any
BEGIN
    PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope));  -- every write's lock
    SELECT * INTO seen FROM app_version;  -- read after the lock (a volatile function's own snapshot)
    changed := seen.version <> expected_configuration OR seen.data_version <> expected_data
        OR coalesce((SELECT max(id) FROM badge_log), 0) <> expected_last_log;  -- the versions and the log
    IF NOT changed AND cardinality(ids) > 0 THEN
        changed := EXISTS (SELECT 1 FROM sent_messages s JOIN unnest(ids, cutoffs) AS x(i, c) ON s.message_id = x.i
            WHERE s.message_id = ANY(ids) AND s.sent_at >= x.c);  -- a record within its repeat window
    END IF;  -- the records
    IF NOT changed AND cardinality(rolls) > 0 THEN
        changed := (SELECT count(*) FROM receiver_rolls WHERE id = ANY(rolls)) <> cardinality(rolls);  -- a roll pruned
    END IF;  -- the rolls
    IF changed THEN
        RETURN QUERY SELECT false, seen.data_version, NULL::bigint;  -- changed since read: nothing written
        RETURN;  -- the node decides again under the lock
    END IF;  -- the check passed
    IF cardinality(rolls) > 0 THEN
        UPDATE receiver_rolls r SET used_at = greatest(r.used_at, x.u) FROM unnest(rolls, rolls_used_at) AS x(i, u)
            WHERE r.id = ANY(rolls) AND r.id = x.i;  -- before pruning
    END IF;  -- the rolls' times
    IF prune_before IS NOT NULL THEN
        DELETE FROM receiver_rolls WHERE used_at < prune_before;  -- the rolls of the records forgotten
        DELETE FROM sent_messages WHERE sent_at < prune_before;  -- and the records
    END IF;  -- pruned
    IF log_entries IS NOT NULL THEN
        INSERT INTO badge_log (entries) VALUES (log_entries) RETURNING id INTO logged;  -- a group send's counters
    END IF;  -- logged
    IF cardinality(counter_users) > 0 THEN
        INSERT INTO badge_counters (user_id, badge) SELECT * FROM unnest(counter_users, counter_badges)
            ON CONFLICT (user_id) DO UPDATE SET badge = excluded.badge;  -- a few counters, in place
    END IF;  -- counted
    IF log_entries IS NOT NULL OR cardinality(counter_users) > 0 THEN
        UPDATE app_version SET data_version = data_version + 1;  -- counters change what nodes keep
        seen.data_version := seen.data_version + 1;  -- as committed
    END IF;  -- the version moved
    IF cardinality(d_message) > 0 THEN
        INSERT INTO deliveries (message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
            SELECT m, r, t, e, b, h, p, q, q, q FROM unnest(d_message, d_receiver, d_token, d_environment, d_bound_at, d_headers, d_payload, d_queued_at)
            AS x(m, r, t, e, b, h, p, q);  -- the outbox rows
    END IF;  -- queued
    IF cardinality(r_message) > 0 THEN
        INSERT INTO sent_messages (message_id, sent_at, decisions) SELECT * FROM unnest(r_message, r_sent_at, r_decisions)
            ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions;  -- the records
    END IF;  -- recorded
    RETURN QUERY SELECT true, seen.data_version, logged;  -- committed
END $$;


--
-- Name: pushbridge_write_lock(text); Type: FUNCTION; Schema: app_other_d9298a10; Owner: -
--

CREATE FUNCTION app_other_d9298a10.pushbridge_write_lock(scope text) RETURNS TABLE(configuration bigint, data bigint, first_log bigint, last_log bigint)
    LANGUAGE plpgsql
    AS $$ BEGIN PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope)); RETURN QUERY SELECT a.version, a.data_version, (SELECT min(id) FROM badge_log), (SELECT max(id) FROM badge_log) FROM app_version a; END $$;


--
-- Name: pushbridge_write_lock(text, text[]); Type: FUNCTION; Schema: app_other_d9298a10; Owner: -
--

CREATE FUNCTION app_other_d9298a10.pushbridge_write_lock(scope text, ids text[]) RETURNS TABLE(configuration bigint, data bigint, first_log bigint, last_log bigint, message_id text, sent_at bigint, decisions bytea)
    LANGUAGE plpgsql
    AS $$ BEGIN PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope)); RETURN QUERY SELECT a.version, a.data_version, (SELECT min(id) FROM badge_log), (SELECT max(id) FROM badge_log), NULL::text, NULL::bigint, NULL::bytea FROM app_version a; RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, s.message_id, s.sent_at, s.decisions FROM sent_messages s WHERE s.message_id = ANY(ids); END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: app_certificates; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.app_certificates (
    "position" integer NOT NULL,
    certificate_id bigint NOT NULL
);


--
-- Name: app_templates; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.app_templates (
    "position" integer NOT NULL,
    name text NOT NULL,
    title_pattern text,
    content_pattern text
);


--
-- Name: app_version; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.app_version (
    singleton boolean DEFAULT true NOT NULL,
    version bigint NOT NULL,
    data_version bigint DEFAULT 0 NOT NULL,
    CONSTRAINT app_version_singleton_check CHECK (singleton)
);


--
-- Name: badge_counters; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.badge_counters (
    user_id bigint NOT NULL,
    badge bigint NOT NULL
);


--
-- Name: badge_log; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.badge_log (
    id bigint NOT NULL,
    entries bytea NOT NULL,
    users bigint[]
);


--
-- Name: badge_log_id_seq; Type: SEQUENCE; Schema: app_demo_2a97516c; Owner: -
--

CREATE SEQUENCE app_demo_2a97516c.badge_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: badge_log_id_seq; Type: SEQUENCE OWNED BY; Schema: app_demo_2a97516c; Owner: -
--

ALTER SEQUENCE app_demo_2a97516c.badge_log_id_seq OWNED BY app_demo_2a97516c.badge_log.id;


--
-- Name: certificates; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.certificates (
    id bigint NOT NULL,
    name text,
    busi_id text,
    bundle_id text NOT NULL,
    environment text NOT NULL,
    CONSTRAINT certificates_check CHECK (((name IS NOT NULL) OR (busi_id IS NOT NULL))),
    CONSTRAINT certificates_environment_check CHECK ((environment = ANY (ARRAY['development'::text, 'production'::text])))
);


--
-- Name: certificates_id_seq; Type: SEQUENCE; Schema: app_demo_2a97516c; Owner: -
--

CREATE SEQUENCE app_demo_2a97516c.certificates_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: certificates_id_seq; Type: SEQUENCE OWNED BY; Schema: app_demo_2a97516c; Owner: -
--

ALTER SEQUENCE app_demo_2a97516c.certificates_id_seq OWNED BY app_demo_2a97516c.certificates.id;


--
-- Name: conversation_settings; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.conversation_settings (
    user_id bigint NOT NULL,
    group_chat boolean NOT NULL,
    conversation text NOT NULL,
    remind smallint,
    silent_start bigint,
    silent_until bigint,
    CONSTRAINT conversation_settings_remind_check CHECK ((remind = ANY (ARRAY[0, 1, 2])))
);


--
-- Name: deliveries; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.deliveries (
    id bigint NOT NULL,
    message_id text NOT NULL,
    receiver text NOT NULL,
    token text NOT NULL,
    environment text NOT NULL,
    bound_at bigint NOT NULL,
    headers bytea NOT NULL,
    payload bytea NOT NULL,
    queued_at bigint NOT NULL,
    due_at bigint NOT NULL,
    claimed_until bigint DEFAULT 0 NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    state smallint DEFAULT 0 NOT NULL,
    status integer,
    reason text,
    updated_at bigint NOT NULL,
    device_removed boolean DEFAULT false NOT NULL,
    CONSTRAINT deliveries_environment_check CHECK ((environment = ANY (ARRAY['development'::text, 'production'::text]))),
    CONSTRAINT deliveries_state_check CHECK ((state = ANY (ARRAY[0, 1, 2])))
);


--
-- Name: deliveries_id_seq; Type: SEQUENCE; Schema: app_demo_2a97516c; Owner: -
--

CREATE SEQUENCE app_demo_2a97516c.deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: deliveries_id_seq; Type: SEQUENCE OWNED BY; Schema: app_demo_2a97516c; Owner: -
--

ALTER SEQUENCE app_demo_2a97516c.deliveries_id_seq OWNED BY app_demo_2a97516c.deliveries.id;


--
-- Name: devices; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.devices (
    token text NOT NULL,
    user_id bigint NOT NULL,
    certificate_id bigint NOT NULL,
    bound_at bigint NOT NULL,
    sequence bigint NOT NULL
);


--
-- Name: devices_sequence_seq; Type: SEQUENCE; Schema: app_demo_2a97516c; Owner: -
--

CREATE SEQUENCE app_demo_2a97516c.devices_sequence_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: devices_sequence_seq; Type: SEQUENCE OWNED BY; Schema: app_demo_2a97516c; Owner: -
--

ALTER SEQUENCE app_demo_2a97516c.devices_sequence_seq OWNED BY app_demo_2a97516c.devices.sequence;


--
-- Name: group_profiles; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.group_profiles (
    group_id text NOT NULL,
    profile bytea,
    last_sequence bigint DEFAULT 0 NOT NULL
);


--
-- Name: members; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.members (
    group_id text NOT NULL,
    "position" integer NOT NULL,
    user_id bigint NOT NULL
);


--
-- Name: name_cards; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.name_cards (
    user_id bigint NOT NULL,
    group_id text NOT NULL,
    card text NOT NULL
);


--
-- Name: push_bindings; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.push_bindings (
    user_name text NOT NULL,
    "position" integer NOT NULL,
    device_id text NOT NULL,
    notifier text NOT NULL,
    token text NOT NULL
);


--
-- Name: pushbridge_migrations; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.pushbridge_migrations (
    identifier text NOT NULL,
    applied_at bigint NOT NULL,
    "position" bigint NOT NULL
);


--
-- Name: pushbridge_migrations_position_seq; Type: SEQUENCE; Schema: app_demo_2a97516c; Owner: -
--

CREATE SEQUENCE app_demo_2a97516c.pushbridge_migrations_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: pushbridge_migrations_position_seq; Type: SEQUENCE OWNED BY; Schema: app_demo_2a97516c; Owner: -
--

ALTER SEQUENCE app_demo_2a97516c.pushbridge_migrations_position_seq OWNED BY app_demo_2a97516c.pushbridge_migrations."position";


--
-- Name: receiver_rolls; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.receiver_rolls (
    id bigint NOT NULL,
    used_at bigint NOT NULL,
    rows bytea NOT NULL
);


--
-- Name: receiver_rolls_id_seq; Type: SEQUENCE; Schema: app_demo_2a97516c; Owner: -
--

CREATE SEQUENCE app_demo_2a97516c.receiver_rolls_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: receiver_rolls_id_seq; Type: SEQUENCE OWNED BY; Schema: app_demo_2a97516c; Owner: -
--

ALTER SEQUENCE app_demo_2a97516c.receiver_rolls_id_seq OWNED BY app_demo_2a97516c.receiver_rolls.id;


--
-- Name: sent_messages; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.sent_messages (
    message_id text NOT NULL,
    sent_at bigint NOT NULL,
    decisions bytea NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: app_demo_2a97516c; Owner: -
--

CREATE TABLE app_demo_2a97516c.users (
    id bigint NOT NULL,
    name text NOT NULL,
    configured boolean DEFAULT false NOT NULL,
    bound_certificate bigint,
    presence smallint DEFAULT 0 NOT NULL,
    background_since bigint,
    background_grace bigint DEFAULT 0 NOT NULL,
    app_remind smallint,
    window_start integer,
    window_end integer,
    app_silent_start bigint,
    app_silent_until bigint,
    display_style smallint DEFAULT 0 NOT NULL,
    display_name text,
    language text,
    one_to_one_sound text,
    group_sound text,
    time_zone text DEFAULT 'UTC'::text NOT NULL,
    CONSTRAINT users_app_remind_check CHECK ((app_remind = ANY (ARRAY[0, 1, 2]))),
    CONSTRAINT users_check CHECK (((presence = 2) = (background_since IS NOT NULL))),
    CONSTRAINT users_check1 CHECK (((window_start IS NULL) = (window_end IS NULL))),
    CONSTRAINT users_check2 CHECK (((app_silent_start IS NULL) = (app_silent_until IS NULL))),
    CONSTRAINT users_display_style_check CHECK ((display_style = ANY (ARRAY[0, 1]))),
    CONSTRAINT users_presence_check CHECK ((presence = ANY (ARRAY[0, 1, 2])))
);


--
-- Name: users_id_seq; Type: SEQUENCE; Schema: app_demo_2a97516c; Owner: -
--

CREATE SEQUENCE app_demo_2a97516c.users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: users_id_seq; Type: SEQUENCE OWNED BY; Schema: app_demo_2a97516c; Owner: -
--

ALTER SEQUENCE app_demo_2a97516c.users_id_seq OWNED BY app_demo_2a97516c.users.id;


--
-- Name: app_certificates; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.app_certificates (
    "position" integer NOT NULL,
    certificate_id bigint NOT NULL
);


--
-- Name: app_templates; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.app_templates (
    "position" integer NOT NULL,
    name text NOT NULL,
    title_pattern text,
    content_pattern text
);


--
-- Name: app_version; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.app_version (
    singleton boolean DEFAULT true NOT NULL,
    version bigint NOT NULL,
    data_version bigint DEFAULT 0 NOT NULL,
    CONSTRAINT app_version_singleton_check CHECK (singleton)
);


--
-- Name: badge_counters; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.badge_counters (
    user_id bigint NOT NULL,
    badge bigint NOT NULL
);


--
-- Name: badge_log; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.badge_log (
    id bigint NOT NULL,
    entries bytea NOT NULL,
    users bigint[]
);


--
-- Name: badge_log_id_seq; Type: SEQUENCE; Schema: app_other_d9298a10; Owner: -
--

CREATE SEQUENCE app_other_d9298a10.badge_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: badge_log_id_seq; Type: SEQUENCE OWNED BY; Schema: app_other_d9298a10; Owner: -
--

ALTER SEQUENCE app_other_d9298a10.badge_log_id_seq OWNED BY app_other_d9298a10.badge_log.id;


--
-- Name: certificates; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.certificates (
    id bigint NOT NULL,
    name text,
    busi_id text,
    bundle_id text NOT NULL,
    environment text NOT NULL,
    CONSTRAINT certificates_check CHECK (((name IS NOT NULL) OR (busi_id IS NOT NULL))),
    CONSTRAINT certificates_environment_check CHECK ((environment = ANY (ARRAY['development'::text, 'production'::text])))
);


--
-- Name: certificates_id_seq; Type: SEQUENCE; Schema: app_other_d9298a10; Owner: -
--

CREATE SEQUENCE app_other_d9298a10.certificates_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: certificates_id_seq; Type: SEQUENCE OWNED BY; Schema: app_other_d9298a10; Owner: -
--

ALTER SEQUENCE app_other_d9298a10.certificates_id_seq OWNED BY app_other_d9298a10.certificates.id;


--
-- Name: conversation_settings; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.conversation_settings (
    user_id bigint NOT NULL,
    group_chat boolean NOT NULL,
    conversation text NOT NULL,
    remind smallint,
    silent_start bigint,
    silent_until bigint,
    CONSTRAINT conversation_settings_remind_check CHECK ((remind = ANY (ARRAY[0, 1, 2])))
);


--
-- Name: deliveries; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.deliveries (
    id bigint NOT NULL,
    message_id text NOT NULL,
    receiver text NOT NULL,
    token text NOT NULL,
    environment text NOT NULL,
    bound_at bigint NOT NULL,
    headers bytea NOT NULL,
    payload bytea NOT NULL,
    queued_at bigint NOT NULL,
    due_at bigint NOT NULL,
    claimed_until bigint DEFAULT 0 NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    state smallint DEFAULT 0 NOT NULL,
    status integer,
    reason text,
    updated_at bigint NOT NULL,
    device_removed boolean DEFAULT false NOT NULL,
    CONSTRAINT deliveries_environment_check CHECK ((environment = ANY (ARRAY['development'::text, 'production'::text]))),
    CONSTRAINT deliveries_state_check CHECK ((state = ANY (ARRAY[0, 1, 2])))
);


--
-- Name: deliveries_id_seq; Type: SEQUENCE; Schema: app_other_d9298a10; Owner: -
--

CREATE SEQUENCE app_other_d9298a10.deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: deliveries_id_seq; Type: SEQUENCE OWNED BY; Schema: app_other_d9298a10; Owner: -
--

ALTER SEQUENCE app_other_d9298a10.deliveries_id_seq OWNED BY app_other_d9298a10.deliveries.id;


--
-- Name: devices; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.devices (
    token text NOT NULL,
    user_id bigint NOT NULL,
    certificate_id bigint NOT NULL,
    bound_at bigint NOT NULL,
    sequence bigint NOT NULL
);


--
-- Name: devices_sequence_seq; Type: SEQUENCE; Schema: app_other_d9298a10; Owner: -
--

CREATE SEQUENCE app_other_d9298a10.devices_sequence_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: devices_sequence_seq; Type: SEQUENCE OWNED BY; Schema: app_other_d9298a10; Owner: -
--

ALTER SEQUENCE app_other_d9298a10.devices_sequence_seq OWNED BY app_other_d9298a10.devices.sequence;


--
-- Name: group_profiles; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.group_profiles (
    group_id text NOT NULL,
    profile bytea,
    last_sequence bigint DEFAULT 0 NOT NULL
);


--
-- Name: members; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.members (
    group_id text NOT NULL,
    "position" integer NOT NULL,
    user_id bigint NOT NULL
);


--
-- Name: name_cards; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.name_cards (
    user_id bigint NOT NULL,
    group_id text NOT NULL,
    card text NOT NULL
);


--
-- Name: push_bindings; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.push_bindings (
    user_name text NOT NULL,
    "position" integer NOT NULL,
    device_id text NOT NULL,
    notifier text NOT NULL,
    token text NOT NULL
);


--
-- Name: pushbridge_migrations; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.pushbridge_migrations (
    identifier text NOT NULL,
    applied_at bigint NOT NULL,
    "position" bigint NOT NULL
);


--
-- Name: pushbridge_migrations_position_seq; Type: SEQUENCE; Schema: app_other_d9298a10; Owner: -
--

CREATE SEQUENCE app_other_d9298a10.pushbridge_migrations_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: pushbridge_migrations_position_seq; Type: SEQUENCE OWNED BY; Schema: app_other_d9298a10; Owner: -
--

ALTER SEQUENCE app_other_d9298a10.pushbridge_migrations_position_seq OWNED BY app_other_d9298a10.pushbridge_migrations."position";


--
-- Name: receiver_rolls; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.receiver_rolls (
    id bigint NOT NULL,
    used_at bigint NOT NULL,
    rows bytea NOT NULL
);


--
-- Name: receiver_rolls_id_seq; Type: SEQUENCE; Schema: app_other_d9298a10; Owner: -
--

CREATE SEQUENCE app_other_d9298a10.receiver_rolls_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: receiver_rolls_id_seq; Type: SEQUENCE OWNED BY; Schema: app_other_d9298a10; Owner: -
--

ALTER SEQUENCE app_other_d9298a10.receiver_rolls_id_seq OWNED BY app_other_d9298a10.receiver_rolls.id;


--
-- Name: sent_messages; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.sent_messages (
    message_id text NOT NULL,
    sent_at bigint NOT NULL,
    decisions bytea NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: app_other_d9298a10; Owner: -
--

CREATE TABLE app_other_d9298a10.users (
    id bigint NOT NULL,
    name text NOT NULL,
    configured boolean DEFAULT false NOT NULL,
    bound_certificate bigint,
    presence smallint DEFAULT 0 NOT NULL,
    background_since bigint,
    background_grace bigint DEFAULT 0 NOT NULL,
    app_remind smallint,
    window_start integer,
    window_end integer,
    app_silent_start bigint,
    app_silent_until bigint,
    display_style smallint DEFAULT 0 NOT NULL,
    display_name text,
    language text,
    one_to_one_sound text,
    group_sound text,
    time_zone text DEFAULT 'UTC'::text NOT NULL,
    CONSTRAINT users_app_remind_check CHECK ((app_remind = ANY (ARRAY[0, 1, 2]))),
    CONSTRAINT users_check CHECK (((presence = 2) = (background_since IS NOT NULL))),
    CONSTRAINT users_check1 CHECK (((window_start IS NULL) = (window_end IS NULL))),
    CONSTRAINT users_check2 CHECK (((app_silent_start IS NULL) = (app_silent_until IS NULL))),
    CONSTRAINT users_display_style_check CHECK ((display_style = ANY (ARRAY[0, 1]))),
    CONSTRAINT users_presence_check CHECK ((presence = ANY (ARRAY[0, 1, 2])))
);


--
-- Name: users_id_seq; Type: SEQUENCE; Schema: app_other_d9298a10; Owner: -
--

CREATE SEQUENCE app_other_d9298a10.users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: users_id_seq; Type: SEQUENCE OWNED BY; Schema: app_other_d9298a10; Owner: -
--

ALTER SEQUENCE app_other_d9298a10.users_id_seq OWNED BY app_other_d9298a10.users.id;


--
-- Name: apps; Type: TABLE; Schema: pushbridge_service; Owner: -
--

CREATE TABLE pushbridge_service.apps (
    id text NOT NULL,
    key_sha256 bytea NOT NULL,
    created_at bigint NOT NULL,
    CONSTRAINT apps_key_sha256_check CHECK ((length(key_sha256) = 32))
);


--
-- Name: pushbridge_migrations; Type: TABLE; Schema: pushbridge_service; Owner: -
--

CREATE TABLE pushbridge_service.pushbridge_migrations (
    identifier text NOT NULL,
    applied_at bigint NOT NULL,
    "position" bigint NOT NULL
);


--
-- Name: pushbridge_migrations_position_seq; Type: SEQUENCE; Schema: pushbridge_service; Owner: -
--

CREATE SEQUENCE pushbridge_service.pushbridge_migrations_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: pushbridge_migrations_position_seq; Type: SEQUENCE OWNED BY; Schema: pushbridge_service; Owner: -
--

ALTER SEQUENCE pushbridge_service.pushbridge_migrations_position_seq OWNED BY pushbridge_service.pushbridge_migrations."position";


--
-- Name: vendor_bindings; Type: TABLE; Schema: pushbridge_service; Owner: -
--

CREATE TABLE pushbridge_service.vendor_bindings (
    app text NOT NULL,
    vendor text NOT NULL,
    key text NOT NULL,
    account text NOT NULL,
    secret bytea NOT NULL,
    signing_key bytea NOT NULL,
    token_seconds bigint NOT NULL,
    bound_at bigint NOT NULL,
    CONSTRAINT vendor_bindings_vendor_check CHECK ((vendor <> ''::text))
);


--
-- Name: badge_log id; Type: DEFAULT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.badge_log ALTER COLUMN id SET DEFAULT nextval('app_demo_2a97516c.badge_log_id_seq'::regclass);


--
-- Name: certificates id; Type: DEFAULT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.certificates ALTER COLUMN id SET DEFAULT nextval('app_demo_2a97516c.certificates_id_seq'::regclass);


--
-- Name: deliveries id; Type: DEFAULT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.deliveries ALTER COLUMN id SET DEFAULT nextval('app_demo_2a97516c.deliveries_id_seq'::regclass);


--
-- Name: devices sequence; Type: DEFAULT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.devices ALTER COLUMN sequence SET DEFAULT nextval('app_demo_2a97516c.devices_sequence_seq'::regclass);


--
-- Name: pushbridge_migrations position; Type: DEFAULT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.pushbridge_migrations ALTER COLUMN "position" SET DEFAULT nextval('app_demo_2a97516c.pushbridge_migrations_position_seq'::regclass);


--
-- Name: receiver_rolls id; Type: DEFAULT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.receiver_rolls ALTER COLUMN id SET DEFAULT nextval('app_demo_2a97516c.receiver_rolls_id_seq'::regclass);


--
-- Name: users id; Type: DEFAULT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.users ALTER COLUMN id SET DEFAULT nextval('app_demo_2a97516c.users_id_seq'::regclass);


--
-- Name: badge_log id; Type: DEFAULT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.badge_log ALTER COLUMN id SET DEFAULT nextval('app_other_d9298a10.badge_log_id_seq'::regclass);


--
-- Name: certificates id; Type: DEFAULT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.certificates ALTER COLUMN id SET DEFAULT nextval('app_other_d9298a10.certificates_id_seq'::regclass);


--
-- Name: deliveries id; Type: DEFAULT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.deliveries ALTER COLUMN id SET DEFAULT nextval('app_other_d9298a10.deliveries_id_seq'::regclass);


--
-- Name: devices sequence; Type: DEFAULT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.devices ALTER COLUMN sequence SET DEFAULT nextval('app_other_d9298a10.devices_sequence_seq'::regclass);


--
-- Name: pushbridge_migrations position; Type: DEFAULT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.pushbridge_migrations ALTER COLUMN "position" SET DEFAULT nextval('app_other_d9298a10.pushbridge_migrations_position_seq'::regclass);


--
-- Name: receiver_rolls id; Type: DEFAULT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.receiver_rolls ALTER COLUMN id SET DEFAULT nextval('app_other_d9298a10.receiver_rolls_id_seq'::regclass);


--
-- Name: users id; Type: DEFAULT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.users ALTER COLUMN id SET DEFAULT nextval('app_other_d9298a10.users_id_seq'::regclass);


--
-- Name: pushbridge_migrations position; Type: DEFAULT; Schema: pushbridge_service; Owner: -
--

ALTER TABLE ONLY pushbridge_service.pushbridge_migrations ALTER COLUMN "position" SET DEFAULT nextval('pushbridge_service.pushbridge_migrations_position_seq'::regclass);


--
-- Data for Name: app_certificates; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.app_certificates ("position", certificate_id) FROM stdin;
0	1
1	2
\.


--
-- Data for Name: app_templates; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.app_templates ("position", name, title_pattern, content_pattern) FROM stdin;
\.


--
-- Data for Name: app_version; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.app_version (singleton, version, data_version) FROM stdin;
t	1	3
\.


--
-- Data for Name: badge_counters; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.badge_counters (user_id, badge) FROM stdin;
1	0
2	0
\.


--
-- Data for Name: badge_log; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.badge_log (id, entries, users) FROM stdin;
1	\\xffffffffffffffff010000000000000004020000000000000000000000000000	{2}
2	\\xffffffffffffffff010000000000000004040000000000000000000000000000	{2}
\.


--
-- Data for Name: certificates; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.certificates (id, name, busi_id, bundle_id, environment) FROM stdin;
1	agoraTest	\N	io.agora.chatdemo	development
2	agoraPad	\N	io.agora.chatdemo.pad	production
\.


--
-- Data for Name: conversation_settings; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.conversation_settings (user_id, group_chat, conversation, remind, silent_start, silent_until) FROM stdin;
\.


--
-- Data for Name: deliveries; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.deliveries (id, message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, claimed_until, attempts, state, status, reason, updated_at, device_removed) FROM stdin;
\.


--
-- Data for Name: devices; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.devices (token, user_id, certificate_id, bound_at, sequence) FROM stdin;
9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0	2	1	1796548816748	1
0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de	2	2	1796548816748	2
\.


--
-- Data for Name: group_profiles; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.group_profiles (group_id, profile, last_sequence) FROM stdin;
\.


--
-- Data for Name: members; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.members (group_id, "position", user_id) FROM stdin;
g1	0	1
g1	1	2
g1	2	5
\.


--
-- Data for Name: name_cards; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.name_cards (user_id, group_id, card) FROM stdin;
\.


--
-- Data for Name: push_bindings; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.push_bindings (user_name, "position", device_id, notifier, token) FROM stdin;
\.


--
-- Data for Name: pushbridge_migrations; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.pushbridge_migrations (identifier, applied_at, "position") FROM stdin;
2026-11-23-postgres-schema	1796548816398	1
2026-11-26-postgres-app-version	1796548816398	2
2026-11-27-postgres-receiver-cache	1796548816398	3
2026-11-27-postgres-lock-with-records	1796548816398	4
2026-11-29-group-profiles-and-push-bindings	1796548816398	5
2026-11-26-postgres-commit-sends	1796548816398	6
2026-11-26-postgres-counters-logged	1796548816398	7
2026-11-27-postgres-commit-one-plan	1796548816398	8
\.


--
-- Data for Name: receiver_rolls; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.receiver_rolls (id, used_at, rows) FROM stdin;
1	1796548816824	\\x50424c31030275310002753202410badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de00010861676f72615061640015696f2e61676f72612e6368617464656d6f2e7061640a70726f64756374696f6ed8bdbbaac968419f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a001010961676f7261546573740011696f2e61676f72612e6368617464656d6f0b646576656c6f706d656e74d8bdbbaac96802753300
\.


--
-- Data for Name: sent_messages; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.sent_messages (message_id, sent_at, decisions) FROM stdin;
m-1	1796548816799	\\x504252340101020200687b22617073223a7b22616c657274223a7b22626f6479223a22416e6e3a6c756e63683f227d2c226261646765223a312c22736f756e64223a2264656661756c74227d2c2266223a227531222c2267223a226731222c226d223a226d2d31222c2274223a227532227d2f016404020002000001
m-2	1796548816824	\\x504252340101020200687b22617073223a7b22616c657274223a7b22626f6479223a22416e6e3a6c756e63683f227d2c226261646765223a322c22736f756e64223a2264656661756c74227d2c2266223a227531222c2267223a226731222c226d223a226d2d32222c2274223a227532227d2f016404040004000001
\.


--
-- Data for Name: users; Type: TABLE DATA; Schema: app_demo_2a97516c; Owner: -
--

COPY app_demo_2a97516c.users (id, name, configured, bound_certificate, presence, background_since, background_grace, app_remind, window_start, window_end, app_silent_start, app_silent_until, display_style, display_name, language, one_to_one_sound, group_sound, time_zone) FROM stdin;
1	u1	t	\N	0	\N	120	\N	\N	\N	\N	\N	0	Ann	\N	\N	\N	GMT
2	u2	t	2	0	\N	120	\N	\N	\N	\N	\N	1	\N	\N	\N	\N	GMT
5	u3	f	\N	0	\N	0	\N	\N	\N	\N	\N	0	\N	\N	\N	\N	UTC
\.


--
-- Data for Name: app_certificates; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.app_certificates ("position", certificate_id) FROM stdin;
0	1
1	2
\.


--
-- Data for Name: app_templates; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.app_templates ("position", name, title_pattern, content_pattern) FROM stdin;
\.


--
-- Data for Name: app_version; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.app_version (singleton, version, data_version) FROM stdin;
t	1	3
\.


--
-- Data for Name: badge_counters; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.badge_counters (user_id, badge) FROM stdin;
1	0
2	0
\.


--
-- Data for Name: badge_log; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.badge_log (id, entries, users) FROM stdin;
1	\\xffffffffffffffff010000000000000004020000000000000000000000000000	{2}
\.


--
-- Data for Name: certificates; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.certificates (id, name, busi_id, bundle_id, environment) FROM stdin;
1	agoraTest	\N	io.agora.chatdemo	development
2	agoraPad	\N	io.agora.chatdemo.pad	production
\.


--
-- Data for Name: conversation_settings; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.conversation_settings (user_id, group_chat, conversation, remind, silent_start, silent_until) FROM stdin;
\.


--
-- Data for Name: deliveries; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.deliveries (id, message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, claimed_until, attempts, state, status, reason, updated_at, device_removed) FROM stdin;
\.


--
-- Data for Name: devices; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.devices (token, user_id, certificate_id, bound_at, sequence) FROM stdin;
9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0	2	1	1796548817025	1
0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de	2	2	1796548817025	2
\.


--
-- Data for Name: group_profiles; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.group_profiles (group_id, profile, last_sequence) FROM stdin;
\.


--
-- Data for Name: members; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.members (group_id, "position", user_id) FROM stdin;
g1	0	1
g1	1	2
g1	2	5
\.


--
-- Data for Name: name_cards; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.name_cards (user_id, group_id, card) FROM stdin;
\.


--
-- Data for Name: push_bindings; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.push_bindings (user_name, "position", device_id, notifier, token) FROM stdin;
\.


--
-- Data for Name: pushbridge_migrations; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.pushbridge_migrations (identifier, applied_at, "position") FROM stdin;
2026-11-23-postgres-schema	1796548816853	1
2026-11-26-postgres-app-version	1796548816853	2
2026-11-27-postgres-receiver-cache	1796548816853	3
2026-11-27-postgres-lock-with-records	1796548816853	4
2026-11-29-group-profiles-and-push-bindings	1796548816853	5
2026-11-26-postgres-commit-sends	1796548816853	6
2026-11-26-postgres-counters-logged	1796548816853	7
2026-11-27-postgres-commit-one-plan	1796548816853	8
\.


--
-- Data for Name: receiver_rolls; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.receiver_rolls (id, used_at, rows) FROM stdin;
1	1796548817065	\\x50424c31030275310002753202410badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de00010861676f72615061640015696f2e61676f72612e6368617464656d6f2e7061640a70726f64756374696f6e82c2bbaac968419f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a001010961676f7261546573740011696f2e61676f72612e6368617464656d6f0b646576656c6f706d656e7482c2bbaac96802753300
\.


--
-- Data for Name: sent_messages; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.sent_messages (message_id, sent_at, decisions) FROM stdin;
m-1	1796548817065	\\x504252340101020200687b22617073223a7b22616c657274223a7b22626f6479223a22416e6e3a6c756e63683f227d2c226261646765223a312c22736f756e64223a2264656661756c74227d2c2266223a227531222c2267223a226731222c226d223a226d2d31222c2274223a227532227d2f016404020002000001
\.


--
-- Data for Name: users; Type: TABLE DATA; Schema: app_other_d9298a10; Owner: -
--

COPY app_other_d9298a10.users (id, name, configured, bound_certificate, presence, background_since, background_grace, app_remind, window_start, window_end, app_silent_start, app_silent_until, display_style, display_name, language, one_to_one_sound, group_sound, time_zone) FROM stdin;
1	u1	t	\N	0	\N	120	\N	\N	\N	\N	\N	0	Ann	\N	\N	\N	GMT
2	u2	t	2	0	\N	120	\N	\N	\N	\N	\N	1	\N	\N	\N	\N	GMT
5	u3	f	\N	0	\N	0	\N	\N	\N	\N	\N	0	\N	\N	\N	\N	UTC
\.


--
-- Data for Name: apps; Type: TABLE DATA; Schema: pushbridge_service; Owner: -
--

COPY pushbridge_service.apps (id, key_sha256, created_at) FROM stdin;
demo	\\x95fd72b9fc10f953f43369c6b24d44ba4b828ad1ea139e3dd67850d4f2c1c7fb	1796548816379
other	\\x8311f0c707b4ea84118fd357411a8d56e6051afae58bf726f5d7e9038cf52d19	1796548816837
\.


--
-- Data for Name: pushbridge_migrations; Type: TABLE DATA; Schema: pushbridge_service; Owner: -
--

COPY pushbridge_service.pushbridge_migrations (identifier, applied_at, "position") FROM stdin;
2026-11-23-postgres-service-directory	1796548816297	1
2026-11-26-postgres-vendor-bindings-any-family	1796548816297	2
\.


--
-- Data for Name: vendor_bindings; Type: TABLE DATA; Schema: pushbridge_service; Owner: -
--

COPY pushbridge_service.vendor_bindings (app, vendor, key, account, secret, signing_key, token_seconds, bound_at) FROM stdin;
\.


--
-- Name: badge_log_id_seq; Type: SEQUENCE SET; Schema: app_demo_2a97516c; Owner: -
--

SELECT pg_catalog.setval('app_demo_2a97516c.badge_log_id_seq', 2, true);


--
-- Name: certificates_id_seq; Type: SEQUENCE SET; Schema: app_demo_2a97516c; Owner: -
--

SELECT pg_catalog.setval('app_demo_2a97516c.certificates_id_seq', 2, true);


--
-- Name: deliveries_id_seq; Type: SEQUENCE SET; Schema: app_demo_2a97516c; Owner: -
--

SELECT pg_catalog.setval('app_demo_2a97516c.deliveries_id_seq', 1, false);


--
-- Name: devices_sequence_seq; Type: SEQUENCE SET; Schema: app_demo_2a97516c; Owner: -
--

SELECT pg_catalog.setval('app_demo_2a97516c.devices_sequence_seq', 2, true);


--
-- Name: pushbridge_migrations_position_seq; Type: SEQUENCE SET; Schema: app_demo_2a97516c; Owner: -
--

SELECT pg_catalog.setval('app_demo_2a97516c.pushbridge_migrations_position_seq', 8, true);


--
-- Name: receiver_rolls_id_seq; Type: SEQUENCE SET; Schema: app_demo_2a97516c; Owner: -
--

SELECT pg_catalog.setval('app_demo_2a97516c.receiver_rolls_id_seq', 1, true);


--
-- Name: users_id_seq; Type: SEQUENCE SET; Schema: app_demo_2a97516c; Owner: -
--

SELECT pg_catalog.setval('app_demo_2a97516c.users_id_seq', 5, true);


--
-- Name: badge_log_id_seq; Type: SEQUENCE SET; Schema: app_other_d9298a10; Owner: -
--

SELECT pg_catalog.setval('app_other_d9298a10.badge_log_id_seq', 1, true);


--
-- Name: certificates_id_seq; Type: SEQUENCE SET; Schema: app_other_d9298a10; Owner: -
--

SELECT pg_catalog.setval('app_other_d9298a10.certificates_id_seq', 2, true);


--
-- Name: deliveries_id_seq; Type: SEQUENCE SET; Schema: app_other_d9298a10; Owner: -
--

SELECT pg_catalog.setval('app_other_d9298a10.deliveries_id_seq', 1, false);


--
-- Name: devices_sequence_seq; Type: SEQUENCE SET; Schema: app_other_d9298a10; Owner: -
--

SELECT pg_catalog.setval('app_other_d9298a10.devices_sequence_seq', 2, true);


--
-- Name: pushbridge_migrations_position_seq; Type: SEQUENCE SET; Schema: app_other_d9298a10; Owner: -
--

SELECT pg_catalog.setval('app_other_d9298a10.pushbridge_migrations_position_seq', 8, true);


--
-- Name: receiver_rolls_id_seq; Type: SEQUENCE SET; Schema: app_other_d9298a10; Owner: -
--

SELECT pg_catalog.setval('app_other_d9298a10.receiver_rolls_id_seq', 1, true);


--
-- Name: users_id_seq; Type: SEQUENCE SET; Schema: app_other_d9298a10; Owner: -
--

SELECT pg_catalog.setval('app_other_d9298a10.users_id_seq', 5, true);


--
-- Name: pushbridge_migrations_position_seq; Type: SEQUENCE SET; Schema: pushbridge_service; Owner: -
--

SELECT pg_catalog.setval('pushbridge_service.pushbridge_migrations_position_seq', 2, true);


--
-- Name: app_certificates app_certificates_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.app_certificates
    ADD CONSTRAINT app_certificates_pkey PRIMARY KEY ("position");


--
-- Name: app_templates app_templates_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.app_templates
    ADD CONSTRAINT app_templates_pkey PRIMARY KEY ("position");


--
-- Name: app_version app_version_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.app_version
    ADD CONSTRAINT app_version_pkey PRIMARY KEY (singleton);


--
-- Name: badge_counters badge_counters_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.badge_counters
    ADD CONSTRAINT badge_counters_pkey PRIMARY KEY (user_id);


--
-- Name: badge_log badge_log_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.badge_log
    ADD CONSTRAINT badge_log_pkey PRIMARY KEY (id);


--
-- Name: certificates certificates_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.certificates
    ADD CONSTRAINT certificates_pkey PRIMARY KEY (id);


--
-- Name: conversation_settings conversation_settings_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.conversation_settings
    ADD CONSTRAINT conversation_settings_pkey PRIMARY KEY (user_id, group_chat, conversation);


--
-- Name: deliveries deliveries_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id);


--
-- Name: devices devices_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.devices
    ADD CONSTRAINT devices_pkey PRIMARY KEY (token);


--
-- Name: devices devices_sequence_key; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.devices
    ADD CONSTRAINT devices_sequence_key UNIQUE (sequence);


--
-- Name: group_profiles group_profiles_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.group_profiles
    ADD CONSTRAINT group_profiles_pkey PRIMARY KEY (group_id);


--
-- Name: members members_group_id_user_id_key; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.members
    ADD CONSTRAINT members_group_id_user_id_key UNIQUE (group_id, user_id);


--
-- Name: members members_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.members
    ADD CONSTRAINT members_pkey PRIMARY KEY (group_id, "position");


--
-- Name: name_cards name_cards_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.name_cards
    ADD CONSTRAINT name_cards_pkey PRIMARY KEY (user_id, group_id);


--
-- Name: push_bindings push_bindings_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.push_bindings
    ADD CONSTRAINT push_bindings_pkey PRIMARY KEY (user_name, "position");


--
-- Name: pushbridge_migrations pushbridge_migrations_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.pushbridge_migrations
    ADD CONSTRAINT pushbridge_migrations_pkey PRIMARY KEY (identifier);


--
-- Name: receiver_rolls receiver_rolls_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.receiver_rolls
    ADD CONSTRAINT receiver_rolls_pkey PRIMARY KEY (id);


--
-- Name: sent_messages sent_messages_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.sent_messages
    ADD CONSTRAINT sent_messages_pkey PRIMARY KEY (message_id);


--
-- Name: users users_name_key; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.users
    ADD CONSTRAINT users_name_key UNIQUE (name);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: app_certificates app_certificates_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.app_certificates
    ADD CONSTRAINT app_certificates_pkey PRIMARY KEY ("position");


--
-- Name: app_templates app_templates_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.app_templates
    ADD CONSTRAINT app_templates_pkey PRIMARY KEY ("position");


--
-- Name: app_version app_version_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.app_version
    ADD CONSTRAINT app_version_pkey PRIMARY KEY (singleton);


--
-- Name: badge_counters badge_counters_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.badge_counters
    ADD CONSTRAINT badge_counters_pkey PRIMARY KEY (user_id);


--
-- Name: badge_log badge_log_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.badge_log
    ADD CONSTRAINT badge_log_pkey PRIMARY KEY (id);


--
-- Name: certificates certificates_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.certificates
    ADD CONSTRAINT certificates_pkey PRIMARY KEY (id);


--
-- Name: conversation_settings conversation_settings_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.conversation_settings
    ADD CONSTRAINT conversation_settings_pkey PRIMARY KEY (user_id, group_chat, conversation);


--
-- Name: deliveries deliveries_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id);


--
-- Name: devices devices_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.devices
    ADD CONSTRAINT devices_pkey PRIMARY KEY (token);


--
-- Name: devices devices_sequence_key; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.devices
    ADD CONSTRAINT devices_sequence_key UNIQUE (sequence);


--
-- Name: group_profiles group_profiles_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.group_profiles
    ADD CONSTRAINT group_profiles_pkey PRIMARY KEY (group_id);


--
-- Name: members members_group_id_user_id_key; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.members
    ADD CONSTRAINT members_group_id_user_id_key UNIQUE (group_id, user_id);


--
-- Name: members members_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.members
    ADD CONSTRAINT members_pkey PRIMARY KEY (group_id, "position");


--
-- Name: name_cards name_cards_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.name_cards
    ADD CONSTRAINT name_cards_pkey PRIMARY KEY (user_id, group_id);


--
-- Name: push_bindings push_bindings_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.push_bindings
    ADD CONSTRAINT push_bindings_pkey PRIMARY KEY (user_name, "position");


--
-- Name: pushbridge_migrations pushbridge_migrations_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.pushbridge_migrations
    ADD CONSTRAINT pushbridge_migrations_pkey PRIMARY KEY (identifier);


--
-- Name: receiver_rolls receiver_rolls_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.receiver_rolls
    ADD CONSTRAINT receiver_rolls_pkey PRIMARY KEY (id);


--
-- Name: sent_messages sent_messages_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.sent_messages
    ADD CONSTRAINT sent_messages_pkey PRIMARY KEY (message_id);


--
-- Name: users users_name_key; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.users
    ADD CONSTRAINT users_name_key UNIQUE (name);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: apps apps_key_sha256_key; Type: CONSTRAINT; Schema: pushbridge_service; Owner: -
--

ALTER TABLE ONLY pushbridge_service.apps
    ADD CONSTRAINT apps_key_sha256_key UNIQUE (key_sha256);


--
-- Name: apps apps_pkey; Type: CONSTRAINT; Schema: pushbridge_service; Owner: -
--

ALTER TABLE ONLY pushbridge_service.apps
    ADD CONSTRAINT apps_pkey PRIMARY KEY (id);


--
-- Name: pushbridge_migrations pushbridge_migrations_pkey; Type: CONSTRAINT; Schema: pushbridge_service; Owner: -
--

ALTER TABLE ONLY pushbridge_service.pushbridge_migrations
    ADD CONSTRAINT pushbridge_migrations_pkey PRIMARY KEY (identifier);


--
-- Name: vendor_bindings vendor_bindings_pkey; Type: CONSTRAINT; Schema: pushbridge_service; Owner: -
--

ALTER TABLE ONLY pushbridge_service.vendor_bindings
    ADD CONSTRAINT vendor_bindings_pkey PRIMARY KEY (app, vendor);


--
-- Name: vendor_bindings vendor_bindings_vendor_key_key; Type: CONSTRAINT; Schema: pushbridge_service; Owner: -
--

ALTER TABLE ONLY pushbridge_service.vendor_bindings
    ADD CONSTRAINT vendor_bindings_vendor_key_key UNIQUE (vendor, key);


--
-- Name: deliveries_by_message; Type: INDEX; Schema: app_demo_2a97516c; Owner: -
--

CREATE INDEX deliveries_by_message ON app_demo_2a97516c.deliveries USING btree (message_id);


--
-- Name: deliveries_due; Type: INDEX; Schema: app_demo_2a97516c; Owner: -
--

CREATE INDEX deliveries_due ON app_demo_2a97516c.deliveries USING btree (due_at) WHERE (state = 0);


--
-- Name: deliveries_settled; Type: INDEX; Schema: app_demo_2a97516c; Owner: -
--

CREATE INDEX deliveries_settled ON app_demo_2a97516c.deliveries USING btree (updated_at) WHERE (state <> 0);


--
-- Name: devices_by_user; Type: INDEX; Schema: app_demo_2a97516c; Owner: -
--

CREATE INDEX devices_by_user ON app_demo_2a97516c.devices USING btree (user_id, sequence);


--
-- Name: receiver_rolls_by_time; Type: INDEX; Schema: app_demo_2a97516c; Owner: -
--

CREATE INDEX receiver_rolls_by_time ON app_demo_2a97516c.receiver_rolls USING btree (used_at);


--
-- Name: sent_messages_by_time; Type: INDEX; Schema: app_demo_2a97516c; Owner: -
--

CREATE INDEX sent_messages_by_time ON app_demo_2a97516c.sent_messages USING btree (sent_at);


--
-- Name: deliveries_by_message; Type: INDEX; Schema: app_other_d9298a10; Owner: -
--

CREATE INDEX deliveries_by_message ON app_other_d9298a10.deliveries USING btree (message_id);


--
-- Name: deliveries_due; Type: INDEX; Schema: app_other_d9298a10; Owner: -
--

CREATE INDEX deliveries_due ON app_other_d9298a10.deliveries USING btree (due_at) WHERE (state = 0);


--
-- Name: deliveries_settled; Type: INDEX; Schema: app_other_d9298a10; Owner: -
--

CREATE INDEX deliveries_settled ON app_other_d9298a10.deliveries USING btree (updated_at) WHERE (state <> 0);


--
-- Name: devices_by_user; Type: INDEX; Schema: app_other_d9298a10; Owner: -
--

CREATE INDEX devices_by_user ON app_other_d9298a10.devices USING btree (user_id, sequence);


--
-- Name: receiver_rolls_by_time; Type: INDEX; Schema: app_other_d9298a10; Owner: -
--

CREATE INDEX receiver_rolls_by_time ON app_other_d9298a10.receiver_rolls USING btree (used_at);


--
-- Name: sent_messages_by_time; Type: INDEX; Schema: app_other_d9298a10; Owner: -
--

CREATE INDEX sent_messages_by_time ON app_other_d9298a10.sent_messages USING btree (sent_at);


--
-- Name: app_certificates app_certificates_certificate_id_fkey; Type: FK CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.app_certificates
    ADD CONSTRAINT app_certificates_certificate_id_fkey FOREIGN KEY (certificate_id) REFERENCES app_demo_2a97516c.certificates(id);


--
-- Name: badge_counters badge_counters_user_id_fkey; Type: FK CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.badge_counters
    ADD CONSTRAINT badge_counters_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_demo_2a97516c.users(id);


--
-- Name: conversation_settings conversation_settings_user_id_fkey; Type: FK CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.conversation_settings
    ADD CONSTRAINT conversation_settings_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_demo_2a97516c.users(id);


--
-- Name: devices devices_certificate_id_fkey; Type: FK CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.devices
    ADD CONSTRAINT devices_certificate_id_fkey FOREIGN KEY (certificate_id) REFERENCES app_demo_2a97516c.certificates(id);


--
-- Name: devices devices_user_id_fkey; Type: FK CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.devices
    ADD CONSTRAINT devices_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_demo_2a97516c.users(id);


--
-- Name: members members_user_id_fkey; Type: FK CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.members
    ADD CONSTRAINT members_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_demo_2a97516c.users(id);


--
-- Name: name_cards name_cards_user_id_fkey; Type: FK CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.name_cards
    ADD CONSTRAINT name_cards_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_demo_2a97516c.users(id);


--
-- Name: users users_bound_certificate_fkey; Type: FK CONSTRAINT; Schema: app_demo_2a97516c; Owner: -
--

ALTER TABLE ONLY app_demo_2a97516c.users
    ADD CONSTRAINT users_bound_certificate_fkey FOREIGN KEY (bound_certificate) REFERENCES app_demo_2a97516c.certificates(id);


--
-- Name: app_certificates app_certificates_certificate_id_fkey; Type: FK CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.app_certificates
    ADD CONSTRAINT app_certificates_certificate_id_fkey FOREIGN KEY (certificate_id) REFERENCES app_other_d9298a10.certificates(id);


--
-- Name: badge_counters badge_counters_user_id_fkey; Type: FK CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.badge_counters
    ADD CONSTRAINT badge_counters_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_other_d9298a10.users(id);


--
-- Name: conversation_settings conversation_settings_user_id_fkey; Type: FK CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.conversation_settings
    ADD CONSTRAINT conversation_settings_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_other_d9298a10.users(id);


--
-- Name: devices devices_certificate_id_fkey; Type: FK CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.devices
    ADD CONSTRAINT devices_certificate_id_fkey FOREIGN KEY (certificate_id) REFERENCES app_other_d9298a10.certificates(id);


--
-- Name: devices devices_user_id_fkey; Type: FK CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.devices
    ADD CONSTRAINT devices_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_other_d9298a10.users(id);


--
-- Name: members members_user_id_fkey; Type: FK CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.members
    ADD CONSTRAINT members_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_other_d9298a10.users(id);


--
-- Name: name_cards name_cards_user_id_fkey; Type: FK CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.name_cards
    ADD CONSTRAINT name_cards_user_id_fkey FOREIGN KEY (user_id) REFERENCES app_other_d9298a10.users(id);


--
-- Name: users users_bound_certificate_fkey; Type: FK CONSTRAINT; Schema: app_other_d9298a10; Owner: -
--

ALTER TABLE ONLY app_other_d9298a10.users
    ADD CONSTRAINT users_bound_certificate_fkey FOREIGN KEY (bound_certificate) REFERENCES app_other_d9298a10.certificates(id);


--
-- Name: vendor_bindings vendor_bindings_app_fkey; Type: FK CONSTRAINT; Schema: pushbridge_service; Owner: -
--

ALTER TABLE ONLY pushbridge_service.vendor_bindings
    ADD CONSTRAINT vendor_bindings_app_fkey FOREIGN KEY (app) REFERENCES pushbridge_service.apps(id);


--
-- PostgreSQL database dump complete
--

\unrestrict hogT1Ds5wm9SgxykZ8S7TRmQ8rB81S8sV9gZV5VvE9YEhqXUyZcilZiIGP8ygjn

