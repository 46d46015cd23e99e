// wm console: the few things that need a script. Every page works without it; with it,
// live parts refresh themselves and the import shows its column mapping.
"use strict";

// An element with data-live="<url>" is replaced by the fragment at that URL: every 2 s, or,
// when it also has data-push="<event stream>", each time the server pushes that it changed.
// When a fragment comes back without data-live (the job or campaign has ended), the whole
// page is loaded again, so its other parts (buttons, tables) show the end state too.
// Returns the element now in the page (null: reloading).
async function refresh(el) {
  try {
    const r = await fetch(el.dataset.live, { credentials: "same-origin" });
    if (r.redirected) { location.reload(); return null; }
    if (r.ok) {
      const t = document.createElement("template");
      t.innerHTML = (await r.text()).trim();
      const next = t.content.firstElementChild;
      if (next && !next.dataset.live) { location.reload(); return null; }
      // Unchanged: keep the nodes (a selection, the reader's place, no flicker).
      if (next && !next.isEqualNode(el)) { el.replaceWith(next); return next; }
    }
  } catch (e) { /* offline for a moment: the next change or tick tries again */ }
  return el;
}
function poll(el) {
  setTimeout(async () => { const now = await refresh(el); if (now) poll(now); }, 2000);
}
function push(el) {
  const id = el.id;
  const source = new EventSource(el.dataset.push);
  let busy = false, again = false;
  const update = async () => {
    if (busy) { again = true; return; }
    busy = true;
    do {
      again = false;
      const now = await refresh(document.getElementById(id) || el);
      if (!now) { source.close(); return; }
    } while (again);
    busy = false;
  };
  source.addEventListener("changed", update);
  // Reconnected after a drop: whatever changed meanwhile is read once.
  source.addEventListener("open", update);
}
document.querySelectorAll("[data-live]").forEach((el) => (el.dataset.push ? push(el) : poll(el)));

// One CSV record (quotes, doubled quotes, commas inside quotes).
function csvRecord(line) {
  const out = []; let cur = ""; let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { cur += '"'; i++; }
      else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { out.push(cur); cur = ""; }
    else cur += c;
  }
  out.push(cur);
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}

const norm = (s) => s.toLowerCase().replace(/[^a-z0-9]/g, "");
const ALIASES = { name: "fullName", fullname: "fullName", phone: "primaryPhone", mobile: "primaryPhone",
  email: "primaryEmail", mail: "primaryEmail", stage: "lifecycleStageId", consent: "consent.given" };

// The import form: when a CSV is chosen, one select per column of its header row.
const file = document.getElementById("import-file");
const mapping = document.getElementById("mapping");
const fields = document.getElementById("mapping-fields");
if (file && mapping && fields) {
  file.addEventListener("change", async () => {
    const body = mapping.querySelector("tbody");
    body.replaceChildren();
    const f = file.files && file.files[0];
    if (!f) { mapping.hidden = true; return; }
    const head = (await f.slice(0, 65536).text()).replace(/^\uFEFF/, "").split(/\r?\n/)[0] || "";
    const columns = csvRecord(head);
    columns.forEach((col, i) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      const label = document.createElement("label");
      label.htmlFor = "map-" + i;
      label.textContent = col;
      th.append(label);
      const td = document.createElement("td");
      const select = fields.content.firstElementChild.cloneNode(true);
      select.id = "map-" + i;
      select.name = "map:" + col;
      const want = Array.from(select.options).find((o) => o.value && norm(o.value) === norm(col))
        || Array.from(select.options).find((o) => o.value === ALIASES[norm(col)]);
      select.value = want ? want.value : "";
      td.append(select);
      tr.append(th, td);
      body.append(tr);
    });
    mapping.hidden = columns.length === 0;
  });
}

// The campaign audience: only the chosen source's field is enabled.
document.querySelectorAll("fieldset[data-choice]").forEach((set) => {
  const sync = () => {
    const chosen = set.querySelector("input[type=radio]:checked");
    set.querySelectorAll("[data-for]").forEach((el) => {
      el.disabled = !chosen || el.dataset.for !== chosen.value;
    });
  };
  set.addEventListener("change", sync);
  sync();
});

// A template picker: only the chosen template's variables are shown and sent.
document.querySelectorAll("select[data-variables]").forEach((picker) => {
  const sync = () => picker.form.querySelectorAll("fieldset[data-template]").forEach((set) => {
    set.hidden = set.dataset.template !== picker.value;
    set.disabled = set.hidden;
  });
  picker.addEventListener("change", sync);
  sync();
});
