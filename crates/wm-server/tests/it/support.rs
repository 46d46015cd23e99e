//! Test harness: a fresh, migrated database per test (a SQLite file in a directory of its
//! own, pooled as in production, or a new PostgreSQL database when `WM_TEST_DATABASE_URL`
//! is set), the real router, a manual clock, and
//! helpers to create organisations and keys through the operator API.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use chrono::Utc;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use uuid::Uuid;
use wm_core::time::ManualClock;
use wm_server::db::Db;
use wm_server::state::{AppState, Settings};

use crate::pg::PgDatabase;

pub const ADMIN: &str = "test-admin-token";
/// The WhatsApp app secret of [`TestApp::whatsapp`].
pub const WA_SECRET: &str = "test-app-secret";
/// The WhatsApp verify token of [`TestApp::whatsapp`].
pub const WA_VERIFY: &str = "test-verify-token";

/// Every scope of v1.
pub const ALL_SCOPES: &[&str] = &[
    "contacts:read",
    "contacts:write",
    "conversations:read",
    "conversations:write",
    "automations:read",
    "campaigns:read",
    "campaigns:write",
    "reports:read",
    "webhooks:read",
    "webhooks:write",
];

/// A response as a caller sees it.
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Resp {
    /// The validation messages (panics when the body is not a validation error).
    pub fn messages(&self) -> Vec<String> {
        assert_eq!(self.status, StatusCode::BAD_REQUEST, "{:?}", self.body);
        assert_eq!(self.body["error"], "Bad Request", "{:?}", self.body);
        self.body["message"]
            .as_array()
            .unwrap_or_else(|| panic!("message is not an array: {:?}", self.body))
            .iter()
            .map(|m| m.as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// Asserts a validation error containing `msg`.
    #[track_caller]
    pub fn assert_invalid(&self, msg: &str) {
        let m = self.messages();
        assert!(m.iter().any(|x| x == msg), "expected {msg:?} in {m:?}");
    }

    /// Asserts a business error.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: Option<&str>) {
        assert_eq!(self.status.as_u16(), status, "{:?}", self.body);
        assert_eq!(self.body["statusCode"], status, "{:?}", self.body);
        match code {
            Some(c) => assert_eq!(self.body["code"], c, "{:?}", self.body),
            None => assert!(self.body.get("code").is_none(), "{:?}", self.body),
        }
        assert!(self.body["message"].is_string(), "{:?}", self.body);
    }

    /// A 403 `API_KEY_SCOPE_MISSING` whose message names `scope`.
    #[track_caller]
    pub fn assert_scope_missing(&self, scope: &str) {
        self.assert_error(403, Some("API_KEY_SCOPE_MISSING"));
        let message = self.body["message"].as_str().unwrap_or_default();
        assert!(message.contains(scope), "{scope}: {message}");
    }

    #[track_caller]
    pub fn ok(self, status: u16) -> Value {
        assert_eq!(self.status.as_u16(), status, "{:?}", self.body);
        self.body
    }
}

/// A server under test.
pub struct TestApp {
    pub state: AppState,
    pub router: Router,
    pub clock: Arc<ManualClock>,
    /// The database's storage, removed when the last replica of the test goes (last field:
    /// dropped after the state's pool).
    scratch: Arc<Scratch>,
}

/// What a test's database leaves behind, removed when the last handle on it drops.
pub enum Scratch {
    /// A PostgreSQL database (dropped by its own `Drop`).
    Pg(#[allow(dead_code)] PgDatabase),
    /// The directory of a SQLite file.
    Dir(std::path::PathBuf),
}

impl Scratch {
    /// The SQLite file of a [`sqlite_file`] database.
    pub fn sqlite_path(&self) -> Option<std::path::PathBuf> {
        match self {
            Scratch::Dir(dir) => Some(dir.join("wm.db")),
            Scratch::Pg(_) => None,
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Scratch::Dir(dir) = self {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A migrated database of the test's own: a SQLite file with production's pool of
/// connections and its point reader, or a copy of the PostgreSQL template when
/// `WM_TEST_DATABASE_URL` is set (removed with the returned handle).
async fn fresh_database() -> (Db, Arc<Scratch>) {
    match std::env::var("WM_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => {
            let pg = PgDatabase::migrated(&url).await;
            let db = Db::connect(&pg.url).await.expect("connect test database");
            (db, Arc::new(Scratch::Pg(pg)))
        }
        _ => {
            let (db, scratch) = sqlite_file("wm-test").await;
            db.migrate().await.expect("migrate");
            (db, Arc::new(scratch))
        }
    }
}

/// An empty SQLite file in a new directory under the system's temporary one (named after
/// `prefix`), opened as production opens it; the directory goes with the returned handle,
/// even when the test fails.
pub async fn sqlite_file(prefix: &str) -> (Db, Scratch) {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("test directory");
    let scratch = Scratch::Dir(dir.clone());
    let db = Db::connect(&format!("sqlite://{}/wm.db?mode=rwc", dir.display()))
        .await
        .expect("sqlite file");
    (db, scratch)
}

/// A [`TestApp`] served over TCP ([`TestApp::serve`]).
pub struct Served {
    /// `http://127.0.0.1:{port}/api/v1`.
    pub base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Served {
    /// Begins the shutdown, without waiting for it.
    pub fn begin_shutdown(self) -> tokio::task::JoinHandle<anyhow::Result<()>> {
        self.stop.send(()).unwrap();
        self.server
    }

    /// Shuts the server down and waits until it stopped cleanly.
    pub async fn shut_down(self) {
        self.begin_shutdown().await.unwrap().unwrap();
    }
}

impl TestApp {
    pub async fn new() -> TestApp {
        Self::with_limit(600).await
    }

    pub async fn with_limit(rate_limit_per_minute: u32) -> TestApp {
        Self::with_settings(|s| s.rate_limit_per_minute = rate_limit_per_minute).await
    }

    /// A server whose settings `f` adjusts; by default webhooks may target loopback (the
    /// test receivers listen there).
    pub async fn with_settings(f: impl FnOnce(&mut Settings)) -> TestApp {
        let (db, scratch) = fresh_database().await;
        let clock = Arc::new(ManualClock::new(clock_start()));
        let mut settings = Settings::new(ADMIN);
        settings.allow_insecure_webhooks = true;
        settings.provider_mps = 0;
        f(&mut settings);
        let state = AppState::new(db, clock.clone(), settings);
        let router = Router::new().nest("/api/v1", wm_server::router(state.clone()));
        TestApp {
            state,
            router,
            clock,
            scratch,
        }
    }

    /// A server whose platform is WhatsApp's Cloud API at `graph_url` (the fake), with a
    /// secret key for tokens and the webhook app secret and verify token of [`WA_SECRET`]
    /// and [`WA_VERIFY`].
    pub async fn whatsapp(graph_url: &str, f: impl FnOnce(&mut Settings)) -> TestApp {
        let (db, scratch) = fresh_database().await;
        let clock = Arc::new(ManualClock::new(clock_start()));
        let mut settings = Settings::new(ADMIN);
        settings.allow_insecure_webhooks = true;
        settings.provider_mps = 0;
        settings.providers.messaging = "whatsapp".into();
        settings.providers.whatsapp.graph_url = graph_url.to_owned();
        settings.providers.whatsapp.app_secret = Some(WA_SECRET.to_owned());
        settings.providers.whatsapp.verify_token = Some(WA_VERIFY.to_owned());
        f(&mut settings);
        let provider = Arc::new(
            wm_server::provider::whatsapp::WhatsAppProvider::new(
                &settings.providers.whatsapp.graph_url,
                &settings.providers.whatsapp.api_version,
            )
            .expect("client")
            .with_timeout(std::time::Duration::from_secs(2))
            .expect("timeout"),
        );
        let key = wm_server::secrets::SecretKey::generate();
        let state = AppState::build(db, clock.clone(), settings, provider, Some(key));
        let router = Router::new().nest("/api/v1", wm_server::router(state.clone()));
        TestApp {
            state,
            router,
            clock,
            scratch,
        }
    }

    /// Serves the router on a loopback port (for callers such as the platform's webhooks);
    /// returns the base URL (`http://127.0.0.1:port/api/v1`).
    pub async fn listen(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let router = self.router.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        format!("http://{addr}/api/v1")
    }

    /// The same database and clock behind a new server state (a restart), optionally with
    /// another messaging platform.
    pub fn restart(
        &self,
        provider: Option<Arc<dyn wm_core::provider::MessagingProvider>>,
    ) -> AppState {
        let db = self.state.db.clone();
        let clock: Arc<dyn wm_core::time::Clock> = self.clock.clone();
        let settings = self.state.settings.clone();
        let key = self.state.secret_key.clone();
        let mut registry = self.state.registry.clone();
        if let Some(p) = provider {
            registry.replace_sender(wm_types::enums::ChannelType::MessagingAppA, p);
        }
        AppState::with_registry(db, clock, settings, registry, key)
    }

    /// Another replica: a server state of its own (caches, rate limiter, pacer) on the same
    /// database and clock, with its own router.
    pub fn replica(&self) -> TestApp {
        let state = self.restart(None);
        let router = Router::new().nest("/api/v1", wm_server::router(state.clone()));
        TestApp {
            state,
            router,
            clock: self.clock.clone(),
            scratch: self.scratch.clone(),
        }
    }

    /// This app served over TCP by `wm_server::run`, workers included, on a free port.
    pub async fn serve(&self) -> Served {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(wm_server::run(self.state.clone(), listener, async move {
            stopped.await.ok();
        }));
        let _ = rustls::crypto::ring::default_provider().install_default();
        Served { base, stop, server }
    }

    /// Another replica with its own connection pool (and so its own contact bell): what a
    /// second process is. PostgreSQL only (`None` on SQLite, where one process owns the
    /// file).
    pub async fn separate_replica(&self) -> Option<TestApp> {
        let Scratch::Pg(pg) = &*self.scratch else {
            return None;
        };
        let db = Db::connect(&pg.url).await.expect("connect the replica");
        let clock: Arc<dyn wm_core::time::Clock> = self.clock.clone();
        let state = AppState::with_registry(
            db,
            clock,
            self.state.settings.clone(),
            self.state.registry.clone(),
            self.state.secret_key.clone(),
        );
        let router = Router::new().nest("/api/v1", wm_server::router(state.clone()));
        Some(TestApp {
            state,
            router,
            clock: self.clock.clone(),
            scratch: self.scratch.clone(),
        })
    }

    /// Whether the tests run on PostgreSQL (where replicas share the database).
    pub fn on_postgres(&self) -> bool {
        self.state.db.backend() == sea_orm::DbBackend::Postgres
    }

    /// Applies every platform webhook kept so far (by the intake's own task or here);
    /// panics when some stay unapplied.
    pub async fn apply_kept(&self) {
        use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
        use wm_server::db::entities::platform_event;
        for _ in 0..250 {
            wm_server::services::platform::apply_pending(&self.state)
                .await
                .expect("apply platform events");
            let left = platform_event::Entity::find()
                .filter(platform_event::Column::ProcessedAt.is_null())
                .count(&self.state.db.conn)
                .await
                .expect("count");
            if left == 0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("platform events were not applied");
    }

    /// One pass of the automation worker.
    pub async fn automation_pass(&self) -> wm_server::worker::automations::Outcome {
        wm_server::worker::automations::AutomationWorker::new(self.state.clone())
            .run_once()
            .await
            .expect("automation pass")
    }

    /// One pass of the sending workers a replica runs side by side: the queue of reserved
    /// batches, then the campaign pass.
    pub async fn send_pass(&self) -> wm_server::worker::campaigns::Outcome {
        wm_server::worker::queue::run_once(&self.state)
            .await
            .expect("queue pass");
        wm_server::worker::campaigns::CampaignWorker::new(self.state.clone())
            .run_once()
            .await
            .expect("campaign pass")
    }

    /// Recipients whose platform call was recorded as begun and has no result yet.
    pub async fn calls_in_flight(&self) -> u64 {
        use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
        use wm_server::db::entities::recipient;
        recipient::Entity::find()
            .filter(recipient::Column::Status.eq("PENDING"))
            .filter(recipient::Column::AttemptAt.is_not_null())
            .count(&self.state.db.conn)
            .await
            .expect("count attempts")
    }

    /// A `kill -9` mid-send: one campaign pass runs on `crashed` (a replica of this
    /// database) until `at_crash_point` holds twice in a row, the pass polled in between,
    /// and is then dropped with its calls in flight. Waiting for a state, not a time, keeps
    /// a loaded machine from crashing it somewhere else (a claim recorded whose call never
    /// left, which the reconciliation window, not the platform, settles).
    pub async fn crash_mid_send<F, Fut>(&self, crashed: AppState, mut at_crash_point: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let worker = wm_server::worker::campaigns::CampaignWorker::new(crashed);
        let pass = worker.run_once();
        tokio::pin!(pass);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut held = 0;
        while held < 2 {
            tokio::select! {
                r = &mut pass => panic!("the pass ended ({:?}) instead of hanging", r.map(|_| ())),
                _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {}
            }
            held = if at_crash_point().await { held + 1 } else { 0 };
            assert!(
                std::time::Instant::now() < deadline,
                "the pass never reached the crash point"
            );
        }
    }

    /// One pass of the webhook worker, as a restarted server would make it.
    pub async fn deliver(&self) -> wm_server::worker::webhooks::Outcome {
        wm_server::worker::webhooks::WebhookWorker::new(self.state.clone())
            .expect("worker")
            .run_once()
            .await
            .expect("webhook pass")
    }

    /// Sends a request; `token` is put in `Authorization: Bearer`.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Resp {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("/api/v1{path}"));
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let req = match body {
            Some(b) => req
                .header("content-type", "application/json")
                .body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        }
        .expect("request");
        self.send(req).await
    }

    /// Sends a raw request.
    pub async fn send(&self, req: Request<Body>) -> Resp {
        let res = self.router.clone().oneshot(req).await.expect("infallible");
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.into_body().collect().await.expect("body").to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        Resp {
            status,
            headers,
            body,
        }
    }

    pub async fn admin(&self, method: Method, path: &str, body: Option<Value>) -> Resp {
        self.call(method, &format!("/admin{path}"), Some(ADMIN), body)
            .await
    }

    /// A new organisation with a user and an all-scopes key.
    pub async fn org(&self) -> Org<'_> {
        self.org_with(json!({"name": "Test org"})).await
    }

    /// A new organisation created from `body` (say, with an allowance), with one user and
    /// an all-scopes key.
    pub async fn org_with(&self, body: Value) -> Org<'_> {
        let org = self
            .admin(Method::POST, "/organizations", Some(body))
            .await
            .ok(201);
        let org_id = org["id"].as_str().expect("org id").to_owned();
        let user = self
            .admin(
                Method::POST,
                &format!("/organizations/{org_id}/users"),
                Some(json!({"fullName": "Tess Tester", "email": "tess@example.com"})),
            )
            .await
            .ok(201);
        let user_id = user["id"].as_str().expect("user id").to_owned();
        let mut o = Org {
            app: self,
            id: org_id,
            user_id,
            key: String::new(),
        };
        o.key = o.key_with(ALL_SCOPES).await;
        o
    }
}

/// The `id` of an object the API answered, which a test then uses in a path.
pub trait IdOf {
    /// Its `id`; a panic naming the object when it has none.
    fn id(&self) -> &str;
}

impl IdOf for Value {
    fn id(&self) -> &str {
        self["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no id in {self}"))
    }
}

/// An organisation under test, acting through its all-scopes key.
pub struct Org<'a> {
    pub app: &'a TestApp,
    pub id: String,
    pub user_id: String,
    pub key: String,
}

impl Org<'_> {
    /// A new key of this organisation's user with the given scopes.
    pub async fn key_with(&self, scopes: &[&str]) -> String {
        let r = self
            .admin(
                Method::POST,
                "/api-keys",
                Some(json!({"name": "k", "userId": self.user_id, "scopes": scopes})),
            )
            .await
            .ok(201);
        r["key"].as_str().expect("key").to_owned()
    }

    /// An operator call under `/admin/organizations/{id}`.
    pub async fn admin(&self, method: Method, path: &str, body: Option<Value>) -> Resp {
        self.app
            .admin(method, &format!("/organizations/{}{path}", self.id), body)
            .await
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.app
            .call(Method::GET, path, Some(&self.key), None)
            .await
    }
    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.app
            .call(Method::POST, path, Some(&self.key), Some(body))
            .await
    }
    pub async fn patch(&self, path: &str, body: Value) -> Resp {
        self.app
            .call(Method::PATCH, path, Some(&self.key), Some(body))
            .await
    }
    pub async fn delete(&self, path: &str) -> Resp {
        self.app
            .call(Method::DELETE, path, Some(&self.key), None)
            .await
    }

    /// Creates a contact and returns its body.
    pub async fn contact(&self, body: Value) -> Value {
        self.post("/contacts", body).await.ok(201)
    }

    /// The id of the default stage with that name.
    pub async fn stage(&self, name: &str) -> String {
        let stages = self.get("/lifecycle-stages").await.ok(200);
        stages["data"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == name))
            .and_then(|s| s["id"].as_str())
            .unwrap_or_else(|| panic!("no stage {name}"))
            .to_owned()
    }

    /// The events in this organisation's outbox, oldest first: (kind, data).
    pub async fn events(&self) -> Vec<(String, Value)> {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
        use wm_server::db::entities::outbox_event;
        let org: Uuid = self.id.parse().expect("uuid");
        outbox_event::Entity::find()
            .filter(outbox_event::Column::OrganizationId.eq(org))
            .order_by_asc(outbox_event::Column::CreatedAt)
            .all(&self.app.state.db.conn)
            .await
            .expect("outbox")
            .into_iter()
            .map(|e| {
                let v: Value = serde_json::from_str(&e.payload).expect("payload json");
                assert_eq!(v["event"], e.event_type.as_str());
                (e.event_type.as_str().to_owned(), v["data"].clone())
            })
            .collect()
    }
}

/// The amounts of the wallet's recent ledger entries of one kind (`CHARGE`, `REFUND`, …).
pub fn ledger(wallet: &Value, kind: &str) -> Vec<f64> {
    wallet["recentEntries"]
        .as_array()
        .expect("recentEntries")
        .iter()
        .filter(|e| e["kind"] == kind)
        .map(|e| e["amount"].as_f64().expect("amount"))
        .collect()
}

impl Org<'_> {
    /// The price of one message of a campaign (its first market in the cost preview).
    pub async fn price_of_one(&self, campaign: &str) -> f64 {
        self.preview_cost(campaign).await["byMarket"][0]["totalCost"]
            .as_f64()
            .expect("a priced market")
    }

    /// `GET /campaigns/{campaign}/preview-cost`, answered 200.
    pub async fn preview_cost(&self, campaign: &str) -> Value {
        self.get(&format!("/campaigns/{campaign}/preview-cost"))
            .await
            .ok(200)
    }
}

/// The ids of a list body's `data`.
pub fn ids(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .expect("data array")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_owned())
        .collect()
}

/// Where a test's clock starts: now, or `WM_TEST_CLOCK_START` (RFC 3339) to run the suite at
/// a chosen instant, say a minute before midnight on 31 December, to find tests that only pass
/// at some hours.
fn clock_start() -> chrono::DateTime<Utc> {
    std::env::var("WM_TEST_CLOCK_START").map_or_else(
        |_| Utc::now(),
        |s| {
            chrono::DateTime::parse_from_rfc3339(&s)
                .expect("WM_TEST_CLOCK_START is an RFC 3339 instant")
                .with_timezone(&Utc)
        },
    )
}

/// The one integer a query selects as `n`, read straight from the database (what the API
/// does not show: the planner's statistics, a scratch table).
pub async fn query_n(conn: &impl sea_orm::ConnectionTrait, sql: &str) -> i64 {
    conn.query_one_raw(sea_orm::Statement::from_string(
        conn.get_database_backend(),
        sql,
    ))
    .await
    .expect("query")
    .expect("a row")
    .try_get::<i64>("", "n")
    .expect("an integer n")
}
