//! The `/_fake` control API, driven over HTTP against the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn wait_url(path: &std::path::Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && s.ends_with('\n')
        {
            return s.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "binary did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn binary_is_driven_by_the_control_api() {
    let dir = std::env::temp_dir().join(format!("wm-fake-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url_file = dir.join("url");
    let _ = std::fs::remove_file(&url_file);
    let setup = json!({
        "numbers": [{ "phone_number_id": PNID, "waba_id": WABA, "display_phone_number": DISPLAY, "access_token": TOKEN }],
        "templates": [{ "waba_id": WABA, "name": "hello", "language": "en_US", "category": "MARKETING", "status": "APPROVED", "body_text": "Hi {{1}}" }],
    });
    let setup_file = dir.join("setup.json");
    std::fs::write(&setup_file, setup.to_string()).unwrap();
    let mut child = Child(
        std::process::Command::new(env!("CARGO_BIN_EXE_wm-fake-graph"))
            .args(["--listen", "127.0.0.1:0", "--url-file"])
            .arg(&url_file)
            .arg("--setup")
            .arg(&setup_file)
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let base = wait_url(&url_file).await;
    let client = client();
    let rx = Receiver::start(SECRET).await;
    let put = client
        .put(format!("{base}/_fake/webhook"))
        .json(&json!({ "url": rx.url, "app_secret": SECRET, "statuses": { "read": true } }))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status().as_u16(), 200);
    // A template registered over the API.
    let tpl: Value = client
        .post(format!("{base}/_fake/templates"))
        .json(&json!({ "waba_id": WABA, "name": "bye", "language": "en_US", "category": "UTILITY", "status": "APPROVED", "body_text": "Bye" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(tpl["id"].as_str().unwrap().parse::<u64>().is_ok());
    // Inject an error and a send that succeeds.
    client
        .post(format!("{base}/_fake/injections"))
        .json(&json!({ "to": "16505550000", "code": 131048, "times": 1 }))
        .send()
        .await
        .unwrap();
    let send_url = format!("{base}/{VERSION}/{PNID}/messages");
    let r = client
        .post(&send_url)
        .bearer_auth(TOKEN)
        .json(&template_body("16505550000", "hello", &["x"]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 429);
    let r = client
        .post(&send_url)
        .bearer_auth(TOKEN)
        .json(&template_body("16505550000", "hello", &["x"]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = client
        .post(format!("{base}/_fake/numbers/{PNID}/throttle"))
        .json(&json!({ "count": 1 }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = client
        .post(&send_url)
        .bearer_auth(TOKEN)
        .json(&template_body("16505550000", "hello", &["x"]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 429);
    let stats: Value = client
        .get(format!("{base}/_fake/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (stats["attempts"].as_u64(), stats["accepted"].as_u64()),
        (Some(3), Some(1))
    );
    let count: Value = client
        .get(format!("{base}/_fake/messages/count?to=16505550000"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(count["count"], 1);
    let msgs: Value = client
        .get(format!("{base}/_fake/messages"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(msgs[0]["body_params"], json!(["x"]));
    let attempts: Value = client
        .get(format!("{base}/_fake/attempts"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(attempts[0]["outcome"], "refused");
    assert_eq!(attempts[0]["code"], 131048);
    rx.wait_for(3, Duration::from_secs(5)).await;
    assert!(rx.received().iter().all(|r| r.signature_valid));
    // Inbound over the API returns what was posted.
    let posted: Value = client
        .post(format!("{base}/_fake/inbound"))
        .json(&json!({ "phone_number_id": PNID, "from": "16505550000", "type": "button", "payload": "P", "text": "T",
                       "context": { "id": msgs[0]["wamid"] } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(posted["acked"], true);
    assert!(posted["wamid"].as_str().unwrap().starts_with("wamid."));
    // Shutdown over the API ends the process.
    client
        .post(format!("{base}/_fake/shutdown"))
        .send()
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        assert!(Instant::now() < deadline, "binary did not exit");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
