#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster on a free loopback port (tests only).
#   Tests/Scripts/with-postgres.sh swift test
# Installs Debian's `postgresql` when initdb is missing, creates the cluster under a temporary folder
# (initdb refuses root, so as the `postgres` user then), starts it with pg_ctl, exports
# PUSHBRIDGE_TEST_POSTGRES_URL=postgres://pb@127.0.0.1:PORT/postgres, runs the command, and stops and
# removes the cluster on every exit path. If PostgreSQL cannot be started, it says so and runs the
# command without the variable: the PostgreSQL tests then report that they were skipped (and fail
# under CI=true). PUSHBRIDGE_POSTGRES_OPTIONS adds server options (e.g. "-c shared_preload_libraries=pg_stat_statements").
set -uo pipefail

SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi

find_bin() {
    if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then pg_config --bindir; return; fi
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

BIN="$(find_bin)"
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
    if command -v apt-get >/dev/null 2>&1; then
        echo "Installing postgresql (missing; the PostgreSQL store tests use it)..." >&2
        $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
        BIN="$(find_bin)"
    fi
fi

start_cluster() {
    [ -n "$BIN" ] && [ -x "$BIN/initdb" ] || { echo "with-postgres: no initdb found" >&2; return 1; }
    DIR="$(mktemp -d /tmp/pushbridge-pg.XXXXXX)"
    PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null || echo $((20000 + RANDOM % 20000)))"
    AS=()
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || { echo "with-postgres: running as root and there is no postgres user" >&2; return 1; }
        chown postgres "$DIR"
        AS=(runuser -u postgres --)
    fi
    "${AS[@]}" "$BIN/initdb" -D "$DIR/data" -A trust -U pb >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; return 1; }
    "${AS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c wal_level=minimal -c max_wal_senders=0 -c max_wal_size=64MB -c min_wal_size=32MB ${PUSHBRIDGE_POSTGRES_OPTIONS:-}" \
        -l "$DIR/server.log" -w -t 30 start >/dev/null || { cat "$DIR/server.log" >&2; return 1; }
    export PUSHBRIDGE_TEST_POSTGRES_URL="postgres://pb@127.0.0.1:$PORT/postgres"
    echo "with-postgres: PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT (cluster in $DIR)" >&2
}

stop_cluster() {
    if [ -n "${DIR:-}" ] && [ -d "$DIR/data" ]; then
        "${AS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1
        rm -rf "$DIR"
    fi
}

DIR=""
AS=()
trap stop_cluster EXIT INT TERM
if ! start_cluster; then
    echo "with-postgres: PostgreSQL could not be started; its tests will say they were skipped" >&2
    unset PUSHBRIDGE_TEST_POSTGRES_URL
fi
"$@"
