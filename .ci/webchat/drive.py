#!/usr/bin/env python3
"""The wm website chat in real browsers: headless Chromium driven by Selenium, a visitor on a
customer's page (host.html, served from another origin than wm, with hostile CSS) and an
agent in the wm console, through the widget's whole flow.

Steps (each named; a failed one prints why, the URLs, the browsers' console errors and saves
FAILED-<step>-<who>.png in $WM_ARTIFACTS):
  a) the visitor opens the widget (inside its shadow root), writes "Hola, necesito ayuda",
     attaches a PNG (and leaves an email when the widget asks for one);
  b) the agent finds the conversation in the console's inbox, sees both messages, replies
     with a text and with a reply that has one button;
  c) the visitor sees both live, taps the button; the agent's thread (live, never reloaded)
     shows the tap;
  d) the visitor reloads: the history is there, no message twice; a second tab keeps in step;
  e) an identified visitor (wm.identify with an HMAC-SHA256 of $WM_WEBCHAT_SECRET) sees that
     identity's earlier conversation; with a wrong hash sees nothing of it;
  f) a page on an origin that is not allowed cannot start a chat;
  g) axe-core inside the widget's shadow root, panel open: no serious or critical violation;
  h) at 360 px wide the open panel fits the viewport.

    WM_URL=http://127.0.0.1:18400 WM_SITE=wct_... WM_WEBCHAT_SECRET=... \
    WM_HOST_URL=http://127.0.0.1:18401 WM_BAD_HOST_URL=http://127.0.0.1:18402 \
    WM_CONSOLE_URL=http://127.0.0.1:18400/console WM_KEY=... WM_ARTIFACTS=target/webchat-artifacts \
    python3 .ci/webchat/drive.py

    python3 .ci/webchat/drive.py --mock   # against .ci/webchat/mock_server.py, started here;
                                          # the agent is the mock's /_mock/agent_reply

When nothing answers at $WM_HOST_URL or $WM_BAD_HOST_URL (loopback), this script serves this
folder (host.html) there itself.
"""

import argparse
import hashlib
import hmac
import json
import os
import re
import secrets
import struct
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request
import zlib
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode, urlparse

from selenium import webdriver
from selenium.common.exceptions import (
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

HERE = Path(__file__).resolve().parent
AXE_JS = HERE.parent / "console" / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WIDE = (1280, 900)
PHONE = (360, 740)
WAIT = 15  # seconds for an element (a debug build on 2 cores)
MOCK_PORTS = (18400, 18401, 18402)  # mock wm, the allowed host page, a host page not allowed
MOCK_SITE = "wct_mockSite000000000000"

FIRST_TEXT = "Hola, necesito ayuda"
REPLY_TEXT = "¡Hola! Claro, ¿en qué te podemos ayudar?"
BUTTON_TEXT = "¿Quieres que te llamemos?"
BUTTON_TITLE = "Sí, llámenme"
IDENTITY_TEXT = "Mi pedido 1234 no llegó"
EXTRA = 54  # messages after IDENTITY_TEXT: 55 in all, one more page than the first 50
HOSTILE_TEXT = '<img src=x onerror="window.pwned=1"> <b>no es negrita</b> & <script>window.pwned=2</script>'

# The run's state: browsers, where things are, what earlier steps made for later ones.
S = SimpleNamespace(visitor=None, agent=None, drivers=[], mock=False, wm="", site="", secret="",
                    host="", bad_host="", console="", key="", artifacts=Path("."), shots=0,
                    axed=0, violations=[], step="start", servers=[], sent_at=None,
                    mock_srv=None, conversation=None)


class StepFailed(Exception):
    """A check of the flow that did not hold."""


# --------------------------------------------------------------------------- helpers

def xq(text):
    """`text` as an XPath string literal (the texts here hold no quote of both kinds)."""
    return f'"{text}"' if "'" in text else f"'{text}'"


# What chromedriver says when it reads a node of a document that a navigation or a live part
# (the console's thread refreshes itself every 2 s) has just replaced: only "not yet".
NODE_GONE = "does not belong to the document"


def until(driver, pred, what, timeout=WAIT):
    """Waits until pred(driver) is truthy (a missing, stale or replaced node: "not yet")."""
    def guarded(d):
        try:
            return pred(d)
        except WebDriverException as e:
            if NODE_GONE in str(e):
                return False
            raise
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.2, ignored_exceptions=(
            NoSuchElementException, StaleElementReferenceException)).until(guarded)
    except TimeoutException:
        raise StepFailed(f"{what}: not within {timeout}s")


def http(method, url, body=None, headers=None, raw=False):
    """One request; returns (status, parsed JSON or bytes). Never raises on an HTTP status."""
    data = json.dumps(body).encode() if body is not None and not raw else body
    h = {"Content-Type": "application/json"} if body is not None and not raw else {}
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, payload = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, payload = e.code, e.read()
    try:
        return status, json.loads(payload) if payload else None
    except ValueError:
        return status, payload


def origin(url):
    u = urlparse(url)
    return f"{u.scheme}://{u.netloc}"


def api(method, path, body=None, token=None, from_url=None):
    """The widget's API as the host page's origin calls it (Origin header, Bearer token)."""
    headers = {"Origin": origin(from_url or S.host)}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return http(method, f"{S.wm}/webchat/v1/{S.site}{path}", body, headers)


def mock(method, path, body=None):
    status, answer = http(method, f"{S.wm}/_mock/{path}", body)
    if status >= 300:
        raise StepFailed(f"mock {method} /_mock/{path} answered {status}: {answer!r}")
    return answer


def visitor_writes(token, text):
    """POST /messages as a visitor (waiting out a 429)."""
    cid = secrets.token_hex(16)
    for _ in range(10):
        status, answer = api("POST", "/messages", {"text": text, "clientId": cid}, token)
        if status == 201:
            return answer
        if status != 429:
            raise StepFailed(f"POST /messages {text!r} answered {status} {answer!r}")
        time.sleep(2)
    raise StepFailed(f"POST /messages {text!r}: still 429")


def identifier_hash(identifier, secret=None):
    return hmac.new((secret or S.secret).encode(), identifier.encode(), hashlib.sha256).hexdigest()


def host_url(base=None, **extra):
    q = {"wm": S.wm, "site": S.site}
    q.update(extra)
    return f"{(base or S.host).rstrip('/')}/host.html?{urlencode(q)}"


def png(width=48, height=32):
    """A real PNG (a two-colour stripe), so the thread shows an image, not a broken one."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\0" + (b"\x25\xd3\x66" if y < height // 2 else b"\x12\x8c\xe8") * width
                    for y in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def shot(driver, name):
    """The viewport (the widget is position: fixed) as NN-name.png."""
    S.shots += 1
    out = S.artifacts / f"{S.shots:02d}-{name}.png"
    driver.save_screenshot(str(out))
    return out


# ------------------------------------------------------------------ the widget (shadow DOM)

class Widget:
    """The widget on one visitor page, read through its open shadow root."""

    def __init__(self, driver):
        self.d = driver

    def root(self):
        return self.d.find_element(By.ID, "wm-chat").shadow_root

    def q(self, css):
        return self.root().find_element(By.CSS_SELECTOR, css)

    def qa(self, css):
        return self.root().find_elements(By.CSS_SELECTOR, css)

    def js(self, body, *args):
        """Runs `body` with `root` (the shadow root) and `panel` bound."""
        return self.d.execute_script(
            "const root = document.getElementById('wm-chat').shadowRoot;"
            "const panel = root.querySelector('[role=dialog]');" + body, *args)

    def loaded(self):
        until(self.d, lambda d: d.execute_script(
            "const h = document.getElementById('wm-chat');"
            "return !!(h && h.shadowRoot && h.shadowRoot.querySelector('button[aria-expanded]'))"),
            "the widget (#wm-chat with a shadow root and its launcher) never appeared")

    def launcher(self):
        return self.q("button[aria-expanded]")

    def is_open(self):
        return self.js("return !panel.hidden && panel.getBoundingClientRect().height > 0")

    def open(self):
        if not self.is_open():
            self.launcher().click()
        until(self.d, lambda d: self.is_open(), "the panel did not open")
        if self.launcher().get_attribute("aria-expanded") != "true":
            raise StepFailed("the open panel's launcher is not aria-expanded=true")

    def active(self):
        """What has the focus inside the shadow root: 'tag.class[aria-label]'."""
        return self.js("const a = root.activeElement; return a ? a.tagName.toLowerCase() + '.' + "
                       "a.className + '[' + (a.getAttribute('aria-label') || '') + ']' : null")

    def messages(self):
        """Every message bubble: (mine, its text content, img srcs, button titles)."""
        return self.js("""
            return [...root.querySelectorAll('[role=log] .ms > .m')].map(m => ({
              mine: m.classList.contains('i'), text: m.textContent,
              imgs: [...m.querySelectorAll('img')].map(i => ({src: i.src, alt: i.alt,
                       loaded: i.complete && i.naturalWidth > 0})),
              buttons: [...m.querySelectorAll('button')].map(b => b.textContent)}));""")

    def wait_message(self, pred, what, timeout=WAIT):
        def seen(d):
            found = [m for m in self.messages() if pred(m)]
            return found[-1] if found else False
        try:
            return WebDriverWait(self.d, timeout, poll_frequency=0.2).until(seen)
        except TimeoutException:
            got = [(m["mine"], m["text"][:80]) for m in self.messages()]
            raise StepFailed(f"the widget never showed {what} in {timeout}s (it shows {got})")

    def alert(self):
        return self.js("const a = root.querySelector('[role=alert]');"
                       "return a && !a.hidden ? a.textContent : ''")

    def token(self):
        return self.d.execute_script(f"return localStorage.getItem({json.dumps('wm:' + S.site)})")


def axe_widget(driver, name):
    """axe-core on the widget only (its shadow root), keeping the violations under `name`."""
    driver.set_script_timeout(60)
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(AXE_JS.read_text(encoding="utf-8"))
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run({include: [['#wm-chat']]}, {resultTypes: ['violations']})
          .then(r => done({violations: r.violations.map(v => ({
              id: v.id, impact: v.impact, help: v.help,
              targets: v.nodes.map(n => JSON.stringify(n.target))})),
              passes: r.passes.length}))
          .catch(e => done({error: String(e)}));
    """)
    if "error" in result:
        raise StepFailed(f"axe.run failed: {result['error']}")
    S.axed += 1
    for v in result["violations"]:
        S.violations.append(dict(v, page=name))
    return result


# --------------------------------------------------------------------------- browsers

def start_browser(lang="es-ES", size=WIDE):
    """A fresh headless Chromium (its own profile: its own localStorage)."""
    os.environ.setdefault("SE_OFFLINE", "true")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
              f"--window-size={size[0]},{size[1]}", f"--lang={lang}"):
        opts.add_argument(a)
    opts.add_experimental_option("prefs", {"intl.accept_languages": lang})
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    d.set_window_size(*size)
    d.set_page_load_timeout(60)
    d.wm_name = f"browser{len(S.drivers) + 1}"
    S.drivers.append(d)
    return d


def quit_browser(d):
    if d in S.drivers:
        S.drivers.remove(d)
    try:
        d.quit()
    except WebDriverException:
        pass


def visitor_page(d, base=None, **extra):
    d.get(host_url(base, **extra))
    w = Widget(d)
    w.loaded()
    return w


# --------------------------------------------------------------------------- the flow

def a_visitor_writes():
    d = S.visitor = start_browser()
    d.wm_name = "visitor"
    w = visitor_page(d)
    if w.token():
        raise StepFailed("a fresh profile already has a visitor token")
    if S.mock and mock("GET", "state")["visitors"]:
        raise StepFailed("loading the page created a visitor (a crawler would create one)")
    lang = d.execute_script("return navigator.language")
    label = w.launcher().get_attribute("aria-label")
    if lang.startswith("es") and label != "Chatea con nosotros":
        raise StepFailed(f"navigator.language is {lang!r} but the launcher says {label!r}")
    # The host page's `button { display: none !important }` and `* { font-size: 40px }` do
    # not reach inside the shadow root.
    if not w.launcher().is_displayed():
        raise StepFailed("the host page's CSS hides the launcher")
    shot(d, "visitor-closed")
    w.open()
    until(d, lambda _: (w.active() or "").startswith("textarea"),
          f"the focus did not move into the panel's textarea (it is on {w.active()})")
    panel = w.q("[role=dialog]")
    if not panel.get_attribute("aria-label"):
        raise StepFailed("the dialog has no aria-label")
    size = w.js("const r = panel.getBoundingClientRect(); return [r.width, r.height, "
                "getComputedStyle(root.querySelector('textarea')).fontSize]")
    if not (360 <= size[0] <= 400 and 500 <= size[1] <= 580) or size[2] != "15px":
        raise StepFailed(f"the wide panel is {size[0]}x{size[1]} with {size[2]} text "
                         f"(expected ~380x560, 15px: the host's CSS must not reach it)")
    log = w.q("[role=log]")
    if log.get_attribute("aria-live") != "polite":
        raise StepFailed("the message list is not role=log aria-live=polite")
    # Keyboard: Escape closes and gives the focus back to the launcher; Enter opens again.
    w.q("textarea").send_keys(Keys.ESCAPE)
    until(d, lambda _: not w.is_open(), "Escape did not close the panel")
    until(d, lambda _: (w.active() or "").startswith("button.l"),
          f"closing did not give the focus back to the launcher (it is on {w.active()})")
    if w.launcher().get_attribute("aria-expanded") != "false":
        raise StepFailed("the closed panel's launcher is not aria-expanded=false")
    d.switch_to.active_element.send_keys(Keys.ENTER)
    until(d, lambda _: w.is_open(), "Enter on the launcher did not open the panel")
    until(d, lambda _: (w.active() or "").startswith("textarea"), "the focus is not in the textarea")
    ta = w.q("textarea")
    ta.send_keys("una", Keys.SHIFT, Keys.ENTER, Keys.SHIFT, "dos")
    if ta.get_attribute("value") != "una\ndos":
        raise StepFailed(f"Shift+Enter did not make a new line: {ta.get_attribute('value')!r}")
    ta.clear()
    if S.mock and mock("GET", "state")["visitors"]:
        raise StepFailed("opening the panel created a visitor before anything was sent")
    ta.send_keys(FIRST_TEXT, Keys.ENTER)
    S.sent_at = time.monotonic()
    w.wait_message(lambda m: m["mine"] and FIRST_TEXT in m["text"] and "Enviando" not in m["text"],
                   f"{FIRST_TEXT!r} sent")
    if ta.get_attribute("value"):
        raise StepFailed("the textarea was not emptied after sending")
    if not w.token():
        raise StepFailed(f"no visitor token in localStorage['wm:{S.site}'] after sending")
    with tempfile.NamedTemporaryFile(suffix=".png", prefix="foto-", delete=False) as f:
        f.write(png())
    try:
        w.q("input[type=file]").send_keys(f.name)
        name = Path(f.name).name
        w.wait_message(lambda m: m["mine"] and any(i["loaded"] and i["alt"] == name
                                                  for i in m["imgs"]),
                       f"the attached image {name} loaded, with alt={name!r}")
    finally:
        os.unlink(f.name)
    mine = [m for m in w.messages() if m["mine"]]
    if len(mine) != 2:
        raise StepFailed(f"the visitor's side shows {len(mine)} own messages, not 2: {mine}")
    note = leave_email(w)
    shot(d, "visitor-sent")
    axe_widget(d, "panel-after-sending")
    if S.mock:
        conv = conversation_with(FIRST_TEXT)
        kinds = [m["type"] for m in conv["messages"]]
        if kinds != ["TEXT", "IMAGE"]:
            raise StepFailed(f"the mock holds {kinds}, not a TEXT then an IMAGE")
        S.conversation = conv["key"]
    return note


def leave_email(w):
    """The email prompt: the mock asks at once (emailAfterMinutes 0); a real server may not."""
    forms = w.qa("form.em")
    if not forms:
        raise StepFailed("the widget has no email form")
    try:
        WebDriverWait(w.d, 3 if not S.mock else WAIT, 0.2).until(lambda _: forms[0].is_displayed())
    except TimeoutException:
        if S.mock:
            raise StepFailed("emailAfterMinutes is 0 but no email prompt showed after sending")
        return "no email prompt (emailAfterMinutes is not 0)"
    address = "visitante@example.com"
    field = w.q("form.em input[type=email]")
    field.send_keys(address, Keys.ENTER)
    until(w.d, lambda _: address in w.js("return root.querySelector('[role=status]').textContent"),
          "no thanks after leaving the email")
    if w.is_open() and w.qa("form.em") and w.q("form.em").is_displayed():
        raise StepFailed("the email form still shows after it was sent")
    if S.mock:
        conv = conversation_with(FIRST_TEXT)
        if conv["email"] != address:
            raise StepFailed(f"the mock got email {conv['email']!r}")
    return f"email {address} left"


def conversation_with(text):
    for c in mock("GET", "state")["conversations"]:
        if any(m.get("text") == text for m in c["messages"]):
            return c
    raise StepFailed(f"the mock has no conversation with {text!r}")


# ------------------------------------------------------------------ the agent (console)

def b_agent_replies():
    if S.mock:
        # The panel closed (the public API): a reply marks the launcher.
        w = Widget(S.visitor)
        S.visitor.execute_script("wm.close()")
        until(S.visitor, lambda _: not w.is_open(), "wm.close() did not close the panel")
        mock("POST", "typing", {"conversation": S.conversation})
        until(S.visitor, lambda _: w.js("return !root.querySelector('.ty').hidden"),
              "the typing event showed no 'typing' line")
        mock("POST", "agent_reply", {"conversation": S.conversation, "text": REPLY_TEXT})
        until(S.visitor, lambda _: "mensaje nuevo" in w.launcher().get_attribute("aria-label"),
              "a reply to a closed panel did not mark the launcher")
        # Text is text: markup from the server is shown, never run.
        mock("POST", "agent_reply", {"conversation": S.conversation, "text": HOSTILE_TEXT})
        mock("POST", "agent_reply", {"conversation": S.conversation, "text": BUTTON_TEXT,
                                     "buttons": [BUTTON_TITLE]})
        S.visitor.execute_script("wm.open()")
        return "simulated by the mock's /_mock/agent_reply; wm.close/open; unread mark"
    a = S.agent = start_browser(lang="en-US")
    a.wm_name = "agent"
    agent_sign_in(a)
    waited = agent_open_conversation(a)
    until(a, lambda d: FIRST_TEXT in d.find_element(By.ID, "thread").text,
          f"the thread does not show {FIRST_TEXT!r}")
    until(a, lambda d: d.execute_script(
        "const i = document.querySelector('#thread img');"
        "return i && i.complete && i.naturalWidth > 0"), "the thread does not show the image")
    shot(a, "agent-thread")
    agent_reply(a, REPLY_TEXT)
    agent_reply(a, BUTTON_TEXT, BUTTON_TITLE)
    shot(a, "agent-replied")
    return f"the inbox listed it {waited:.1f}s after the visitor wrote"


def agent_sign_in(a):
    a.get(S.console)
    until(a, lambda d: urlparse(d.current_url).path.rstrip("/").endswith("/sign-in"),
          "the console did not send a signed-out browser to its sign-in page")
    key = a.find_element(By.ID, "api-key")
    key.send_keys(S.key)
    a.find_element(By.XPATH, "//button[normalize-space()='Sign in']").click()
    until(a, lambda d: urlparse(d.current_url).path.rstrip("/") == urlparse(S.console).path.rstrip("/"),
          "signing in with $WM_KEY did not land on the console's home")


def agent_open_conversation(a):
    """The inbox lists the website conversation (the list itself is not live: it is read
    again each second); opens the one whose thread holds the visitor's text."""
    deadline = time.monotonic() + 20
    while True:
        a.get(S.console + "/inbox")
        links = [l.get_attribute("href") for l in a.find_elements(
            By.XPATH, "//tbody/tr[td[3][normalize-space()='Website']]/td[1]/a")]
        for href in links[:5]:
            a.get(href)
            if FIRST_TEXT in a.find_element(By.ID, "thread").text:
                return time.monotonic() - S.sent_at
        if time.monotonic() > deadline:
            raise StepFailed(f"no Website conversation with {FIRST_TEXT!r} in the inbox "
                             f"({len(links)} Website row(s))")
        time.sleep(1)


def agent_reply(a, text, buttons=""):
    a.find_element(By.ID, "reply-text").send_keys(text)
    if buttons:
        label = a.find_element(By.XPATH, "//label[@for='reply-buttons']").text.strip()
        if label != "Buttons (optional)":
            raise StepFailed(f"the buttons field is labelled {label!r}")
        a.find_element(By.ID, "reply-buttons").send_keys(buttons)
    old = a.find_element(By.TAG_NAME, "html")
    a.find_element(By.XPATH, "//button[normalize-space()='Send reply']").click()
    until(a, lambda d: old != d.find_element(By.TAG_NAME, "html")
          and d.execute_script("return document.readyState") == "complete",
          "sending the reply loaded no page")
    errors = [f.text for f in a.find_elements(By.CSS_SELECTOR, ".flash.error")]
    if errors:
        raise StepFailed(f"the reply was refused: {errors}")
    until(a, lambda d: text in d.find_element(By.ID, "thread").text,
          f"the thread does not show the reply {text!r}")


# ------------------------------------------------------------------ live, reload, tabs

def c_visitor_sees_live():
    w = Widget(S.visitor)
    w.wait_message(lambda m: not m["mine"] and REPLY_TEXT in m["text"], f"the reply {REPLY_TEXT!r}")
    got = w.wait_message(lambda m: not m["mine"] and BUTTON_TEXT in m["text"] and m["buttons"],
                         "the reply with a button")
    if got["buttons"] != [BUTTON_TITLE]:
        raise StepFailed(f"the reply's buttons are {got['buttons']}, not [{BUTTON_TITLE!r}]")
    if S.mock:
        got = w.wait_message(lambda m: HOSTILE_TEXT in m["text"], "the markup reply as text")
        if got["imgs"] or S.visitor.execute_script("return window.pwned !== undefined"):
            raise StepFailed("markup in a message's text was rendered as HTML")
    shot(S.visitor, "visitor-replies")
    btn = [b for b in w.qa(".m button") if b.text == BUTTON_TITLE][0]
    btn.click()
    w.wait_message(lambda m: m["mine"] and BUTTON_TITLE in m["text"], "the tapped button's answer")
    if S.mock:
        conv = conversation_with(FIRST_TEXT)
        last = conv["messages"][-1]
        if (last["direction"], last["type"], last["text"]) != ("INBOUND", "INTERACTIVE", BUTTON_TITLE):
            raise StepFailed(f"the mock's last message is {last}")
        # A status change comes as the same message again: updated in place, not added.
        before = len(w.messages())
        mock("POST", "read", {"conversation": S.conversation})
        w.wait_message(lambda m: m["mine"] and FIRST_TEXT in m["text"] and "Visto" in m["text"],
                       "the READ status of the first message ('Visto')")
        if len(w.messages()) != before:
            raise StepFailed(f"a status event added bubbles ({before} -> {len(w.messages())})")
        note = "the tap reached the mock; READ updated in place"
    else:
        # The agent's own message lists the button too: the tap is a customer's message.
        until(S.agent, lambda d: any(BUTTON_TITLE in li.text for li in d.find_elements(
                  By.CSS_SELECTOR, "#thread li.msg.INBOUND")),
              f"the agent's thread (not reloaded) never showed the tap {BUTTON_TITLE!r}", timeout=20)
        shot(S.agent, "agent-sees-tap")
        note = "the agent's live thread showed the tap"
    shot(S.visitor, "visitor-tapped")
    return note


def d_visitor_reloads():
    d = S.visitor
    w = Widget(d)
    before = [m["text"] for m in w.messages()]
    cursor = d.execute_script(f"return sessionStorage.getItem({json.dumps('wm:' + S.site + ':last')})")
    if not cursor:
        raise StepFailed("no last event id in sessionStorage")
    d.refresh()
    w.loaded()
    w.open()
    until(d, lambda _: len(w.messages()) >= len(before),
          f"after the reload the history shows {len(w.messages())} of {len(before)} messages")
    time.sleep(1)  # the resumed stream may bring more: none of it twice
    after = [m["text"] for m in w.messages()]
    if after != before:
        raise StepFailed(f"after the reload the history differs:\n  before {before}\n  after  {after}")
    if not any(i["loaded"] for m in w.messages() for i in m["imgs"]):
        raise StepFailed("after the reload the image does not load")
    shot(d, "visitor-reloaded")
    # A second tab of the same visitor: its own stream, the same conversation.
    first = d.current_window_handle
    d.switch_to.new_window("tab")
    w2 = visitor_page(d)
    w2.open()
    until(d, lambda _: len(w2.messages()) == len(before), "the second tab does not show the history")
    text = "Y otra cosa: " + HOSTILE_TEXT
    w2.q("textarea").send_keys(text, Keys.ENTER)
    w2.wait_message(lambda m: m["mine"] and text in m["text"] and "Enviando" not in m["text"],
                    "the second tab's message sent")
    d.switch_to.window(first)
    got = w.wait_message(lambda m: m["mine"] and text in m["text"],
                         "the second tab's message, in the first")
    if got["imgs"] or d.execute_script("return window.pwned !== undefined"):
        raise StepFailed("markup the visitor wrote was rendered as HTML")
    if S.mock:
        mock("POST", "agent_reply", {"conversation": S.conversation, "text": "Para las dos pestañas"})
        w.wait_message(lambda m: "Para las dos pestañas" in m["text"], "a reply in the first tab")
        d.switch_to.window([h for h in d.window_handles if h != first][0])
        w2.wait_message(lambda m: "Para las dos pestañas" in m["text"], "a reply in the second tab")
    d.switch_to.window([h for h in d.window_handles if h != first][0])
    d.close()
    d.switch_to.window(first)
    counts = {}
    for m in w.messages():
        counts[m["text"]] = counts.get(m["text"], 0) + 1
    twice = [t for t, n in counts.items() if n > 1]
    if twice:
        raise StepFailed(f"messages shown twice: {twice}")
    return f"{len(before)} messages after the reload, a second tab in step"


# ------------------------------------------------------------------ identity

def e_identified_visitor():
    ident = f"user-{secrets.token_hex(4)}"
    good = identifier_hash(ident)
    status, answer = api("POST", "/identify", {"identifier": ident, "identifierHash": good})
    if status != 200 or not (answer or {}).get("visitorToken"):
        raise StepFailed(f"POST /identify with the right hash answered {status} {answer!r}")
    token = answer["visitorToken"]
    # An earlier conversation longer than a page: its first message is behind "earlier".
    for text in [IDENTITY_TEXT] + [f"Mensaje {i:02d}" for i in range(1, EXTRA + 1)]:
        visitor_writes(token, text)
    status, answer = api("POST", "/identify", {"identifier": ident, "identifierHash": "0" * 64})
    if status != 401:
        raise StepFailed(f"POST /identify with a wrong hash answered {status}, not 401")

    # 1. A fresh profile whose page queues wm.identify before the script loads (window.wm.q).
    d = start_browser()
    try:
        w = visitor_page(d, identifier=ident, hash=good)
        w.open()
        w.wait_message(lambda m: f"Mensaje {EXTRA}" in m["text"], "the identity's earlier conversation")
        until(d, lambda _: len(w.messages()) == 50,
              f"the first page of history shows {len(w.messages())} messages, not 50")
        if any(IDENTITY_TEXT in m["text"] for m in w.messages()):
            raise StepFailed("the oldest message shows before asking for earlier ones")
        earlier = w.q("button.mo")
        if not earlier.is_displayed():
            raise StepFailed("no 'earlier messages' button with more history on the server")
        shot(d, "identified-queued")
        earlier.click()
        w.wait_message(lambda m: IDENTITY_TEXT in m["text"], "the oldest message after 'earlier'")
        texts = [m["text"] for m in w.messages()]
        want = [IDENTITY_TEXT] + [f"Mensaje {i:02d}" for i in range(1, EXTRA + 1)]
        if len(texts) != len(want) or not all(t.endswith(x) for t, x in zip(texts, want)):
            raise StepFailed(f"the history is not {len(want)} messages in order: {texts[:8]} ...")
        if w.q("button.mo").is_displayed():
            raise StepFailed("'earlier messages' still shows with nothing earlier")
        shot(d, "identified-earlier")
    finally:
        quit_browser(d)

    # 2. Another fresh profile: a wrong hash changes nothing; then the right one, called
    #    after load, replaces the token, reloads the history and reconnects the stream.
    d = start_browser()
    try:
        w = visitor_page(d)
        w.open()
        ok = d.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "wm.identify({identifier: arguments[0], identifierHash: arguments[1]}).then(done)",
            ident, "ab" * 32)
        if ok is not False:
            raise StepFailed(f"wm.identify with a wrong hash resolved {ok!r}, not false")
        time.sleep(1.5)
        if any(IDENTITY_TEXT in m["text"] for m in w.messages()) or w.token():
            raise StepFailed("a wrong hash showed the identity's conversation or stored a token")
        shot(d, "identify-wrong-hash")
        ok = d.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "wm.identify({identifier: arguments[0], identifierHash: arguments[1]}).then(done)",
            ident, good)
        if ok is not True:
            raise StepFailed(f"wm.identify with the right hash resolved {ok!r}")
        w.wait_message(lambda m: f"Mensaje {EXTRA}" in m["text"], "the identity's conversation")
        # Live: the same identity writing from elsewhere (another device) shows here.
        time.sleep(1)
        elsewhere = "Escrito desde el móvil"
        visitor_writes(token, elsewhere)
        w.wait_message(lambda m: elsewhere in m["text"], "the identity's message from elsewhere, live")
        shot(d, "identify-right-hash")
    finally:
        quit_browser(d)
    return f"identity {ident}: queued and direct identify; a wrong hash showed nothing"


# ------------------------------------------------------------------ a site not allowed

def f_origin_not_allowed():
    before = mock("GET", "state")["visitors"] if S.mock else None
    status, answer = api("POST", "/visitors", from_url=S.bad_host)
    if status != 403:
        raise StepFailed(f"POST /visitors from {origin(S.bad_host)} answered {status}, not 403")
    d = start_browser()
    try:
        w = visitor_page(d, S.bad_host)
        w.open()
        until(d, lambda _: w.alert(), "the widget on a page not allowed shows no error")
        alert = w.alert()
        if not w.qa("textarea[disabled]"):
            raise StepFailed("the composer stays usable on a page that may not embed the chat")
        refused = d.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0], {method: 'POST', credentials: 'omit'})
              .then(r => done('answered ' + r.status)).catch(e => done('refused: ' + e));
        """, f"{S.wm}/webchat/v1/{S.site}/visitors")
        if not refused.startswith("refused"):
            raise StepFailed(f"the page not allowed could call POST /visitors: {refused}")
        shot(d, "origin-not-allowed")
    finally:
        quit_browser(d)
    if S.mock and mock("GET", "state")["visitors"] != before:
        raise StepFailed("a page not allowed created a visitor")
    return f"the widget says {alert!r}; the browser refused the API call"


# ------------------------------------------------------------------ accessibility, phone

def g_axe():
    d = S.visitor
    w = Widget(d)
    w.open()
    result = axe_widget(d, "panel-with-conversation")
    serious = [v for v in S.violations if v["impact"] in ("serious", "critical")]
    if serious:
        raise StepFailed("axe: " + "; ".join(f"{v['page']}: {v['id']} [{v['impact']}] {v['help']} "
                                              f"{v['targets'][:3]}" for v in serious))
    # Every control has a name.
    unnamed = w.js("""return [...root.querySelectorAll('button, textarea, input:not([hidden])')]
        .filter(e => !(e.getAttribute('aria-label') || e.textContent.trim() ||
                       (e.id && root.querySelector('label[for=' + e.id + ']'))))
        .map(e => e.outerHTML.slice(0, 80))""")
    if unnamed:
        raise StepFailed(f"controls without a name: {unnamed}")
    return f"{result['passes']} rules pass, {len(S.violations)} minor violation(s) in {S.axed} run(s)"


def h_phone():
    d = S.visitor
    d.set_window_size(*PHONE)
    try:
        w = Widget(d)
        d.refresh()
        w.loaded()
        w.open()
        box = w.js("const r = panel.getBoundingClientRect();"
                   "return [r.left, r.top, r.right, r.bottom, innerWidth, innerHeight,"
                   " document.documentElement.clientWidth]")
        left, top, right, bottom, vw, vh, cw = box
        if vw > PHONE[0] + 20:
            raise StepFailed(f"the window is {vw}px wide, not ~{PHONE[0]}")
        if left < 0 or top < 0 or right > vw + 0.5 or bottom > vh + 0.5:
            raise StepFailed(f"the panel {box[:4]} does not fit the {vw}x{vh} viewport")
        if right - left < cw - 1:
            raise StepFailed(f"on a phone the panel is {right - left}px wide, not the full {cw}px")
        ta = w.q("textarea")
        if not ta.is_displayed():
            raise StepFailed("the textarea is not shown on a phone")
        shot(d, "visitor-phone")
        axe_widget(d, "panel-phone")
        serious = [v for v in S.violations if v["impact"] in ("serious", "critical")]
        if serious:
            raise StepFailed(f"axe on the phone layout: {serious}")
        return f"panel {right - left:.0f}x{bottom - top:.0f} in a {vw}x{vh} viewport"
    finally:
        d.set_window_size(*WIDE)


def i_languages():
    d = start_browser(lang="pt-BR")
    try:
        seen = []
        for extra, want in (({}, ("Converse conosco", "Escreva uma mensagem…", "Fechar chat")),
                            ({"locale": "en"}, ("Chat with us", "Write a message…", "Close chat"))):
            w = visitor_page(d, **extra)
            w.open()
            got = (w.launcher().get_attribute("aria-label"),
                   w.q("textarea").get_attribute("placeholder"),
                   w.q(".hd button").get_attribute("aria-label"))
            if got != want:
                raise StepFailed(f"with {extra or 'navigator.language pt-BR'} the widget says {got}, "
                                 f"not {want}")
            seen.append(got[0])
        shot(d, "english")
    finally:
        quit_browser(d)
    return f"pt-BR from navigator.language, en from wmSettings.locale: {seen}"


def k_resilience():
    """Mock only: a lost answer, a lost stream, a revoked token."""
    d = S.visitor
    w = Widget(d)
    w.open()
    # A POST whose answer is lost: retried with the same clientId, shown once.
    posts = mock("GET", "state")["posts"]
    mock("POST", "lose", {"count": 1})
    text = "¿Llegó este mensaje?"
    w.q("textarea").send_keys(text, Keys.ENTER)
    until(d, lambda _: mock("GET", "state")["posts"] >= posts + 2,
          "the message whose answer was lost was not sent again")
    time.sleep(0.5)
    mine = [m for m in w.messages() if text in m["text"]]
    stored = [m for m in conversation_with(FIRST_TEXT)["messages"] if m["text"] == text]
    if len(mine) != 1 or len(stored) != 1 or "Enviando" in mine[0]["text"]:
        raise StepFailed(f"after a lost answer the widget shows {len(mine)} and the mock holds "
                         f"{len(stored)} (want 1 and 1, sent): {mine}")
    # The stream drops; a reply meanwhile comes once when it is back (Last-Event-ID).
    mock("POST", "drop_streams")
    mock("POST", "agent_reply", {"conversation": S.conversation, "text": "Mientras tanto"})
    until(d, lambda _: "Reconectando" in w.js("return root.querySelector('[role=status]').textContent"),
          "a lost stream showed no 'reconnecting'")
    shot(d, "reconnecting")
    w.wait_message(lambda m: "Mientras tanto" in m["text"], "the reply sent while the stream was down")
    until(d, lambda _: w.js("return root.querySelector('[role=status]').hidden"),
          "'reconnecting' still shows once the stream is back")
    time.sleep(0.5)
    if len([m for m in w.messages() if "Mientras tanto" in m["text"]]) != 1:
        raise StepFailed("the reply sent while the stream was down shows twice")
    # A token the server no longer takes: the stream fails for good, the token is dropped.
    visitors = mock("GET", "state")["visitors"]
    mock("POST", "revoke")
    until(d, lambda _: w.token() is None, "a revoked token (401) was not dropped", timeout=30)
    until(d, lambda _: not w.messages(), "the revoked visitor's messages still show")
    w.q("textarea").send_keys("De nuevo", Keys.ENTER)
    w.wait_message(lambda m: m["mine"] and "De nuevo" in m["text"] and "Enviando" not in m["text"],
                   "a message after the token was dropped")
    if mock("GET", "state")["visitors"] != visitors + 1 or not w.token():
        raise StepFailed("writing again after the drop did not make a new visitor")
    shot(d, "after-revoke")
    return "lost answer retried once; resumed stream; 401 dropped the token"


def j_tabs_before_token():
    """Two tabs of a new visitor, neither has written: the first message of one makes the
    token for both, and the other tab joins the same conversation live."""
    d = start_browser()
    visitors = mock("GET", "state")["visitors"] if S.mock else None
    try:
        w1 = visitor_page(d)
        w1.open()
        one = d.current_window_handle
        d.switch_to.new_window("tab")
        w2 = visitor_page(d)
        w2.open()
        w2.q("textarea").send_keys("Desde la pestaña dos", Keys.ENTER)
        w2.wait_message(lambda m: "pestaña dos" in m["text"] and "Enviando" not in m["text"],
                        "tab two's first message sent")
        d.switch_to.window(one)
        w1.wait_message(lambda m: "pestaña dos" in m["text"], "tab two's message in tab one")
        w1.q("textarea").send_keys("Y desde la uno", Keys.ENTER)
        w1.wait_message(lambda m: "desde la uno" in m["text"] and "Enviando" not in m["text"],
                        "tab one's message sent")
        d.switch_to.window([h for h in d.window_handles if h != one][0])
        w2.wait_message(lambda m: "desde la uno" in m["text"], "tab one's message in tab two")
        if S.mock and mock("GET", "state")["visitors"] != visitors + 1:
            raise StepFailed("two tabs made two visitors")
        shot(d, "two-tabs")
    finally:
        quit_browser(d)
    return "one visitor, one conversation, both tabs live"


FLOW = [
    ("a) visitor writes and attaches", a_visitor_writes),
    ("b) agent replies", b_agent_replies),
    ("c) visitor sees replies live, taps", c_visitor_sees_live),
    ("d) visitor reloads: history", d_visitor_reloads),
    ("e) identified visitor", e_identified_visitor),
    ("f) origin not allowed", f_origin_not_allowed),
    ("g) axe in the shadow root", g_axe),
    ("h) 360 px phone", h_phone),
    ("i) languages", i_languages),
    ("j) two tabs before the first message", j_tabs_before_token),
]
MOCK_ONLY = [("k) lost answer, lost stream, revoked token", k_resilience)]


# --------------------------------------------------------------------------- running

class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve_folder(url):
    """Serves this folder (host.html) at `url`'s port when nothing answers there."""
    try:
        urllib.request.urlopen(url.rstrip("/") + "/host.html", timeout=2).close()
        return
    except (urllib.error.URLError, OSError):
        pass
    u = urlparse(url)
    if u.hostname not in ("127.0.0.1", "localhost"):
        sys.exit(f"drive.py: nothing serves host.html at {url}")
    srv = ThreadingHTTPServer((u.hostname, u.port), partial(Quiet, directory=str(HERE)))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    S.servers.append(srv)


def start_mock():
    sys.path.insert(0, str(HERE))
    sys.dont_write_bytecode = True  # no __pycache__ in the work tree
    import mock_server  # noqa: E402 (beside this file)
    wm_port, host_port, bad_port = MOCK_PORTS
    S.wm = f"http://127.0.0.1:{wm_port}"
    S.host = f"http://127.0.0.1:{host_port}"
    S.bad_host = f"http://127.0.0.1:{bad_port}"
    S.site = MOCK_SITE
    S.secret = os.environ.get("WM_WEBCHAT_SECRET", "webchat-secret")
    S.mock_srv = mock_server.serve(wm_port, site=S.site, secret=S.secret, allowed=[S.host],
                                   email_after=0, keepalive=15, name="Acme",
                                   greeting="¡Hola! ¿En qué podemos ayudarte?", color="#0a7cff")
    S.servers.append(S.mock_srv)


def report_failure(step, err):
    print(f"FAIL {step}: {err}")
    if not isinstance(err, StepFailed):
        traceback.print_exception(err, file=sys.stdout)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", step).strip("-")
    for d in S.drivers:
        try:
            print(f"  {d.wm_name} url: {d.current_url}")
            out = S.artifacts / f"FAILED-{safe}-{d.wm_name}.png"
            d.save_screenshot(str(out))
            print(f"  {d.wm_name} screenshot: {out}")
            for entry in d.get_log("browser"):
                if entry.get("level") in ("SEVERE", "WARNING"):
                    print(f"  {d.wm_name} console: {entry['level']} {entry['message'][:300]}")
        except WebDriverException as e:
            print(f"  ({d.wm_name} could not tell more: {e.msg})")


def report_violations():
    if not S.violations:
        print(f"axe: no violations in {S.axed} run(s) on the widget")
        return True
    print(f"axe: {len(S.violations)} violation(s) in {S.axed} run(s) on the widget")
    for v in S.violations:
        print(f"  {v['page']}: {v['id']} [{v['impact']}] {v['help']} -- {', '.join(v['targets'][:3])}")
    return not [v for v in S.violations if v["impact"] in ("serious", "critical")]


def run(steps):
    for name, fn in steps:
        S.step = name
        started = time.monotonic()
        try:
            note = fn()
        except Exception as e:  # noqa: BLE001 (any failure: report where and stop)
            report_failure(name, e)
            report_violations()
            return 1
        took = time.monotonic() - started
        print(f"ok  {name} [{took:.1f}s]" + (f" ({note})" if note else ""), flush=True)
    return 0 if report_violations() else 1


def env(name):
    v = os.environ.get(name)
    if not v:
        sys.exit(f"drive.py: {name} is not set")
    return v


def main():
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mock", action="store_true",
                    help="start .ci/webchat/mock_server.py and run against it (no console)")
    ap.add_argument("--only", help="comma-separated step letters to run (a is always run)")
    args = ap.parse_args()
    if not AXE_JS.is_file():
        sys.exit(f"drive.py: {AXE_JS} is missing: run `npm ci` in {AXE_JS.parents[2]}")
    S.artifacts = Path(os.environ.get("WM_ARTIFACTS", "target/webchat-artifacts"))
    S.artifacts.mkdir(parents=True, exist_ok=True)
    S.mock = args.mock
    if S.mock:
        start_mock()
    else:
        S.wm = env("WM_URL").rstrip("/")
        S.site, S.secret = env("WM_SITE"), env("WM_WEBCHAT_SECRET")
        S.host, S.bad_host = env("WM_HOST_URL").rstrip("/"), env("WM_BAD_HOST_URL").rstrip("/")
        S.console, S.key = env("WM_CONSOLE_URL").rstrip("/"), env("WM_KEY")
    serve_folder(S.host)
    serve_folder(S.bad_host)
    steps = FLOW + (MOCK_ONLY if S.mock else [])
    if args.only:
        keep = set(args.only.split(",")) | {"a"}
        steps = [s for s in steps if s[0][0] in keep]
    print(f"==> the website chat in headless Chromium against {'the mock at ' if S.mock else ''}"
          f"{S.wm} (site {S.site}); host page {S.host}, not allowed {S.bad_host}")
    try:
        rc = run(steps)
    finally:
        for d in list(S.drivers):
            quit_browser(d)
        for srv in S.servers:
            srv.shutdown()
    print(f"screenshots in {S.artifacts}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
