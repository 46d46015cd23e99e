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
# shellcheck source=.ci/demo-server.sh
source .ci/demo-server.sh

ADMIN_TOKEN=console-admin
export WM_ARTIFACTS=${WM_ARTIFACTS:-target/console-artifacts}

browser_tools

# The flow makes many requests in a few seconds (page loads, a 50-row import, the status
# pages' refreshes): the default rate limit is not what this tests. A retry schedule of 1s
# turns the webhook's failing deliveries (a loopback port nothing listens on, allowed by
# --allow-insecure-webhooks) into failed ones, with a Retry button, within the flow's time.
# Metrics not on the default 9464: another server (a developer's, CI's earlier section) may
# hold it.
WM_RATE_LIMIT_PER_MINUTE=100000 demo_server 18322 127.0.0.1:19465 "$ADMIN_TOKEN" \
    --webhook-retry-schedule 1s --allow-insecure-webhooks

echo "==> drive.py: the console in headless Chromium (screenshots in $WM_ARTIFACTS)"
WM_CONSOLE_URL=$BASE/console WM_API_URL=$BASE/api/v1 WM_KEY=$KEY \
    WM_ADMIN_TOKEN=$ADMIN_TOKEN WM_ORG_ID=$ORG \
    run_driver .ci/console/drive.py
