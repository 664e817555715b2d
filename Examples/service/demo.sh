#!/usr/bin/env bash
# The service in one go (the article "Running the service", `make demo-serve`): start it, create an app, set
# it up with the files of Examples/facade, send one group message, read state back, stop it.
set -euo pipefail
PUSHBRIDGE=$(realpath "$(command -v "${PUSHBRIDGE:-pushbridge}")")   # the built executable
cd "$(dirname "$0")/../facade"
PORT=${PORT:-8080}
export PUSHBRIDGE_ADMIN_KEY=${PUSHBRIDGE_ADMIN_KEY:-demo-admin-key-change-me}
DATA=$(mktemp -d)

"$PUSHBRIDGE" serve --db "$DATA" --listen "127.0.0.1:$PORT" > "$DATA/serve.out" 2> "$DATA/serve.log" &
SERVER=$!
trap 'kill -TERM $SERVER; wait $SERVER; rm -rf "$DATA"' EXIT   # SIGTERM: finish requests, commit, close
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null || { cat "$DATA/serve.log"; exit 1; }

B=http://127.0.0.1:$PORT/v1
J='Content-Type: application/json'
say() { printf '\n# %s\n' "$*"; }

say "create an app with the admin key: its key is in the answer, shown this once"
KEY=$(curl -sf -X POST -H "Authorization: Bearer $PUSHBRIDGE_ADMIN_KEY" -H "$J" -d '{"app":"demo"}' "$B/apps" \
  | sed 's/.*"key":"\([^"]*\)".*/\1/')
A="Authorization: Bearer $KEY"

say "certificates and templates (the scenario app object)"
curl -sf -X PUT -H "$A" -H "$J" --data @app.json "$B/apps/demo"; echo
say "each user's dialect calls, atomically per request"
curl -sf -X POST -H "$A" -H "$J" --data @u1-calls.json "$B/apps/demo/users/u1/calls?dialect=agora-silent"; echo
curl -sf -X POST -H "$A" -H "$J" --data @u2-calls.json "$B/apps/demo/users/u2/calls?dialect=agora-silent"; echo
say "a group: the whole list"
curl -sf -X PUT -H "$A" -H "$J" -d '{"members":["u1","u2","u3"]}' "$B/apps/demo/groups/g1/members"; echo
say "send: one decision per member but the sender (201; the same id again: 200, the same decisions)"
curl -sf -X POST -H "$A" -H "$J" --data @message.json "$B/apps/demo/messages?dialect=agora-silent"; echo
say "the same send answered as counts (answer=summary: for a large group; the decisions stay readable)"
curl -sf -X POST -H "$A" -H "$J" --data @message.json "$B/apps/demo/messages?dialect=agora-silent&answer=summary"; echo
say "read the message and u2's state back"
curl -sf -H "$A" "$B/apps/demo/messages/m-1"; echo
curl -sf -H "$A" "$B/apps/demo/users/u2"; echo
say "u2 comes online: the badge counter resets"
curl -sf -X PUT -H "$A" -H "$J" -d '{"presence":"online"}' "$B/apps/demo/users/u2/presence?dialect=agora-silent"; echo
say "groups: add members, read them, remove one"
curl -sf -X POST -H "$A" -H "$J" -d '{"members":["u4"]}' "$B/apps/demo/groups/g1/members"; echo
curl -sf -H "$A" "$B/apps/demo/groups/g1/members"; echo
curl -sf -X DELETE -H "$A" "$B/apps/demo/groups/g1/members/u4"; echo
say "devices and users: remove u2's iPad, forget u4, read the app back"
curl -sf -X DELETE -H "$A" "$B/apps/demo/users/u2/devices/0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de"; echo
curl -sf -X DELETE -H "$A" "$B/apps/demo/users/u4"; echo
curl -sf -H "$A" "$B/apps/demo"; echo
say "bad input: 400 with the pointer"
curl -s -X POST -H "$A" -H "$J" -d '{"id":"m-2"}' "$B/apps/demo/messages?dialect=agora-silent"; echo
say "health, readiness, metrics (no key)"
curl -sf "http://127.0.0.1:$PORT/healthz"; echo
curl -sf "http://127.0.0.1:$PORT/readyz"; echo
curl -sf "http://127.0.0.1:$PORT/metrics" | grep '^pushbridge_decisions_total'
say "a push task: the message to each user of the app (u2 offline again), decided as a chat message; its progress, then its last state"
curl -sf -X PUT -H "$A" -H "$J" -d '{"presence":"offline"}' "$B/apps/demo/users/u2/presence?dialect=agora-silent" > /dev/null
PUSHBRIDGE_APP_KEY=$KEY "$PUSHBRIDGE" push-task --url "http://127.0.0.1:$PORT" --app demo --dialect agora-silent --every 0.2 task-message.json
