#!/usr/bin/env bash
# The wm console in a real browser: starts a demo server, then .ci/console/drive.py drives
# headless Chromium (Selenium) through the console's whole flow, with a screenshot and an
# axe-core accessibility check of every page.
#
#   cargo build --workspace --bins && bash .ci/console.sh
#
# Screenshots go to $WM_ARTIFACTS (default target/console-artifacts), with the server's log.
# Exits with drive.py's status: a failed step, or an axe violation of impact serious or
# critical, fails.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PORT=18322
# Not the default 9464: another server (a developer's, CI's earlier section) may hold it.
METRICS=127.0.0.1:19465
ADMIN_TOKEN=console-admin
BASE=http://127.0.0.1:$PORT
export WM_ARTIFACTS=${WM_ARTIFACTS:-target/console-artifacts}

if [[ ! -x target/debug/wm-server ]]; then
    echo "target/debug/wm-server is missing: run cargo build --workspace --bins first" >&2
    exit 1
fi

# Debian's Chromium and its driver: Selenium gets their paths, so nothing is downloaded at
# run time (only package registries are reachable). CI runs as root.
if [[ ! -x /usr/bin/chromedriver ]]; then
    echo "==> apt-get install chromium chromium-driver"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r .ci/console/requirements.txt
# axe-core, pinned by the lock file; drive.py injects its axe.min.js into each page.
(cd .ci/console && npm ci --silent --no-audit --no-fund)

# A server already answering on the port would be tested instead of ours.
if curl -sf "$BASE/api/v1/health" >/dev/null 2>&1; then
    echo "something already answers on $BASE: stop it first" >&2
    exit 1
fi

# This run's screenshots only (a FAILED-*.png of an earlier run would mislead).
rm -rf "$WM_ARTIFACTS"
mkdir -p "$WM_ARTIFACTS"

DIR=$(mktemp -d)
LOG=$DIR/server.log
SERVER_PID=
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    if [[ -n "$SERVER_PID" ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    # The log beside the screenshots, for a failure found after the fact.
    if [[ -f "$LOG" ]]; then
        mkdir -p "$WM_ARTIFACTS"
        cp "$LOG" "$WM_ARTIFACTS/server.log" || true
    fi
    rm -rf "$DIR"
}
trap cleanup EXIT

echo "==> wm-server serve --demo on $BASE (log: $WM_ARTIFACTS/server.log)"
# The flow makes many requests in a few seconds (page loads, a 50-row import, the status
# pages' refreshes): the default rate limit is not what this tests. A retry schedule of 1s
# turns the webhook's failing deliveries (a loopback port nothing listens on, allowed by
# --allow-insecure-webhooks) into failed ones,
# with a Retry button, within the flow's time.
WM_RATE_LIMIT_PER_MINUTE=100000 target/debug/wm-server serve --demo \
    --database-url "sqlite://$DIR/c.db?mode=rwc" --listen "127.0.0.1:$PORT" \
    --admin-token "$ADMIN_TOKEN" --metrics-listen "$METRICS" \
    --webhook-retry-schedule 1s --allow-insecure-webhooks \
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

echo "==> drive.py: the console in headless Chromium (screenshots in $WM_ARTIFACTS)"
set +e
WM_CONSOLE_URL=$BASE/console WM_API_URL=$BASE/api/v1 WM_KEY=$KEY \
    WM_ADMIN_TOKEN=$ADMIN_TOKEN WM_ORG_ID=$ORG \
    python3 .ci/console/drive.py
RC=$?
set -e
if [[ $RC -ne 0 ]]; then
    echo "==> drive.py failed ($RC); the server log's last 60 lines:" >&2
    tail -60 "$LOG" >&2
fi
exit "$RC"
