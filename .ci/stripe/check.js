#!/usr/bin/env node
// Cross-checks wm-webhook's X-WM-Signature against Stripe's own webhook library.
//
//   node check.js verify <fixtures.json>  Stripe verifies fixtures signed by wm-webhook
//   node check.js sign <out.json>         Stripe signs fixtures for wm-webhook to verify
//   node check.js verify-dir <dir>        Stripe verifies deliveries captured from wm-server
//   node check.js bench                   times constructEvent at 256 B, 1 KiB and 16 KiB
//
// A fixture file is a JSON array of {name?, secret, header, body, expect: accept|reject}
// where body is the raw body as a string. A captured delivery is one file per delivery,
// {secret, headers: {"x-wm-signature": ..., ...}, body}. Node 20, CommonJS, no other deps.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const Stripe = require('stripe');

const stripe = Stripe('sk_test_dummy'); // never talks to the network; webhooks are local
const { StripeSignatureVerificationError } = Stripe.errors;
const FIXTURE_TOLERANCE_SECS = 600;
const CAPTURE_TOLERANCE_SECS = 3600;

function die(msg) {
  console.error(`check.js: ${msg}`);
  process.exit(1);
}

function readJson(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    die(`cannot read ${file}: ${e.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    die(`${file} is not valid JSON: ${e.message}`);
  }
}

// Runs constructEvent and says what happened: {ok: true} or {ok: false, error}.
function stripeVerify(body, header, secret, tolerance) {
  try {
    stripe.webhooks.constructEvent(body, header, secret, tolerance);
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

function describe(error) {
  const kind = error instanceof StripeSignatureVerificationError
    ? 'StripeSignatureVerificationError'
    : (error && error.constructor && error.constructor.name) || 'error';
  const first = String((error && error.message) || error).split('\n')[0].trim();
  return `${kind}: ${first}`;
}

// Checks one expectation; returns null when met, else why not.
function expectation(expect, result) {
  if (expect === 'accept') {
    return result.ok ? null : `expected accept, Stripe threw ${describe(result.error)}`;
  }
  if (expect === 'reject') {
    if (result.ok) return 'expected reject, but Stripe accepted it';
    if (!(result.error instanceof StripeSignatureVerificationError)) {
      return `expected StripeSignatureVerificationError, Stripe threw ${describe(result.error)}`;
    }
    return null;
  }
  return `"expect" must be "accept" or "reject", not ${JSON.stringify(expect)}`;
}

// One ASCII letter or digit near the middle changed, so the body stays valid UTF-8.
function tamper(body) {
  const bytes = Buffer.from(body, 'utf8');
  const isAlnum = (b) => (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7a);
  const start = Math.floor(bytes.length / 2);
  const order = [...Array(bytes.length).keys()].map((i) => (start + i) % bytes.length);
  const i = order.find((j) => isAlnum(bytes[j]));
  if (i === undefined) die(`no letter or digit to tamper with in ${JSON.stringify(body)}`);
  const b = bytes[i];
  bytes[i] = b === 0x39 ? 0x30 : b >= 0x30 && b <= 0x38 ? b + 1 : b ^ 0x20;
  return bytes.toString('utf8');
}

// A JSON object body of exactly len bytes (len >= 64), like the Rust benches use.
function jsonBody(len) {
  const head = '{"id":"evt_7c1","event":"contact.created","data":{"pad":"';
  const tail = '"}}';
  let pad = '';
  for (let i = 0; pad.length < len - head.length - tail.length; i++) {
    pad += String.fromCharCode(0x61 + (i % 26));
  }
  return head + pad + tail;
}

function bodies() {
  return [
    ['tiny', '{"a":1}'],
    ['unicode', '{"name":"Zoë Ñandú","city":"東京","emoji":"🦀✨","rtl":"שלום"}'],
    ['json-escapes', String.raw`{"note":"quote \" backslash \\ slash \/ e-acute \u00e9 tab \t"}`],
    ['whitespace', '{\r\n  "id" : "evt_1",\r\n\t"data" : {  "a" :  1 ,\n "b": [ 1, 2 ] }\r\n}\n'],
    ['1KiB', jsonBody(1024)],
    ['16KiB', jsonBody(16 * 1024)],
  ];
}

function verifyFixtures(file) {
  const fixtures = readJson(file);
  if (!Array.isArray(fixtures)) die(`${file}: expected a JSON array of fixtures`);
  const failures = [];
  let accepts = 0;
  let rejects = 0;
  fixtures.forEach((f, i) => {
    const label = f && f.name ? `fixture ${i} (${f.name})` : `fixture ${i}`;
    for (const key of ['secret', 'header', 'body', 'expect']) {
      if (!f || typeof f[key] !== 'string') die(`${label}: "${key}" is missing or not a string`);
    }
    const why = expectation(f.expect, stripeVerify(f.body, f.header, f.secret, FIXTURE_TOLERANCE_SECS));
    if (why) failures.push(`${label}: ${why}`);
    else if (f.expect === 'accept') accepts++;
    else rejects++;
  });
  if (failures.length) {
    failures.forEach((f) => console.error(`FAIL ${f}`));
    die(`${failures.length} of ${fixtures.length} fixtures in ${file} did not meet their expectation`);
  }
  if (!accepts || !rejects) {
    die(`${file}: need at least one accept and one reject fixture (${accepts} / ${rejects})`);
  }
  console.log(`${fixtures.length} fixtures checked (${accepts} accepted, ${rejects} rejected as expected; stripe@${Stripe.PACKAGE_VERSION})`);
}

function signFixtures(out) {
  const secret = 'whsec_' + crypto.randomBytes(24).toString('base64url');
  const other = 'whsec_' + crypto.randomBytes(24).toString('base64url');
  const timestamp = Math.floor(Date.now() / 1000);
  const header = (payload, s, t = timestamp) =>
    stripe.webhooks.generateTestHeaderString({ payload, secret: s, timestamp: t });
  const fixtures = [];
  for (const [name, body] of bodies()) {
    const h = header(body, secret);
    fixtures.push({ name, secret, header: h, body, expect: 'accept' });
    fixtures.push({ name: `${name} (one byte changed)`, secret, header: h, body: tamper(body), expect: 'reject' });
  }
  const body = '{"id":"evt_2","event":"deal.won"}';
  fixtures.push({ name: 'wrong secret', secret, header: header(body, other), body, expect: 'reject' });
  const v1 = (s) => header(body, s).split(',v1=')[1];
  fixtures.push({ name: 'two v1 entries', secret, header: `t=${timestamp},v1=${v1(other)},v1=${v1(secret)}`, body, expect: 'accept' });
  fixtures.push({ name: 'an hour old', secret, header: header(body, secret, timestamp - 3600), body, expect: 'reject' });
  fs.writeFileSync(out, JSON.stringify(fixtures, null, 2) + '\n');
  console.log(`${fixtures.length} fixtures written to ${out} (stripe@${Stripe.PACKAGE_VERSION})`);
}

function signatureHeader(headers) {
  if (!headers || typeof headers !== 'object') return undefined;
  if ('x-wm-signature' in headers) return headers['x-wm-signature'];
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'x-wm-signature');
  return key === undefined ? undefined : headers[key];
}

function verifyDir(dir) {
  let names;
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
  } catch (e) {
    die(`cannot list ${dir}: ${e.message}`);
  }
  if (!names.length) die(`no *.json captured deliveries in ${dir}`);
  const failures = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const d = readJson(file);
    const header = signatureHeader(d && d.headers);
    if (!d || typeof d.secret !== 'string') { failures.push(`${file}: "secret" is missing or not a string`); continue; }
    if (typeof d.body !== 'string') { failures.push(`${file}: "body" must be the raw body as a string`); continue; }
    if (typeof header !== 'string') { failures.push(`${file}: headers["x-wm-signature"] is missing or not a string`); continue; }
    const genuine = expectation('accept', stripeVerify(d.body, header, d.secret, CAPTURE_TOLERANCE_SECS));
    if (genuine) failures.push(`${file}: ${genuine}`);
    const tampered = expectation('reject', stripeVerify(tamper(d.body), header, d.secret, CAPTURE_TOLERANCE_SECS));
    if (tampered) failures.push(`${file} with one body byte changed: ${tampered}`);
  }
  if (failures.length) {
    failures.forEach((f) => console.error(`FAIL ${f}`));
    die(`${failures.length} problem(s) in ${names.length} captured deliveries in ${dir}`);
  }
  console.log(`${names.length} captured deliveries checked (each accepted, and rejected with one byte changed; stripe@${Stripe.PACKAGE_VERSION})`);
}

function bench() {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const cases = [[256, '256B', 200_000], [1024, '1KiB', 200_000], [16 * 1024, '16KiB', 20_000]];
  console.log(`stripe@${Stripe.PACKAGE_VERSION} on node ${process.version}; ns/op, best of 3 runs`);
  for (const [len, label, iters] of cases) {
    const body = jsonBody(len);
    const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret });
    const ops = {
      // What a receiver calls: verify, then JSON.parse the body.
      constructEvent: () => stripe.webhooks.constructEvent(body, header, secret, 600),
      // The signature check alone, like wm_webhook::verify (no JSON parse).
      'signature.verifyHeader': () => stripe.webhooks.signature.verifyHeader(body, header, secret, 600),
      generateTestHeaderString: () => stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
    };
    for (const [op, fn] of Object.entries(ops)) {
      for (let i = 0; i < Math.min(iters, 20_000); i++) fn(); // warm up the JIT
      let best = Infinity;
      for (let run = 0; run < 3; run++) {
        const start = process.hrtime.bigint();
        for (let i = 0; i < iters; i++) fn();
        best = Math.min(best, Number(process.hrtime.bigint() - start) / iters);
      }
      console.log(`${op.padEnd(25)} ${label.padStart(6)}  ${best.toFixed(0).padStart(8)} ns/op  (${iters} iterations)`);
    }
  }
}

const [mode, arg] = process.argv.slice(2);
const usage = 'usage: node check.js verify <fixtures.json> | sign <out.json> | verify-dir <dir> | bench';
switch (mode) {
  case 'verify': arg ? verifyFixtures(arg) : die(usage); break;
  case 'sign': arg ? signFixtures(arg) : die(usage); break;
  case 'verify-dir': arg ? verifyDir(arg) : die(usage); break;
  case 'bench': bench(); break;
  default: die(usage);
}
