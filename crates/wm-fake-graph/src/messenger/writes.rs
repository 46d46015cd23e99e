//! What people do, posted as webhooks: messages, quick replies, attachments, postbacks,
//! reactions, replies, Instagram story replies/mentions, unsupported and deleted
//! messages; delivery and read receipts; replies typed in Meta's inbox.
//!
//! Items follow Meta's examples (see [`super`] for the pages):
//! * message: `{"sender":{"id":<PSID|IGSID>},"recipient":{"id":<Page|IG id>},"timestamp":<ms>,
//!   "message":{"mid","text"?,"quick_reply"?:{"payload"},"attachments"?:[{"type","payload":{"url"}}],
//!   "reply_to"?:{"mid","is_self_reply":false (Messenger only)} | {"story":{"url","id"}}}}`;
//! * Instagram `is_unsupported: true` and `is_deleted: true` beside `mid` (Instagram only:
//!   Messenger's `message` table has neither);
//! * postback `{"mid","title","payload"}`; reaction `{"reaction","emoji","action","mid"}`,
//!   `reaction`/`emoji` omitted on `unreact` (documented for Instagram, assumed for
//!   Messenger);
//! * delivery `{"mids"?,"watermark"}` without `timestamp` (Meta's example has none);
//!   read `{"watermark"}` (Messenger), `{"mid"}` (Instagram `messaging_seen`).
//!
//! Every write but `Deleted` opens (or renews) the person's window at its timestamp and
//! makes their profile readable (consent); an unknown PSID/IGSID is registered on the fly.

use anyhow::bail;
use chrono::{DateTime, TimeZone, Utc};
use serde_json::{Value, json};

use super::cdn;
use super::model::{MessengerPosted, MessengerSend, Platform, ReactionAction, Write, WriteKind};
use super::send::{Echo, new_mid};
use super::store::PAGE_INBOX_APP_ID;
use super::webhooks::echo_message;
use crate::FakeGraph;

/// The reaction name Meta pairs with an emoji (`smile|angry|sad|wow|love|like|dislike|other`).
fn reaction_name(emoji: &str) -> &'static str {
    match emoji.trim_end_matches('\u{fe0f}') {
        "\u{1f606}" | "\u{1f604}" | "\u{1f600}" | "\u{1f603}" | "\u{1f602}" => "smile",
        "\u{1f620}" | "\u{1f621}" => "angry",
        "\u{1f622}" | "\u{1f625}" | "\u{1f62d}" => "sad",
        "\u{1f62e}" | "\u{1f632}" => "wow",
        "\u{2764}" | "\u{1f60d}" => "love",
        "\u{1f44d}" => "like",
        "\u{1f44e}" => "dislike",
        _ => "other",
    }
}

/// One built event: webhook field, entry id, item and the mid it names.
struct Built {
    platform: Platform,
    field: &'static str,
    account_id: String,
    item: Value,
    mid: String,
}

fn at_ms(ts: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ts)
        .single()
        .unwrap_or_else(Utc::now)
}

impl FakeGraph {
    fn build(&self, w: Write) -> anyhow::Result<Built> {
        let base = self.url();
        let mut store = self.msgr();
        let Some(platform) = store.platform_of(&w.account_id) else {
            bail!(
                "{} is neither a registered Page nor a linked Instagram account",
                w.account_id
            );
        };
        let ig_only = matches!(
            w.kind,
            WriteKind::StoryReply { .. }
                | WriteKind::StoryMention { .. }
                | WriteKind::Unsupported
                | WriteKind::Deleted { .. }
        );
        if ig_only && platform == Platform::Messenger {
            bail!("{:?} exists on Instagram only", w.kind);
        }
        let ts = w
            .timestamp_ms
            .unwrap_or_else(|| Utc::now().timestamp_millis());
        let mid = w
            .mid
            .clone()
            .unwrap_or_else(|| new_mid(platform, &w.account_id));
        if !matches!(w.kind, WriteKind::Deleted { .. }) {
            store.touch(&w.account_id, &w.scoped_id, at_ms(ts));
        }
        let mut item = json!({
            "sender": { "id": w.scoped_id },
            "recipient": { "id": w.account_id },
            "timestamp": ts,
        });
        let (field, used_mid) = match w.kind {
            WriteKind::Text(text) => {
                item["message"] = json!({ "mid": mid, "text": text });
                ("messages", mid)
            }
            WriteKind::QuickReply { text, payload } => {
                item["message"] =
                    json!({ "mid": mid, "text": text, "quick_reply": { "payload": payload } });
                ("messages", mid)
            }
            WriteKind::Attachment { kind, mime, bytes } => {
                let url = cdn::publish(&mut store, &base, platform, &mime, bytes);
                item["message"] = json!({ "mid": mid, "attachments": [{ "type": kind, "payload": { "url": url } }] });
                ("messages", mid)
            }
            WriteKind::Postback { title, payload } => {
                item["postback"] = json!({ "mid": mid, "title": title, "payload": payload });
                ("messaging_postbacks", mid)
            }
            WriteKind::Reaction {
                mid: target,
                emoji,
                action,
            } => {
                let mut r = json!({});
                if let (ReactionAction::React, Some(e)) = (action, &emoji) {
                    r["reaction"] = json!(reaction_name(e));
                    r["emoji"] = json!(e);
                }
                r["action"] = json!(action);
                r["mid"] = json!(target);
                item["reaction"] = r;
                ("message_reactions", target)
            }
            WriteKind::ReplyTo { text, mid: quoted } => {
                let reply_to = match platform {
                    Platform::Messenger => json!({ "mid": quoted, "is_self_reply": false }),
                    Platform::Instagram => json!({ "mid": quoted }),
                };
                item["message"] = json!({ "mid": mid, "text": text, "reply_to": reply_to });
                ("messages", mid)
            }
            WriteKind::StoryReply {
                text,
                story_url,
                story_id,
            } => {
                item["message"] = json!({
                    "mid": mid, "text": text,
                    "reply_to": { "story": { "url": story_url, "id": story_id } },
                });
                ("messages", mid)
            }
            WriteKind::StoryMention { url } => {
                item["message"] = json!({
                    "mid": mid,
                    "attachments": [{ "type": "story_mention", "payload": { "url": url } }],
                });
                ("messages", mid)
            }
            WriteKind::Unsupported => {
                item["message"] = json!({ "mid": mid, "is_unsupported": true });
                ("messages", mid)
            }
            WriteKind::Deleted { mid: deleted } => {
                item["message"] = json!({ "mid": deleted, "is_deleted": true });
                ("messages", deleted)
            }
        };
        Ok(Built {
            platform,
            field,
            account_id: w.account_id,
            item,
            mid: used_mid,
        })
    }

    /// Posts what a person does (signed, to the `page` or `instagram` webhook by the
    /// account's kind). Returns the mid used (the reacted-to / deleted mid for reactions
    /// and deletions) and the post.
    pub async fn messenger_write(&self, write: Write) -> anyhow::Result<MessengerPosted> {
        self.messenger_batch(vec![write]).await
    }

    /// Posts several writes in ONE webhook: one entry per write (one `messaging` item
    /// each, as Meta says). All must be of one platform.
    pub async fn messenger_batch(&self, writes: Vec<Write>) -> anyhow::Result<MessengerPosted> {
        if writes.is_empty() {
            bail!("an empty batch");
        }
        let mut built = Vec::with_capacity(writes.len());
        for w in writes {
            built.push(self.build(w)?);
        }
        let platform = built[0].platform;
        if built.iter().any(|b| b.platform != platform) {
            bail!("a batch mixes Messenger and Instagram events (different webhook objects)");
        }
        let field = if built.iter().all(|b| b.field == built[0].field) {
            built[0].field
        } else {
            "batch"
        };
        let mids = built.iter().map(|b| b.mid.clone()).collect();
        let entries = built.into_iter().map(|b| (b.account_id, b.item)).collect();
        self.post_messenger(platform, field, entries, mids).await
    }

    fn messenger_page_only(&self, account_id: &str) -> anyhow::Result<()> {
        match self.msgr().platform_of(account_id) {
            Some(Platform::Messenger) => Ok(()),
            Some(Platform::Instagram) => bail!("delivery and read watermarks are Messenger only"),
            None => bail!("{account_id} is not a registered Page"),
        }
    }

    /// Posts a Messenger delivery receipt (`message_deliveries`): `delivery{mids?, watermark}`.
    pub async fn messenger_delivered(
        &self,
        account_id: &str,
        scoped_id: &str,
        watermark_ms: i64,
        mids: Option<Vec<String>>,
    ) -> anyhow::Result<MessengerPosted> {
        self.messenger_page_only(account_id)?;
        let mut delivery = json!({});
        if let Some(m) = &mids {
            delivery["mids"] = json!(m);
        }
        delivery["watermark"] = json!(watermark_ms);
        let item = json!({
            "sender": { "id": scoped_id },
            "recipient": { "id": account_id },
            "delivery": delivery,
        });
        let entries = vec![(account_id.to_owned(), item)];
        self.post_messenger(
            Platform::Messenger,
            "message_deliveries",
            entries,
            mids.unwrap_or_default(),
        )
        .await
    }

    /// Posts a Messenger read receipt (`message_reads`): `read{watermark}`.
    pub async fn messenger_read(
        &self,
        account_id: &str,
        scoped_id: &str,
        watermark_ms: i64,
    ) -> anyhow::Result<MessengerPosted> {
        self.messenger_page_only(account_id)?;
        let item = json!({
            "sender": { "id": scoped_id },
            "recipient": { "id": account_id },
            "timestamp": Utc::now().timestamp_millis(),
            "read": { "watermark": watermark_ms },
        });
        let entries = vec![(account_id.to_owned(), item)];
        self.post_messenger(Platform::Messenger, "message_reads", entries, Vec::new())
            .await
    }

    /// Posts an Instagram seen event (`messaging_seen`): `read{mid}`.
    pub async fn instagram_seen(
        &self,
        account_id: &str,
        scoped_id: &str,
        mid: &str,
    ) -> anyhow::Result<MessengerPosted> {
        if self.msgr().platform_of(account_id) != Some(Platform::Instagram) {
            bail!("{account_id} is not a linked Instagram account");
        }
        let item = json!({
            "sender": { "id": scoped_id },
            "recipient": { "id": account_id },
            "timestamp": Utc::now().timestamp_millis(),
            "read": { "mid": mid },
        });
        let entries = vec![(account_id.to_owned(), item)];
        self.post_messenger(
            Platform::Instagram,
            "messaging_seen",
            entries,
            vec![mid.to_owned()],
        )
        .await
    }

    /// A reply typed in Meta's own inbox (Business Suite): recorded as a send
    /// (`via_inbox`) and its echo posted whether or not echoes are on, with the Page
    /// inbox's `app_id` 263902037430900 on Messenger (Meta's page prints it as
    /// `26390203743090`, a digit short).
    pub async fn inbox_reply(
        &self,
        account_id: &str,
        scoped_id: &str,
        text: &str,
    ) -> anyhow::Result<MessengerPosted> {
        let (platform, page_id) = {
            let store = self.msgr();
            let Some(platform) = store.platform_of(account_id) else {
                bail!("{account_id} is neither a registered Page nor a linked Instagram account");
            };
            let Some(page) = store.page_of(account_id) else {
                bail!("no Page for {account_id}");
            };
            (platform, page.spec.page_id.clone())
        };
        let mid = new_mid(platform, account_id);
        let message = echo_message(platform, &mid, PAGE_INBOX_APP_ID, Some(text), None, &[]);
        self.msgr().sends.push(MessengerSend {
            account_id: account_id.to_owned(),
            page_id,
            platform,
            recipient: scoped_id.to_owned(),
            messaging_type: "RESPONSE".to_owned(),
            tag: None,
            message: json!({ "text": text }),
            reply_to: None,
            message_id: mid,
            at: Utc::now(),
            via_inbox: true,
        });
        self.post_echo(Echo {
            platform,
            account_id: account_id.to_owned(),
            recipient: scoped_id.to_owned(),
            message,
        })
        .await
    }
}
