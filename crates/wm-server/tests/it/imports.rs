//! Contact imports through the real router: CSV mapping, NDJSON with UPDATE, refused rows by
//! number, resumption after a stop midway, bad uploads, and the client end to end.

use axum::body::Body;
use axum::http::{Method, Request};
use sea_orm::DbBackend;
use serde_json::{Value, json};
use wm_server::worker::imports::{ImportWorker, LEASE_MS};

use crate::support::{Org, Resp, TestApp, query_n};

const BOUNDARY: &str = "wm-test-boundary";

/// A multipart body: an optional `options` part, then an optional `file` part.
fn multipart(options: Option<&Value>, file: Option<(&str, &str, &[u8])>) -> Vec<u8> {
    let mut body = Vec::new();
    if let Some(o) = options {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n{o}\r\n"
            )
            .as_bytes(),
        );
    }
    if let Some((name, content_type, bytes)) = file {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; \
                 filename=\"{name}\"\r\nContent-Type: {content_type}\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

async fn upload_raw(org: &Org<'_>, content_type: &str, body: Vec<u8>) -> Resp {
    upload_with_key(org.app, &org.key, content_type, body).await
}

async fn upload_with_key(app: &TestApp, key: &str, content_type: &str, body: Vec<u8>) -> Resp {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/v1/contacts/imports")
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", content_type)
        .body(Body::from(body))
        .expect("request");
    app.send(req).await
}

pub(crate) async fn upload(
    org: &Org<'_>,
    options: Option<Value>,
    file: (&str, &str, &[u8]),
) -> Resp {
    let body = multipart(options.as_ref(), Some(file));
    upload_raw(
        org,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        body,
    )
    .await
}

pub(crate) async fn import_pass(app: &TestApp) -> usize {
    ImportWorker::new(app.state.clone())
        .run_once()
        .await
        .expect("import pass")
}

async fn job(org: &Org<'_>, id: &Value) -> Value {
    org.get(&format!("/contacts/imports/{}", id.as_str().expect("id")))
        .await
        .ok(200)
}

async fn find_by_phone(org: &Org<'_>, digits: &str) -> Value {
    let list = org.get(&format!("/contacts?q={digits}")).await.ok(200);
    let data = list["data"].as_array().expect("data");
    assert_eq!(data.len(), 1, "one contact holds {digits}: {list}");
    data[0].clone()
}

fn created_events(events: &[(String, Value)]) -> usize {
    events
        .iter()
        .filter(|(kind, _)| kind == "contact.created")
        .count()
}

#[tokio::test]
async fn a_csv_import_maps_columns_splits_tags_and_reports_refused_rows_by_number() {
    let app = TestApp::new().await;
    let org = app.org().await;
    crate::events::subscribe_all(&org).await;
    let stages = org.get("/lifecycle-stages").await.ok(200);
    let stage = stages["data"][0]["id"].as_str().expect("stage").to_owned();
    org.contact(json!({"fullName": "Old", "primaryPhone": "+5215500000001"}))
        .await;
    let csv = format!(
        "Name,Phone,Labels,Stage,Email\n\
         Ana López,+52 1 55 0000 0002,vip; lead,{stage},ana@example.com\n\
         Bad Phone,12,,,\n\
         Dup,+5215500000001,,,\n\
         \"Multi, Name\",+5215500000003,x,,not-an-email\n\
         Short,+5215500000004\n\
         Ana Again,+52 1 55 0000 0002,,,\n"
    );
    let options = json!({
        "mapping": {"Name": "fullName", "Phone": "primaryPhone", "Labels": "tags",
                    "Stage": "lifecycleStageId", "Email": "primaryEmail"},
        "tagSeparator": ";"
    });
    let queued = upload(
        &org,
        Some(options),
        ("people.csv", "text/csv", csv.as_bytes()),
    )
    .await
    .ok(202);
    assert_eq!(queued["status"], "QUEUED");
    assert_eq!(queued["format"], "CSV");
    assert_eq!(queued["dedupe"], "SKIP");
    assert_eq!(queued["fileName"], "people.csv");
    assert_eq!(queued["rowsRead"], 6);
    assert_eq!(queued["rowsProcessed"], 0);

    assert_eq!(import_pass(&app).await, 1);
    let done = job(&org, &queued["id"]).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(done["rowsProcessed"], 6);
    assert_eq!(
        (
            &done["created"],
            &done["updated"],
            &done["skipped"],
            &done["failed"]
        ),
        (&json!(1), &json!(0), &json!(2), &json!(3))
    );
    assert!(done["finishedAt"].is_string());
    let errors = done["errors"].as_array().expect("errors");
    let rows: Vec<u64> = errors
        .iter()
        .map(|e| e["row"].as_u64().expect("row"))
        .collect();
    assert_eq!(rows, vec![3, 5, 6], "{errors:?}");
    assert!(
        errors[0]["messages"][0]
            .as_str()
            .expect("message")
            .starts_with("primaryPhone must be a phone number"),
        "{errors:?}"
    );
    assert_eq!(
        errors[1]["messages"],
        json!(["primaryEmail must be an email"])
    );
    assert_eq!(
        errors[2]["messages"],
        json!(["the row has 2 fields, the header has 5"])
    );

    let ana = find_by_phone(&org, "5215500000002").await;
    assert_eq!(ana["fullName"], "Ana López");
    assert_eq!(ana["primaryPhone"], "+5215500000002");
    assert_eq!(ana["primaryEmail"], "ana@example.com");
    assert_eq!(ana["source"], "IMPORT");
    assert_eq!(ana["tags"], json!(["vip", "lead"]));
    assert_eq!(ana["lifecycleStageId"], stage.as_str());
    let old = find_by_phone(&org, "5215500000001").await;
    assert_eq!(old["fullName"], "Old", "SKIP leaves the holder alone");
    // One contact.created for the contact made through POST, one for the import's.
    assert_eq!(created_events(&org.events().await), 2);
    let list = org.get("/contacts/imports").await.ok(200);
    assert_eq!(list["meta"]["total"], 1);
    assert_eq!(list["data"][0]["id"], queued["id"]);
}

#[tokio::test]
async fn an_ndjson_import_with_update_changes_the_contacts_holding_the_phones() {
    let app = TestApp::new().await;
    let org = app.org().await;
    crate::events::subscribe_all(&org).await;
    let bea = org
        .contact(json!({"fullName": "Bea", "primaryPhone": "+5215511110001",
                        "company": "Acme", "tags": ["old"], "source": "MANUAL"}))
        .await;
    let lines = [
        r#"{"fullName":"Bea Torres","primaryPhone":"+52 1 55 1111 0001","tags":["new"],"source":"REFERRAL"}"#,
        r#"{"primaryPhone":"+5215511110001"}"#,
        r#"{"fullName":"Cy","primaryPhone":"+5215511110002","note":"Met at the fair"}"#,
        "not json",
        "",
        r#"{"fullName":"X","foo":1}"#,
        "[1,2]",
    ];
    let file = lines.join("\n");
    let queued = upload(
        &org,
        Some(json!({"dedupe": "UPDATE"})),
        ("people.ndjson", "application/x-ndjson", file.as_bytes()),
    )
    .await
    .ok(202);
    assert_eq!(queued["format"], "NDJSON");
    assert_eq!(queued["dedupe"], "UPDATE");
    assert_eq!(queued["rowsRead"], 6, "the blank line is no row");
    import_pass(&app).await;
    let done = job(&org, &queued["id"]).await;
    assert_eq!(done["status"], "COMPLETED");
    assert_eq!(
        (
            &done["created"],
            &done["updated"],
            &done["skipped"],
            &done["failed"]
        ),
        (&json!(1), &json!(1), &json!(1), &json!(3)),
        "{done}"
    );
    let errors = &done["errors"];
    assert_eq!(errors[0]["row"], 4);
    assert!(
        errors[0]["messages"][0]
            .as_str()
            .expect("message")
            .starts_with("the row is not valid JSON"),
        "{errors}"
    );
    assert_eq!(errors[1]["row"], 6);
    assert_eq!(
        errors[1]["messages"],
        json!(["property foo should not exist"])
    );
    assert_eq!(errors[2]["row"], 7);
    assert_eq!(
        errors[2]["messages"],
        json!(["the row is not a JSON object"])
    );

    let after = org
        .get(&format!("/contacts/{}", bea["id"].as_str().expect("id")))
        .await
        .ok(200);
    assert_eq!(after["fullName"], "Bea Torres");
    assert_eq!(after["company"], "Acme", "fields the row leaves out stay");
    assert_eq!(after["tags"], json!(["old", "new"]), "tags are added");
    assert_eq!(after["source"], "MANUAL", "an update keeps the source");
    let events = org.events().await;
    let updated: Vec<&Value> = events
        .iter()
        .filter(|(k, _)| k == "contact.updated")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0]["changedFields"], json!(["fullName", "tags"]));

    let cy = find_by_phone(&org, "5215511110002").await;
    assert_eq!(cy["source"], "IMPORT");
    let notes = org
        .get(&format!(
            "/contacts/{}/notes",
            cy["id"].as_str().expect("id")
        ))
        .await
        .ok(200);
    assert_eq!(notes["data"][0]["body"], "Met at the fair");
}

fn people(n: usize) -> String {
    let mut csv = String::from("fullName,primaryPhone\n");
    for i in 0..n {
        csv.push_str(&format!("Person {i},+52155{i:08}\n"));
    }
    csv
}

#[tokio::test]
async fn an_import_stopped_midway_resumes_at_its_next_chunk_without_writing_a_row_twice() {
    let app = TestApp::new().await;
    let org = app.org().await;
    crate::events::subscribe_all(&org).await;
    let csv = people(2_500);
    let queued = upload(&org, None, ("people.csv", "text/csv", csv.as_bytes()))
        .await
        .ok(202);
    assert_eq!(queued["rowsRead"], 2_500);

    // The first worker writes one chunk of a thousand, then dies holding its lease.
    let first = ImportWorker::new(app.state.clone());
    assert_eq!(first.run_chunks(1).await.expect("pass"), 1);
    let midway = job(&org, &queued["id"]).await;
    assert_eq!(midway["status"], "RUNNING");
    assert_eq!(midway["rowsProcessed"], 1_000);
    assert_eq!(midway["created"], 1_000);

    // A restarted server leaves the job alone while the lease holds, then resumes it.
    let restarted = ImportWorker::new(app.restart(None));
    assert_eq!(restarted.run_once().await.expect("pass"), 0);
    app.clock
        .advance(chrono::Duration::milliseconds(LEASE_MS + 1_000));
    assert_eq!(restarted.run_once().await.expect("pass"), 2);
    let done = job(&org, &queued["id"]).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(done["rowsProcessed"], 2_500);
    assert_eq!(done["created"], 2_500);
    assert_eq!(done["failed"], 0);
    let all = org.get("/contacts?pageSize=1").await.ok(200);
    assert_eq!(all["meta"]["total"], 2_500, "no row written twice");
    assert_eq!(created_events(&org.events().await), 2_500);
    // The stopped worker, back, finds nothing to do.
    assert_eq!(first.run_once().await.expect("pass"), 0);
}

#[tokio::test]
async fn bad_uploads_are_refused_with_a_clear_4xx_and_leave_nothing_behind() {
    use sea_orm::{EntityTrait, PaginatorTrait};
    let app = TestApp::new().await;
    let org = app.org().await;
    let csv = b"fullName,primaryPhone\nAna,+5215500000002\n";

    let r = org
        .post("/contacts/imports", json!({"fullName": "Ana"}))
        .await;
    r.assert_error(415, None);
    let r = upload_raw(
        &org,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        multipart(Some(&json!({})), None),
    )
    .await;
    r.assert_invalid("the body has no file part");
    let r = upload(
        &org,
        Some(json!({"dedupe": "MERGE", "x": 1})),
        ("a.csv", "text/csv", csv),
    )
    .await;
    assert_eq!(r.status, 400);
    let messages = r.messages();
    assert!(
        messages.contains(&"property x should not exist".to_owned()),
        "{messages:?}"
    );
    assert!(
        messages.contains(&"dedupe must be one of the following values: SKIP, UPDATE".to_owned()),
        "{messages:?}"
    );
    let r = upload(
        &org,
        Some(json!({"mapping": {"Phone": "primaryPhone"}})),
        ("a.csv", "text/csv", csv),
    )
    .await;
    r.assert_invalid("mapping names the column Phone, which the file's header does not have");
    let r = upload(&org, None, ("a.txt", "application/octet-stream", csv)).await;
    assert_eq!(r.status, 400);
    assert!(
        r.messages()[0].starts_with("the file's format is unknown"),
        "{:?}",
        r.body
    );
    let r = upload(&org, None, ("a.csv", "text/csv", b"city,zip\nx,1\n")).await;
    assert_eq!(r.status, 400);
    assert!(r.messages()[0].starts_with("no column of the file's header"));
    let reader = org.key_with(&["contacts:read"]).await;
    let refused = upload_with_key(
        &app,
        &reader,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        multipart(None, Some(("a.csv", "text/csv", csv))),
    )
    .await;
    assert_eq!(refused.status, 403);
    org.get(&format!("/contacts/imports/{}", uuid::Uuid::now_v7()))
        .await
        .assert_error(404, None);
    // As for every resource, a path id that is no UUID names nothing: 404.
    org.get("/contacts/imports/nope")
        .await
        .assert_error(404, None);

    let jobs = wm_server::db::entities::contact_import::Entity::find()
        .count(&app.state.db.conn)
        .await
        .expect("count");
    let chunks = wm_server::db::entities::contact_import_chunk::Entity::find()
        .count(&app.state.db.conn)
        .await
        .expect("count");
    assert_eq!(
        (jobs, chunks),
        (0, 0),
        "a refused upload leaves no job and no rows"
    );
}

#[tokio::test]
async fn the_client_uploads_a_file_and_waits_for_its_job_through_a_real_server() {
    use std::time::Duration;
    use wm_client::imports::ImportFile;
    use wm_client::types::imports::{ImportOptions, ImportStatus};

    let app = TestApp::new().await;
    let org = app.org().await;
    let base = app.listen().await;
    let cancel = tokio_util::sync::CancellationToken::new();
    let worker = tokio::spawn(ImportWorker::new(app.state.clone()).run(cancel.clone()));
    let client = crate::client_e2e::client(&base, &org.key);
    let job = client
        .imports()
        .upload(
            ImportFile::csv("people.csv", people(1_200).into_bytes()),
            &ImportOptions::default(),
        )
        .await
        .expect("upload");
    assert_eq!(job.rows_read, 1_200);
    let done = tokio::time::timeout(
        Duration::from_secs(60),
        client.imports().wait(job.id, Duration::from_millis(50)),
    )
    .await
    .expect("the job ends")
    .expect("job");
    assert_eq!(done.status, ImportStatus::Completed);
    assert_eq!((done.created, done.failed), (1_200, 0));
    let listed = client.imports().list().send().await.expect("list");
    assert_eq!(listed.data[0].id, job.id);
    cancel.cancel();
    worker.await.expect("worker");
}

/// A large import ends by refreshing PostgreSQL's planner statistics, so the lists read right
/// after it are planned for the organisation's new size rather than the one autovacuum last
/// saw (35–113 ms instead of 2–7 ms at 100k in the scale benchmark). SQLite has none to
/// refresh.
#[tokio::test]
async fn a_large_import_leaves_the_planner_statistics_fresh_on_postgresql() {
    let app = TestApp::new().await;
    if app.state.db.backend() != DbBackend::Postgres {
        return;
    }
    let org = app.org().await;
    let csv = people(10_000);
    let queued = upload(&org, None, ("people.csv", "text/csv", csv.as_bytes()))
        .await
        .ok(202);
    while job(&org, &queued["id"]).await["status"] != "COMPLETED" {
        assert!(import_pass(&app).await > 0, "the import stalled");
    }
    // `reltuples` is what ANALYZE records for the planner (-1 before any).
    let rows = query_n(
        &app.state.db.conn,
        "SELECT reltuples::bigint AS n FROM pg_class WHERE relname = 'contacts'",
    )
    .await;
    assert!(rows >= 10_000, "the planner sees {rows} contacts");
}

#[tokio::test]
async fn a_file_part_before_its_options_is_read_with_those_options() {
    let app = TestApp::new().await;
    let org = app.org().await;
    // As generated clients send it: the file first, then the options that map its columns
    // and name its format (the file part says nothing of its type).
    let mut body = Vec::new();
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"people\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(b"Nombre,Tel\nAna Orden,+5215500000401\n");
    body.extend_from_slice(b"\r\n");
    let options =
        json!({"format": "CSV", "mapping": {"Nombre": "fullName", "Tel": "primaryPhone"}});
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"options\"\r\n\
             Content-Type: application/json\r\n\r\n{options}\r\n--{BOUNDARY}--\r\n"
        )
        .as_bytes(),
    );
    let r = upload_raw(
        &org,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        body,
    )
    .await
    .ok(202);
    while import_pass(&app).await > 0 {}
    let done = job(&org, &r["id"]).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(done["created"], 1, "{done}");
    let c = find_by_phone(&org, "5215500000401").await;
    assert_eq!(c["fullName"], "Ana Orden");

    // Two options parts, or two files, are still refused.
    let twice = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n{{}}\r\n\
         --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n{{}}\r\n--{BOUNDARY}--\r\n"
    );
    upload_raw(
        &org,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        twice.into_bytes(),
    )
    .await
    .assert_invalid("the body takes one options part");
}
