#!/usr/bin/env bash
# Makes Tests/Data/postgres-0.36.1.sql: the database a 0.36.1 service wrote (an app a schema), which
# PostgresSharedTablesTests moves into the shared tables. Run under with-postgres.sh with 0.36.1's
# executable (70c8143), built in a worktree:
#   git worktree add /tmp/w036 70c8143 && (cd /tmp/w036 && swift build --product pushbridge)
#   Tests/Scripts/with-postgres.sh Tests/Scripts/make-postgres-fixture.sh /tmp/w036
# Two apps, demo and other, each with the example app (Examples/facade), u1 and u2 set up by their
# calls, group g1 of u1, u2 and u3, and message m-1 to g1; demo also m-2 (its u2 counts 2).
set -euo pipefail
REF=$(realpath "${1:?the 0.36.1 worktree}")
OUT=$(realpath "$(dirname "$0")/../Data")/postgres-0.36.1.sql
URL=${PUSHBRIDGE_TEST_POSTGRES_URL:?run under Tests/Scripts/with-postgres.sh}
psql -q "$URL" -c "CREATE DATABASE fixture"
DB=${URL%/postgres}/fixture
PORT=18437
WORK=$(mktemp -d)
PUSHBRIDGE_ADMIN_KEY=fixture-admin-key env -u PUSHBRIDGE_TEST_POSTGRES_URL "$REF/.build/debug/pushbridge" serve \
    --db "$WORK" --store "$DB" --listen "127.0.0.1:$PORT" > "$WORK/out" 2> "$WORK/log" &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null && break; sleep 0.2; done
B=http://127.0.0.1:$PORT/v1
J='Content-Type: application/json'
cd "$REF/Examples/facade"
for APP in demo other; do
    KEY=$(curl -sf -X POST -H "Authorization: Bearer fixture-admin-key" -H "$J" -d "{\"app\":\"$APP\"}" "$B/apps" | sed 's/.*"key":"\([^"]*\)".*/\1/')
    A="Authorization: Bearer $KEY"
    curl -sf -X PUT -H "$A" -H "$J" --data @app.json "$B/apps/$APP" > /dev/null
    curl -sf -X POST -H "$A" -H "$J" --data @u1-calls.json "$B/apps/$APP/users/u1/calls?dialect=agora-silent" > /dev/null
    curl -sf -X POST -H "$A" -H "$J" --data @u2-calls.json "$B/apps/$APP/users/u2/calls?dialect=agora-silent" > /dev/null
    curl -sf -X PUT -H "$A" -H "$J" -d '{"members":["u1","u2","u3"]}' "$B/apps/$APP/groups/g1/members" > /dev/null
    curl -sf -X POST -H "$A" -H "$J" --data @message.json "$B/apps/$APP/messages?dialect=agora-silent" > /dev/null
    if [ "$APP" = demo ]; then
        sed 's/"m-1"/"m-2"/' message.json | curl -sf -X POST -H "$A" -H "$J" --data @- "$B/apps/$APP/messages?dialect=agora-silent" > /dev/null
    fi
done
kill -TERM $SERVER; wait $SERVER || true
pg_dump --no-owner --no-privileges "$DB" > "$OUT"
echo "wrote $OUT"
