#!/usr/bin/env bash
# Shared by the browser checks (.ci/console.sh, .ci/webchat.sh). Source it, then:
#
#   browser_tools                  # Debian's Chromium and its driver, Selenium, axe-core
#   demo_server PORT METRICS ADMIN_TOKEN [serve flags…]
#                                  # a demo server on a throwaway SQLite database; sets BASE,
#                                  # LOG, KEY (the demo's API key) and ORG (its organisation),
#                                  # and stops it (keeping its log in $WM_ARTIFACTS) on exit
#   run_driver SCRIPT              # runs a drive.py, showing the server's log if it fails
#
# Environment for the server (rate limits and the like) is passed as usual: `VAR=… demo_server …`.

# Debian's Chromium and its driver: Selenium gets their paths, so nothing is downloaded at
# run time (only package registries are reachable). CI runs as root.
browser_tools() {
    if [[ ! -x /usr/bin/chromedriver ]]; then
        echo "==> apt-get install chromium chromium-driver"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    fi
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
        -r .ci/console/requirements.txt
    # axe-core, pinned by the lock file; the drivers inject its axe.min.js into each page.
    (cd .ci/console && npm ci --silent --no-audit --no-fund)
}

# shellcheck disable=SC2317  # run by the EXIT trap
_demo_cleanup() {
    if [[ -n "${SERVER_PID:-}" ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    # The log beside the screenshots, for a failure found after the fact.
    if [[ -f "${LOG:-}" ]]; then
        mkdir -p "$WM_ARTIFACTS"
        cp "$LOG" "$WM_ARTIFACTS/server.log" || true
    fi
    rm -rf "${DEMO_DIR:-}"
}

demo_server() {
    local port=$1 metrics=$2 admin=$3
    shift 3
    BASE=http://127.0.0.1:$port
    if [[ ! -x target/debug/wm-server ]]; then
        echo "target/debug/wm-server is missing: run cargo build --workspace --bins first" >&2
        exit 1
    fi
    # A server already answering on the port would be tested instead of ours.
    if curl -sf "$BASE/api/v1/health" >/dev/null 2>&1; then
        echo "something already answers on $BASE: stop it first" >&2
        exit 1
    fi
    # This run's screenshots only (a FAILED-*.png of an earlier run would mislead).
    rm -rf "$WM_ARTIFACTS"
    mkdir -p "$WM_ARTIFACTS"
    DEMO_DIR=$(mktemp -d)
    LOG=$DEMO_DIR/server.log
    SERVER_PID=
    trap _demo_cleanup EXIT

    echo "==> wm-server serve --demo on $BASE (log: $WM_ARTIFACTS/server.log)"
    target/debug/wm-server serve --demo \
        --database-url "sqlite://$DEMO_DIR/demo.db?mode=rwc" --listen "127.0.0.1:$port" \
        --admin-token "$admin" --metrics-listen "$metrics" "$@" \
        >"$LOG" 2>&1 &
    SERVER_PID=$!

    # Ready when it answers and the demo has printed its key and organisation.
    for _ in $(seq 1 150); do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "the server exited:" >&2
            tail -60 "$LOG" >&2
            exit 1
        fi
        if curl -sf "$BASE/api/v1/health" >/dev/null && grep -q ' is ready\.$' "$LOG"; then
            break
        fi
        sleep 0.2
    done
    KEY=$(grep -m1 '^WM_DEMO_API_KEY=' "$LOG" | cut -d= -f2- || true)
    # Demo organisation "wm demo" (<org uuid>) is ready.
    ORG=$(sed -n 's/^Demo organisation .* (\([0-9a-fA-F-]\{36\}\)) is ready\.$/\1/p' "$LOG" | head -1)
    if [[ -z "$KEY" || -z "$ORG" ]]; then
        echo "the demo server did not come up with a key and an organisation in 30 s:" >&2
        tail -60 "$LOG" >&2
        exit 1
    fi
}

run_driver() {
    local rc
    set +e
    python3 "$1"
    rc=$?
    set -e
    if [[ $rc -ne 0 ]]; then
        echo "==> $1 failed ($rc); the server log's last 60 lines:" >&2
        tail -60 "$LOG" >&2
    fi
    return "$rc"
}
