#!/usr/bin/env bash
# Load benchmark of wm-server on SQLite, driven by wrk over loopback only.
#
#   benches/load.sh              build the release server, seed it, measure
#   benches/load.sh --selftest   same pipeline against a small Python stand-in
#                                for the server (checks wrk, the Lua scripts,
#                                seeding and the report; not a measurement)
#
# Settings (environment):
#   DURATION=15s      length of each wrk run
#   CONNECTIONS=64    wrk connections
#   THREADS=2         wrk threads
#   TIMEOUT=10s       wrk per-request timeout
#   SEED_COUNT=10000  contacts created before measuring
#   SAMPLE_IDS=1000   ids the GET-by-id run cycles over
#   SEED_WORKERS=8    concurrent clients while seeding
#   SKIP_BUILD=1      use the existing binary instead of `cargo build --release`
#   KEYS=1            API keys the requests rotate over (each key has its own limit)
#   RATE_LIMIT_PER_MINUTE=1000000000  the per-key limit; with a real limit (600) use
#                     enough KEYS that no key reaches it (the PostgreSQL limiter keeps
#                     each key's admitted requests of the last minute, so its cost is
#                     measured at the size it has in production)
#   WM_BENCH_DATABASE_URL  run on this (empty) database instead of a fresh SQLite file
#   WM_SERVER_BIN     server binary (default target/release/wm-server)
#   BARE_AXUM_BIN     the ceiling: a bare axum JSON handler (default target/release/bare-axum,
#                     built from benches/bin/bare_axum.rs); its GET-by-id run comes right after
#                     wm-server's, and the report gives wm-server's share of it
#   OUT_DIR           where the report goes (default bench-out/)
#
# The report (summary table, settings, raw wrk output) is printed and written
# to bench-out/load-<date>.txt. Everything runs on 127.0.0.1; the server and
# the temp files are removed on exit.
set -euo pipefail

SELFTEST=0
case "${1:-}" in
--selftest) SELFTEST=1 ;;
"") ;;
-h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
*)
    echo "usage: $0 [--selftest]" >&2
    exit 2
    ;;
esac

if [[ $SELFTEST == 1 ]]; then
    DURATION="${DURATION:-2s}"
    SEED_COUNT="${SEED_COUNT:-500}"
    SAMPLE_IDS="${SAMPLE_IDS:-100}"
fi
DURATION="${DURATION:-15s}"
CONNECTIONS="${CONNECTIONS:-64}"
THREADS="${THREADS:-2}"
TIMEOUT="${TIMEOUT:-10s}"
SEED_COUNT="${SEED_COUNT:-10000}"
SAMPLE_IDS="${SAMPLE_IDS:-1000}"
SEED_WORKERS="${SEED_WORKERS:-8}"
SKIP_BUILD="${SKIP_BUILD:-0}"
# The per-key limit (600/min) would turn the runs into a 429 benchmark, unless KEYS spreads
# the requests over enough keys.
RATE_LIMIT_PER_MINUTE="${RATE_LIMIT_PER_MINUTE:-1000000000}"
KEYS="${KEYS:-1}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SERVER_BIN="${WM_SERVER_BIN:-$ROOT/target/release/wm-server}"
BARE_BIN="${BARE_AXUM_BIN:-$ROOT/target/release/bare-axum}"
OUT_DIR="${OUT_DIR:-$ROOT/bench-out}"

if ((CONNECTIONS < THREADS)); then
    echo "CONNECTIONS ($CONNECTIONS) must be >= THREADS ($THREADS)" >&2
    exit 2
fi
if ((SEED_COUNT >= 10000000)); then
    echo "SEED_COUNT must be below 10,000,000 (phone numbers above that are for the POST run)" >&2
    exit 2
fi

log() { echo "==> $*"; }

TMP="$(mktemp -d /tmp/wm-bench.XXXXXX)"
SERVER_PID=""
BARE_PID=""
WRK_PID=""
cleanup() {
    if [[ -n "$WRK_PID" ]]; then
        kill "$WRK_PID" 2>/dev/null || true
    fi
    if [[ -n "$BARE_PID" ]]; then
        kill "$BARE_PID" 2>/dev/null || true
        wait "$BARE_PID" 2>/dev/null || true
    fi
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --------------------------------------------------------------------------
# 1. Load generator
# --------------------------------------------------------------------------
ensure_wrk() {
    command -v wrk >/dev/null 2>&1 && return 0
    log "installing wrk (Debian package)"
    local sudo=()
    [[ "$(id -u)" == 0 ]] || sudo=(sudo)
    local aptlog="$TMP/apt.log"
    if ! { "${sudo[@]}" apt-get update -qq &&
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk </dev/null; } >"$aptlog" 2>&1 ||
        ! command -v wrk >/dev/null 2>&1; then
        tail -n 20 "$aptlog" >&2
        echo "could not install wrk with apt-get" >&2
        exit 1
    fi
}
ensure_wrk
for tool in python3 curl; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "$tool is required" >&2
        exit 1
    }
done

# --------------------------------------------------------------------------
# Helper files
# --------------------------------------------------------------------------

# One wrk script for the three runs; WM_BENCH_MODE picks get_id, list or post.
# The done() hook prints one machine-readable line:
#   WMBENCH requests=.. rps=.. p50_ms=.. p99_ms=.. non2xx=.. ...
cat >"$TMP/bench.lua" <<'LUA'
local mode = os.getenv("WM_BENCH_MODE") or "list"
local ids_file = os.getenv("WM_BENCH_IDS_FILE")
local keys_file = os.getenv("WM_BENCH_KEYS_FILE")
local nthreads = tonumber(os.getenv("WM_BENCH_THREADS") or "1")

-- Main state: every thread, for done().
local threads = {}

function setup(thread)
   thread:set("tid", #threads)
   table.insert(threads, thread)
end

-- Thread state.
local ids, nids, pos
local next_n, last_n

-- Requests rotate over the keys of keys_file (one per line), if any.
local keys, nkeys, kpos = {}, 0, 0
local function headers()
   if nkeys == 0 then return nil end
   kpos = kpos % nkeys + 1
   return {["Authorization"] = "Bearer " .. keys[kpos]}
end

function init(args)
   local t = tid or 0
   if keys_file and keys_file ~= "" then
      for line in io.lines(keys_file) do
         if line ~= "" then keys[#keys + 1] = line end
      end
      nkeys = #keys
      kpos = (t * 31) % math.max(nkeys, 1)
   end
   if mode == "get_id" then
      ids = {}
      for line in io.lines(ids_file) do
         if line ~= "" then ids[#ids + 1] = line end
      end
      nids = #ids
      if nids == 0 then error("no ids in " .. tostring(ids_file)) end
      pos = (t * 7919) % nids -- threads start at different ids
   elseif mode == "post" then
      -- Phones are +52155 and 8 digits. The seed used 0..SEED_COUNT-1;
      -- each thread owns its own block above 10,000,000.
      local stride = math.floor(90000000 / nthreads)
      next_n = 10000000 + t * stride
      last_n = next_n + stride - 1
      wrk.headers["Content-Type"] = "application/json"
   end
   statuses = {}
   first_error = ""
end

if mode == "get_id" then
   request = function()
      pos = pos + 1
      if pos > nids then pos = 1 end
      return wrk.format("GET", "/api/v1/contacts/" .. ids[pos], headers())
   end
elseif mode == "post" then
   request = function()
      local n = next_n
      if n > last_n then error("phone block exhausted") end
      next_n = n + 1
      local body = string.format(
         '{"fullName":"Ana Perez %d","primaryPhone":"+52155%08d",' ..
         '"primaryEmail":"ana%d@example.com","company":"Acme",' ..
         '"tags":["vip"],"consent":{"given":true}}', n, n, n)
      local h = headers()
      if h then h["Content-Type"] = "application/json" end
      return wrk.format("POST", "/api/v1/contacts", h, body)
   end
end
if mode == "list" then
   request = function()
      return wrk.format(nil, nil, headers())
   end
end
if mode == "post" then
   -- Per-status tally, so a run of 409s or 429s is told apart from 201s.
   response = function(status, headers, body)
      local k = tostring(status)
      statuses[k] = (statuses[k] or 0) + 1
      if status >= 300 and first_error == "" then
         first_error = k .. " " .. string.sub(body or "", 1, 300)
      end
   end
end

function done(summary, latency, requests)
   local secs = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "WMBENCH requests=%d duration_s=%.2f rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f " ..
      "non2xx=%d connect=%d read=%d write=%d timeout=%d\n",
      summary.requests, secs, summary.requests / secs,
      latency:percentile(50) / 1000, latency:percentile(90) / 1000,
      latency:percentile(99) / 1000, latency.max / 1000,
      e.status, e.connect, e.read, e.write, e.timeout))
   if mode == "post" then
      local total, err = {}, ""
      for _, thread in ipairs(threads) do
         local s = thread:get("statuses") or {}
         for k, v in pairs(s) do total[k] = (total[k] or 0) + v end
         local fe = thread:get("first_error") or ""
         if err == "" then err = fe end
      end
      local keys = {}
      for k in pairs(total) do keys[#keys + 1] = k end
      table.sort(keys)
      local parts = {}
      for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. total[k] end
      io.write("WMBENCH_STATUSES " .. table.concat(parts, " ") .. "\n")
      if err ~= "" then io.write("WMBENCH_FIRST_ERROR " .. err .. "\n") end
   end
end
LUA

# Creates the organization, user and API key, then seeds the contacts.
# Writes the key to $TMP/key and a sample of contact ids to $TMP/ids.txt.
cat >"$TMP/setup.py" <<'PY'
import concurrent.futures, http.client, json, os, random, sys, threading, time

HOST, PORT = "127.0.0.1", int(os.environ["WM_BENCH_PORT"])
ADMIN = os.environ["WM_BENCH_ADMIN_TOKEN"]
TMP = os.environ["WM_BENCH_TMP"]
SEED_COUNT = int(os.environ["SEED_COUNT"])
SAMPLE_IDS = int(os.environ["SAMPLE_IDS"])
WORKERS = int(os.environ["SEED_WORKERS"])

local = threading.local()

def conn():
    c = getattr(local, "c", None)
    if c is None:
        c = local.c = http.client.HTTPConnection(HOST, PORT, timeout=30)
    return c

def call(method, path, token, body=None):
    """One request on this thread's keep-alive connection: (status, text)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": "Bearer " + token}
    if data is not None:
        headers["Content-Type"] = "application/json"
    for attempt in range(2):
        c = conn()
        try:
            c.request(method, path, body=data, headers=headers)
            r = c.getresponse()
            return r.status, r.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            c.close()
            local.c = None
            if attempt == 1:
                raise

def obj_id(text):
    doc = json.loads(text)
    if isinstance(doc, dict) and "id" not in doc and isinstance(doc.get("data"), dict):
        doc = doc["data"]
    return doc["id"]

def admin(path, body):
    status, text = call("POST", path, ADMIN, body)
    if status != 201:
        sys.exit(f"setup: POST {path} -> {status}: {text[:500]}")
    return json.loads(text)

org = admin("/api/v1/admin/organizations", {"name": "Bench"})
org_id = org["id"]
user = admin(f"/api/v1/admin/organizations/{org_id}/users",
             {"fullName": "Bench User", "email": "bench@example.com"})
keys = [admin(f"/api/v1/admin/organizations/{org_id}/api-keys",
              {"name": f"bench {n}", "userId": user["id"],
               "scopes": ["contacts:read", "contacts:write"]})["key"]
        for n in range(max(1, int(os.environ.get("KEYS", "1"))))]
key = keys[0]
with open(os.path.join(TMP, "key"), "w") as f:
    f.write(key)
with open(os.path.join(TMP, "keys.txt"), "w") as f:
    f.write("\n".join(keys) + "\n" if len(keys) > 1 else "")

def seed(i):
    body = {"fullName": f"Ana Perez {i}", "primaryPhone": f"+52155{i:08d}",
            "primaryEmail": f"ana{i}@example.com", "company": "Acme",
            "tags": ["vip"], "consent": {"given": True}}
    last = None
    for attempt in range(6):
        try:
            status, text = call("POST", "/api/v1/contacts", keys[i % len(keys)], body)
        except (OSError, http.client.HTTPException) as e:
            status, text = None, repr(e)
        if status == 201:
            return obj_id(text), None
        last = f"{status}: {text[:300]}"
        if status is not None and status < 500 and status != 429:
            break  # 4xx other than 429 will not get better
        time.sleep(0.05 * 2 ** attempt)
    return None, last

start = time.monotonic()
ids, errors = [], []
with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
    for cid, err in pool.map(seed, range(SEED_COUNT), chunksize=64):
        if cid is not None:
            ids.append(cid)
        else:
            errors.append(err)
elapsed = time.monotonic() - start
print(f"seeded {len(ids)} contacts in {elapsed:.1f} s "
      f"({len(ids) / elapsed:.0f}/s, {WORKERS} clients), {len(errors)} failed")
if errors:
    sys.exit(f"seeding failed for {len(errors)} contacts; first: {errors[0]}")

# The list run (q=ana) must see the seeded contacts.
status, text = call("GET", "/api/v1/contacts?pageSize=100&q=ana", key)
if status != 200:
    sys.exit(f"GET /api/v1/contacts?pageSize=100&q=ana -> {status}: {text[:500]}")
status, text = call("GET", f"/api/v1/contacts/{ids[0]}", key)
if status != 200:
    sys.exit(f"GET /api/v1/contacts/{ids[0]} -> {status}: {text[:500]}")

sample = random.Random(42).sample(ids, min(SAMPLE_IDS, len(ids)))
with open(os.path.join(TMP, "ids.txt"), "w") as f:
    f.write("\n".join(sample) + "\n")
with open(os.path.join(TMP, "seed.txt"), "w") as f:
    f.write(f"{len(ids)} contacts in {elapsed:.1f} s ({len(ids) / elapsed:.0f}/s, "
            f"{WORKERS} clients, keep-alive)\n")
PY

# Stand-in for wm-server, used by --selftest only: the same routes and status
# codes, kept in memory.
cat >"$TMP/stub_server.py" <<'PY'
import json, os, re, sys, threading, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

ADMIN = os.environ["WM_ADMIN_TOKEN"]
host, port = os.environ["WM_LISTEN"].rsplit(":", 1)
lock = threading.Lock()
keys, contacts, phones = set(), {}, set()

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def log_message(self, *a): pass
    def send(self, status, doc):
        b = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def token(self):
        return self.headers.get("Authorization", "").removeprefix("Bearer ")
    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"null")
    def do_GET(self):
        u = urlsplit(self.path)
        if u.path == "/api/v1/health":
            return self.send(200, {"status": "ok"})
        if self.token() not in keys:
            return self.send(401, {"error": "unauthorized"})
        if u.path == "/api/v1/contacts":
            q = parse_qs(u.query)
            size = int(q.get("pageSize", ["50"])[0])
            needle = q.get("q", [""])[0].lower()
            with lock:
                items = [c for c in contacts.values() if needle in c["fullName"].lower()][:size]
            return self.send(200, {"data": items})
        m = re.fullmatch(r"/api/v1/contacts/([0-9a-f-]{36})", u.path)
        if m and m.group(1) in contacts:
            return self.send(200, contacts[m.group(1)])
        return self.send(404, {"error": "not found"})
    def do_POST(self):
        p, body = urlsplit(self.path).path, self.body()
        if p.startswith("/api/v1/admin/"):
            if self.token() != ADMIN:
                return self.send(401, {"error": "unauthorized"})
            if p.endswith("/api-keys"):
                k = "wm_live_" + uuid.uuid4().hex
                keys.add(k)
                return self.send(201, {"id": str(uuid.uuid4()), "key": k})
            return self.send(201, {"id": str(uuid.uuid4())})
        if p == "/api/v1/contacts":
            if self.token() not in keys:
                return self.send(401, {"error": "unauthorized"})
            with lock:
                if body["primaryPhone"] in phones:
                    return self.send(409, {"error": "duplicate phone " + body["primaryPhone"]})
                phones.add(body["primaryPhone"])
                body["id"] = str(uuid.uuid4())
                contacts[body["id"]] = body
            return self.send(201, body)
        return self.send(404, {"error": "not found"})

ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer.handle_error = lambda *a: None  # clients hanging up at the end
ThreadingHTTPServer((host, int(port)), H).serve_forever()
PY

free_port() {
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# --------------------------------------------------------------------------
# 2. Build and start the server
# --------------------------------------------------------------------------
if [[ $SELFTEST == 1 ]]; then
    SERVER_DESC="selftest stand-in (python3, in-memory) - NOT wm-server"
else
    if [[ $SKIP_BUILD != 1 ]]; then
        log "cargo build --release -p wm-server; the bare-axum ceiling"
        (cd "$ROOT" && cargo build --release -p wm-server &&
            cargo build --release -p wm-benches --bin bare-axum)
    fi
    for bin in "$SERVER_BIN" "$BARE_BIN"; do
        [[ -x "$bin" ]] || {
            echo "binary not found: $bin" >&2
            exit 1
        }
    done
    SERVER_DESC="$SERVER_BIN"
fi

PORT="$(free_port)"
ADMIN_TOKEN="bench-admin-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
DB_URL="${WM_BENCH_DATABASE_URL:-sqlite://$TMP/bench.db?mode=rwc}"
BASE="http://127.0.0.1:$PORT"

log "starting server on 127.0.0.1:$PORT (${DB_URL%%\?*})"
echo "note: WM_RATE_LIMIT_PER_MINUTE=$RATE_LIMIT_PER_MINUTE for this run, so the per-key limit (600/min) does not throttle the benchmark"
export WM_RATE_LIMIT_PER_MINUTE="$RATE_LIMIT_PER_MINUTE"
export RUST_LOG="${RUST_LOG:-warn}"
if [[ $SELFTEST == 1 ]]; then
    WM_LISTEN="127.0.0.1:$PORT" WM_ADMIN_TOKEN="$ADMIN_TOKEN" \
        python3 "$TMP/stub_server.py" >"$TMP/server.log" 2>&1 &
else
    "$SERVER_BIN" serve --database-url "$DB_URL" --listen "127.0.0.1:$PORT" \
        --admin-token "$ADMIN_TOKEN" >"$TMP/server.log" 2>&1 &
fi
SERVER_PID=$!

ready=0
for _ in $(seq 300); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        break
    fi
    if [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/api/v1/health" || true)" == 200 ]]; then
        ready=1
        break
    fi
    sleep 0.1
done
if [[ $ready != 1 ]]; then
    echo "server did not become ready (GET /api/v1/health); log:" >&2
    tail -n 40 "$TMP/server.log" >&2
    exit 1
fi

# --------------------------------------------------------------------------
# 3. Organization, user, key; seed
# --------------------------------------------------------------------------
log "creating organization, user and API key; seeding $SEED_COUNT contacts"
WM_BENCH_PORT="$PORT" WM_BENCH_ADMIN_TOKEN="$ADMIN_TOKEN" WM_BENCH_TMP="$TMP" \
    SEED_COUNT="$SEED_COUNT" SAMPLE_IDS="$SAMPLE_IDS" SEED_WORKERS="$SEED_WORKERS" KEYS="$KEYS" \
    python3 "$TMP/setup.py"
KEY="$(cat "$TMP/key")"

# --------------------------------------------------------------------------
# 4. Measurements
# --------------------------------------------------------------------------
RESULTS=()
RAW="$TMP/raw.txt"
: >"$RAW"
POST_STATUSES=""
POST_FIRST_ERROR=""

run_wrk() { # label mode path [base]
    local label="$1" mode="$2" path="$3" base="${4:-$BASE}" out="$TMP/wrk-$2.txt"
    log "wrk: $label (${DURATION}, $CONNECTIONS connections, $THREADS threads)"
    # In the background so that a signal reaches the traps at once.
    WM_BENCH_MODE="$mode" WM_BENCH_IDS_FILE="$TMP/ids.txt" WM_BENCH_THREADS="$THREADS" \
        WM_BENCH_KEYS_FILE="$TMP/keys.txt" \
        wrk -t "$THREADS" -c "$CONNECTIONS" -d "$DURATION" --timeout "$TIMEOUT" --latency \
        -H "Authorization: Bearer $KEY" -s "$TMP/bench.lua" "$base$path" >"$out" 2>&1 &
    WRK_PID=$!
    if ! wait "$WRK_PID"; then
        cat "$out" >&2
        echo "wrk failed" >&2
        exit 1
    fi
    {
        echo "---- $label ----"
        cat "$out"
    } >>"$RAW"
    local line
    line="$(grep '^WMBENCH ' "$out" | tail -n 1)" || {
        cat "$out" >&2
        echo "no WMBENCH line in the wrk output (Lua error?)" >&2
        exit 1
    }
    if grep -q 'PANIC\|lua:.*error\|attempt to' "$out"; then
        cat "$out" >&2
        echo "Lua error in the wrk script" >&2
        exit 1
    fi
    RESULTS+=("$label|$line")
    if [[ $mode == post ]]; then
        POST_STATUSES="$(sed -n 's/^WMBENCH_STATUSES //p' "$out")"
        POST_FIRST_ERROR="$(sed -n 's/^WMBENCH_FIRST_ERROR //p' "$out")"
    fi
    local non2xx
    non2xx="$(sed -n 's/.* non2xx=\([0-9]*\).*/\1/p' <<<"$line")"
    echo "    $(awk '{for (i = 2; i <= NF; i++) printf "%s ", $i; print ""}' <<<"$line")"
    if [[ "$non2xx" != 0 ]]; then
        echo "    WARNING: $non2xx responses with status >= 400 - this run is not a clean measurement"
    fi
}

run_wrk "GET /api/v1/contacts/{id}" get_id "/api/v1/contacts/"
WM_GET_LINE="${RESULTS[-1]#*|}"

# The ceiling, side by side: a bare axum JSON handler on the same ids (the stand-in again in
# the selftest).
if [[ $SELFTEST == 1 ]]; then
    BARE_BASE="$BASE"
else
    BARE_PORT="$(free_port)"
    BARE_BASE="http://127.0.0.1:$BARE_PORT"
    "$BARE_BIN" "127.0.0.1:$BARE_PORT" >"$TMP/bare.log" 2>&1 &
    BARE_PID=$!
    for _ in $(seq 100); do
        [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BARE_BASE/api/v1/health" || true)" == 200 ]] && break
        sleep 0.1
    done
fi
run_wrk "bare axum GET /api/v1/contacts/{id}" get_id "/api/v1/contacts/" "$BARE_BASE"
BARE_GET_LINE="${RESULTS[-1]#*|}"
if [[ -n "$BARE_PID" ]]; then
    kill "$BARE_PID" 2>/dev/null || true
    wait "$BARE_PID" 2>/dev/null || true
    BARE_PID=""
fi
run_wrk "GET /api/v1/contacts?pageSize=100&q=ana" list "/api/v1/contacts?pageSize=100&q=ana"
run_wrk "POST /api/v1/contacts" post "/api/v1/contacts"

# --------------------------------------------------------------------------
# 5. Report
# --------------------------------------------------------------------------
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

STAMP="$(date -u +%Y%m%d-%H%M%S)"
if [[ $SELFTEST == 1 ]]; then
    REPORT="$TMP/load-$STAMP.txt"
else
    mkdir -p "$OUT_DIR"
    REPORT="$OUT_DIR/load-$STAMP.txt"
fi
COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none)"
if [[ -n "$(git -C "$ROOT" status --porcelain 2>/dev/null | head -n 1)" ]]; then
    COMMIT="$COMMIT (with uncommitted changes)"
fi

{
    echo "wm load benchmark - $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "server:      $SERVER_DESC"
    echo "commit:      $COMMIT"
    if [[ $SELFTEST == 1 ]]; then
        echo "database:    none (stand-in keeps contacts in memory), $(cat "$TMP/seed.txt")"
    else
        if [[ -n "${WM_BENCH_DATABASE_URL:-}" ]]; then
            echo "database:    ${WM_BENCH_DATABASE_URL%%\?*}, $(cat "$TMP/seed.txt")"
        else
            echo "database:    SQLite (fresh file), $(cat "$TMP/seed.txt")"
        fi
        echo "keys:        $KEYS, limit $RATE_LIMIT_PER_MINUTE per key per minute"
    fi
    echo "load:        wrk, $THREADS threads, $CONNECTIONS connections, $DURATION per run, timeout $TIMEOUT"
    echo "machine:     $(nproc) cores, shared by wrk and the server; 127.0.0.1"
    echo "rate limit:  WM_RATE_LIMIT_PER_MINUTE=$RATE_LIMIT_PER_MINUTE (per-key limit of 600/min lifted)"
    echo "non-2xx:     responses with status >= 400 as counted by wrk; sock-err: connect+read+write+timeout"
    echo
    printf '%-42s %10s %9s %9s %9s %9s\n' "endpoint" "req/s" "p50 ms" "p99 ms" "non-2xx" "sock-err"
    for r in "${RESULTS[@]}"; do
        label="${r%%|*}"
        line="${r#*|}"
        sockerr=$(($(field connect "$line") + $(field read "$line") + $(field write "$line") + $(field timeout "$line")))
        printf '%-42s %10s %9s %9s %9s %9s\n' "$label" "$(field rps "$line")" \
            "$(field p50_ms "$line")" "$(field p99_ms "$line")" "$(field non2xx "$line")" "$sockerr"
    done
    echo
    field rps "$WM_GET_LINE" >"$TMP/wm.rps"
    field rps "$BARE_GET_LINE" >"$TMP/bare.rps"
    python3 -c 'import sys; w, b = (float(open(f).read()) for f in sys.argv[1:]); print(f"GET by id:   wm-server {w:.0f} req/s = {100 * w / b:.1f} % of bare axum ({b:.0f} req/s), same run")' "$TMP/wm.rps" "$TMP/bare.rps"
    echo "POST statuses: ${POST_STATUSES:-none}"
    if [[ -n "$POST_FIRST_ERROR" ]]; then
        echo "POST first error: $POST_FIRST_ERROR"
    fi
} >"$TMP/summary.txt"

{
    cat "$TMP/summary.txt"
    echo
    echo "==== raw wrk output ===="
    cat "$RAW"
} >"$REPORT"

echo
cat "$TMP/summary.txt"
echo
if [[ $SELFTEST == 1 ]]; then
    # Checks of the harness itself against the stand-in.
    fail=0
    for r in "${RESULTS[@]}"; do
        line="${r#*|}"
        if [[ "$(field non2xx "$line")" != 0 ]] || [[ "$(field requests "$line")" == 0 ]]; then
            echo "selftest: FAILED for ${r%%|*}: $line" >&2
            fail=1
        fi
    done
    if [[ "$POST_STATUSES" != "201="* ]] || [[ "$POST_STATUSES" == *" "* ]]; then
        echo "selftest: FAILED: POST statuses were '$POST_STATUSES' (expected only 201)" >&2
        fail=1
    fi
    if [[ $fail == 0 ]]; then
        echo "selftest: OK (report format only; numbers are of the Python stand-in)"
    fi
    exit "$fail"
fi
echo "report written to ${REPORT#"$ROOT"/}"
