#!/usr/bin/env python3
"""The wm console in a real browser: headless Chromium driven by Selenium through the flow
of the console's contract (sign in, a webhook, a contact, a CSV import, a campaign sent to
COMPLETED, the inbox, a webhook retry, every other page, sign out).

On each page it saves a full-page screenshot NN-name.png in $WM_ARTIFACTS and runs axe-core
on it; at the end it prints every accessibility violation and fails when one is serious or
critical. A failed step names itself, prints the URL, the page's h1 and flash messages, and
saves FAILED-<step>.png.

    WM_CONSOLE_URL=http://127.0.0.1:18322/console WM_API_URL=http://127.0.0.1:18322/api/v1 \
    WM_KEY=... WM_ADMIN_TOKEN=console-admin WM_ORG_ID=... WM_ARTIFACTS=target/console-artifacts \
    python3 .ci/console/drive.py

    python3 .ci/console/drive.py --self-check URL   # browser + screenshot + axe on one page

.ci/console.sh starts the demo server and runs this.
"""

import argparse
import base64
import csv
import json
import math
import struct
import os
import re
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlparse

from selenium import webdriver
from selenium.common.exceptions import (
    ElementClickInterceptedException,
    ElementNotInteractableException,
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

HERE = Path(__file__).resolve().parent
AXE_JS = HERE / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WIDE = (1280, 900)
NARROW = (390, 844)
WAIT = 15  # seconds for an element or a page load (a debug build on 2 cores)
# A webhook whose deliveries fail at once: nothing listens on the discard port (the server
# runs with --allow-insecure-webhooks so a loopback http:// target is accepted).
WEBHOOK_URL = "http://127.0.0.1:9/wm"
NAV_LINKS = ["Home", "Contacts", "Import", "Campaigns", "Inbox",
             "Webhooks", "Templates", "Numbers", "Automations", "Reports"]

# The run's state: the browser, where to write, what earlier steps made for later ones.
S = SimpleNamespace(driver=None, console="", api="", key="", admin_token="", org="",
                    artifacts=Path("."), shots=0, axed=0, violations=[], step="start",
                    webhook_id=None, contact_id=None, contact_name=None)


class StepFailed(Exception):
    """A check of the flow that did not hold."""


# --------------------------------------------------------------------------- helpers

def xq(text):
    """`text` as an XPath string literal (the contract's texts hold no quote of both kinds)."""
    return f'"{text}"' if "'" in text else f"'{text}'"


# What chromedriver says when it reads a node of a document that a navigation or a live part
# has just replaced ("unknown error: unhandled inspector error"): only "not yet".
NODE_GONE = "does not belong to the document"


def node_gone(e):
    return isinstance(e, WebDriverException) and NODE_GONE in str(e)


class wait:
    """WebDriverWait that also reads "a node of a replaced document" as "not yet".

    A page that refreshes itself (an import, a running campaign) or has just been navigated
    to replaces its elements under us: a stale or missing element only means "not yet"."""

    def __init__(self, timeout=WAIT):
        self.inner = WebDriverWait(S.driver, timeout, poll_frequency=0.25, ignored_exceptions=(
            NoSuchElementException, StaleElementReferenceException))

    def until(self, pred, message=""):
        def guarded(d):
            try:
                return pred(d)
            except WebDriverException as e:
                if node_gone(e):
                    return False
                raise
        return self.inner.until(guarded, message)


def path():
    return urlparse(S.driver.current_url).path.rstrip("/") or "/"


def go(p):
    S.driver.get(S.console + p)
    wait().until(lambda d: d.execute_script("return document.readyState") == "complete")


def wait_path(pattern, what):
    """Waits until the URL's path fully matches `pattern` (regex); returns the match."""
    rx = re.compile(pattern)

    def landed(d):
        # The URL changes before the new page has loaded: a screenshot or axe run on a page
        # still loading fails in the browser ("Node … does not belong to the document").
        if rx.fullmatch(path()):
            return d.execute_script("return document.readyState") == "complete"
        errors = [t for cls, t in flashes() if "error" in cls.split()]
        if errors:  # the form was refused: say why now rather than time out
            raise StepFailed(f"expected to land on {what}, got an error on {path()}: {errors}")
        return False
    try:
        wait().until(landed)
    except TimeoutException:
        raise StepFailed(f"expected to land on {what} (path {pattern}), still on {path()}")
    return rx.fullmatch(path())


def page_loaded_after(old_html):
    """Waits until `old_html` (the previous page's <html>) is gone and the new page loaded."""
    try:
        wait().until(EC.staleness_of(old_html))
        wait().until(lambda d: d.execute_script("return document.readyState") == "complete")
    except TimeoutException:
        raise StepFailed("no new page was loaded")


def by_label(text):
    """The form control that <label>text</label> is for (its `for`, else the control inside)."""
    labels = S.driver.find_elements(By.XPATH, f"//label[normalize-space()={xq(text)}]")
    if not labels:
        seen = [l.text.strip() for l in S.driver.find_elements(By.TAG_NAME, "label")]
        raise StepFailed(f"no <label> {text!r} on the page (labels: {seen})")
    label = labels[0]
    target = label.get_attribute("for")
    if target:
        found = S.driver.find_elements(By.ID, target)
        if not found:
            raise StepFailed(f"label {text!r} is for id {target!r}, which is not on the page")
        return found[0]
    inner = label.find_elements(By.XPATH, ".//input|.//select|.//textarea")
    if not inner:
        raise StepFailed(f"label {text!r} has no `for` and holds no control")
    return inner[0]


def field(label, name):
    """by_label, checking the control's name is the contract's."""
    el = by_label(label)
    if el.get_attribute("name") != name:
        raise StepFailed(f"the control labelled {label!r} is named {el.get_attribute('name')!r}, "
                         f"not {name!r}")
    return el


def fill(label, name, value):
    el = field(label, name)
    el.clear()
    el.send_keys(value)
    return el


def check(el):
    """Checks a checkbox or a radio (through its label when a styled label covers it)."""
    if not el.is_selected():
        try:
            el.click()
        except (ElementClickInterceptedException, ElementNotInteractableException):
            S.driver.find_element(By.CSS_SELECTOR, f"label[for='{el.get_attribute('id')}']").click()
    if not el.is_selected():
        raise StepFailed(f"could not check {el.get_attribute('name')}={el.get_attribute('value')}")


def select_first_value(el):
    """Chooses the first option with a value (a select may start with a blank "choose" one)."""
    sel = Select(el)
    for opt in sel.options:
        if opt.get_attribute("value") and opt.is_enabled():
            sel.select_by_value(opt.get_attribute("value"))
            return opt.text.strip()
    raise StepFailed(f"select {el.get_attribute('name')!r} has no option with a value")


def button(text, within=None):
    root = within if within is not None else S.driver
    xpath = (f".//button[normalize-space()={xq(text)}]"
             f"|.//input[(@type='submit' or @type='button') and @value={xq(text)}]")
    found = root.find_elements(By.XPATH, xpath)
    if not found:
        seen = [b.text.strip() or b.get_attribute("value")
                for b in S.driver.find_elements(By.XPATH, "//button|//input[@type='submit']")]
        raise StepFailed(f"no button {text!r} (buttons: {seen})")
    return found[0]


def click_button(text, within=None):
    """Clicks the button (a form submit) and waits for the page it loads."""
    old = S.driver.find_element(By.TAG_NAME, "html")
    el = button(text, within)
    S.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
    wait().until(EC.element_to_be_clickable(el))
    el.click()
    try:
        page_loaded_after(old)
    except StepFailed:
        raise StepFailed(f"clicking {text!r} loaded no new page")


def click_link(text):
    """Follows the link whose text is `text` (else the first whose text holds it)."""
    old = S.driver.find_element(By.TAG_NAME, "html")
    links = (S.driver.find_elements(By.XPATH, f"//a[normalize-space()={xq(text)}]")
             or S.driver.find_elements(By.XPATH, f"//a[contains(normalize-space(), {xq(text)})]"))
    if not links:
        seen = [a.text.strip() for a in S.driver.find_elements(By.TAG_NAME, "a")]
        raise StepFailed(f"no link {text!r} on the page (links: {seen})")
    S.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", links[0])
    links[0].click()
    page_loaded_after(old)


def text_of(element_id):
    return S.driver.find_element(By.ID, element_id).text.strip()


def wait_text(element_id, wanted, timeout=WAIT, pred=None):
    """Waits until element #element_id's text contains `wanted` (or pred(text) holds)."""
    pred = pred or (lambda t: wanted in t)
    try:
        def shows(d):
            text = d.find_element(By.ID, element_id).text.strip()
            return text if pred(text) else False
        return wait(timeout).until(shows)
    except TimeoutException:
        got = S.driver.find_elements(By.ID, element_id)
        raise StepFailed(f"#{element_id} never showed {wanted!r} in {timeout}s "
                         f"(it says {got[0].text.strip()[:200]!r})" if got else
                         f"#{element_id} is not on the page (waited for {wanted!r})")


def flashes():
    return [(f.get_attribute("class"), f.text.strip())
            for f in S.driver.find_elements(By.CSS_SELECTOR, ".flash")]


def wait_flash(contains=None):
    """Waits for a success flash (and fails at once on an error one); returns its text."""
    def seen(d):
        for cls, text in flashes():
            if "error" in cls.split():
                raise StepFailed(f"error flash: {text!r}")
            if contains is None or contains in text:
                return text
        return False
    try:
        return wait().until(seen)
    except TimeoutException:
        raise StepFailed(f"no success flash{' with ' + repr(contains) if contains else ''} "
                         f"(flashes: {flashes()})")


def h1s():
    return [h.text.strip() for h in S.driver.find_elements(By.TAG_NAME, "h1")]


def save_png(name):
    """A full-page screenshot (Chromium's DevTools: the whole document, not the viewport)."""
    m = S.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = m.get("cssContentSize") or m["contentSize"]
    vw = S.driver.execute_script("return window.innerWidth")
    width = max(math.ceil(size["width"]), vw)
    height = min(math.ceil(size["height"]), 20000)
    shot = S.driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    out = S.artifacts / name
    out.write_bytes(base64.b64decode(shot["data"]))
    return out


def shot(name):
    n = S.shots + 1
    saved = save_png(f"{n:02d}-{name}.png")
    S.shots = n
    return saved


def axe_check(page):
    """Runs axe-core on the current document; keeps its violations under `page`."""
    S.driver.set_script_timeout(60)
    if not S.driver.execute_script("return typeof window.axe === 'object'"):
        S.driver.execute_script(AXE_JS.read_text(encoding="utf-8"))
    result = S.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ['violations']})
          .then(r => done({violations: r.violations.map(v => ({
              id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
              targets: v.nodes.map(n => n.target.join(' '))}))}))
          .catch(e => done({error: String(e)}));
    """)
    if "error" in result:
        raise StepFailed(f"axe.run failed: {result['error']}")
    S.axed += 1
    for v in result["violations"]:
        S.violations.append(dict(v, page=page))
    return result["violations"]


def signed_in_layout():
    """What the contract says every signed-in page has."""
    if len(h1s()) != 1:
        raise StepFailed(f"expected one <h1>, found {h1s()}")
    navs = S.driver.find_elements(By.CSS_SELECTOR, "nav[aria-label='Main']")
    if not navs:
        raise StepFailed('no <nav aria-label="Main">')
    links = [a.get_attribute("textContent").strip() for a in navs[0].find_elements(By.TAG_NAME, "a")]
    missing = [l for l in NAV_LINKS if l not in links]
    if missing:
        raise StepFailed(f"the Main nav lacks {missing} (it has {links})")
    button("Sign out")


def page(name, signed_in=True):
    """The checks every page gets: its layout, a screenshot, axe."""
    if signed_in:
        settled(signed_in_layout)
    settled(lambda: shot(name))
    settled(lambda: axe_check(name))


def settled(action, tries=3):
    """Runs `action`, again when a live part of the page (a campaign's progress, a thread
    whose reply just changed status) replaced the nodes the browser was reading."""
    for attempt in range(tries):
        try:
            return action()
        except WebDriverException as e:
            if not node_gone(e) or attempt == tries - 1:
                raise
            time.sleep(0.3)


def api_post(p, body, token):
    req = urllib.request.Request(
        S.api + p, data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                 "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        raise StepFailed(f"POST {p} answered {e.code}: {e.read()[:500]!r}")


# --------------------------------------------------------------------------- the flow

def sign_in():
    go("")
    wait_path(r"/console/sign-in", "the sign-in page (signed out, /console redirects)")
    page("sign-in", signed_in=False)
    key = by_label("API key")
    if (key.get_attribute("id"), key.get_attribute("name"), key.get_attribute("type")) != \
            ("api-key", "apiKey", "password"):
        raise StepFailed("the API key input is not input#api-key[name=apiKey][type=password]")
    key.send_keys(S.key)
    click_button("Sign in")
    wait_path(r"/console", "Home")
    if h1s() != ["Home"]:
        raise StepFailed(f"Home's h1 is {h1s()}")
    page("home")


def create_webhook():
    go("/webhooks/new")
    page("webhook-new")
    fill("URL", "url", WEBHOOK_URL)
    boxes = S.driver.find_elements(By.CSS_SELECTOR, "input[type=checkbox][name=events]")
    if not boxes:
        raise StepFailed("no checkbox named events")
    kind = [b for b in boxes if b.get_attribute("value") == "contact.created"]
    if not kind:
        raise StepFailed(f"no events checkbox contact.created "
                         f"(values: {[b.get_attribute('value') for b in boxes]})")
    check(kind[0])
    click_button("Create webhook")
    S.webhook_id = wait_path(r"/console/webhooks/(?!new$)([^/]+)", "the new webhook").group(1)
    if not text_of("webhook-secret"):
        raise StepFailed("#webhook-secret is empty")
    S.driver.find_element(By.ID, "deliveries")
    page("webhook")


def create_contact():
    S.contact_name = "Ada Browser Lovelace"
    go("/contacts/new")
    page("contact-new")
    fill("Full name", "fullName", S.contact_name)
    fill("Phone", "primaryPhone", "+5215550177777")
    fill("E-mail", "primaryEmail", "ada.browser@example.com")
    fill("Company", "company", "Analytical Engines")
    fill("Country", "country", "MX")
    stage = select_first_value(field("Lifecycle stage", "lifecycleStageId"))
    fill("Tags", "tags", "browser, vip")
    check(field("Consent given", "consentGiven"))
    click_button("Create contact")
    S.contact_id = wait_path(r"/console/contacts/(?!new$)([^/]+)", "the new contact").group(1)
    if h1s() != [S.contact_name]:
        raise StepFailed(f"the contact's h1 is {h1s()}, not [{S.contact_name!r}]")
    page("contact")
    return f"stage {stage!r}"


def search_contacts():
    go("/contacts")
    fill("Search", "q", "Ada Browser")
    click_button("Search")
    wait_path(r"/console/contacts", "the contacts list")
    try:
        wait().until(lambda d: S.contact_name in d.find_element(By.TAG_NAME, "body").text)
    except TimeoutException:
        raise StepFailed(f"searching 'Ada Browser' does not list {S.contact_name!r}")
    page("contacts-search")


def write_csv():
    """50 contacts, rows 18 and 34 (1-based data rows) with a phone that is no phone."""
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", prefix="wm-console-", delete=False,
                                    newline="", encoding="utf-8")
    with f:
        w = csv.writer(f)
        w.writerow(["fullName", "primaryPhone", "primaryEmail", "tags"])
        for i in range(50):
            phone = "not a phone" if i in (17, 33) else f"+{5215550100000 + i}"
            w.writerow([f"Imported Person {i + 1:02d}", phone, f"imported{i + 1:02d}@example.com",
                        "imported;browser"])  # the import's default tag separator is ';'
    return f.name


def import_csv():
    csv_path = write_csv()
    try:
        go("/imports/new")
        page("import-new")
        file_input = S.driver.find_element(By.ID, "import-file")
        if file_input.get_attribute("name") != "file" or by_label("CSV file") != file_input:
            raise StepFailed("the file input is not #import-file[name=file] labelled 'CSV file'")
        file_input.send_keys(csv_path)
        try:
            wait().until(EC.visibility_of_element_located((By.ID, "mapping")))
        except TimeoutException:
            raise StepFailed("choosing the file showed no #mapping table")
        selects = S.driver.find_elements(By.CSS_SELECTOR, "#mapping select")
        chosen = [Select(s).first_selected_option.text.strip() for s in selects]
        if len(selects) != 4 or not all(s.get_attribute("value") for s in selects):
            raise StepFailed(f"#mapping should preselect a field for each of the 4 columns, "
                             f"it shows {len(selects)} selects choosing {chosen}")
        page("import-mapping")
        click_button("Upload and import")
        wait_path(r"/console/imports/(?!new$)([^/]+)", "the import job")
        S.driver.find_element(By.ID, "import-progress")
        status = wait_text("import-status", "COMPLETED or FAILED", timeout=90,
                           pred=lambda t: t in ("COMPLETED", "FAILED"))
        if status != "COMPLETED":
            raise StepFailed(f"the import ended {status}")
        refused = S.driver.find_elements(By.XPATH, "//*[@id='import-errors']//tr[td]")
        if len(refused) != 2:
            raise StepFailed(f"#import-errors lists {len(refused)} refused rows, not 2")
        page("import")
    finally:
        os.unlink(csv_path)


def create_campaign():
    go("/campaigns/new")
    page("campaign-new")
    fill("Name", "name", "Browser spring sale")
    sender = select_first_value(field("Sender number", "phoneNumberId"))
    tpl = Select(field("Template", "templateId"))
    spring = [o for o in tpl.options if o.text.strip().startswith("spring_sale")]
    if not spring:
        raise StepFailed(f"no template option starting with spring_sale "
                         f"({[o.text for o in tpl.options]})")
    tpl.select_by_value(spring[0].get_attribute("value"))
    click_button("Create campaign")
    wait_path(r"/console/campaigns/(?!new$)([^/]+)", "the new campaign")
    wait_text("campaign-status", "DRAFT", pred=lambda t: t == "DRAFT")
    page("campaign-draft")
    return f"sender {sender!r}"


def campaign_audience():
    everyone = by_label("Everyone with consent")
    if (everyone.get_attribute("name"), everyone.get_attribute("value")) != ("source", "all"):
        raise StepFailed("'Everyone with consent' is not the radio source=all")
    check(everyone)
    click_button("Add recipients")
    added = wait_flash()
    n = re.search(r"\d+", added)
    if not n or int(n.group()) == 0:
        raise StepFailed(f"the flash does not tell recipients were added: {added!r}")
    S.driver.find_element(By.ID, "cost-preview")
    if not text_of("wallet-after"):
        raise StepFailed("#wallet-after is empty")
    page("campaign-audience")
    return added


def send_campaign():
    now = S.driver.find_element(By.CSS_SELECTOR, "input[type=radio][name=when][value=now]")
    if not now.is_selected():
        raise StepFailed("the send form's when=now is not checked by default")
    click_button("Send campaign")

    def done(t):
        if t in ("FAILED", "CANCELED", "CANCELLED"):
            raise StepFailed(f"the campaign ended {t}")
        return t == "COMPLETED"
    wait_text("campaign-status", "COMPLETED", timeout=90, pred=done)
    S.driver.find_element(By.ID, "funnel")
    if not S.driver.find_elements(By.XPATH, "//*[@id='recipients']//tr[td]"):
        raise StepFailed("#recipients lists no recipient")
    page("campaign-completed")


def inbox_open_window():
    text = "Hola, ¿tienen envío gratis?"
    status, body = api_post(f"/admin/organizations/{S.org}/inbound", {
        "channelType": "MESSAGING_APP_A", "externalId": "5215512345678",
        "fullName": "Browser Customer", "text": text}, S.admin_token)
    conversation = (body or {}).get("conversationId")
    if status != 200 or not conversation:
        raise StepFailed(f"the inbound message answered {status} {body!r}")
    go("/inbox")
    page("inbox")
    click_link("Browser Customer")
    wait_path(rf"/console/inbox/{re.escape(conversation)}", "the customer's conversation")
    wait_text("thread", text)
    if not re.search(r"\bopen\b", text_of("window-state"), re.I):
        raise StepFailed(f"#window-state says {text_of('window-state')!r}, not open")
    page("conversation-open")
    reply = "¡Sí! El envío es gratis desde $500."
    fill("Reply", "text", reply)
    click_button("Send reply")
    wait_text("thread", reply)
    page("conversation-replied")


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


def inbox_file():
    """Sends an image with a caption from the open conversation; it shows in the thread."""
    caption = "Así se ve el catálogo"
    with tempfile.NamedTemporaryFile(suffix=".png", delete=False) as f:
        f.write(png())
    try:
        field("File", "file").send_keys(f.name)
        fill("Caption", "caption", caption)
        click_button("Send file")
    finally:
        os.unlink(f.name)
    wait_flash("File sent.")
    wait().until(lambda d: d.find_elements(
        By.XPATH, f"//*[@id='thread']//img[@alt={xq(caption)}]"))
    loaded = S.driver.execute_script(
        "const i = document.querySelector('#thread img[alt]:last-of-type');"
        "return i && i.complete && i.naturalWidth;")
    if not loaded:
        raise StepFailed("the sent image does not load in the thread")
    page("conversation-file")


def inbox_closed_window():
    go("/inbox")
    click_link("Renata Ríos")
    wait_path(r"/console/inbox/[^/]+", "Renata Ríos' conversation")
    if not re.search(r"\bclosed\b", text_of("window-state"), re.I):
        raise StepFailed(f"#window-state says {text_of('window-state')!r}, not closed")
    if by_label("Template").get_attribute("id") != "reply-template":
        raise StepFailed("the label 'Template' is not for select#reply-template")
    button("Send template")
    if S.driver.find_elements(By.CSS_SELECTOR, "textarea[name=text]"):
        raise StepFailed("a closed window still offers the free-text reply")
    page("conversation-closed")


def retry_delivery():
    go(f"/webhooks/{S.webhook_id}")
    retry = "//*[@id='deliveries']//button[normalize-space()='Retry']"
    deadline = time.monotonic() + 60
    while not S.driver.find_elements(By.XPATH, retry):
        if time.monotonic() > deadline:
            raise StepFailed("no failed delivery with a Retry button in 60 s")
        time.sleep(2)
        go(f"/webhooks/{S.webhook_id}")
    click_button("Retry", within=S.driver.find_element(By.ID, "deliveries"))
    flash = wait_flash()
    page("webhook-retried")
    return flash


def edit_and_delete_webhook():
    go(f"/webhooks/{S.webhook_id}")
    click_link("Edit webhook")
    wait_path(rf"/console/webhooks/{re.escape(S.webhook_id)}/edit", "the webhook's edit form")
    page("webhook-edit")
    fill("Description", "description", "Edited in the browser")
    box = S.driver.find_elements(
        By.CSS_SELECTOR, "input[type=checkbox][name=events][value='message.received']")
    if not box:
        raise StepFailed("no events checkbox message.received on the edit form")
    check(box[0])
    click_button("Save webhook")
    wait_path(rf"/console/webhooks/{re.escape(S.webhook_id)}", "the webhook")
    wait_flash("Webhook saved.")
    facts = S.driver.find_element(By.TAG_NAME, "main").text
    if "Edited in the browser" not in facts or "message.received" not in facts:
        raise StepFailed("the webhook's page does not show the saved description and events")
    check(by_label("Yes, delete this webhook"))
    click_button("Delete webhook")
    wait_path(r"/console/webhooks", "the webhooks list")
    wait_flash("Webhook deleted.")
    if S.driver.find_elements(By.CSS_SELECTOR, f"a[href='/console/webhooks/{S.webhook_id}']"):
        raise StepFailed("the deleted webhook is still listed")
    page("webhook-deleted")


OTHER_PAGES = [
    ("", "home-again"), ("/contacts", "contacts"), (None, "contact-again"),
    ("/campaigns", "campaigns"), ("/templates", "templates"), ("/numbers", "numbers"),
    ("/automations", "automations"), ("/reports", "reports"), ("/webhooks", "webhooks"),
    ("/imports/new", "import-new-again"),
]


def other_pages():
    for p, name in OTHER_PAGES:
        p = f"/contacts/{S.contact_id}" if p is None else p
        go(p)
        if path() != f"/console{p}".rstrip("/"):
            raise StepFailed(f"GET /console{p} landed on {path()}")
        page(name)


def narrow_window():
    S.driver.set_window_size(*NARROW)
    try:
        for p, name in (("", "home-narrow"), ("/contacts", "contacts-narrow")):
            go(p)
            page(name)
    finally:
        S.driver.set_window_size(*WIDE)


def sign_out():
    go("")
    click_button("Sign out")
    wait_path(r"/console/sign-in", "the sign-in page")
    wait_flash("You are signed out.")
    page("signed-out", signed_in=False)
    for p in ("/contacts", ""):
        go(p)
        if path() != "/console/sign-in":
            raise StepFailed(f"signed out, GET /console{p} landed on {path()}")


FLOW = [
    ("sign in", sign_in),
    ("webhook", create_webhook),
    ("contact", create_contact),
    ("contact search", search_contacts),
    ("import", import_csv),
    ("campaign", create_campaign),
    ("campaign audience", campaign_audience),
    ("campaign sent", send_campaign),
    ("inbox: open window, reply", inbox_open_window),
    ("inbox: a file", inbox_file),
    ("inbox: closed window", inbox_closed_window),
    ("webhook retry", retry_delivery),
    ("other pages", other_pages),
    ("webhook edit, delete", edit_and_delete_webhook),
    ("narrow window", narrow_window),
    ("sign out", sign_out),
]


# --------------------------------------------------------------------------- running

def start_browser():
    # Debian's Chromium and chromedriver; with both paths given Selenium Manager has nothing
    # to download (and could not: only package registries are reachable).
    os.environ.setdefault("SE_OFFLINE", "true")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
              f"--window-size={WIDE[0]},{WIDE[1]}", "--lang=en-US"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    S.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    S.driver.set_window_size(*WIDE)
    S.driver.set_page_load_timeout(60)


def report_failure(step, err):
    print(f"FAIL {step}: {err}")
    if not isinstance(err, StepFailed):
        traceback.print_exception(err, file=sys.stdout)
    try:
        print(f"  url:     {S.driver.current_url}")
        print(f"  h1:      {h1s()}")
        print(f"  flashes: {flashes()}")
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", step).strip("-")
        print(f"  screenshot: {save_png(f'FAILED-{safe}.png')}")
        for entry in S.driver.get_log("browser"):
            if entry.get("level") in ("SEVERE", "WARNING"):
                print(f"  browser console: {entry['level']} {entry['message'][:300]}")
    except WebDriverException as e:
        print(f"  (the browser could not tell more: {e.msg})")


def report_violations():
    """Prints every axe violation; True when none is serious or critical."""
    if not S.violations:
        print(f"axe: no violations on {S.axed} page(s)")
        return True
    print(f"axe: {len(S.violations)} violation(s) on {S.axed} page(s)")
    for v in S.violations:
        targets = ", ".join(v["targets"][:3]) + (" ..." if len(v["targets"]) > 3 else "")
        print(f"  {v['page']}: {v['id']} [{v['impact']}] {v['help']} -- {targets}")
    by_rule = {}
    for v in S.violations:
        by_rule.setdefault((v["id"], v["impact"]), []).append(v["page"])
    print("axe by rule: " + "; ".join(f"{rule} [{impact}] on {len(pages)} page(s)"
                                      for (rule, impact), pages in sorted(by_rule.items())))
    bad = [v for v in S.violations if v["impact"] in ("serious", "critical")]
    if bad:
        print(f"axe: {len(bad)} serious or critical violation(s) fail the check")
    return not bad


def run(steps):
    for name, fn in steps:
        S.step = name
        try:
            note = fn()
        except Exception as e:  # noqa: BLE001 (any failure: report where and stop)
            report_failure(name, e)
            report_violations()
            return 1
        print(f"ok  {name}" + (f" ({note})" if note else ""), flush=True)
    return 0 if report_violations() else 1


def env(name):
    v = os.environ.get(name)
    if not v:
        sys.exit(f"drive.py: {name} is not set")
    return v


def main():
    # One stream, line by line: the steps, a failure's report and axe's in the order they came.
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--self-check", metavar="URL",
                    help="only start the browser, load URL, screenshot it and run axe on it")
    args = ap.parse_args()
    if not AXE_JS.is_file():
        sys.exit(f"drive.py: {AXE_JS} is missing: run `npm ci` in {HERE}")
    S.artifacts = Path(os.environ.get("WM_ARTIFACTS", "target/console-artifacts"))
    S.artifacts.mkdir(parents=True, exist_ok=True)
    if args.self_check:
        steps = [("self-check", lambda: self_check(args.self_check))]
    else:
        S.console = env("WM_CONSOLE_URL").rstrip("/")
        S.api = env("WM_API_URL").rstrip("/")
        S.key, S.admin_token, S.org = env("WM_KEY"), env("WM_ADMIN_TOKEN"), env("WM_ORG_ID")
        steps = FLOW
    start_browser()
    try:
        rc = run(steps)
    finally:
        S.driver.quit()
    print(f"screenshots in {S.artifacts}")
    return rc


def self_check(url):
    """The browser, the screenshots and axe on one page, at both window sizes."""
    notes = []
    for size, name in ((WIDE, "self-check"), (NARROW, "self-check-narrow")):
        S.driver.set_window_size(*size)
        S.driver.get(url)
        shot(name)
        found = axe_check(name)
        vw, vh = S.driver.execute_script("return [window.innerWidth, window.innerHeight]")
        notes.append(f"{name}: viewport {vw}x{vh}, {len(found)} violation(s)")
    S.driver.set_window_size(*WIDE)
    return "; ".join(notes)


if __name__ == "__main__":
    sys.exit(main())
