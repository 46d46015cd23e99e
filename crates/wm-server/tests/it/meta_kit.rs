//! A wm server listening on loopback beside the fake Graph API's Messenger Platform: one
//! organisation with a Facebook Page (Messenger) and the Instagram account linked to it
//! connected as channels, the fake posting its signed `page` and `instagram` webhooks to wm.

use std::time::Duration;

use axum::http::Method;
use serde_json::json;
use wm_fake_graph::{FakeGraph, FakeGraphOptions, PageSpec, PersonSpec, WebhookConfig, Write};

use crate::support::{IdOf, Org, TestApp, WA_SECRET};

pub const PAGE: &str = "104000000000001";
pub const IG: &str = "178400000000001";
pub const PAGE_TOKEN: &str = "EAAP-page-token";
pub const PSID: &str = "24000000000000001";
pub const IGSID: &str = "17900000000000001";

pub struct Meta {
    pub fake: FakeGraph,
    pub app: TestApp,
}

impl Meta {
    /// The fake and the server; the Page (allowed by Meta to tag human replies when
    /// `human_agent`) with its Instagram account, and a person on each.
    pub async fn start(human_agent: bool) -> Meta {
        let fake = FakeGraph::start(FakeGraphOptions::default())
            .await
            .expect("fake graph");
        let app = TestApp::whatsapp(&fake.url(), |s| {
            s.rate_limit_per_minute = 1_000_000;
        })
        .await;
        let base = app.listen().await;
        for (object, path) in [("page", "messenger"), ("instagram", "instagram")] {
            let config = Some(WebhookConfig {
                url: format!("{base}/platform/{path}/webhook"),
                app_secret: WA_SECRET.to_owned(),
                statuses: Default::default(),
                retry: Default::default(),
            });
            if object == "page" {
                fake.configure_messenger_webhook(config);
            } else {
                fake.configure_instagram_webhook(config);
            }
        }
        fake.register_page(PageSpec {
            page_id: PAGE.into(),
            access_token: PAGE_TOKEN.into(),
            name: "Tienda".into(),
            instagram_id: Some(IG.into()),
            human_agent,
        });
        fake.register_person(PersonSpec {
            account_id: PAGE.into(),
            scoped_id: PSID.into(),
            first_name: "Peter".into(),
            last_name: "Chang".into(),
            name: "Peter Chang".into(),
            username: None,
            profile_pic: None,
        });
        fake.register_person(PersonSpec {
            account_id: IG.into(),
            scoped_id: IGSID.into(),
            first_name: String::new(),
            last_name: String::new(),
            name: "Lia Souza".into(),
            username: Some("lia.souza".into()),
            profile_pic: None,
        });
        Meta { fake, app }
    }

    /// Connects the Page and its Instagram account to `org`; the two channels' ids.
    pub async fn connect(&self, org: &Org<'_>, human_agent: bool) -> (String, String) {
        let messenger = org
            .admin(
                Method::POST,
                "/channels/messenger",
                Some(
                    json!({"pageId": PAGE, "name": "Tienda", "accessToken": PAGE_TOKEN,
                    "humanAgent": human_agent}),
                ),
            )
            .await
            .ok(201)
            .id()
            .to_owned();
        let instagram = org
            .admin(
                Method::POST,
                "/channels/instagram",
                Some(json!({"instagramId": IG, "pageId": PAGE, "name": "@tienda",
                    "accessToken": PAGE_TOKEN})),
            )
            .await
            .ok(201)
            .id()
            .to_owned();
        (messenger, instagram)
    }

    /// A person does something; the post was taken (200).
    pub async fn write(&self, w: Write) -> String {
        let posted = self.fake.messenger_write(w).await.expect("write");
        assert_eq!(posted.posted.last_status, Some(200), "{posted:?}");
        self.settle().await;
        posted.mid().unwrap_or_default().to_owned()
    }

    /// Lets the webhooks land and be applied, files fetched and profiles read.
    pub async fn settle(&self) {
        self.fake.wait_webhooks_idle(Duration::from_secs(10)).await;
        self.app.apply_kept().await;
        wm_server::services::media::fetch_due(&self.app.state)
            .await
            .expect("fetch media");
        wm_server::services::profiles::read_due(&self.app.state)
            .await
            .expect("read profiles");
    }

    /// Sends the replies that are due and lets what the platform posts back land.
    pub async fn send_replies(&self) {
        for _ in 0..2 {
            wm_server::services::replies::deliver::run_once(&self.app.state)
                .await
                .expect("send replies");
            self.settle().await;
        }
    }
}
