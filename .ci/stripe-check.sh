#!/usr/bin/env bash
# Cross-checks wm-webhook's signatures against Stripe's own Node library, both ways:
#
#   bash .ci/stripe-check.sh [CAPTURE_DIR]
#
#   1. wm-webhook signs fixtures  -> stripe.webhooks.constructEvent verifies them
#   2. Stripe signs fixtures      -> wm_webhook::verify verifies them
#   3. if CAPTURE_DIR is given and holds *.json deliveries captured from wm-server
#      (integration tests write them when WM_WEBHOOK_CAPTURE_DIR is set), Stripe
#      verifies each one, and rejects it with one body byte changed.
#
# Each fixture set holds genuine deliveries (must be accepted) and tampered ones, a
# wrong secret and a stale timestamp (must be rejected). Needs Node >= 20 and npm.
set -euo pipefail

CAPTURE_DIR=${1:-}
if [[ -n "$CAPTURE_DIR" ]]; then
    CAPTURE_DIR=$(cd "$CAPTURE_DIR" 2>/dev/null && pwd) || {
        echo "stripe-check: capture directory '$1' does not exist" >&2
        exit 1
    }
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v node >/dev/null 2>&1; then
    echo "stripe-check: node not found; installing nodejs and npm with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
if ((NODE_MAJOR < 20)); then
    echo "stripe-check: Node >= 20 is required (the stripe package needs it); found $(node --version)" >&2
    exit 1
fi

echo "==> npm ci in .ci/stripe (node $(node --version), npm $(npm --version))"
(cd .ci/stripe && npm ci --no-audit --no-fund --loglevel=error)

echo "==> cargo build --workspace --examples (the features the test run built with: no second copy of the dependencies)"
cargo build -q --workspace --examples
fixtures() { target/debug/examples/webhook_fixtures "$@"; }
stripe_check() { node .ci/stripe/check.js "$@"; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "==> wm-webhook signs, Stripe verifies"
fixtures sign "$WORK/wm.json"
stripe_check verify "$WORK/wm.json" | tee "$WORK/stripe-verify.log"

echo "==> Stripe signs, wm-webhook verifies"
stripe_check sign "$WORK/stripe.json"
fixtures verify "$WORK/stripe.json" | tee "$WORK/wm-verify.log"

CAPTURED="captured deliveries: none given"
if [[ -n "$CAPTURE_DIR" ]]; then
    if compgen -G "$CAPTURE_DIR/*.json" >/dev/null; then
        echo "==> Stripe verifies deliveries captured in $CAPTURE_DIR"
        stripe_check verify-dir "$CAPTURE_DIR" | tee "$WORK/captured.log"
        CAPTURED="$(awk '{ print $1; exit }' "$WORK/captured.log") captured deliveries accepted by Stripe"
    else
        echo "stripe-check: warning: $CAPTURE_DIR holds no *.json deliveries; skipping that check" >&2
        CAPTURED="captured deliveries: none in $CAPTURE_DIR (skipped)"
    fi
fi

STRIPE_VERSION=$(node -p 'require("./.ci/stripe/node_modules/stripe/package.json").version')
echo "stripe-check: OK (stripe@$STRIPE_VERSION): Stripe agreed on $(awk '{ print $1; exit }' "$WORK/stripe-verify.log") wm-signed fixtures, wm-webhook on $(awk '{ print $1; exit }' "$WORK/wm-verify.log") Stripe-signed fixtures, $CAPTURED"
