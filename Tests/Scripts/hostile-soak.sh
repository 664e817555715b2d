#!/usr/bin/env bash
# A 4xx-only soak of `pushbridge serve`: wrk sends a mix of requests that are all refused
# (malformed JSON, a NUL in a member id or a path, a wrong media type, an unknown app or route, no
# key, a Tencent request with a bad UserSig), in phases; after each phase the script prints the
# service's resident memory and the bytes it grew by per request. A leak grows the same per request
# in every phase; an allocator filling its arenas grows at first and then stops.
#   Tests/Scripts/hostile-soak.sh [PHASES] [SECONDS_PER_PHASE]      (defaults: 8 phases of 30 s)
# Builds the release executable; installs wrk when missing; loopback only; stops the service at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
PHASES=${1:-8}
SECONDS_PER_PHASE=${2:-30}
SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
command -v wrk >/dev/null 2>&1 || { echo "Installing wrk (missing)..." >&2; $SUDO apt-get update -qq && $SUDO apt-get install -y -qq wrk; }
swift build -c release --product pushbridge >&2
BIN=.build/release/pushbridge
DATA=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
export PUSHBRIDGE_ADMIN_KEY=soak-admin-key-0123456789
"$BIN" serve --db "$DATA" --listen "127.0.0.1:$PORT" --log-level warning > "$DATA/out" 2> "$DATA/err" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DATA"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null && break; sleep 0.1; done
KEY=$(curl -sf -X POST -H "Authorization: Bearer $PUSHBRIDGE_ADMIN_KEY" -H 'Content-Type: application/json' -d '{"app":"demo"}' \
  "http://127.0.0.1:$PORT/v1/apps" | sed 's/.*"key":"\([^"]*\)".*/\1/')
curl -sf -X PUT -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' --data @Examples/facade/app.json "http://127.0.0.1:$PORT/v1/apps/demo" > /dev/null
cat > "$DATA/hostile.lua" <<LUA
local auth = { ["Authorization"] = "Bearer $KEY", ["Content-Type"] = "application/json" }
local reqs = {
  wrk.format("POST", "/v1/apps/demo/messages?dialect=agora-silent", auth, '{"id":'),
  wrk.format("PUT", "/v1/apps/demo/groups/gx/members", auth, '{"members":["u1","u2\\\\u0000evil"]}'),
  wrk.format("GET", "/v1/apps/demo/users/u2%00x", auth, nil),
  wrk.format("POST", "/v1/apps/demo/messages?dialect=agora-silent", { ["Authorization"] = "Bearer $KEY", ["Content-Type"] = "text/plain" }, "x"),
  wrk.format("GET", "/v1/apps/nope/users/u1", auth, nil),
  wrk.format("GET", "/no/such/route", {}, nil),
  wrk.format("POST", "/v1/apps/demo/messages?dialect=agora-silent", { ["Content-Type"] = "application/json" }, "{}"),
  wrk.format("POST", "/v4/openim/sendmsg?sdkappid=1&identifier=administrator&usersig=x", { ["Content-Type"] = "application/json" }, "{}"),
}
local i = 0
request = function() i = i + 1; return reqs[(i % #reqs) + 1] end
LUA
rss() { awk '/VmRSS/ {print $2}' "/proc/$PID/status"; }
total() { curl -sf "http://127.0.0.1:$PORT/metrics" | awk '/^pushbridge_http_requests_total/ {s += $NF} END {printf "%d", s}'; }
echo "phase  requests   rss_kb  grew_kb  bytes_per_request"
PREV_RSS=$(rss); PREV_N=$(total)
printf "%5d %9d %8d\n" 0 "$PREV_N" "$PREV_RSS"
for p in $(seq "$PHASES"); do
  wrk -t2 -c32 -d"${SECONDS_PER_PHASE}s" -s "$DATA/hostile.lua" "http://127.0.0.1:$PORT" > "$DATA/wrk.$p" 2>&1
  sleep 1
  N=$(total); R=$(rss)
  awk -v p="$p" -v n="$N" -v r="$R" -v pn="$PREV_N" -v pr="$PREV_RSS" 'BEGIN { printf "%5d %9d %8d %8d %18.3f\n", p, n, r, r - pr, (r - pr) * 1024 / (n - pn) }'
  PREV_N=$N; PREV_RSS=$R
done
echo "statuses:"; curl -sf "http://127.0.0.1:$PORT/metrics" | grep '^pushbridge_http_requests_total' | grep -v 'readyz\|route="/v1/apps",\|/v1/apps/{app}",'
