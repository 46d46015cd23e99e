//! Cross-checks `wm-webhook` against Stripe's own webhook library (see `.ci/stripe/`).
//!
//! ```text
//! webhook_fixtures sign <out.json>    write fixtures signed by wm-webhook, for Stripe to check
//! webhook_fixtures verify <in.json>   check fixtures signed by Stripe with wm_webhook::verify
//! ```
//!
//! A fixture file is a JSON array of
//! `{"name", "secret", "header", "body", "expect": "accept" | "reject"}`; `body` is the raw
//! body as a string and `name` is optional. Timestamps are "now", so fixtures go stale after
//! a few minutes. Run: `cargo run -p wm-examples --example webhook_fixtures -- sign f.json`.

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::{Value, json};

const SECRET: &str = "whsec_wmFixtureSecret0123456789abcdefABCDEF";
const OTHER_SECRET: &str = "whsec_wmSomeoneElsesSecret9876543210zyxwvu";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("webhook_fixtures: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [mode, path] if mode == "sign" => sign(path),
        [mode, path] if mode == "verify" => verify(path),
        _ => bail!("usage: webhook_fixtures sign <out.json> | webhook_fixtures verify <in.json>"),
    }
}

fn now_secs() -> anyhow::Result<i64> {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .context("system clock is before 1970")?;
    Ok(i64::try_from(d.as_secs())?)
}

/// A JSON object body of exactly `len` bytes (`len` ≥ 64).
fn json_body(len: usize) -> String {
    let head = r#"{"id":"evt_7c1","event":"contact.created","data":{"pad":""#;
    let tail = r#""}}"#;
    let pad_len = len - head.len() - tail.len();
    let pad: String = (0..pad_len)
        .map(|i| char::from(b"abcdefghijklmnopqrstuvwxyz"[i % 26]))
        .collect();
    format!("{head}{pad}{tail}")
}

/// The bodies every run signs: all valid JSON (Stripe's `constructEvent` parses the body
/// after checking it), all distinct in what could go wrong when bytes are not kept raw.
fn bodies() -> Vec<(&'static str, String)> {
    vec![
        ("tiny", r#"{"a":1}"#.to_owned()),
        (
            "unicode",
            r#"{"name":"Zoë Ñandú","city":"東京","emoji":"🦀✨","rtl":"שלום"}"#.to_owned(),
        ),
        (
            "json-escapes",
            r#"{"note":"quote \" backslash \\ slash \/ e-acute \u00e9 tab \t"}"#.to_owned(),
        ),
        (
            "whitespace",
            "{\r\n  \"id\" : \"evt_1\",\r\n\t\"data\" : {  \"a\" :  1 ,\n \"b\": [ 1, 2 ] }\r\n}\n"
                .to_owned(),
        ),
        ("1KiB", json_body(1024)),
        ("16KiB", json_body(16 * 1024)),
    ]
}

/// `body` with one ASCII alphanumeric byte near the middle changed (still valid UTF-8).
fn tamper(body: &str) -> anyhow::Result<String> {
    let mut bytes = body.as_bytes().to_vec();
    let start = bytes.len() / 2;
    let i = (start..bytes.len())
        .chain(0..start)
        .find(|&i| bytes[i].is_ascii_alphanumeric())
        .context("no alphanumeric byte to tamper with")?;
    bytes[i] = match bytes[i] {
        b'9' => b'0',
        d @ b'0'..=b'8' => d + 1,
        c => c ^ 0x20, // flip ASCII case
    };
    Ok(String::from_utf8(bytes)?)
}

fn fixture(name: &str, secret: &str, header: &str, body: &str, expect: &str) -> Value {
    json!({ "name": name, "secret": secret, "header": header, "body": body, "expect": expect })
}

fn sign(path: &str) -> anyhow::Result<()> {
    let t = now_secs()?;
    let mut fixtures = Vec::new();
    for (name, body) in bodies() {
        let header = wm_webhook::sign_header(SECRET, t, body.as_bytes());
        fixtures.push(fixture(name, SECRET, &header, &body, "accept"));
        let tampered = tamper(&body)?;
        let twin = format!("{name} (one byte changed)");
        fixtures.push(fixture(&twin, SECRET, &header, &tampered, "reject"));
    }
    let body = r#"{"id":"evt_2","event":"deal.won"}"#;

    let header = wm_webhook::sign_header(OTHER_SECRET, t, body.as_bytes());
    fixtures.push(fixture("wrong secret", SECRET, &header, body, "reject"));

    // Rotation: an old secret's signature beside the current one; either may match.
    let rotated = format!(
        "t={t},v1={},v1={}",
        wm_webhook::sign(OTHER_SECRET, t, body.as_bytes()),
        wm_webhook::sign(SECRET, t, body.as_bytes()),
    );
    fixtures.push(fixture("two v1 entries", SECRET, &rotated, body, "accept"));

    // An hour old: outside both our 300 s and the checker's 600 s tolerance.
    let stale = wm_webhook::sign_header(SECRET, t - 3600, body.as_bytes());
    fixtures.push(fixture("an hour old", SECRET, &stale, body, "reject"));

    let n = fixtures.len();
    let text = serde_json::to_string_pretty(&Value::Array(fixtures))?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {path}"))?;
    println!("{n} fixtures written to {path}");
    Ok(())
}

fn field<'a>(f: &'a Value, key: &str, label: &str) -> anyhow::Result<&'a str> {
    f.get(key)
        .and_then(Value::as_str)
        .with_context(|| format!("{label}: \"{key}\" is missing or not a string"))
}

fn verify(path: &str) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;
    let fixtures = value
        .as_array()
        .with_context(|| format!("{path}: expected a JSON array of fixtures"))?;
    let now = now_secs()?;
    let (mut accepts, mut rejects, mut failures) = (0, 0, Vec::new());
    for (i, f) in fixtures.iter().enumerate() {
        let label = match f.get("name").and_then(Value::as_str) {
            Some(name) => format!("fixture {i} ({name})"),
            None => format!("fixture {i}"),
        };
        let secret = field(f, "secret", &label)?;
        let header = field(f, "header", &label)?;
        let body = field(f, "body", &label)?;
        let result = wm_webhook::verify(secret, header, body.as_bytes(), now);
        match (field(f, "expect", &label)?, result) {
            ("accept", Ok(())) => accepts += 1,
            ("reject", Err(_)) => rejects += 1,
            ("accept", Err(e)) => failures.push(format!("{label}: expected accept, got: {e}")),
            ("reject", Ok(())) => failures.push(format!("{label}: expected reject, but accepted")),
            (other, _) => bail!("{label}: \"expect\" must be accept or reject, not {other:?}"),
        }
    }
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("FAIL {f}");
        }
        bail!(
            "{} of {} fixtures in {path} did not meet their expectation",
            failures.len(),
            fixtures.len()
        );
    }
    if accepts == 0 || rejects == 0 {
        bail!("{path}: need at least one accept and one reject fixture ({accepts} / {rejects})");
    }
    println!(
        "{} fixtures checked ({accepts} accepted, {rejects} rejected as expected)",
        fixtures.len()
    );
    Ok(())
}
