#!/usr/bin/env bash
# Throwaway PostgreSQL server for tests and CI. Source this file, then:
#
#   pg_start   # installs the server if missing, starts it on a free port on
#              # 127.0.0.1 and exports WM_TEST_DATABASE_URL and WM_PG_DATADIR
#   pg_stop    # stops it and removes its data directory (safe to call twice)
#
# The cluster uses trust auth for the `postgres` superuser, so the test suite
# can `CREATE DATABASE` one database per test. It is tuned for speed, not
# durability (fsync off). Since PostgreSQL refuses to run as root, the server
# runs as the system user `wmpg`, which is created on first use.
#
# This file sets no shell options of its own; it works with or without
# `set -euo pipefail` in the caller.

WM_PG_USER="${WM_PG_USER:-wmpg}"

# Prints the directory holding initdb/pg_ctl, or fails.
_wm_pg_bindir() {
    local d
    d="$(pg_config --bindir 2>/dev/null || true)"
    if [[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
        printf '%s\n' "$d"
        return 0
    fi
    # Newest installed major version first.
    for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -t/ -k5,5 -V -r); do
        if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
            printf '%s\n' "$d"
            return 0
        fi
    done
    return 1
}

# Runs a command as the server user (or as ourselves when not root).
_wm_pg_as() {
    if [[ "$(id -u)" != 0 ]]; then
        (cd / && "$@")
    elif command -v runuser >/dev/null 2>&1; then
        (cd / && runuser -u "$WM_PG_USER" -- "$@")
    else
        local q
        q="$(printf '%q ' "$@")"
        (cd / && su -s /bin/sh "$WM_PG_USER" -c "$q")
    fi
}

_wm_pg_free_port() {
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

pg_start() {
    local bindir dir port locale _

    # Already running from an earlier call in this shell: keep it.
    if [[ -n "${WM_PG_DATADIR:-}" && -n "${WM_TEST_DATABASE_URL:-}" && -f "${WM_PG_DATADIR}/postmaster.pid" ]] &&
        bindir="$(_wm_pg_bindir)" &&
        _wm_pg_as "$bindir/pg_ctl" -D "$WM_PG_DATADIR" status >/dev/null 2>&1; then
        echo "postgres: already running at $WM_TEST_DATABASE_URL"
        return 0
    fi

    if ! bindir="$(_wm_pg_bindir)"; then
        echo "postgres: server binaries not found; installing the postgresql package" >&2
        if [[ "$(id -u)" != 0 ]]; then
            echo "postgres: not root, cannot apt-get install postgresql" >&2
            return 1
        fi
        # policy-rc.d exit 101 keeps the package from starting its own cluster.
        local had_policy=0
        [[ -e /usr/sbin/policy-rc.d ]] && had_policy=1
        if [[ $had_policy == 0 ]]; then
            printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
            chmod 755 /usr/sbin/policy-rc.d
        fi
        local rc=0 aptlog
        aptlog="$(mktemp)"
        { apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql </dev/null; } >"$aptlog" 2>&1 || rc=$?
        [[ $had_policy == 0 ]] && rm -f /usr/sbin/policy-rc.d
        if [[ $rc != 0 ]]; then
            echo "postgres: apt-get install postgresql failed (exit $rc):" >&2
            tail -n 20 "$aptlog" >&2
            rm -f "$aptlog"
            return 1
        fi
        rm -f "$aptlog"
        bindir="$(_wm_pg_bindir)" || {
            echo "postgres: installed, but initdb still not found" >&2
            return 1
        }
    fi

    if [[ "$(id -u)" == 0 ]] && ! id -u "$WM_PG_USER" >/dev/null 2>&1; then
        useradd -r -m -s /bin/sh "$WM_PG_USER" 2>/dev/null ||
            id -u "$WM_PG_USER" >/dev/null 2>&1 || {
            echo "postgres: could not create user $WM_PG_USER" >&2
            return 1
        }
    fi

    # /tmp (not $TMPDIR) so that the server user can always reach it.
    dir="$(mktemp -d /tmp/wm-pg.XXXXXX)" || return 1
    chmod 755 "$dir"
    if [[ "$(id -u)" == 0 ]]; then
        chown "$WM_PG_USER:" "$dir" || { rm -rf "$dir"; return 1; }
    fi

    # UTF-8 encoding regardless of the caller's environment (an unset LANG
    # would otherwise give SQL_ASCII databases).
    locale=C
    if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then
        locale=C.UTF-8
    fi
    if ! _wm_pg_as "$bindir/initdb" -D "$dir" -A trust -U postgres -E UTF8 --locale="$locale" \
        --no-sync >"$dir.initdb.log" 2>&1; then
        echo "postgres: initdb failed:" >&2
        tail -n 20 "$dir.initdb.log" >&2
        rm -rf "$dir" "$dir.initdb.log"
        return 1
    fi
    rm -f "$dir.initdb.log"

    # Another process may grab the port between choosing it and binding it:
    # try a few times.
    for _ in 1 2 3 4 5; do
        port="$(_wm_pg_free_port)" || { rm -rf "$dir"; return 1; }
        if _wm_pg_as "$bindir/pg_ctl" -D "$dir" \
            -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
            -l "$dir/log" -w -t 60 start >/dev/null 2>&1; then
            export WM_PG_DATADIR="$dir"
            export WM_PG_BINDIR="$bindir"
            export WM_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
            echo "postgres: ready at $WM_TEST_DATABASE_URL"
            return 0
        fi
        _wm_pg_as "$bindir/pg_ctl" -D "$dir" -m immediate stop >/dev/null 2>&1 || true
    done
    echo "postgres: server did not start; last log lines:" >&2
    tail -n 30 "$dir/log" >&2 2>/dev/null || true
    rm -rf "$dir"
    return 1
}

pg_stop() {
    local dir="${WM_PG_DATADIR:-}" bindir
    if [[ -n "$dir" && -d "$dir" ]]; then
        if [[ -f "$dir/postmaster.pid" ]]; then
            bindir="${WM_PG_BINDIR:-}"
            [[ -x "$bindir/pg_ctl" ]] || bindir="$(_wm_pg_bindir)" || bindir=""
            if [[ -n "$bindir" ]]; then
                _wm_pg_as "$bindir/pg_ctl" -D "$dir" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
            fi
        fi
        # Only ever remove a directory that pg_start made.
        case "$dir" in
        /tmp/wm-pg.*) rm -rf "$dir" ;;
        esac
    fi
    unset WM_PG_DATADIR WM_PG_BINDIR WM_TEST_DATABASE_URL
    return 0
}
