#!/usr/bin/env bash
# Where PostgreSQL's time goes in the one-to-one benchmark's load shapes, and what other shapes of the
# commit would cost (SeveralNodes: "Where the three open targets stand"). Not run by CI.
#   Tests/Scripts/postgres-costs.sh [shape ...]     (default: one-app-one-node eight-apps eight-apps-two-nodes)
# Runs itself under Tests/Scripts/with-postgres.sh (a throwaway cluster with pg_stat_statements) and needs
# the release bench (`swift build -c release --product pushbridge-bench`) and pgbench (Debian's postgresql).
# 1. For each shape (PUSHBRIDGE_BENCH_ONLY of pushbridge-bench --postgres): the bench's line, then from
#    pg_stat_statements and pg_stat_user_functions, reset when the shape's load starts: calls of
#    the commit function a message and µs of its own time a call, the statements inside it, and the
#    node's statements a message.
# 2. Eight sends committed in one transaction, four ways, with pgbench (prepared, one client, alternated):
#    all eight to one app in its function (one app's commit); two to each of four apps, the apps'
#    functions in one statement as the nodes send them; those functions written as one statement of
#    data-modifying CTEs; and one function over tables shared by the apps (a toy schema keyed by app,
#    `pb_shared`). Part 2 studied the schema an app of PushBridge before 0.59.0 (0.36.1's bench: BENCH=…);
#    with the apps' tables shared it says so and stops after part 1.
set -uo pipefail
cd "$(dirname "$0")/../.."
BENCH="${BENCH:-.build/release/pushbridge-bench}"
SECONDS_EACH="${SECONDS_EACH:-10}"
[ -x "$BENCH" ] || { echo "postgres-costs: build the bench first: swift build -c release --product pushbridge-bench" >&2; exit 1; }
command -v pgbench >/dev/null || { echo "postgres-costs: pgbench is missing (Debian's postgresql has it)" >&2; exit 1; }
if [ "${1:-}" != "--shape" ]; then  # each shape on a cluster of its own; the commits' shapes after the last
    SHAPES=("$@")
    [ ${#SHAPES[@]} -gt 0 ] || SHAPES=(one-app-one-node eight-apps eight-apps-two-nodes)
    export BENCH SECONDS_EACH
    export PUSHBRIDGE_POSTGRES_OPTIONS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c track_functions=all"
    for i in "${!SHAPES[@]}"; do
        last=""
        [ "$i" = $(( ${#SHAPES[@]} - 1 )) ] && last="--commits"
        Tests/Scripts/with-postgres.sh "$0" --shape "${SHAPES[$i]}" $last || exit 1
    done
    exit 0
fi
shape="$2"
U="${PUSHBRIDGE_TEST_POSTGRES_URL:?postgres-costs: no cluster}"
WORK="$(mktemp -d /tmp/pushbridge-costs.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
psql -q "$U" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" || exit 1

# 1. The shape's load.
PUSHBRIDGE_BENCH_ONLY="$shape" "$BENCH" --postgres --members 200 --seconds "$SECONDS_EACH" >"$WORK/out" 2>"$WORK/err" &
bench=$!
for _ in $(seq 1 600); do grep -q "^start " "$WORK/err" && break; kill -0 $bench 2>/dev/null || break; sleep 0.2; done
psql -q "$U" -c "SELECT pg_stat_statements_reset(); SELECT pg_stat_reset()" >/dev/null
wait $bench || { echo "postgres-costs: the bench failed for $shape:" >&2; tail -5 "$WORK/err" >&2; exit 1; }
line="$(tail -1 "$WORK/out")"
echo "== $line"
messages="$(awk -v s="$SECONDS_EACH" '{ for (i = 1; i <= NF; i++) if ($i ~ /\/s,$/) { sub(/\/s,/, "", $i); print $i * s; exit } }' <<<"$line")"
# Calls and time by the commit function's counters (this version's `pushbridge_commit_apps`, or an older
# bench's `pushbridge_commit_logged`).
psql -q "$U" -At -F ' ' -c "SELECT funcname, sum(calls), round((sum(self_time) / sum(calls) * 1000)::numeric) FROM pg_stat_user_functions
        WHERE funcname IN ('pushbridge_commit_apps', 'pushbridge_commit_logged') GROUP BY 1" |
    awk -v m="$messages" '{ printf "%s: %d calls, %.2f a message, %d µs of its own time a call\n", $1, $2, $2 / m, $3 }'
psql -q "$U" -c "SELECT sum(calls) AS calls, round((sum(total_exec_time) / sum(calls) * 1000)::numeric, 1) AS µs_a_call, sum(rows) AS rows,
        left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS statement_inside_the_function
    FROM pg_stat_statements WHERE toplevel = false GROUP BY 4 ORDER BY sum(total_exec_time) DESC LIMIT 8"
[ "${3:-}" = "--commits" ] || exit 0

# 2. Four shapes of one commit of eight sends.
mapfile -t APPS < <(psql -q "$U" -At -c "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'app\_bench%' ORDER BY nspname LIMIT 4")
[ ${#APPS[@]} -eq 4 ] || { echo "postgres-costs: part 2 needs a bench from before 0.59.0 (a schema an app); this one shares the apps' tables" >&2; exit 0; }
python3 - "$U" "$WORK" "${APPS[@]}" <<'PY' || exit 1
import subprocess, sys
url, work, apps = sys.argv[1], sys.argv[2], sys.argv[3:]
def psql(sql):
    return subprocess.run(["psql", "-q", "-At", "-v", "ON_ERROR_STOP=1", url, "-c", sql], check=True, capture_output=True, text=True).stdout.strip()
# The CTE shape: the function's checks and writes as one statement after the lock (same arguments).
signature = """scope text, expected_configuration bigint, expected_data bigint, expected_last_log bigint, read_users bigint[],
    ids text[], cutoffs bigint[], rolls bigint[], rolls_used_at bigint[], log_entries bytea, log_users bigint[],
    d_message text[], d_receiver text[], d_token text[], d_environment text[], d_bound_at bigint[], d_headers bytea[], d_payload bytea[], d_queued_at bigint[],
    r_message text[], r_sent_at bigint[], r_decisions bytea[], prune_before bigint"""
for app in apps:
    psql(f"""SET search_path = {app};
CREATE OR REPLACE FUNCTION pb_costs_commit_cte({signature}) RETURNS TABLE (committed boolean, data bigint, log_id bigint, entries bytea)
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE seen_data bigint; changed boolean; logged bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(1346524994, hashtext(scope));
    WITH v AS (SELECT a.version, a.data_version, coalesce((SELECT max(id) FROM badge_log), 0) AS last FROM app_version a),
    c AS (SELECT v.*, (v.version <> expected_configuration OR v.data_version <> expected_data OR v.last <> expected_last_log
            OR (cardinality(ids) > 0 AND EXISTS (SELECT 1 FROM sent_messages s JOIN unnest(ids, cutoffs) AS x(i, c) ON s.message_id = x.i
                WHERE s.message_id = ANY(ids) AND s.sent_at >= x.c))) AS changed FROM v),
    l AS (INSERT INTO badge_log (entries, users) SELECT log_entries, log_users FROM c WHERE NOT c.changed AND log_entries IS NOT NULL RETURNING id),
    d AS (INSERT INTO deliveries (message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
        SELECT m, r, t, e, b, h, p, q, q, q FROM c, unnest(d_message, d_receiver, d_token, d_environment, d_bound_at, d_headers, d_payload, d_queued_at)
        AS x(m, r, t, e, b, h, p, q) WHERE NOT c.changed),
    s AS (INSERT INTO sent_messages (message_id, sent_at, decisions) SELECT x.* FROM c, unnest(r_message, r_sent_at, r_decisions) AS x WHERE NOT c.changed
        ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions)
    SELECT c.data_version, c.changed, (SELECT id FROM l) INTO seen_data, changed, logged FROM c;
    RETURN QUERY SELECT NOT changed, seen_data, logged, NULL::bytea;
END $$;""")
# The shared shape: one function for all the apps over tables keyed by app (a toy: no badge log reads).
psql("""DROP SCHEMA IF EXISTS pb_shared CASCADE; CREATE SCHEMA pb_shared; SET search_path = pb_shared;
CREATE TABLE app_version (app int PRIMARY KEY, version bigint NOT NULL, data_version bigint NOT NULL);
INSERT INTO app_version SELECT g, 1, 1 FROM generate_series(0, 7) g;
CREATE TABLE badge_log (app int NOT NULL, id bigserial, entries bytea NOT NULL, users bigint[], PRIMARY KEY (app, id));
CREATE TABLE sent_messages (app int NOT NULL, message_id text NOT NULL, sent_at bigint NOT NULL, decisions bytea NOT NULL, PRIMARY KEY (app, message_id));
CREATE TABLE deliveries (id bigserial PRIMARY KEY, app int NOT NULL, message_id text NOT NULL, receiver text NOT NULL, token text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('development', 'production')), bound_at bigint NOT NULL, headers bytea NOT NULL, payload bytea NOT NULL,
  queued_at bigint NOT NULL, due_at bigint NOT NULL, claimed_until bigint NOT NULL DEFAULT 0, attempts int NOT NULL DEFAULT 0,
  state smallint NOT NULL DEFAULT 0 CHECK (state IN (0, 1, 2)), status int, reason text, updated_at bigint NOT NULL, device_removed boolean NOT NULL DEFAULT false);
CREATE INDEX ON deliveries (app, message_id); CREATE INDEX ON deliveries (app, due_at) WHERE state = 0;
CREATE FUNCTION commit_many(apps int[], exp_conf bigint[], exp_data bigint[], exp_last bigint[], log_app int[], log_entries bytea[], log_users bigint[],
    d_app int[], d_message text[], d_receiver text[], d_token text[], d_environment text[], d_bound_at bigint[], d_headers bytea[], d_payload bytea[], d_queued_at bigint[],
    r_app int[], r_message text[], r_sent_at bigint[], r_decisions bytea[])
RETURNS TABLE (app_n int, committed boolean)
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE ok int[];
BEGIN
    PERFORM pg_advisory_xact_lock(1346524994, a) FROM unnest(apps) a ORDER BY a;
    SELECT coalesce(array_agg(x.a), '{}') INTO ok FROM unnest(apps, exp_conf, exp_data, exp_last) x(a, c, d, l) JOIN app_version v ON v.app = x.a
        WHERE v.version = x.c AND v.data_version = x.d AND coalesce((SELECT max(b.id) FROM badge_log b WHERE b.app = x.a), 0) <= x.l
        AND NOT EXISTS (SELECT 1 FROM sent_messages s JOIN unnest(r_app, r_message) y(ra, m) ON s.app = y.ra AND s.message_id = y.m WHERE y.ra = x.a);
    INSERT INTO badge_log (app, entries, users) SELECT x.a, x.e, ARRAY[x.u] FROM unnest(log_app, log_entries, log_users) x(a, e, u) WHERE x.a = ANY(ok);
    INSERT INTO deliveries (app, message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
        SELECT a, m, r, t, e, b, h, p, q, q, q FROM unnest(d_app, d_message, d_receiver, d_token, d_environment, d_bound_at, d_headers, d_payload, d_queued_at)
        AS x(a, m, r, t, e, b, h, p, q) WHERE x.a = ANY(ok);
    INSERT INTO sent_messages (app, message_id, sent_at, decisions) SELECT x.a, x.m, x.s, x.d FROM unnest(r_app, r_message, r_sent_at, r_decisions) x(a, m, s, d)
        WHERE x.a = ANY(ok) ON CONFLICT ON CONSTRAINT sent_messages_pkey DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions;
    RETURN QUERY SELECT a, a = ANY(ok) FROM unnest(apps) a;
END $$;""")
# Eight new message ids a transaction; no badge log rows (the last log stays as read).
header = "\\set id random(1, 2000000000)\n"
def array(value, count, cast=""): return "ARRAY[" + ", ".join([value] * count) + "]" + cast
def bytea(hex): return f"'\\x{hex}'::bytea"
def new_ids(prefix, count): return "ARRAY[" + ", ".join(f"'{prefix}-{k}-' || :id || '-' || :client_id" for k in range(count)) + "]"
def call(function, app, ids, count):
    """The app's commit function (or its CTE twin) with `count` sends of the ids `ids`, to r1, each recorded."""
    data, last = psql(f"SELECT a.data_version, (SELECT coalesce(max(id), 0) FROM {app}.badge_log) FROM {app}.app_version a").split("|")
    zeros = array("0", count, "::bigint[]")
    return (f"{app}.{function}('{app}', 1, {data}, {last}, ARRAY[-1]::bigint[], {ids}, {zeros}, '{{}}'::bigint[], '{{}}'::bigint[], NULL, NULL, "
            f"{ids}, {array(repr('r1'), count)}, {array(repr('tok'), count)}, {array(repr('production'), count)}, {zeros}, {array(bytea('00'), count)}, "
            f"{array(bytea('7b7d'), count)}, {zeros}, {ids}, {zeros}, {array(bytea('00'), count)}, NULL)")
for name, function in (("apps", "pushbridge_commit_logged"), ("cte", "pb_costs_commit_cte")):  # two to each app
    with open(f"{work}/{name}.sql", "w") as f:
        f.write(header + " UNION ALL ".join(f"SELECT {n} AS n, c.* FROM {call(function, app, new_ids(f'c{n}', 2), 2)} c" for n, app in enumerate(apps)) + ";\n")
# The baseline: the eight sends to one app, in its function (what one app's commit of eight costs).
with open(f"{work}/one.sql", "w") as f:
    f.write(header + f"SELECT * FROM {call('pushbridge_commit_logged', apps[0], new_ids('o', 8), 8)};\n")
owners = "ARRAY[0, 0, 1, 1, 2, 2, 3, 3]"
all_ids = "ARRAY[" + ", ".join(f"'s{n}-{k}-' || :id || '-' || :client_id" for n in range(4) for k in range(2)) + "]"
zeros = array("0", 8, "::bigint[]")
with open(f"{work}/shared.sql", "w") as f:
    f.write(header + f"SELECT * FROM pb_shared.commit_many(ARRAY[0, 1, 2, 3], ARRAY[1, 1, 1, 1]::bigint[], ARRAY[1, 1, 1, 1]::bigint[], ARRAY[0, 0, 0, 0]::bigint[], "
            f"'{{}}'::int[], '{{}}'::bytea[], '{{}}'::bigint[], {owners}, {all_ids}, {array(repr('r1'), 8)}, {array(repr('tok'), 8)}, {array(repr('production'), 8)}, "
            f"{zeros}, {array(bytea('00'), 8)}, {array(bytea('7b7d'), 8)}, {zeros}, {owners}, {all_ids}, {zeros}, {array(bytea('00'), 8)});\n")
PY
echo "== eight sends in one transaction (pgbench -M prepared, one client; each shape warmed 2 s, then 5 s each, alternated)"
for name in one apps cte shared; do pgbench -n -M prepared -T 2 -c 1 -f "$WORK/$name.sql" "$U" >/dev/null 2>&1; done
psql -q "$U" -c "ANALYZE pb_shared.sent_messages; ANALYZE pb_shared.deliveries; ANALYZE pb_shared.badge_log"
for round in 1 2 3; do
    for name in one apps cte shared; do
        latency="$(pgbench -n -M prepared -T 5 -c 1 -f "$WORK/$name.sql" "$U" 2>&1 | awk '/latency average/ { print $4 }')"
        case $name in
            one) what="all eight to one app, its function (one app's commit)";;
            apps) what="two to each of four apps, their functions in one statement (8 apps)";;
            cte) what="the same, each function one statement of data-modifying CTEs";;
            shared) what="the same, one function over tables shared by the apps (toy schema)";;
        esac
        printf 'round %d: %-70s %s ms a commit\n' "$round" "$what" "${latency:-?}"
    done
done
