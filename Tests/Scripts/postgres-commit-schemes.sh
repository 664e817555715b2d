#!/usr/bin/env bash
# How one app's send commits scale with the writers committing at once, under three ways of keeping
# badge counters exact without losing an update. Not run by CI; the figures behind ruling 191 (the send
# path keeps the app's advisory lock).
#   Tests/Scripts/postgres-commit-schemes.sh            (both clusters: fsync off, as the benches run, then on)
# Runs itself under Tests/Scripts/with-postgres.sh and needs pgbench (Debian's postgresql has it). A toy
# schema `pb_schemes` (not PushBridge's): 1,000 users with counters, the badge log, sent-message records
# and the outbox. One commit is four sends, each a new message id, a 300-byte outbox row and one
# receiver's counter, the receivers drawn from 1 or from 1,000. One function call a commit (prepared):
#   app-lock   today's: the app's advisory lock first, then the versions, the log since the decision
#              (the rows another writer appended that count a user read), one log row, records, outbox;
#   rows       no app lock: the configuration's row `FOR SHARE`, records inserted where no record
#              stands (a message id twice fails the call), the counters' rows locked in user order and
#              incremented in place, outbox;
#   log-tail   records and outbox first, then the app's lock for the log alone: the check and the
#              log row, the lock held from there to the commit.
# Each (scheme, receivers, writers) runs SECONDS_EACH (default 6) with pgbench -c writers, the schemes
# alternated; it prints commits a second and the mean latency, and the same for 2 and 4 writers as a
# ratio to 1 (the figure that says whether writers add throughput).
set -uo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH="${SECONDS_EACH:-6}"
command -v pgbench >/dev/null || PATH="$PATH:$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
command -v pgbench >/dev/null || { echo "postgres-commit-schemes: pgbench is missing (Debian's postgresql has it)" >&2; exit 1; }
if [ "${1:-}" != "--run" ]; then
    export SECONDS_EACH
    PUSHBRIDGE_POSTGRES_OPTIONS="" Tests/Scripts/with-postgres.sh "$0" --run "fsync off" || exit 1
    PUSHBRIDGE_POSTGRES_OPTIONS="-c fsync=on -c synchronous_commit=on" Tests/Scripts/with-postgres.sh "$0" --run "fsync on" || exit 1
    exit 0
fi
label="$2"
U="${PUSHBRIDGE_TEST_POSTGRES_URL:?postgres-commit-schemes: no cluster}"
WORK="$(mktemp -d /tmp/pushbridge-schemes.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
echo "== $label ($(psql -At "$U" -c 'SHOW fsync'), synchronous_commit $(psql -At "$U" -c 'SHOW synchronous_commit'))"

psql -q -v ON_ERROR_STOP=1 "$U" >/dev/null <<'SQL' || exit 1
DROP SCHEMA IF EXISTS pb_schemes CASCADE;
CREATE SCHEMA pb_schemes;
SET search_path TO pb_schemes;
CREATE TABLE app_version (singleton boolean PRIMARY KEY DEFAULT true, version bigint NOT NULL, data_version bigint NOT NULL);
INSERT INTO app_version VALUES (true, 0, 0);
CREATE TABLE badge_counters (user_id bigint PRIMARY KEY, badge bigint NOT NULL);
INSERT INTO badge_counters SELECT i, 0 FROM generate_series(1, 1000) i;
CREATE TABLE badge_log (id bigserial PRIMARY KEY, entries bytea NOT NULL, users bigint[]);
CREATE TABLE sent_messages (message_id text PRIMARY KEY, sent_at bigint NOT NULL, decisions bytea NOT NULL);
CREATE TABLE deliveries (id bigserial PRIMARY KEY, message_id text NOT NULL, receiver text NOT NULL, token text NOT NULL,
    payload bytea NOT NULL, queued_at bigint NOT NULL, state smallint NOT NULL DEFAULT 0);
CREATE INDEX deliveries_by_message ON deliveries (message_id);

-- Today's: every write takes the app's lock first.
CREATE FUNCTION commit_app_lock(ids text[], receivers bigint[], payload bytea, expected_last bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path = pb_schemes AS $$
DECLARE seen_last bigint; changed boolean; logged bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(1346524994, 1);
    SELECT coalesce((SELECT max(id) FROM badge_log), 0) INTO seen_last FROM app_version;
    changed := EXISTS (SELECT 1 FROM badge_log l WHERE l.id > seen_last - 1 AND l.id <= seen_last AND l.users && receivers);  -- the rows since the decision (here: the last)
    INSERT INTO badge_log (entries, users) VALUES (substring(payload FROM 1 FOR 16 * cardinality(receivers)), receivers) RETURNING id INTO logged;
    INSERT INTO deliveries (message_id, receiver, token, payload, queued_at)
        SELECT i, 'u' || u, 'token-' || u, payload, 0 FROM unnest(ids, receivers) AS x(i, u);
    INSERT INTO sent_messages SELECT i, 0, payload FROM unnest(ids) i ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at;
    RETURN logged;
END $$;

-- No app lock: the configuration row shared, records where none stands, counters' rows in user order.
CREATE FUNCTION commit_rows(ids text[], receivers bigint[], payload bytea, expected_last bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path = pb_schemes AS $$
DECLARE written bigint;
BEGIN
    PERFORM 1 FROM app_version FOR SHARE;
    INSERT INTO sent_messages SELECT i, 0, payload FROM unnest(ids) i ON CONFLICT (message_id) DO NOTHING;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written < cardinality(ids) THEN RAISE EXCEPTION 'a message id was recorded meanwhile' USING ERRCODE = 'PB001'; END IF;
    PERFORM 1 FROM badge_counters WHERE user_id = ANY(receivers) ORDER BY user_id FOR UPDATE;
    UPDATE badge_counters b SET badge = b.badge + x.n FROM (SELECT u, count(*) AS n FROM unnest(receivers) u GROUP BY u) AS x WHERE b.user_id = x.u;
    INSERT INTO deliveries (message_id, receiver, token, payload, queued_at)
        SELECT i, 'u' || u, 'token-' || u, payload, 0 FROM unnest(ids, receivers) AS x(i, u);
    RETURN written;
END $$;

-- The log's tail alone under the app's lock: records and outbox first.
CREATE FUNCTION commit_log_tail(ids text[], receivers bigint[], payload bytea, expected_last bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path = pb_schemes AS $$
DECLARE written bigint; seen_last bigint; changed boolean; logged bigint;
BEGIN
    INSERT INTO sent_messages SELECT i, 0, payload FROM unnest(ids) i ON CONFLICT (message_id) DO NOTHING;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written < cardinality(ids) THEN RAISE EXCEPTION 'a message id was recorded meanwhile' USING ERRCODE = 'PB001'; END IF;
    INSERT INTO deliveries (message_id, receiver, token, payload, queued_at)
        SELECT i, 'u' || u, 'token-' || u, payload, 0 FROM unnest(ids, receivers) AS x(i, u);
    PERFORM pg_advisory_xact_lock(1346524994, 1);
    SELECT coalesce((SELECT max(id) FROM badge_log), 0) INTO seen_last FROM app_version;
    changed := EXISTS (SELECT 1 FROM badge_log l WHERE l.id > seen_last - 1 AND l.id <= seen_last AND l.users && receivers);  -- the rows since the decision (here: the last)
    INSERT INTO badge_log (entries, users) VALUES (substring(payload FROM 1 FOR 16 * cardinality(receivers)), receivers) RETURNING id INTO logged;
    RETURN logged;
END $$;
SQL

for receivers in 1000 1; do
    for scheme in app_lock rows log_tail; do
        cat >"$WORK/$scheme-$receivers.sql" <<EOF
\\set a random(1, $receivers)
\\set b random(1, $receivers)
\\set c random(1, $receivers)
\\set d random(1, $receivers)
\\set m random(1, 1000000000000)
SELECT pb_schemes.commit_$scheme(ARRAY['m' || :m || '-' || :client_id || '-1', 'm' || :m || '-' || :client_id || '-2', 'm' || :m || '-' || :client_id || '-3', 'm' || :m || '-' || :client_id || '-4'], ARRAY[:a, :b, :c, :d]::bigint[], decode(repeat('7b22617073223a7b22616c657274223a', 19), 'hex'), 0);
EOF
    done
done

run() {  # scheme receivers writers → "commits/s latency_ms failed"
    local out
    out="$(pgbench -n -M prepared -T "$SECONDS_EACH" -c "$3" -j "$3" -f "$WORK/$1-$2.sql" "$U" 2>&1)"
    local tps lat failed
    tps="$(awk '/^tps = / { printf "%.0f", $3 }' <<<"$out")"
    lat="$(awk '/^latency average = / { print $4 }' <<<"$out")"
    failed="$(awk '/number of failed transactions:/ { print $5 }' <<<"$out")"
    echo "${tps:-0} ${lat:-?} ${failed:-0}"
}

for receivers in 1000 1; do
    for scheme in app_lock rows log_tail; do  # warm-up, not counted: plans, caches, the tables' first pages
        pgbench -n -M prepared -T 2 -c 2 -j 2 -f "$WORK/$scheme-$receivers.sql" "$U" >/dev/null 2>&1
    done
    declare -A base=()
    for writers in 1 2 4; do
        for scheme in app_lock rows log_tail; do
            read -r tps lat failed < <(run "$scheme" "$receivers" "$writers")
            [ "$writers" = 1 ] && base[$scheme]="$tps"
            ratio="$(awk -v t="$tps" -v b="${base[$scheme]:-0}" 'BEGIN { if (b > 0) printf "%.2f", t / b; else print "?" }')"
            printf '%-9s %-9s receivers %-5s writers %s: %6s commits/s (%6s sends/s), latency %6s ms, ×%s of one writer%s\n' \
                "$label" "$scheme" "$receivers" "$writers" "$tps" "$((tps * 4))" "$lat" "$ratio" "$([ "$failed" != 0 ] && echo ", failed $failed")"
        done
    done
    psql -q "$U" -c "TRUNCATE pb_schemes.badge_log, pb_schemes.sent_messages, pb_schemes.deliveries" -c "VACUUM ANALYZE" >/dev/null || exit 1
done
exit 0
