//! 429 bursts (130429, 4, 80007) and the optional per-number mps cap.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;

#[tokio::test]
async fn burst_of_130429_then_recovery() {
    let fake = fake().await;
    let client = client();
    assert!(fake.throttle_next(PNID, 3, 130429));
    for _ in 0..3 {
        let (s, b) = send(&client, &fake, &template_body("16505551234", "hello", &[])).await;
        let err = assert_error(s, &b, 429, 130429);
        assert_eq!(err["error_data"]["messaging_product"], "whatsapp");
    }
    assert_eq!(
        send(&client, &fake, &template_body("16505551234", "hello", &[]))
            .await
            .0,
        200
    );
    assert_eq!(fake.stats().refused, 3);
    assert_eq!(fake.accepted_to("16505551234"), 1);
    fake.shutdown().await;
}

#[tokio::test]
async fn burst_can_answer_code_4_or_80007() {
    let fake = fake().await;
    let client = client();
    for code in [4, 80007] {
        fake.throttle_next(PNID, 1, code);
        let (s, b) = send(&client, &fake, &template_body("16505551234", "hello", &[])).await;
        assert_error(s, &b, 429, code);
    }
    assert!(!fake.throttle_next("unknown", 1, 4));
    fake.shutdown().await;
}

#[tokio::test]
async fn mps_cap_refuses_beyond_the_cap() {
    let fake = fake().await;
    let client = client();
    fake.set_mps_cap(PNID, Some(5));
    let mut ok = 0;
    let mut limited = 0;
    for i in 0..12 {
        let (s, b) = send(
            &client,
            &fake,
            &template_body(&format!("1650555{i:04}"), "hello", &[]),
        )
        .await;
        match s {
            200 => ok += 1,
            429 => {
                assert_eq!(b["error"]["code"], 130429);
                limited += 1;
            }
            other => panic!("unexpected {other}: {b}"),
        }
    }
    assert!(ok >= 5 && limited > 0, "ok={ok} limited={limited}");
    assert!(fake.max_mps(PNID) <= 5, "max mps {}", fake.max_mps(PNID));
    assert_eq!(fake.send_times(PNID).len(), ok);
    fake.set_mps_cap(PNID, None);
    assert_eq!(
        send(&client, &fake, &template_body("16505559999", "hello", &[]))
            .await
            .0,
        200
    );
    fake.shutdown().await;
}
