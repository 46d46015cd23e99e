#!/usr/bin/env python3
"""A stand-in for wm's website chat (the widget's HTTP contract, /work/notes/webchat-contract.md),
in memory, Python's standard library only: for developing and testing the widget in a real
browser before (and beside) the real server.

    python3 .ci/webchat/mock_server.py --port 18400 --site wct_mock \
        --secret webchat-secret --allow http://127.0.0.1:18401

What it serves (all on one origin):
- GET /widget/{site}.js: crates/wm-server/src/webchat/assets/widget.js read from disk on each
  request (edit and reload), with the config line prepended as the real server does.
- /webchat/v1/{site}/...: config, visitors, messages (clientId dedup), files (multipart,
  type sniffed, 10 MB), buttons, identify (HMAC-SHA256 of the identifier with --secret),
  email, media, and events (SSE, resumable by Last-Event-ID or ?lastEventId=).
  CORS as the contract says: an allowed Origin is echoed; any other Origin gets 403 without
  Access-Control-Allow-Origin. A request without Origin (an <img>, curl) is not refused.
- Test-only endpoints under /_mock/ (no CORS, no auth):
  GET  /_mock/state                  every conversation, its messages, email, visitor count
  POST /_mock/agent_reply {"conversation"?: key, "text", "buttons"?: ["title", ...],
                           "author"?: "Ana", "image"?: true}
                                     an OUTBOUND message (to the newest conversation by default)
  POST /_mock/read {"conversation"?: key}   the visitor's messages become READ (status events)
  POST /_mock/typing {"conversation"?: key} a typing event
  POST /_mock/lose {"count": N}      the next N POST /messages are stored but get no answer
                                     (the connection is closed: the browser sees a network error)
  POST /_mock/drop_streams           closes every event stream (browsers reconnect by themselves)
  POST /_mock/revoke                 every visitor token stops being valid (401), streams closed
  POST /_mock/reset                  forgets everything
"""

import argparse
import base64
import hashlib
import hmac
import json
import re
import secrets
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parents[2]
WIDGET = ROOT / "crates" / "wm-server" / "src" / "webchat" / "assets" / "widget.js"
MAX_TEXT = 4096
MAX_FILE = 10 * 1024 * 1024
MAGIC = {  # what a file must start with to be the type it claims
    "image/png": [b"\x89PNG\r\n\x1a\n"], "image/jpeg": [b"\xff\xd8\xff"],
    "image/gif": [b"GIF87a", b"GIF89a"], "image/webp": [b"RIFF"], "application/pdf": [b"%PDF-"],
}


def now_iso():
    t = datetime.now(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class Store:
    """Conversations keyed by who the visitor is: an anonymous visitor's id, or "user:<id>"."""

    def __init__(self):
        self.lock = threading.Condition()
        self.reset()

    def reset(self):
        with self.lock:
            self.convs = {}      # key -> {visitorId, messages: [..], clientIds: {}, email, events: [(seq, msg)]}
            self.media = {}      # mediaId -> (key, mime, filename, bytes)
            self.seq = 0
            self.visitors = 0    # POST /visitors answered
            self.gen = 0         # bumped to close every open stream
            self.lose = 0        # POST /messages answers still to lose
            self.posts = 0       # POST /messages requests (retries included)
            self.lock.notify_all()

    def conv(self, key):
        c = self.convs.get(key)
        if c is None:
            c = self.convs[key] = {"key": key, "visitorId": str(uuid.uuid4()), "messages": [],
                                   "clientIds": {}, "email": None, "events": [],
                                   "touched": time.time()}
        return c

    def emit(self, c, event, data):
        """Appends an event (under the lock) and wakes the streams."""
        self.seq += 1
        c["events"].append((self.seq, event, json.dumps(data)))
        c["touched"] = time.time()
        self.lock.notify_all()

    def add(self, c, **fields):
        m = {"id": str(uuid.uuid4()), "direction": "INBOUND", "type": "TEXT", "text": None,
             "media": None, "buttons": None, "author": None, "status": "SENT",
             "createdAt": now_iso()}
        m.update(fields)
        c["messages"].append(m)
        self.emit(c, "message", m)
        return m


class Mock:
    def __init__(self, site, secret, allowed, email_after, keepalive, name, greeting, color):
        self.site, self.secret, self.allowed = site, secret.encode(), set(allowed)
        self.email_after, self.keepalive = email_after, keepalive
        self.config = {"name": name, "greeting": greeting, "color": color,
                       "locales": ["en", "es", "pt"], "emailAfterMinutes": email_after}
        self.token_key = secrets.token_bytes(32)
        self.store = Store()

    def token(self, key):
        payload = base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")
        sig = hmac.new(self.token_key, payload.encode(), hashlib.sha256).hexdigest()[:32]
        return f"vt1.{payload}.{sig}"

    def key_of(self, token):
        """The conversation key a token stands for, or None when it is not one of ours."""
        if not token:
            return None
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != "vt1":
            return None
        sig = hmac.new(self.token_key, parts[1].encode(), hashlib.sha256).hexdigest()[:32]
        if not hmac.compare_digest(sig, parts[2]):
            return None
        try:
            return base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)).decode()
        except ValueError:
            return None


def make_handler(mock):
    store = mock.store

    class H(BaseHTTPRequestHandler):
        server_version = "wm-mock/1"

        def log_message(self, fmt, *args):  # one short line per request on stderr
            sys.stderr.write("mock: %s %s\n" % (self.address_string(), fmt % args))

        # ------------------------------------------------------------ plumbing
        def origin_ok(self):
            o = self.headers.get("Origin")
            return o is None or o in mock.allowed

        def cors(self):
            o = self.headers.get("Origin")
            if o and o in mock.allowed:
                self.send_header("Access-Control-Allow-Origin", o)
                self.send_header("Access-Control-Expose-Headers", "Retry-After")
                self.send_header("Vary", "Origin")

        def send(self, status, body=None, ctype="application/json", extra=None):
            data = b""
            if body is not None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.cors()
            if body is not None:
                self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def error(self, status, message):
            names = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
                     413: "Payload Too Large", 405: "Method Not Allowed"}
            self.send(status, {"statusCode": status, "message": message,
                               "error": names.get(status, "Error")})

        def body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def json_body(self):
            try:
                v = json.loads(self.body() or b"null")
                return v if isinstance(v, dict) else None
            except ValueError:
                return None

        def bearer(self, query):
            auth = self.headers.get("Authorization", "")
            token = auth[7:] if auth.startswith("Bearer ") else (query.get("token") or [None])[0]
            return mock.key_of(token)

        # ------------------------------------------------------------ routing
        def do_OPTIONS(self):
            if not self.path.startswith("/webchat/v1/"):
                return self.error(404, "Not found")
            if not self.origin_ok():
                return self.error(403, "This site may not embed this chat")
            self.send_response(204)
            self.cors()
            self.send_header("Access-Control-Allow-Methods", "GET, POST")
            self.send_header("Access-Control-Allow-Headers",
                             "Authorization, Content-Type, Last-Event-ID")
            self.send_header("Access-Control-Max-Age", "600")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self):
            self.route("GET")

        def do_POST(self):
            self.route("POST")

        def route(self, method):
            u = urlparse(self.path)
            q = parse_qs(u.query)
            p = u.path
            if p.startswith("/_mock/"):
                return self.mock_api(method, p[len("/_mock/"):])
            m = re.fullmatch(r"/widget/([^/]+)\.js", p)
            if m and method == "GET":
                return self.widget(m.group(1))
            m = re.fullmatch(r"/webchat/v1/([^/]+)(/.*)", p)
            if not m:
                return self.error(404, "Not found")
            if m.group(1) != mock.site:
                return self.error(404, "No such chat")
            if not self.origin_ok():
                return self.error(403, "This site may not embed this chat")
            rest = m.group(2)
            if (method, rest) == ("GET", "/config"):
                return self.send(200, mock.config)
            if (method, rest) == ("POST", "/visitors"):
                self.body()
                with store.lock:
                    store.visitors += 1
                    vid = str(uuid.uuid4())
                    c = store.conv(vid)
                    c["visitorId"] = vid
                return self.send(201, {"visitorToken": mock.token(vid), "visitorId": vid})
            if (method, rest) == ("POST", "/identify"):
                return self.identify()
            mm = re.fullmatch(r"/media/([^/]+)", rest)
            key = self.bearer(q)
            if key is None:
                return self.error(401, "A valid visitor token is required")
            with store.lock:
                c = store.conv(key)
            if mm and method == "GET":
                return self.media(c, mm.group(1))
            if (method, rest) == ("GET", "/messages"):
                return self.messages(c, q)
            if (method, rest) == ("POST", "/messages"):
                return self.post_message(c)
            if (method, rest) == ("POST", "/files"):
                return self.post_file(c)
            if (method, rest) == ("POST", "/buttons"):
                return self.post_button(c)
            if (method, rest) == ("POST", "/email"):
                b = self.json_body() or {}
                e = b.get("email")
                if not isinstance(e, str) or not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", e):
                    return self.error(400, "email must be an email address")
                with store.lock:
                    c["email"] = e
                return self.send(204)
            if (method, rest) == ("GET", "/events"):
                return self.events(c, q)
            return self.error(404 if method == "GET" else 405, "Not found")

        # ------------------------------------------------------------ the contract
        def widget(self, site):
            if site != mock.site:
                return self.send(404, b"/* wm: no such chat */\n",
                                 "application/javascript; charset=utf-8")
            base = f"http://{self.headers.get('Host')}"
            head = "window.__wmWidget = %s;\n" % json.dumps({"site": site, "base": base})
            self.send(200, head.encode() + WIDGET.read_bytes(),
                      "application/javascript; charset=utf-8")

        def identify(self):
            b = self.json_body() or {}
            ident, given = b.get("identifier"), b.get("identifierHash")
            if not isinstance(ident, str) or not ident or not isinstance(given, str):
                return self.error(400, "identifier and identifierHash are required")
            want = hmac.new(mock.secret, ident.encode(), hashlib.sha256).hexdigest()
            if not hmac.compare_digest(want, given.lower()):
                return self.error(401, "identifierHash does not match")
            key = "user:" + ident
            with store.lock:
                c = store.conv(key)
                if b.get("email"):
                    c["email"] = b["email"]
            return self.send(200, {"visitorToken": mock.token(key), "visitorId": c["visitorId"]})

        def messages(self, c, q):
            try:
                limit = max(1, min(100, int((q.get("limit") or ["50"])[0])))
            except ValueError:
                return self.error(400, "limit must be a number")
            before = (q.get("before") or [None])[0]
            with store.lock:
                ms = list(c["messages"])
            if before:
                ids = [m["id"] for m in ms]
                if before not in ids:
                    return self.error(400, "before is not a message of this conversation")
                ms = ms[:ids.index(before)]
            page = ms[-limit:]
            return self.send(200, {"data": page, "hasMore": len(ms) > len(page)})

        def post_message(self, c):
            b = self.json_body()
            if b is None:
                return self.error(400, "a JSON body is required")
            text, cid = b.get("text"), b.get("clientId")
            if not isinstance(text, str) or not text.strip():
                return self.error(400, "text is required")
            if len(text) > MAX_TEXT:
                return self.error(413, f"text is longer than {MAX_TEXT} characters")
            with store.lock:
                store.posts += 1
                if cid and cid in c["clientIds"]:
                    return self.send(201, c["clientIds"][cid])
                m = store.add(c, text=text)
                if cid:
                    c["clientIds"][cid] = m
                lose = store.lose > 0
                store.lose -= lose
            if lose:  # stored, but the answer is lost: no response at all
                self.close_connection = True
                return None
            return self.send(201, m)

        def post_file(self, c):
            n = int(self.headers.get("Content-Length") or 0)
            if n > MAX_FILE + 64 * 1024:
                return self.error(413, "the file is larger than 10 MB")
            ctype = self.headers.get("Content-Type", "")
            if not ctype.startswith("multipart/form-data"):
                return self.error(400, "multipart/form-data is required")
            raw = self.body()
            msg = BytesParser(policy=HTTP).parsebytes(
                b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw)
            file_part, cid = None, None
            for part in msg.iter_parts():
                name = part.get_param("name", header="content-disposition")
                if name == "file":
                    file_part = part
                elif name == "clientId":
                    cid = part.get_payload(decode=True).decode()
            if file_part is None:
                return self.error(400, "the part `file` is required")
            data = file_part.get_payload(decode=True) or b""
            mime = file_part.get_content_type()
            filename = file_part.get_filename() or "file"
            if len(data) > MAX_FILE:
                return self.error(413, "the file is larger than 10 MB")
            if mime not in MAGIC:
                return self.error(400, f"{mime} files are not accepted")
            if not any(data.startswith(sig) for sig in MAGIC[mime]):
                return self.error(400, f"the file is not the {mime} it claims to be")
            with store.lock:
                if cid and cid in c["clientIds"]:
                    return self.send(201, c["clientIds"][cid])
                mid = str(uuid.uuid4())
                store.media[mid] = (c["key"], mime, filename, data)
                m = store.add(c, type="IMAGE" if mime.startswith("image/") else "DOCUMENT",
                              media={"url": f"/webchat/v1/{mock.site}/media/{mid}",
                                     "mimeType": mime, "filename": filename})
                if cid:
                    c["clientIds"][cid] = m
            return self.send(201, m)

        def post_button(self, c):
            b = self.json_body() or {}
            with store.lock:
                target = next((m for m in c["messages"] if m["id"] == b.get("messageId")), None)
                if not target or target["direction"] != "OUTBOUND" or not target["buttons"]:
                    return self.error(400, "messageId is not a message with buttons")
                btn = next((x for x in target["buttons"] if x["id"] == b.get("buttonId")), None)
                if not btn:
                    return self.error(400, "buttonId is not one of the message's buttons")
                m = store.add(c, type="INTERACTIVE", text=btn["title"])
            return self.send(201, m)

        def media(self, c, mid):
            with store.lock:
                item = store.media.get(mid)
            if not item or item[0] != c["key"]:
                return self.error(404, "No such file")
            _, mime, filename, data = item
            self.send(200, data, mime, {"Content-Disposition": f'inline; filename="{filename}"'})

        def events(self, c, q):
            last = self.headers.get("Last-Event-ID") or (q.get("lastEventId") or [""])[0]
            try:
                after = int(last.lstrip("e")) if last else None
            except ValueError:
                after = None
            self.send_response(200)
            self.cors()
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            with store.lock:
                if after is None:  # a new stream: only what happens from now on
                    after = store.seq
                gen = store.gen
            self.close_connection = True
            try:
                self.wfile.write(b": connected\n\n")
                self.wfile.flush()
                while True:
                    with store.lock:
                        pending = [e for e in c["events"] if e[0] > after]
                        if not pending:
                            store.lock.wait(timeout=mock.keepalive)
                            pending = [e for e in c["events"] if e[0] > after]
                        if store.gen != gen:
                            return
                    if not pending:
                        self.wfile.write(b": keep-alive\n\n")
                    for seq, event, data in pending:
                        self.wfile.write(f"event: {event}\nid: e{seq}\ndata: {data}\n\n".encode())
                        after = seq
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                return

        # ------------------------------------------------------------ test endpoints
        def mock_api(self, method, what):
            if method == "GET" and what == "state":
                with store.lock:
                    convs = [{k: v for k, v in c.items() if k not in ("clientIds", "events")}
                             for c in store.convs.values()]
                    return self.send(200, {"visitors": store.visitors, "posts": store.posts,
                                           "conversations": convs})
            if method != "POST":
                return self.error(405, "POST")
            b = self.json_body() or {}
            if what == "reset":
                store.reset()
                return self.send(204)
            if what in ("drop_streams", "revoke", "lose"):
                with store.lock:
                    if what == "lose":
                        store.lose = int(b.get("count", 1))
                    else:
                        if what == "revoke":
                            mock.token_key = secrets.token_bytes(32)
                        store.gen += 1
                        store.lock.notify_all()
                return self.send(204)
            with store.lock:
                key = b.get("conversation")
                if key is None:
                    live = [c for c in store.convs.values() if c["messages"]]
                    if not live:
                        return self.error(400, "no conversation yet")
                    key = max(live, key=lambda c: c["touched"])["key"]
                c = store.convs.get(key)
                if c is None:
                    return self.error(404, f"no conversation {key!r}")
                if what == "agent_reply":
                    buttons = [{"id": f"b{i + 1}", "title": t}
                               for i, t in enumerate(b.get("buttons") or [])] or None
                    fields = {"direction": "OUTBOUND", "text": b.get("text"),
                              "author": b.get("author", "Ana"), "buttons": buttons}
                    if buttons:
                        fields["type"] = "INTERACTIVE"
                    m = store.add(c, **fields)
                    return self.send(201, m)
                if what == "read":
                    for m in c["messages"]:
                        if m["direction"] == "INBOUND" and m["status"] != "READ":
                            m["status"] = "READ"
                            store.emit(c, "message", m)
                    return self.send(204)
                if what == "typing":
                    store.emit(c, "typing", {"agent": True})
                    return self.send(204)
            return self.error(404, "no such mock endpoint")

    return H


def serve(port, **kw):
    """Starts the mock in a daemon thread; returns the server (shutdown() to stop)."""
    mock = Mock(**kw)
    srv = ThreadingHTTPServer(("127.0.0.1", port), make_handler(mock))
    srv.daemon_threads = True
    srv.mock = mock
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=18400)
    ap.add_argument("--site", default="wct_mock0000000000000000")
    ap.add_argument("--secret", default="webchat-secret")
    ap.add_argument("--allow", action="append", default=[],
                    help="an allowed origin (repeat), e.g. http://127.0.0.1:18401")
    ap.add_argument("--email-after", type=int, default=None,
                    help="config's emailAfterMinutes (default null)")
    ap.add_argument("--keepalive", type=float, default=15)
    args = ap.parse_args()
    srv = serve(args.port, site=args.site, secret=args.secret, allowed=args.allow,
                email_after=args.email_after, keepalive=args.keepalive, name="Acme",
                greeting="Hi! How can we help?", color="#0a7cff")
    print(f"mock wm webchat on http://127.0.0.1:{args.port} site {args.site} "
          f"allowing {args.allow}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.shutdown()


if __name__ == "__main__":
    main()
