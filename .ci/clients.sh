#!/usr/bin/env bash
# What integrators run on wm's OpenAPI document, run by CI against a live demo server:
#
#   bash .ci/clients.sh DOCUMENT BASE_URL API_KEY
#
#   1. redocly lint (errors fail; the spec's own /contacts/imports/{id} beside
#      /contacts/{id}/… is reported as ambiguous, a warning);
#   2. openapi-typescript generates the TypeScript types, and tsc --noEmit (strict)
#      type-checks .ci/clients/check.ts written against them with openapi-fetch;
#   3. openapi-python-client generates a Python client, and .ci/clients/tour.py tours the
#      whole API with it (contacts, an import, a campaign to COMPLETED, typed errors), then
#      mypy --strict checks the tour.
# A warning from either generator fails.
set -euo pipefail

DOC=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
BASE=$2
KEY=$3
cd "$(dirname "${BASH_SOURCE[0]}")/clients"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "==> npm ci in .ci/clients"
npm ci --no-audit --no-fund --loglevel=error

echo "==> redocly lint"
npx --no-install redocly lint "$DOC" 2>&1 | tail -3

echo "==> openapi-typescript, then tsc --noEmit --strict on check.ts"
npx --no-install openapi-typescript "$DOC" -o wm-api.d.ts 2>&1 | tee "$WORK/ts.log"
if grep -qiE "warn|error" "$WORK/ts.log"; then
    echo "openapi-typescript warned" >&2
    exit 1
fi
npx --no-install tsc -p .

echo "==> openapi-python-client, the Python tour, mypy --strict"
python3 -m pip install -q --disable-pip-version-check openapi-python-client==0.29.1 mypy==2.4.1 >/dev/null
openapi-python-client generate --path "$DOC" --output-path "$WORK/wm_client_py" 2>&1 | tee "$WORK/py.log"
if grep -qiE "warning|error" "$WORK/py.log"; then
    echo "openapi-python-client warned" >&2
    exit 1
fi
python3 -m pip install -q --disable-pip-version-check --force-reinstall "$WORK/wm_client_py" >/dev/null
WM_BASE_URL=$BASE WM_KEY=$KEY python3 tour.py
mypy --strict tour.py
