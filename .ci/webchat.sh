#!/usr/bin/env bash
# The website chat in a real browser: starts a demo server with a website chat allowed on
# one origin, then .ci/webchat/drive.py drives two headless Chromium sessions — a visitor on
# a page of another origin (the widget in its shadow root) and an agent in the console —
# through the chat both ways, with axe-core on the widget and a 360 px phone.
#
#   cargo build --workspace --bins && bash .ci/webchat.sh
#
# Screenshots go to $WM_ARTIFACTS (default target/webchat-artifacts), with the server's log.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=.ci/demo-server.sh
source .ci/demo-server.sh

HOST_PORT=18401
BAD_PORT=18402
ADMIN_TOKEN=webchat-admin
export WM_ARTIFACTS=${WM_ARTIFACTS:-target/webchat-artifacts}

browser_tools

# The flow writes more than a visitor's default 20 messages a minute (history paging), all
# from one address.
WM_SECRET_KEY=$(head -c 32 /dev/urandom | base64) WM_RATE_LIMIT_PER_MINUTE=100000 \
    WM_WEBCHAT_MESSAGES_PER_MINUTE=1000 WM_WEBCHAT_WRITES_PER_ADDRESS_PER_MINUTE=1000 \
    demo_server 18400 127.0.0.1:19466 "$ADMIN_TOKEN"

echo "==> a website chat allowed on http://127.0.0.1:$HOST_PORT"
CHAT=$(curl -sf -X POST "$BASE/api/v1/admin/organizations/$ORG/channels/webchat" \
    -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d "{\"name\":\"Tienda demo\",\"allowedOrigins\":[\"http://127.0.0.1:$HOST_PORT\"],\"greeting\":\"¡Hola! ¿En qué te ayudamos?\",\"color\":\"#0a5cd6\"}")
SITE=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["websiteToken"])' <<<"$CHAT")
SECRET=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["identitySecret"])' <<<"$CHAT")

echo "==> drive.py: a visitor and an agent in headless Chromium (screenshots in $WM_ARTIFACTS)"
WM_URL=$BASE WM_SITE=$SITE WM_WEBCHAT_SECRET=$SECRET \
    WM_HOST_URL=http://127.0.0.1:$HOST_PORT WM_BAD_HOST_URL=http://127.0.0.1:$BAD_PORT \
    WM_CONSOLE_URL=$BASE/console WM_KEY=$KEY \
    run_driver .ci/webchat/drive.py
