// wm website chat: a launcher and a chat panel in a Shadow DOM, talking to wm's
// /webchat/v1/{site} API (fetch + EventSource, no cookies). Plain ES2019, no dependencies.
// The server prepends `window.__wmWidget = {site, base}`. Visitor text is only ever set with
// textContent. Public API: window.wm.open(), .close(), .identify({identifier, identifierHash,
// email?, name?}); calls queued before load in window.wm.q are run at load.
(function () {
  "use strict";
  var W = window, D = document;
  if (W.wm && W.wm._wm) return;
  var C = W.__wmWidget || {}, SITE = C.site;
  if (!SITE) return;
  var BASE = String(C.base || "").replace(/\/+$/, "");
  var API = BASE + "/webchat/v1/" + encodeURIComponent(SITE);
  var SET = W.wmSettings || {};
  var TK = "wm:" + SITE, LK = TK + ":last", EK = TK + ":email";

  // ---------------------------------------------------------------- strings
  var KEYS = "chat close ph msg send attach you sending retry failed seen earlier lost unavail forbidden err big type long slow ask email save thanks typing image file agent newmsg msgs".split(" ");
  var LANGS = {
    en: ["Chat with us", "Close chat", "Write a message…", "Message", "Send", "Attach a file", "You", "Sending…", "Not sent yet, retrying…", "Not sent", "Seen", "Earlier messages", "Connection lost. Reconnecting…", "The chat is not available right now.", "This chat is not available on this site.", "Something went wrong. Please try again.", "That file is too large (max. 10 MB).", "Only images and PDF files can be sent.", "The message is too long (max. 4096 characters).", "Too many messages. Please wait a moment.", "Nobody is available right now. Leave your email and we will write back.", "Your email", "Save", "Thanks! We will write to you at ", "Typing…", "Image", "File", "Agent", "new message", "Messages"],
    es: ["Chatea con nosotros", "Cerrar chat", "Escribe un mensaje…", "Mensaje", "Enviar", "Adjuntar un archivo", "Tú", "Enviando…", "Aún no enviado, reintentando…", "No enviado", "Visto", "Mensajes anteriores", "Conexión perdida. Reconectando…", "El chat no está disponible ahora.", "Este chat no está disponible en este sitio.", "Algo salió mal. Inténtalo de nuevo.", "El archivo es demasiado grande (máx. 10 MB).", "Solo se pueden enviar imágenes y archivos PDF.", "El mensaje es demasiado largo (máx. 4096 caracteres).", "Demasiados mensajes. Espera un momento.", "Ahora no hay nadie disponible. Déjanos tu correo y te responderemos.", "Tu correo", "Guardar", "¡Gracias! Te escribiremos a ", "Escribiendo…", "Imagen", "Archivo", "Agente", "mensaje nuevo", "Mensajes"],
    pt: ["Converse conosco", "Fechar chat", "Escreva uma mensagem…", "Mensagem", "Enviar", "Anexar um arquivo", "Você", "Enviando…", "Ainda não enviada, tentando de novo…", "Não enviada", "Vista", "Mensagens anteriores", "Conexão perdida. Reconectando…", "O chat não está disponível agora.", "Este chat não está disponível neste site.", "Algo deu errado. Tente novamente.", "O arquivo é grande demais (máx. 10 MB).", "Só é possível enviar imagens e arquivos PDF.", "A mensagem é longa demais (máx. 4096 caracteres).", "Mensagens demais. Aguarde um momento.", "Ninguém está disponível agora. Deixe seu e-mail e responderemos.", "Seu e-mail", "Salvar", "Obrigado! Vamos escrever para ", "Digitando…", "Imagem", "Arquivo", "Atendente", "nova mensagem", "Mensagens"]
  };
  var LANG = String(SET.locale || navigator.language || "en").slice(0, 2).toLowerCase();
  if (!LANGS[LANG]) LANG = "en";
  var T = {};
  KEYS.forEach(function (k, i) { T[k] = LANGS[LANG][i]; });

  // ---------------------------------------------------------------- storage (may be blocked)
  function st(s, k, v) {
    try {
      if (v === undefined) return s.getItem(k);
      if (v === null) s.removeItem(k); else s.setItem(k, v);
    } catch (e) { /* storage disabled: memory only */ }
    return null;
  }
  var LS = W.localStorage, SS = W.sessionStorage;
  var tok = st(LS, TK), lastId = st(SS, LK);

  // ---------------------------------------------------------------- DOM helpers
  function h(tag, attrs) {
    var e = D.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v == null || v === false) return;
      if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    });
    for (var i = 2; i < arguments.length; i++) if (arguments[i] != null) e.append(arguments[i]);
    return e;
  }
  var NS = "http://www.w3.org/2000/svg";
  function icon(d) {
    var s = D.createElementNS(NS, "svg"), p = D.createElementNS(NS, "path");
    s.setAttribute("viewBox", "0 0 24 24");
    s.setAttribute("aria-hidden", "true");
    s.setAttribute("focusable", "false");
    p.setAttribute("d", d);
    s.append(p);
    return s;
  }
  var I_CHAT = "M20 2H4a2 2 0 0 0-2 2v18l4-4h14a2 2 0 0 0 2-2V4a2 2 0 0 0-2-2z";
  var I_X = "M19 6.4 17.6 5 12 10.6 6.4 5 5 6.4 10.6 12 5 17.6 6.4 19 12 13.4 17.6 19 19 17.6 13.4 12z";
  var I_CLIP = "M16.5 6v11.5a4 4 0 0 1-8 0V5a2.5 2.5 0 0 1 5 0v10.5a1 1 0 0 1-2 0V6H10v9.5a2.5 2.5 0 0 0 5 0V5a4 4 0 0 0-8 0v12.5a5.5 5.5 0 0 0 11 0V6z";
  var I_SEND = "M2 21 23 12 2 3v7l15 2-15 2z";

  var CSS = ":host{all:initial!important;display:block!important}" +
    "*{box-sizing:border-box;margin:0;padding:0;font:inherit;color:inherit;letter-spacing:normal;text-transform:none}" +
    "[hidden]{display:none!important}" +
    ".w{font:15px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif;color:#1b1b1f}" +
    "button{cursor:pointer;border:0;background:none}button:disabled{cursor:default;opacity:.6}" +
    ":focus-visible{outline:3px solid #1f5fd6;outline-offset:2px}" +
    "svg{width:24px;height:24px;fill:currentColor}" +
    ".l{position:fixed;right:20px;bottom:20px;z-index:2147483000;width:56px;height:56px;border-radius:50%;background:var(--c);color:var(--t);box-shadow:0 4px 14px rgba(0,0,0,.3);display:flex;align-items:center;justify-content:center}" +
    ".l svg{width:28px;height:28px}" +
    ".l.n:after{content:'';position:absolute;top:2px;right:2px;width:14px;height:14px;border-radius:50%;background:#c5221f;border:2px solid #fff}" +
    ".p{position:fixed;right:20px;bottom:88px;z-index:2147483001;width:380px;height:560px;max-height:calc(100vh - 108px);background:#fff;border-radius:12px;box-shadow:0 8px 32px rgba(0,0,0,.3);display:flex;flex-direction:column;overflow:hidden}" +
    "@media (max-width:480px),(max-height:620px){.p{top:0;left:0;right:0;bottom:0;width:100%;height:100%;max-height:none;border-radius:0}}" +
    ".hd{background:var(--c);color:var(--t);padding:10px 8px 10px 16px;display:flex;align-items:center;gap:8px}" +
    ".hd h2{flex:1;font-size:17px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}" +
    ".hd button{width:40px;height:40px;border-radius:8px;display:flex;align-items:center;justify-content:center}" +
    ".hd :focus-visible{outline-color:var(--t)}" +
    ".nt{padding:6px 16px;font-size:14px;background:#fff4ce;color:#3d2e00}.er{background:#fde7e9;color:#8a1116}" +
    ".g{flex:1;overflow-y:auto;padding:12px;background:#f5f5f7;display:flex;flex-direction:column;gap:8px}" +
    ".ms{display:flex;flex-direction:column;gap:8px}" +
    ".mo{align-self:center;text-decoration:underline;color:#1a4fa8;padding:4px 8px}" +
    ".m{max-width:85%;padding:8px 12px;border-radius:14px;white-space:pre-wrap;overflow-wrap:anywhere;align-self:flex-start;background:#fff;border:1px solid #d5d5db}" +
    ".m.i{align-self:flex-end;background:var(--c);color:var(--t);border-color:var(--c)}" +
    ".m.x{background:#fde7e9;color:#8a1116;border-color:#c5221f}" +
    ".mt{display:block;font-size:12px;color:#50505a}.i .mt,.x .mt{color:inherit}" +
    ".m a{text-decoration:underline}.m img{display:block;max-width:100%;max-height:240px;border-radius:8px;margin:4px 0}" +
    ".bt{display:flex;flex-wrap:wrap;gap:6px;margin-top:6px}" +
    ".bt button{background:#fff;border:1px solid #6b6b76;border-radius:16px;padding:6px 12px;color:#1a4fa8;font-weight:600}" +
    ".ty{padding:2px 16px;font-size:13px;color:#50505a}" +
    ".em{padding:8px 12px;border-top:1px solid #d5d5db;display:flex;flex-wrap:wrap;gap:6px;align-items:center;font-size:14px}" +
    ".em p{width:100%}.em input{flex:1;min-width:0}" +
    ".f{display:flex;gap:6px;padding:8px;border-top:1px solid #d5d5db;align-items:flex-end}" +
    "textarea,input{flex:1;resize:none;border:1px solid #6b6b76;border-radius:8px;padding:8px 10px;min-height:40px;max-height:120px;background:#fff;color:#1b1b1f}" +
    "textarea:disabled{background:#ececef}" +
    ".b{width:40px;height:40px;border-radius:8px;display:flex;align-items:center;justify-content:center;color:#44444c}" +
    ".s,.em button{background:var(--c);color:var(--t)}.em button{height:40px;padding:0 14px;border-radius:8px}";

  // ---------------------------------------------------------------- colour (WCAG contrast)
  function colors(hex) {
    if (!/^#[0-9a-f]{6}$/i.test(hex || "")) hex = "#0a7cff";
    var n = parseInt(hex.slice(1), 16), rgb = [n >> 16, n >> 8 & 255, n & 255];
    function lum(c) {
      return c.reduce(function (a, v, i) {
        v /= 255;
        return a + [0.2126, 0.7152, 0.0722][i] * (v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));
      }, 0);
    }
    if (lum(rgb) > 0.4) return [hex, "#000"];
    while (1.05 / (lum(rgb) + 0.05) < 4.6) rgb = rgb.map(function (v) { return Math.floor(v * 0.9); });
    return ["rgb(" + rgb.join(",") + ")", "#fff"];
  }
  function paint(hex) {
    var c = colors(hex);
    wrap.style.setProperty("--c", c[0]);
    wrap.style.setProperty("--t", c[1]);
  }

  // ---------------------------------------------------------------- the UI
  var host, root, wrap, launcher, panel, title, note, errEl, log, more, greet, list, typingEl, emailBox, form, ta, fileIn, sendBtn, attachBtn;
  function build() {
    host = h("div", { id: "wm-chat" });
    root = host.attachShadow({ mode: "open" });
    root.append(h("style", {}, CSS));
    wrap = h("div", { class: "w", lang: LANG });
    launcher = h("button", { type: "button", class: "l", "aria-label": T.chat, "aria-expanded": "false", onclick: function () { panel.hidden ? open() : close(); } }, icon(I_CHAT));
    title = h("h2", {}, T.chat);
    note = h("div", { class: "nt", role: "status", hidden: true });
    errEl = h("div", { class: "nt er", role: "alert", hidden: true });
    more = h("button", { type: "button", class: "mo", hidden: true, onclick: earlier }, T.earlier);
    greet = h("div", { class: "m", hidden: true });
    list = h("div", { class: "ms" });
    log = h("div", { class: "g", role: "log", "aria-live": "polite", "aria-label": T.msgs, tabindex: "0" }, more, greet, list);
    typingEl = h("p", { class: "ty", hidden: true }, T.typing);
    emailBox = h("form", { class: "em", hidden: true, onsubmit: saveEmail },
      h("p", { id: "wm-ea" }, T.ask),
      h("label", { for: "wm-e" }, T.email),
      h("input", { id: "wm-e", type: "email", name: "email", required: true, autocomplete: "email", "aria-describedby": "wm-ea" }),
      h("button", { type: "submit" }, T.save));
    ta = h("textarea", { rows: "1", "aria-label": T.msg, placeholder: T.ph, maxlength: "4096", onkeydown: onKey, oninput: grow });
    fileIn = h("input", { type: "file", hidden: true, "aria-label": T.attach, accept: "image/jpeg,image/png,image/gif,image/webp,application/pdf", onchange: onFile });
    attachBtn = h("button", { type: "button", class: "b", "aria-label": T.attach, title: T.attach, onclick: function () { fileIn.click(); } }, icon(I_CLIP));
    sendBtn = h("button", { type: "submit", class: "b s", "aria-label": T.send, title: T.send }, icon(I_SEND));
    form = h("form", { class: "f", onsubmit: onSend }, ta, fileIn, attachBtn, sendBtn);
    panel = h("div", { class: "p", role: "dialog", "aria-label": T.chat, hidden: true, onkeydown: function (e) { if (e.key === "Escape") { e.stopPropagation(); close(); } } },
      h("div", { class: "hd" }, title, h("button", { type: "button", "aria-label": T.close, title: T.close, onclick: close }, icon(I_X))),
      note, errEl, log, typingEl, emailBox, form);
    launcher.id = "wm-l";
    panel.id = "wm-p";
    launcher.setAttribute("aria-controls", "wm-p");
    wrap.append(panel, launcher);
    root.append(wrap);
    paint();
    D.body.append(host);
  }

  function grow() {
    ta.style.height = "auto";
    ta.style.height = Math.min(ta.scrollHeight + 2, 120) + "px";
  }
  function show(el, text) {
    el.textContent = text || "";
    el.hidden = !text;
  }
  var errTimer;
  function fail(text) {
    show(errEl, text);
    clearTimeout(errTimer);
    if (text) errTimer = setTimeout(function () { show(errEl, cfgBad); }, 8000);
  }
  function bottom() { log.scrollTop = log.scrollHeight; }

  function open() {
    panel.hidden = false;
    launcher.setAttribute("aria-expanded", "true");
    launcher.classList.remove("n");
    launcher.setAttribute("aria-label", T.chat);
    launcher.replaceChildren(icon(I_X));
    if (!cfg) loadConfig();
    bottom();
    setTimeout(function () { (ta.disabled ? panel.querySelector(".hd button") : ta).focus(); });
  }
  function close() {
    var inside = panel.contains(root.activeElement);
    panel.hidden = true;
    launcher.setAttribute("aria-expanded", "false");
    launcher.replaceChildren(icon(I_CHAT));
    if (inside) launcher.focus();
  }

  // ---------------------------------------------------------------- HTTP
  function req(method, path, body, isForm) {
    var hd = {};
    if (tok) hd.Authorization = "Bearer " + tok;
    if (body && !isForm) {
      hd["Content-Type"] = "application/json";
      body = JSON.stringify(body);
    }
    return fetch(API + path, { method: method, headers: hd, body: body, credentials: "omit", mode: "cors", cache: "no-store" })
      .then(function (r) {
        return r.text().then(function (t) {
          var j = null;
          try { j = t ? JSON.parse(t) : null; } catch (e) { /* not JSON */ }
          return { s: r.status, j: j, ra: r.headers.get("Retry-After") };
        });
      });
  }
  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }

  var cfg = null, cfgBad = "";
  function loadConfig() {
    return req("GET", "/config").then(function (r) {
      if (r.s !== 200 || !r.j) throw r;
      cfg = r.j;
      cfgBad = "";
      show(errEl, "");
      lock(false);
      title.textContent = cfg.name || T.chat;
      panel.setAttribute("aria-label", title.textContent);
      show(greet, cfg.greeting);
      paint(cfg.color);
      checkEmail();
    }).catch(function (r) {
      // A 403 without CORS headers reaches a browser as a network error: either way no chat
      // (opening the panel asks again).
      cfgBad = r && r.s === 403 ? T.forbidden : T.unavail;
      show(errEl, cfgBad);
      lock(true);
    });
  }
  function lock(off) {
    [ta, sendBtn, attachBtn].forEach(function (el) { el.disabled = off; });
  }

  // ---------------------------------------------------------------- the visitor's token
  var tokP = null;
  function setTok(t) {
    tok = t;
    st(LS, TK, t);
    lastId = null;
    st(SS, LK, null);
    st(LS, EK, null);
  }
  function ensureToken() {
    if (!tok && (tok = st(LS, TK))) connect(); // another tab made one meanwhile
    if (tok) return Promise.resolve();
    if (!tokP) {
      tokP = req("POST", "/visitors").then(function (r) {
        tokP = null;
        if (r.s !== 201 && r.s !== 200 || !r.j || !r.j.visitorToken) throw r;
        setTok(r.j.visitorToken);
        loaded = true;
        connect();
      }, function (e) { tokP = null; throw e; });
    }
    return tokP;
  }
  function drop() {
    setTok(null);
    if (es) es.close();
    es = null;
    clearAll();
  }

  // ---------------------------------------------------------------- messages
  var byId = {}, pend = {}, loaded = false, paged = false, uid = 0;
  function clearAll() {
    byId = {};
    pend = {};
    list.replaceChildren();
    more.hidden = true;
    paged = false;
    checkEmail();
  }
  function when(m) { return m.createdAt ? Date.parse(m.createdAt) || 0 : Infinity; }
  function uuid() {
    if (W.crypto && crypto.randomUUID) return crypto.randomUUID();
    var b = crypto.getRandomValues(new Uint8Array(16)), s = "";
    b[6] = b[6] & 15 | 64;
    b[8] = b[8] & 63 | 128;
    b.forEach(function (x, i) { s += (i === 4 || i === 6 || i === 8 || i === 10 ? "-" : "") + (x + 256).toString(16).slice(1); });
    return s;
  }
  function mediaUrl(u) {
    try {
      var x = new URL(u, BASE + "/");
      if (!/^https?:$/.test(x.protocol)) return "";
      x.searchParams.set("token", tok || "");
      return x.href;
    } catch (e) { return ""; }
  }
  function hhmm(m) {
    var d = new Date(m.createdAt);
    return m.createdAt && !isNaN(d) ? d.toLocaleTimeString(LANG, { hour: "2-digit", minute: "2-digit" }) : "";
  }

  function render(m) {
    var out = m.direction === "OUTBOUND", md = m.media;
    var meta = [out ? m.author || cfg && cfg.name || T.agent : T.you, hhmm(m), m._s || (!out && m.status === "READ" ? T.seen : "")];
    var e = h("div", { class: "m" + (out ? "" : " i") + (m._x ? " x" : "") },
      h("span", { class: "mt" }, meta.filter(Boolean).join(" · ")));
    if (md) {
      var u = md.url && mediaUrl(md.url), name = md.filename || (m.type === "IMAGE" ? T.image : T.file);
      if (!u) e.append(h("span", {}, "📎 " + name));
      else if (m.type === "IMAGE" || /^image\//.test(md.mimeType || "")) {
        e.append(h("a", { href: u, target: "_blank", rel: "noopener noreferrer", referrerpolicy: "no-referrer" },
          h("img", { src: u, alt: name, referrerpolicy: "no-referrer", loading: "lazy" })));
      } else e.append(h("a", { href: u, download: md.filename || "", target: "_blank", rel: "noopener noreferrer", referrerpolicy: "no-referrer" }, "📎 " + name));
    }
    if (m.text) e.append(h("p", {}, m.text));
    if (out && m.buttons && m.buttons.length) {
      var g = h("div", { class: "bt" });
      m.buttons.forEach(function (b) {
        g.append(h("button", { type: "button", onclick: function () { tap(m, b, g); } }, b.title));
      });
      e.append(g);
    }
    return e;
  }

  // Inserts or updates a message in place, kept in chronological order by createdAt.
  function upsert(m, live) {
    if (!m || !m.id || m._gone) return;
    if (m.direction === "INBOUND" && !m._s && !byId[m.id]) {
      // Our own message, echoed by the stream before its POST answered: retire the draft.
      Object.keys(pend).some(function (c) {
        var p = pend[c];
        if (p._gone || !(m.clientId ? m.clientId === c : p.type === m.type && (p.text ? p.text === m.text : m.media && p.media.filename === m.media.filename))) return false;
        p._gone = true;
        unput(p.id);
        return true;
      });
    }
    var old = byId[m.id], key = JSON.stringify(m);
    if (old && old.k === key) return;
    var atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 60;
    var el = render(m), t = when(m);
    el._t = t;
    el._m = m;
    if (old && old.t === t) old.el.replaceWith(el);
    else {
      if (old) old.el.remove();
      var c = list.lastElementChild;
      while (c && c._t > t) c = c.previousElementSibling;
      if (c) c.after(el); else list.prepend(el);
    }
    byId[m.id] = { el: el, k: key, t: t, m: m };
    if (atEnd || m._s && !old) bottom();
    if (live && !old && m.direction === "OUTBOUND") {
      typingEl.hidden = true;
      if (panel.hidden) {
        launcher.classList.add("n");
        launcher.setAttribute("aria-label", T.chat + " (" + T.newmsg + ")");
      }
    }
    checkEmail();
  }
  function unput(id) {
    var o = byId[id];
    if (o) o.el.remove();
    delete byId[id];
  }

  function history(before) {
    var t = tok;
    if (!t) return Promise.resolve();
    return req("GET", "/messages?limit=50" + (before ? "&before=" + encodeURIComponent(before) : "")).then(function (r) {
      if (t !== tok) return; // identified meanwhile: another conversation
      if (r.s === 401) return drop();
      if (r.s !== 200 || !r.j) return;
      loaded = true;
      var h0 = log.scrollHeight, t0 = log.scrollTop;
      (r.j.data || []).forEach(function (m) { upsert(m); });
      if (before) log.scrollTop = t0 + log.scrollHeight - h0;
      if (before || !paged) more.hidden = !r.j.hasMore;
      if (before) paged = true;
    }).catch(function () { /* offline: the stream's reconnect tries again */ });
  }
  function earlier() {
    var first = Object.keys(byId).map(function (k) { return byId[k]; })
      .filter(function (o) { return !o.m._s; })
      .sort(function (a, b) { return a.t - b.t; })[0];
    if (first) history(first.m.id);
  }

  // Sends one message (text or file) until the server has it: the same clientId on every
  // try, so a retry after a lost answer makes no duplicate.
  function deliver(p, make, kind) {
    var n = 0;
    function again() {
      return ensureToken().then(make).catch(function (e) {
        if (e && e.s) return e;
        return null; // network: try again
      }).then(function (r) {
        if (r && r.s < 300) {
          p._gone = true;
          delete pend[p.clientId];
          unput(p.id);
          upsert(r.j);
          return;
        }
        if (r && r.s === 401 && n < 2) { drop(); n++; return again(); }
        if (r && r.s !== 429 && r.s !== 408 && r.s < 500) {
          p._s = T.failed + ": " + (r.s === 403 ? T.forbidden : r.s === 413 || r.s === 400 ? T[kind] : T.err);
          p._x = true;
          delete pend[p.clientId];
          if (!p._gone) upsert(p);
          return;
        }
        p._s = T.retry;
        if (!p._gone) upsert(p);
        return sleep(r && r.ra ? Math.min(+r.ra || 5, 120) * 1000 : Math.min(30000, 1000 * Math.pow(2, n++))).then(again);
      });
    }
    return again();
  }
  function draft(fields) {
    var c = uuid();
    var p = Object.assign({ id: "c:" + c + ":" + ++uid, clientId: c, direction: "INBOUND", _s: T.sending }, fields);
    pend[c] = p;
    upsert(p);
    return p;
  }
  function onKey(e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      onSend(e);
    }
  }
  function onSend(e) {
    e.preventDefault();
    var text = ta.value.trim();
    if (!text || ta.disabled) return;
    if (text.length > 4096) return fail(T.long);
    ta.value = "";
    grow();
    fail("");
    var p = draft({ type: "TEXT", text: text });
    deliver(p, function () { return req("POST", "/messages", { text: text, clientId: p.clientId }); }, "long");
  }
  function onFile() {
    var f = fileIn.files && fileIn.files[0];
    fileIn.value = "";
    if (!f) return;
    if (f.size > 10485760) return fail(T.big);
    var p = draft({ type: /^image\//.test(f.type) ? "IMAGE" : "DOCUMENT", text: null, media: { filename: f.name } });
    deliver(p, function () {
      var fd = new FormData();
      fd.append("clientId", p.clientId);
      fd.append("file", f, f.name);
      return req("POST", "/files", fd, true);
    }, "type");
  }
  function tap(m, b, g) {
    var btns = Array.prototype.slice.call(g.children);
    btns.forEach(function (x) { x.disabled = true; });
    ensureToken().then(function () {
      return req("POST", "/buttons", { messageId: m.id, buttonId: b.id });
    }).then(function (r) {
      if (r.s < 300) upsert(r.j); else fail(r.s === 429 ? T.slow : T.err);
    }, function () { fail(T.err); }).then(function () {
      btns.forEach(function (x) { x.disabled = false; });
    });
  }

  // ---------------------------------------------------------------- leave an email
  var emailTimer;
  function checkEmail() {
    clearTimeout(emailTimer);
    var n = cfg && cfg.emailAfterMinutes, first = null, show1 = false;
    if (n != null && tok && !st(LS, EK) && emailBox.dataset.done !== tok) {
      Array.prototype.forEach.call(list.children, function (el) {
        if (el._m.direction === "OUTBOUND") first = null;
        else if (first == null) first = el._t === Infinity ? Date.now() : el._t;
      });
      if (first != null) {
        var wait = first + n * 60000 - Date.now();
        if (wait <= 0) show1 = true; else emailTimer = setTimeout(checkEmail, Math.min(wait + 500, 2e9));
      }
    }
    if (emailBox.hidden === show1) emailBox.hidden = !show1;
  }
  function saveEmail(e) {
    e.preventDefault();
    var input = emailBox.querySelector("input"), v = input.value.trim();
    ensureToken().then(function () { return req("POST", "/email", { email: v }); }).then(function (r) {
      if (r.s >= 300) return fail(r.s === 429 ? T.slow : T.err);
      st(LS, EK, "1");
      emailBox.dataset.done = tok;
      emailBox.hidden = true;
      show(note, T.thanks + v + ".");
      setTimeout(function () { if (note.textContent.indexOf(v) > 0) show(note, ""); }, 8000);
    }, function () { fail(T.err); });
  }

  // ---------------------------------------------------------------- live events
  var es = null, esTimer, esTries = 0, typingTimer;
  function connect() {
    if (es) es.close();
    es = null;
    clearTimeout(esTimer);
    if (!tok) return;
    var u = API + "/events?token=" + encodeURIComponent(tok) + (lastId ? "&lastEventId=" + encodeURIComponent(lastId) : "");
    var s = es = new EventSource(u);
    function keep(e) {
      if (e.lastEventId) st(SS, LK, lastId = e.lastEventId);
    }
    s.onopen = function () {
      esTries = 0;
      show(note, "");
      // Without a cursor the stream only tells what happens from now on: read the history
      // once it is open, so nothing falls between the two.
      if (!lastId || !loaded) history();
    };
    s.addEventListener("message", function (e) {
      keep(e);
      try { upsert(JSON.parse(e.data), true); } catch (x) { /* not a message */ }
    });
    s.addEventListener("typing", function () {
      typingEl.hidden = false;
      clearTimeout(typingTimer);
      typingTimer = setTimeout(function () { typingEl.hidden = true; }, 6000);
    });
    s.onerror = function () {
      if (s !== es) return;
      show(note, T.lost);
      if (s.readyState === 2) { // closed for good (an HTTP error): is the token still ours?
        s.close();
        req("GET", "/messages?limit=1").then(function (r) { return r.s; }, function () { return 0; }).then(function (code) {
          if (s !== es) return;
          if (code === 401) { show(note, ""); return drop(); }
          if (!loaded) history();
          esTimer = setTimeout(connect, Math.min(30000, 2000 * Math.pow(2, esTries++)));
        });
      }
    };
  }

  // ---------------------------------------------------------------- identify, public API
  function identify(o) {
    o = o || {};
    return req("POST", "/identify", { identifier: o.identifier, identifierHash: o.identifierHash, email: o.email, name: o.name }).then(function (r) {
      if (r.s !== 200 || !r.j || !r.j.visitorToken) {
        if (W.console) console.warn("wm: identify was refused (" + r.s + ")");
        return false;
      }
      setTok(r.j.visitorToken);
      clearAll();
      loaded = false;
      connect();
      return true;
    }, function () { return false; });
  }
  function run(c) {
    var f = c && api[c[0]];
    return typeof f === "function" ? f.apply(null, [].slice.call(c, 1)) : undefined;
  }
  var api = { _wm: 1, open: open, close: close, identify: identify, q: { push: run } };

  // Another tab made, replaced (identify) or dropped the token: follow it.
  W.addEventListener("storage", function (e) {
    if (e.key !== TK || e.newValue === tok) return;
    tok = e.newValue;
    lastId = null;
    st(SS, LK, null);
    clearAll();
    loaded = false;
    if (tok) connect();
    else if (es) { es.close(); es = null; }
  });

  function start() {
    build();
    var pre = W.wm;
    W.wm = api;
    if (SET.identify) identify(SET.identify);
    if (pre && pre.q && pre.q.forEach) pre.q.forEach(run);
    loadConfig();
    if (tok) connect();
  }
  if (D.body) start(); else D.addEventListener("DOMContentLoaded", start);
})();
