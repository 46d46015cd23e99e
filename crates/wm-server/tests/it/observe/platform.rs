//! Nothing the platform sends vanishes behind its 200: a part wm cannot apply is logged at
//! WARN with its reason, counted in `wm_platform_unapplied_total{reason}` and kept for the
//! operator (`GET /admin/platform/unapplied`).

use super::*;

use crate::whatsapp_kit::{Wa, number};
use wm_fake_graph::StatusOptions;

#[tokio::test]
async fn what_cannot_be_applied_is_logged_counted_and_kept() {
    let recorder = exporter::recorder();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let (logs, _guard) = Captured::start(LogFormat::Text);
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    // A message naming nobody, a status wm does not read, a field it does not read, and
    // a message to a business number that is nobody's.
    let body = json!({"object": "whatsapp_business_account", "entry": [{"id": crate::whatsapp_kit::WABA, "changes": [
        {"field": "messages", "value": {"messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "525500000001", "phone_number_id": crate::whatsapp_kit::PNID},
            "messages": [{"id": "wamid.NOBODY", "timestamp": "1750000000", "type": "text", "text": {"body": "¿hola?"}}],
            "statuses": [{"id": "wamid.X", "status": "deleted", "timestamp": "1750000000", "recipient_id": "1"}]}},
        {"field": "calls", "value": {"calls": [{"id": "c1"}]}},
        {"field": "messages", "value": {"messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "1", "phone_number_id": "999"},
            "contacts": [{"profile": {"name": "X"}, "wa_id": "15550001111", "user_id": "US.1"}],
            "messages": [{"from": "15550001111", "from_user_id": "US.1", "id": "wamid.ELSEWHERE", "timestamp": "1750000000", "type": "text", "text": {"body": "hi"}}]}}
    ]}]})
    .to_string()
    .into_bytes();
    let signature = wm_fake_graph::sign(crate::support::WA_SECRET, &body);
    Captured::refresh();
    let posted = wa.fake.post_raw(body, Some(signature)).await.unwrap();
    assert_eq!(posted.last_status, Some(200));
    wa.settle().await;

    let reasons = [
        "message without a sender",
        "status not handled",
        "field not handled",
        "account not connected",
    ];
    let kept = wa
        .app
        .call(Method::GET, "/admin/platform/unapplied", Some(ADMIN), None)
        .await
        .ok(200);
    let kept = kept["data"].as_array().unwrap().clone();
    let mut got: Vec<&str> = kept.iter().map(|k| k["reason"].as_str().unwrap()).collect();
    got.sort_unstable();
    let mut want = reasons.to_vec();
    want.sort_unstable();
    assert_eq!(got, want, "{kept:?}");
    let nobody = kept
        .iter()
        .find(|k| k["reason"] == "message without a sender")
        .unwrap();
    assert!(nobody["part"].as_str().unwrap().contains("wamid.NOBODY"));
    assert_eq!(nobody["provider"], "whatsapp");
    assert!(nobody["eventId"].is_string());
    // No contact came of any of it.
    assert_eq!(org.get("/contacts").await.ok(200)["meta"]["total"], 0);

    let text = handle.render();
    for reason in reasons {
        let line = text
            .lines()
            .find(|l| {
                l.starts_with("wm_platform_unapplied_total")
                    && l.contains(&format!("reason=\"{reason}\""))
            })
            .unwrap_or_else(|| panic!("no count for {reason} in\n{text}"));
        assert!(line.ends_with(" 1"), "{line}");
        let warned = logs.lines_with(reason);
        assert!(
            warned.iter().any(|l| l.contains("WARN")),
            "no WARN line for {reason}: {}",
            logs.text()
        );
    }
}
