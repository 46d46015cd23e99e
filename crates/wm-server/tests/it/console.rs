//! The console through the real server over TCP, as a browser uses it: sign-in with a key,
//! the session cookie, CSRF on every form, scopes, revocation, expiry, the streamed import
//! and forms sent twice. (The whole flow in a real Chromium, with axe, is `.ci/console.sh`.)

use std::collections::HashMap;
use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};

use crate::support::{Org, Served, TestApp};

/// A browser: keeps cookies, follows no redirect (the tests read them).
pub(crate) struct Browser {
    http: reqwest::Client,
    origin: String,
    cookies: HashMap<String, String>,
}

/// One answer.
pub(crate) struct Answer {
    status: u16,
    location: Option<String>,
    set_cookies: Vec<String>,
    body: String,
}

impl Answer {
    fn cookie(&self, name: &str) -> Option<&str> {
        self.set_cookies
            .iter()
            .find(|c| c.starts_with(&format!("{name}=")))
            .map(String::as_str)
    }

    fn csrf(&self) -> String {
        hidden(&self.body, "_csrf")
    }
}

/// A URL-encoded form body.
fn encoded(form: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish()
}

/// The value of the first hidden input `name` in a page.
fn hidden(body: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let at = body
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in {body}"))
        + marker.len();
    body[at..].split('"').next().unwrap_or_default().to_owned()
}

impl Browser {
    pub(crate) fn new(served: &Served) -> Browser {
        Browser {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            origin: served.base.trim_end_matches("/api/v1").to_owned(),
            cookies: HashMap::new(),
        }
    }

    pub(crate) fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn answer(&mut self, req: reqwest::RequestBuilder) -> Answer {
        let res = req
            .header("cookie", self.cookie_header())
            .send()
            .await
            .expect("request");
        let status = res.status().as_u16();
        let location = res
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let set_cookies: Vec<String> = res
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect();
        for c in &set_cookies {
            let pair = c.split(';').next().unwrap_or_default();
            if let Some((k, v)) = pair.split_once('=') {
                if v.is_empty() || c.contains("Max-Age=0") {
                    self.cookies.remove(k);
                } else {
                    self.cookies.insert(k.to_owned(), v.to_owned());
                }
            }
        }
        let body = res.text().await.expect("body");
        Answer {
            status,
            location,
            set_cookies,
            body,
        }
    }

    async fn get(&mut self, path: &str) -> Answer {
        let req = self.http.get(format!("{}{path}", self.origin));
        self.answer(req).await
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Answer {
        let body = encoded(form);
        let req = self
            .http
            .post(format!("{}{path}", self.origin))
            .header("origin", &self.origin)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        self.answer(req).await
    }

    /// Signs in with `key`; returns the sign-in answer.
    pub(crate) async fn sign_in(&mut self, key: &str) -> Answer {
        let form = self.get("/console/sign-in").await;
        assert_eq!(form.status, 200);
        let token = form.csrf();
        self.post("/console/sign-in", &[("_csrf", &token), ("apiKey", key)])
            .await
    }
}

async fn served() -> (TestApp, Served) {
    let app = TestApp::new().await;
    let served = app.serve().await;
    (app, served)
}

/// The customer `external` (`name`) writes `text` through the operator's stand-in for the
/// platform; the answer says which contact, conversation and message it became.
pub(crate) async fn customer_writes(
    org: &Org<'_>,
    external: &str,
    name: &str,
    text: &str,
) -> Value {
    org.admin(
        Method::POST,
        "/inbound",
        Some(
            json!({"channelType": "MESSAGING_APP_A", "externalId": external,
                    "fullName": name, "text": text}),
        ),
    )
    .await
    .ok(200)
}

/// The id field `field` of an answer.
pub(crate) fn id_of(v: &Value, field: &str) -> String {
    v[field].as_str().expect(field).to_owned()
}

async fn contacts_named(org: &Org<'_>, name: &str) -> u64 {
    let list = org
        .get(&format!("/contacts?q={}", name.replace(' ', "+")))
        .await
        .ok(200);
    list["meta"]["total"].as_u64().expect("total")
}

#[tokio::test]
async fn signing_in_opens_the_console_and_signing_out_closes_it() {
    let (app, served) = served().await;
    let org = app.org().await;
    let mut b = Browser::new(&served);

    let closed = b.get("/console/contacts").await;
    assert_eq!(closed.status, 303);
    assert_eq!(closed.location.as_deref(), Some("/console/sign-in"));

    let wrong = b.sign_in("wm_live_not_a_key_at_all_000000000000").await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.body.contains("not valid"), "{}", wrong.body);
    assert!(wrong.cookie("wm_console").is_none());
    assert!(
        !wrong.body.contains("wm_live_not_a_key"),
        "the key is never shown back"
    );

    let signed = b.sign_in(&org.key).await;
    assert_eq!(signed.status, 303);
    assert_eq!(signed.location.as_deref(), Some("/console"));
    let cookie = signed.cookie("wm_console").expect("session cookie");
    for attribute in [
        "HttpOnly",
        "SameSite=Strict",
        "Path=/console",
        "Max-Age=43200",
    ] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain http: {cookie}");
    assert!(
        !cookie.contains(&org.key),
        "the cookie is a session token, not the key"
    );

    let home = b.get("/console").await;
    assert_eq!(home.status, 200);
    assert!(home.body.contains("<h1>Home</h1>"));
    assert!(home.body.contains("Wallet"));
    assert!(!home.body.contains(&org.key), "the key is never in a page");

    let token = home.csrf();
    let out = b.post("/console/sign-out", &[("_csrf", &token)]).await;
    assert_eq!(out.status, 303);
    assert_eq!(out.location.as_deref(), Some("/console/sign-in"));
    let page = b.get("/console/sign-in").await;
    assert!(page.body.contains("You are signed out."));

    // The old session cookie, sent again, opens nothing.
    b.cookies.insert(
        "wm_console".into(),
        cookie
            .split(';')
            .next()
            .and_then(|p| p.split_once('='))
            .map(|(_, v)| v.to_owned())
            .unwrap_or_default(),
    );
    let after = b.get("/console").await;
    assert_eq!(after.status, 303);
    assert_eq!(after.location.as_deref(), Some("/console/sign-in"));
    served.shut_down().await;
}

#[tokio::test]
async fn behind_https_the_session_cookie_is_secure() {
    let (app, served) = served().await;
    let org = app.org().await;
    let b = Browser::new(&served);
    let form = b
        .http
        .get(format!("{}/console/sign-in", b.origin))
        .header("x-forwarded-proto", "https")
        .send()
        .await
        .expect("form");
    let pre = form
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .expect("sign-in cookie")
        .to_owned();
    assert!(pre.contains("; Secure"), "{pre}");
    let token = hidden(&form.text().await.expect("body"), "_csrf");
    let signed = b
        .http
        .post(format!("{}/console/sign-in", b.origin))
        .header("x-forwarded-proto", "https")
        .header("cookie", format!("wm_console_sign_in={token}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encoded(&[("_csrf", &token), ("apiKey", &org.key)]))
        .send()
        .await
        .expect("sign in");
    assert_eq!(signed.status().as_u16(), 303);
    let session = signed
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("wm_console="))
        .expect("session cookie")
        .to_owned();
    assert!(session.contains("; Secure"), "{session}");
    served.shut_down().await;
}

#[tokio::test]
async fn a_form_without_the_sessions_token_changes_nothing() {
    let (app, served) = served().await;
    let org = app.org().await;
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let form = b.get("/console/contacts/new").await;
    assert_eq!(form.status, 200);
    let token = form.csrf();

    // No token, a wrong token, and the right token from another site: all refused.
    let none = b
        .post("/console/contacts", &[("fullName", "Eve Forged")])
        .await;
    assert_eq!(none.status, 403);
    let wrong = b
        .post(
            "/console/contacts",
            &[("_csrf", "0000"), ("fullName", "Eve Forged")],
        )
        .await;
    assert_eq!(wrong.status, 403);
    let req = b
        .http
        .post(format!("{}/console/contacts", b.origin))
        .header("origin", "https://evil.example.com")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encoded(&[("_csrf", &token), ("fullName", "Eve Forged")]));
    let foreign = b.answer(req).await;
    assert_eq!(foreign.status, 403);
    assert_eq!(contacts_named(&org, "Eve Forged").await, 0);

    // The sign-in form is guarded too (by its own cookie's token).
    let mut other = Browser::new(&served);
    let forged = other
        .post("/console/sign-in", &[("_csrf", "x"), ("apiKey", &org.key)])
        .await;
    assert_ne!(
        forged.status, 303,
        "a sign-in without the form's token is refused"
    );
    assert!(forged.cookie("wm_console").is_none());

    // With the token the contact is made, and the page shows it.
    let made = b
        .post(
            "/console/contacts",
            &[
                ("_csrf", &token),
                ("_idem", "a1b2"),
                ("fullName", "Ada Console"),
                ("primaryPhone", "+52 55 1234 0099"),
                ("tags", "vip, console"),
                ("consentGiven", "on"),
            ],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let to = made.location.expect("to the contact");
    let page = b.get(&to).await;
    assert!(page.body.contains("<h1>Ada Console</h1>"));
    assert!(page.body.contains("Contact created."));
    assert!(page.body.contains("vip, console"));

    // The same form sent again (a double click): its Idempotency-Key makes it one contact.
    let again = b
        .post(
            "/console/contacts",
            &[
                ("_csrf", &token),
                ("_idem", "a1b2"),
                ("fullName", "Ada Console"),
                ("primaryPhone", "+52 55 1234 0099"),
                ("tags", "vip, console"),
                ("consentGiven", "on"),
            ],
        )
        .await;
    assert_eq!(again.location.as_deref(), Some(to.as_str()));
    assert_eq!(contacts_named(&org, "Ada Console").await, 1);

    // Behind a reverse proxy the browser's origin is the proxy's host, which it passes on.
    let req = b
        .http
        .post(format!("{}/console/contacts", b.origin))
        .header("origin", "https://wm.example.com")
        .header("x-forwarded-host", "wm.example.com")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encoded(&[("_csrf", &token), ("fullName", "Bea Proxy")]));
    assert_eq!(b.answer(req).await.status, 303);
    assert_eq!(contacts_named(&org, "Bea Proxy").await, 1);

    // A refused form comes back with what was typed and the API's reason.
    let taken = b
        .post(
            "/console/contacts",
            &[
                ("_csrf", &token),
                ("_idem", "c3d4"),
                ("fullName", "Ada Twin"),
                ("primaryPhone", "+52 55 1234 0099"),
            ],
        )
        .await;
    assert_eq!(taken.status, 422);
    assert!(taken.body.contains("value=\"Ada Twin\""));
    assert!(taken.body.contains("role=\"alert\""));
    served.shut_down().await;
}

#[tokio::test]
async fn a_key_without_a_scope_sees_no_such_part_and_is_refused_it() {
    let (app, served) = served().await;
    let org = app.org().await;
    let key = org.key_with(&["contacts:read"]).await;
    let mut b = Browser::new(&served);
    assert_eq!(b.sign_in(&key).await.status, 303);

    let home = b.get("/console").await;
    assert_eq!(home.status, 200);
    assert!(
        !home.body.contains("Wallet"),
        "no campaigns:read, no wallet panel"
    );
    assert!(home.body.contains("href=\"/console/contacts\""));
    assert!(!home.body.contains("href=\"/console/campaigns\""));
    let contacts = b.get("/console/contacts").await;
    assert_eq!(contacts.status, 200);
    assert!(
        !contacts.body.contains("New contact"),
        "no contacts:write, no create button"
    );

    let refused = b.get("/console/campaigns").await;
    assert_eq!(refused.status, 403);
    assert!(refused.body.contains("campaigns:read"), "{}", refused.body);
    let new = b.get("/console/contacts/new").await;
    assert!(
        new.status == 200 || new.status == 403,
        "never a 500: {}",
        new.status
    );
    let form = b.get("/console/contacts").await;
    let posted = b
        .post(
            "/console/contacts",
            &[("_csrf", &form.csrf()), ("fullName", "Not Allowed")],
        )
        .await;
    assert_eq!(posted.status, 422);
    assert!(posted.body.contains("contacts:write"));
    assert_eq!(contacts_named(&org, "Not Allowed").await, 0);

    // A contact's page offers no identity form and no delete; a forged delete is refused
    // by the API and the contact stays.
    let id = org.contact(json!({"fullName": "Solo Lectura"})).await["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let contact = b.get(&format!("/console/contacts/{id}")).await;
    assert_eq!(contact.status, 200);
    assert!(!contact.body.contains("Add an identity"));
    assert!(!contact.body.contains("Delete contact"));
    b.post(
        &format!("/console/contacts/{id}/delete"),
        &[("_csrf", &contact.csrf()), ("confirm", "yes")],
    )
    .await;
    assert!(
        b.get(&format!("/console/contacts/{id}"))
            .await
            .body
            .contains("contacts:write")
    );
    assert_eq!(org.get(&format!("/contacts/{id}")).await.status, 200);
    served.shut_down().await;
}

#[tokio::test]
async fn revoking_the_key_or_the_sessions_age_ends_it() {
    let (app, served) = served().await;
    let org = app.org().await;
    let created = org
        .admin(
            Method::POST,
            "/api-keys",
            Some(json!({"name": "console", "userId": org.user_id, "scopes": ["contacts:read"]})),
        )
        .await
        .ok(201);
    let key = created["key"].as_str().expect("key").to_owned();
    let key_id = created["id"].as_str().expect("id").to_owned();

    let mut b = Browser::new(&served);
    b.sign_in(&key).await;
    assert_eq!(b.get("/console/contacts").await.status, 200);
    org.admin(Method::POST, &format!("/api-keys/{key_id}/revoke"), None)
        .await
        .ok(200);
    let after = b.get("/console/contacts").await;
    assert_eq!(after.status, 303);
    assert_eq!(after.location.as_deref(), Some("/console/sign-in"));

    // A session lasts 12 hours.
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    app.clock.advance(chrono::Duration::hours(11));
    assert_eq!(b.get("/console").await.status, 200);
    app.clock.advance(chrono::Duration::hours(1));
    assert_eq!(b.get("/console").await.status, 303);
    served.shut_down().await;
}

#[tokio::test]
async fn an_uploaded_csv_is_imported_with_the_chosen_mapping() {
    let (app, served) = served().await;
    let org = app.org().await;
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let form = b.get("/console/imports/new").await;
    let token = form.csrf();
    let csv = "Nombre,Tel,Ignored\nLuz Mapeada,+5215550001001,x\nSol Mapeado,+5215550001002,y\nBad Row,not a phone,z\n";
    let upload = |idem: &'static str| {
        reqwest::multipart::Form::new()
            .text("_csrf", token.clone())
            .text("_idem", idem)
            .text("dedupe", "SKIP")
            .part(
                "file",
                reqwest::multipart::Part::text(csv)
                    .file_name("people.csv")
                    .mime_str("text/csv")
                    .expect("mime"),
            )
            .text("map:Nombre", "fullName")
            .text("map:Tel", "primaryPhone")
            .text("map:Ignored", "")
    };
    let req = b
        .http
        .post(format!("{}/console/imports", b.origin))
        .header("origin", &b.origin)
        .multipart(upload("imp-1"));
    let sent = b.answer(req).await;
    assert_eq!(sent.status, 303, "{}", sent.body);
    let to = sent.location.expect("to the job");
    let job = to.rsplit('/').next().expect("id").to_owned();

    let mut status = Value::Null;
    for _ in 0..100 {
        status = org.get(&format!("/contacts/imports/{job}")).await.ok(200);
        if status["status"] == "COMPLETED" || status["status"] == "FAILED" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status["status"], "COMPLETED", "{status}");
    assert_eq!(status["created"], 2);
    assert_eq!(status["failed"], 1);
    assert_eq!(contacts_named(&org, "Luz Mapeada").await, 1);
    let page = b.get(&to).await;
    assert!(page.body.contains("id=\"import-status\">COMPLETED"));
    assert!(page.body.contains("id=\"import-errors\""));
    assert!(
        !page.body.contains("data-live"),
        "an ended job stops refreshing"
    );

    // The same form again (a reload after a timeout): the same job, not a second import.
    let req = b
        .http
        .post(format!("{}/console/imports", b.origin))
        .header("origin", &b.origin)
        .multipart(upload("imp-1"));
    let again = b.answer(req).await;
    assert_eq!(again.location.as_deref(), Some(to.as_str()));
    let jobs = org.get("/contacts/imports").await.ok(200);
    assert_eq!(jobs["meta"]["total"], 1);

    // Without the session's token first, nothing is read.
    let req = b
        .http
        .post(format!("{}/console/imports", b.origin))
        .header("origin", &b.origin)
        .multipart(
            reqwest::multipart::Form::new()
                .text("_csrf", "forged")
                .text("_idem", "imp-2")
                .part(
                    "file",
                    reqwest::multipart::Part::text(csv).file_name("x.csv"),
                ),
        );
    assert_eq!(b.answer(req).await.status, 403);
    served.shut_down().await;
}

#[tokio::test]
async fn pages_answer_4xx_for_what_does_not_exist() {
    let (app, served) = served().await;
    let org = app.org().await;
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let missing = b
        .get("/console/contacts/01020304-0506-4708-890a-0b0c0d0e0f10")
        .await;
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("Not found"));
    assert_eq!(b.get("/console/nowhere").await.status, 404);
    assert_eq!(b.get("/console/contacts/not-a-uuid").await.status / 100, 4);
    let page = b.get("/console").await;
    assert!(page.body.contains("<main id=\"main\""));
    served.shut_down().await;
}

#[tokio::test]
async fn the_thread_shows_new_messages_and_its_reply_box_follows_the_window() {
    let (app, served) = served().await;
    let org = app.org().await;
    crate::kit::setup(&org).await;
    let writes = |text: &'static str| customer_writes(&org, "5215512345678", "Caro Cliente", text);
    let conversation = id_of(&writes("¿Tienen envío gratis?").await, "conversationId");
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let inbox = b.get("/console/inbox").await;
    assert!(inbox.body.contains(&format!(
        "href=\"/console/inbox/{conversation}\">Caro Cliente</a>"
    )));

    let path = format!("/console/inbox/{conversation}");
    let page = b.get(&path).await;
    assert!(page.body.contains("¿Tienen envío gratis?"));
    assert!(
        page.body.contains("window is <strong>open"),
        "{}",
        page.body
    );
    assert!(page.body.contains("name=\"text\""));
    assert!(!page.body.contains("id=\"reply-template\""));
    let sent = b
        .post(
            &format!("{path}/reply"),
            &[
                ("_csrf", &page.csrf()),
                ("_idem", "r1"),
                ("text", "Sí, desde $500."),
            ],
        )
        .await;
    assert_eq!(sent.location.as_deref(), Some(path.as_str()));
    let thread = org
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .ok(200);
    assert_eq!(thread["data"][0]["text"], "Sí, desde $500.");
    assert_eq!(thread["data"][0]["direction"], "OUTBOUND");

    // The customer writes again: the page's live part shows it.
    writes("¡Gracias!").await;
    let live = b.get(&format!("{path}/live?open=true")).await;
    assert_eq!(live.status, 200);
    assert!(live.body.contains("¡Gracias!") && live.body.contains("Sí, desde $500."));
    assert!(live.body.contains("data-live"), "still refreshing");

    // A day later the window has closed: the live part asks for a reload, and the page
    // offers the approved templates instead of the text box.
    app.clock.advance(chrono::Duration::hours(11));
    writes("¿Y los domingos?").await;
    app.clock.advance(chrono::Duration::hours(25));
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let live = b.get(&format!("{path}/live?open=true")).await;
    assert_eq!(live.status, 200);
    assert!(live.body.contains("¿Y los domingos?"));
    assert!(!live.body.contains("data-live"), "the page reloads");
    let page = b.get(&path).await;
    assert!(page.body.contains("window is <strong>closed"));
    assert!(page.body.contains("id=\"reply-template\""));
    assert!(page.body.contains("promo"));
    assert!(!page.body.contains("name=\"text\""));
    served.shut_down().await;
}

#[tokio::test]
async fn contacts_ticked_in_the_list_join_a_draft_campaign_and_get_a_tag() {
    let (app, served) = served().await;
    let org = app.org().await;
    let kit = crate::kit::setup(&org).await;
    let campaign = crate::kit::campaign(&org, &kit, &kit.plain).await;
    let ids = crate::kit::contacts(&org, 3, "lead").await;
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let list = b.get("/console/contacts").await;
    assert!(list.body.contains("form=\"bulk\" name=\"ids\""));
    assert!(
        list.body
            .contains(&format!("<option value=\"{campaign}\">"))
    );
    let token = list.csrf();
    let done = b
        .post(
            "/console/contacts/bulk",
            &[
                ("_csrf", &token),
                ("back", "/console/contacts?tab=all"),
                ("ids", &ids[0]),
                ("ids", &ids[1]),
                ("campaignId", &campaign),
                ("addTags", "spring, vip"),
            ],
        )
        .await;
    assert_eq!(done.location.as_deref(), Some("/console/contacts?tab=all"));
    let recipients = org
        .get(&format!("/campaigns/{campaign}/recipients"))
        .await
        .ok(200);
    assert_eq!(recipients["meta"]["total"], 2);
    let first = org.get(&format!("/contacts/{}", ids[0])).await.ok(200);
    let tags: Vec<&str> = first["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tags.contains(&"spring") && tags.contains(&"vip"),
        "{tags:?}"
    );
    let third = org.get(&format!("/contacts/{}", ids[2])).await.ok(200);
    assert!(!third["tags"].to_string().contains("spring"));
    let page = b.get("/console/contacts?tab=all").await;
    assert!(
        page.body.contains("2 added to the campaign"),
        "{}",
        page.body
    );

    // Somewhere else than the console's list is never where the form goes back to.
    let away = b
        .post(
            "/console/contacts/bulk",
            &[
                ("_csrf", &token),
                ("back", "https://evil.example.com/"),
                ("ids", &ids[2]),
            ],
        )
        .await;
    assert_eq!(away.location.as_deref(), Some("/console/contacts"));
    served.shut_down().await;
}

#[tokio::test]
async fn a_file_sent_from_the_thread_reaches_the_customer_as_its_kind() {
    let (app, served) = served().await;
    let org = app.org().await;
    crate::kit::setup(&org).await;
    let conversation = id_of(
        &customer_writes(&org, "5215512345679", "Fer Fotos", "¿Me manda el catálogo?").await,
        "conversationId",
    );
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let path = format!("/console/inbox/{conversation}");
    let page = b.get(&path).await;
    assert!(page.body.contains("name=\"file\""), "{}", page.body);
    let token = page.csrf();
    // The page's order: the hidden fields, the file, then its caption.
    let send = |b: &Browser, idem: &str, bytes: Vec<u8>, name: &str, mime: &str, caption: &str| {
        let form = reqwest::multipart::Form::new()
            .text("_csrf", token.clone())
            .text("_idem", idem.to_owned())
            .part(
                "file",
                reqwest::multipart::Part::bytes(bytes)
                    .file_name(name.to_owned())
                    .mime_str(mime)
                    .expect("mime"),
            )
            .text("caption", caption.to_owned());
        b.http
            .post(format!("{}{path}/file", b.origin))
            .header("origin", &b.origin)
            .multipart(form)
    };
    let png =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89".to_vec();
    let req = send(&b, "f1", png.clone(), "foto.png", "image/png", "Así se ve");
    let sent = b.answer(req).await;
    assert_eq!(
        sent.location.as_deref(),
        Some(path.as_str()),
        "{}",
        sent.body
    );
    let pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n".to_vec();
    let req = send(&b, "f2", pdf, "catalogo.pdf", "application/pdf", "");
    assert_eq!(b.answer(req).await.status, 303);
    // The same image form again (a reload): no second message.
    let req = send(&b, "f1", png, "foto.png", "image/png", "Así se ve");
    assert_eq!(b.answer(req).await.status, 303);

    let thread = org
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .ok(200);
    let out: Vec<&Value> = thread["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|m| m["direction"] == "OUTBOUND")
        .collect();
    assert_eq!(out.len(), 2, "{thread}");
    let (doc, image) = (out[0], out[1]);
    assert_eq!(image["type"], "IMAGE");
    assert_eq!(image["media"]["caption"], "Así se ve");
    assert_eq!(image["media"]["mimeType"], "image/png");
    assert_eq!(image["sentBy"]["kind"], "USER");
    assert_eq!(doc["type"], "DOCUMENT");
    assert_eq!(doc["media"]["filename"], "catalogo.pdf");
    assert!(doc["media"]["caption"].is_null());
    let media_id = image["media"]["id"].as_str().expect("media id").to_owned();
    let page = b.get(&path).await;
    assert!(page.body.contains("File sent."), "{}", page.body);
    assert!(
        page.body.contains(&format!(
            "src=\"/console/media/{media_id}\" alt=\"Así se ve\""
        )),
        "{}",
        page.body
    );

    // A kind the platform does not take comes back with the API's reason; nothing is sent.
    let req = send(
        &b,
        "f3",
        b"PK\x03\x04".to_vec(),
        "fotos.zip",
        "application/zip",
        "",
    );
    assert_eq!(b.answer(req).await.status, 303);
    let page = b.get(&path).await;
    assert!(page.body.contains("class=\"flash error\""), "{}", page.body);
    // No file chosen.
    let req = send(&b, "f4", Vec::new(), "", "application/octet-stream", "");
    b.answer(req).await;
    assert!(b.get(&path).await.body.contains("Choose a file to send."));
    // A forged token reads nothing.
    let form = reqwest::multipart::Form::new()
        .text("_csrf", "forged")
        .text("_idem", "f5")
        .part(
            "file",
            reqwest::multipart::Part::bytes(b"x".to_vec()).file_name("a.txt"),
        );
    let req = b
        .http
        .post(format!("{}{path}/file", b.origin))
        .header("origin", &b.origin)
        .multipart(form);
    assert_eq!(b.answer(req).await.status, 403);
    let thread = org
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .ok(200);
    assert_eq!(thread["data"].as_array().map(Vec::len), Some(3));
    served.shut_down().await;
}

#[tokio::test]
async fn a_contact_gets_an_identity_and_is_deleted_only_without_history() {
    let (app, served) = served().await;
    let org = app.org().await;
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let fresh = org
        .contact(json!({"fullName": "Nuevo Sin Historia", "primaryPhone": "+5215550002001"}))
        .await["id"]
        .as_str()
        .expect("id")
        .to_owned();
    // EMAIL is not active until the operator adds the channel: the API says so.
    let path = format!("/console/contacts/{fresh}");
    let page = b.get(&path).await;
    b.post(
        &format!("{path}/identities"),
        &[
            ("_csrf", &page.csrf()),
            ("_idem", "i0"),
            ("channelType", "EMAIL"),
            ("externalId", "nuevo@example.com"),
        ],
    )
    .await;
    assert!(
        b.get(&path)
            .await
            .body
            .contains("channelType EMAIL is not active in this organization")
    );
    org.admin(Method::POST, "/channels", Some(json!({"type": "EMAIL"})))
        .await
        .ok(201);
    let page = b.get(&path).await;
    assert!(page.body.contains("Add an identity"));
    assert!(page.body.contains("Delete contact"));
    let token = page.csrf();

    // Another channel's id for them.
    let added = b
        .post(
            &format!("{path}/identities"),
            &[
                ("_csrf", &token),
                ("_idem", "i1"),
                ("channelType", "EMAIL"),
                ("externalId", "nuevo@example.com"),
            ],
        )
        .await;
    assert_eq!(added.location.as_deref(), Some(path.as_str()));
    let c = org.get(&format!("/contacts/{fresh}")).await.ok(200);
    assert!(
        c["identities"]
            .as_array()
            .expect("identities")
            .iter()
            .any(|i| i["externalId"] == "nuevo@example.com"),
        "{c}"
    );
    assert!(
        b.get(&path)
            .await
            .body
            .contains("Identity nuevo@example.com added.")
    );
    // Someone else's phone is refused with the API's reason.
    org.contact(json!({"fullName": "Otra", "primaryPhone": "+5215550002002"}))
        .await;
    b.post(
        &format!("{path}/identities"),
        &[
            ("_csrf", &token),
            ("_idem", "i2"),
            ("channelType", "MESSAGING_APP_A"),
            ("externalId", "5215550002002"),
        ],
    )
    .await;
    assert!(b.get(&path).await.body.contains("class=\"flash error\""));

    // Without the box ticked nothing is deleted.
    b.post(&format!("{path}/delete"), &[("_csrf", &token)])
        .await;
    assert!(
        b.get(&path)
            .await
            .body
            .contains("Tick the box to delete the contact.")
    );
    assert_eq!(org.get(&format!("/contacts/{fresh}")).await.status, 200);

    // A contact who wrote in has history: kept, and the page says why.
    let writer = id_of(
        &customer_writes(&org, "5215550002003", "Con Historia", "hola").await,
        "contactId",
    );
    let kept = format!("/console/contacts/{writer}");
    let refused = b
        .post(
            &format!("{kept}/delete"),
            &[("_csrf", &token), ("confirm", "yes")],
        )
        .await;
    assert_eq!(refused.location.as_deref(), Some(kept.as_str()));
    assert!(b.get(&kept).await.body.contains("set optedOut instead"));
    assert_eq!(org.get(&format!("/contacts/{writer}")).await.status, 200);

    let deleted = b
        .post(
            &format!("{path}/delete"),
            &[("_csrf", &token), ("confirm", "yes")],
        )
        .await;
    assert_eq!(deleted.location.as_deref(), Some("/console/contacts"));
    assert!(
        b.get("/console/contacts")
            .await
            .body
            .contains("Contact deleted.")
    );
    org.get(&format!("/contacts/{fresh}"))
        .await
        .assert_error(404, None);
    served.shut_down().await;
}

#[tokio::test]
async fn a_webhook_is_edited_and_deleted() {
    let (app, served) = served().await;
    let org = app.org().await;
    let hook = org
        .post(
            "/webhooks",
            json!({"url": "https://hooks.example.com/wm", "events": ["contact.created"]}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let path = format!("/console/webhooks/{hook}");
    assert!(b.get(&path).await.body.contains("Edit webhook"));
    let form = b.get(&format!("{path}/edit")).await;
    assert_eq!(form.status, 200);
    assert!(form.body.contains("value=\"https://hooks.example.com/wm\""));
    assert!(
        form.body.contains("value=\"contact.created\" checked"),
        "{}",
        form.body
    );
    let token = form.csrf();

    let saved = b
        .post(
            &format!("{path}/edit"),
            &[
                ("_csrf", &token),
                ("url", "https://hooks.example.com/v2"),
                ("description", "CRM sync"),
                ("events", "contact.created"),
                ("events", "message.received"),
            ],
        )
        .await;
    assert_eq!(saved.location.as_deref(), Some(path.as_str()));
    let w = org.get(&path.replace("/console", "")).await.ok(200);
    assert_eq!(w["url"], "https://hooks.example.com/v2");
    assert_eq!(w["description"], "CRM sync");
    assert_eq!(w["events"], json!(["contact.created", "message.received"]));

    // A URL the API refuses: the form again, with what was typed and the API's reason (the
    // test server takes http:// for its local receivers, so: no scheme at all).
    let refused = b
        .post(
            &format!("{path}/edit"),
            &[
                ("_csrf", &token),
                ("url", "hooks.example.com/plain"),
                ("events", "contact.created"),
            ],
        )
        .await;
    assert_eq!(refused.status, 422);
    assert!(refused.body.contains("value=\"hooks.example.com/plain\""));
    assert!(
        refused.body.contains("class=\"flash error\""),
        "{}",
        refused.body
    );
    assert_eq!(
        org.get(&path.replace("/console", "")).await.ok(200)["url"],
        "https://hooks.example.com/v2"
    );

    b.post(&format!("{path}/delete"), &[("_csrf", &token)])
        .await;
    assert_eq!(org.get(&path.replace("/console", "")).await.status, 200);
    let deleted = b
        .post(
            &format!("{path}/delete"),
            &[("_csrf", &token), ("confirm", "yes")],
        )
        .await;
    assert_eq!(deleted.location.as_deref(), Some("/console/webhooks"));
    assert!(
        b.get("/console/webhooks")
            .await
            .body
            .contains("Webhook deleted.")
    );
    org.get(&path.replace("/console", ""))
        .await
        .assert_error(404, None);
    served.shut_down().await;
}

#[tokio::test]
async fn times_are_shown_and_scheduled_in_the_organisations_time_zone() {
    let (app, served) = served().await;
    app.clock.set(
        chrono::DateTime::parse_from_rfc3339("2026-11-20T12:00:00Z")
            .expect("time")
            .to_utc(),
    );
    let org = app
        .org_with(json!({"name": "NYC", "timezone": "America/New_York"}))
        .await;
    let kit = crate::kit::setup(&org).await;
    crate::kit::top_up(&org, 10.0).await;
    let ids = crate::kit::contacts(&org, 2, "nyc").await;
    let campaign = crate::kit::campaign_to(&org, &kit, &kit.plain, &ids).await;
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let path = format!("/console/campaigns/{campaign}");
    let page = b.get(&path).await;
    assert!(
        page.body.contains("Time (America/New_York)"),
        "{}",
        page.body
    );
    let token = page.csrf();
    // 02:30 on 14 March 2027 does not happen in New York (the clocks jump to 03:00).
    let send = format!("{path}/send");
    let form = |at: &'static str| {
        [
            ("_csrf", token.clone()),
            ("when", "scheduled".into()),
            ("scheduledAt", at.into()),
        ]
    };
    let refused = form("2027-03-14T02:30");
    let refused: Vec<(&str, &str)> = refused.iter().map(|(k, v)| (*k, v.as_str())).collect();
    b.post(&send, &refused).await;
    let page = b.get(&path).await;
    assert!(
        page.body
            .contains("2027-03-14T02:30 does not exist in America/New_York"),
        "{}",
        page.body
    );
    assert_eq!(
        org.get(&format!("/campaigns/{campaign}")).await.ok(200)["status"],
        "DRAFT"
    );

    // 09:30 on 1 December is 14:30 UTC (EST, UTC-5), and shows as the marketer typed it.
    let taken = form("2026-12-01T09:30");
    let taken: Vec<(&str, &str)> = taken.iter().map(|(k, v)| (*k, v.as_str())).collect();
    b.post(&send, &taken).await;
    let c = org.get(&format!("/campaigns/{campaign}")).await.ok(200);
    assert_eq!(c["status"], "SCHEDULED", "{c}");
    assert_eq!(c["scheduledAt"], "2026-12-01T14:30:00.000Z");
    let page = b.get(&path).await;
    assert!(page.body.contains("2026-12-01 09:30 EST"), "{}", page.body);
    served.shut_down().await;
}

#[tokio::test]
async fn a_reply_with_buttons_goes_out_as_an_interactive_message() {
    let (app, served) = served().await;
    let org = app.org().await;
    crate::kit::setup(&org).await;
    let conversation = id_of(
        &customer_writes(
            &org,
            "5215512345670",
            "Bea Botones",
            "¿Hacen envíos a Monterrey?",
        )
        .await,
        "conversationId",
    );
    let mut b = Browser::new(&served);
    b.sign_in(&org.key).await;
    let path = format!("/console/inbox/{conversation}");
    let page = b.get(&path).await;
    assert!(page.body.contains("name=\"buttons\""), "{}", page.body);
    let sent = b
        .post(
            &format!("{path}/reply"),
            &[
                ("_csrf", &page.csrf()),
                ("_idem", "q1"),
                ("text", "Sí, en 2 días. ¿Le reservo uno?"),
                ("buttons", "Sí, resérvelo\r\n\r\nNo, gracias\r\n"),
            ],
        )
        .await;
    assert_eq!(sent.location.as_deref(), Some(path.as_str()));
    let page = b.get(&path).await;
    assert!(page.body.contains("Reply sent."), "{}", page.body);
    assert!(
        page.body
            .contains("<span class=\"badge\">No, gracias</span>"),
        "{}",
        page.body
    );
    let thread = org
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .ok(200);
    let reply = &thread["data"][0];
    assert_eq!(reply["type"], "INTERACTIVE", "{thread}");
    assert_eq!(
        reply["interactive"]["buttons"],
        json!([{"id": "button-1", "title": "Sí, resérvelo"}, {"id": "button-2", "title": "No, gracias"}])
    );

    // Four buttons are one too many: the API's reason, and nothing sent.
    b.post(
        &format!("{path}/reply"),
        &[
            ("_csrf", &page.csrf()),
            ("_idem", "q2"),
            ("text", "¿Cuál prefiere?"),
            ("buttons", "Uno\nDos\nTres\nCuatro"),
        ],
    )
    .await;
    assert!(b.get(&path).await.body.contains("class=\"flash error\""));
    let thread = org
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .ok(200);
    assert_eq!(thread["data"].as_array().map(Vec::len), Some(2));
    served.shut_down().await;
}
