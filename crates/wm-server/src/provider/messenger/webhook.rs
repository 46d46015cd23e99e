//! Reading the Messenger Platform's webhooks (`object: "page"`) and Instagram's
//! (`object: "instagram"`) into [`PlatformEvent`]s.
//!
//! Shapes (<https://developers.facebook.com/documentation/business-messaging/messenger-platform/webhooks/webhook-events>,
//! <https://developers.facebook.com/docs/instagram-platform/webhooks/examples>): `entry[]`
//! of `{id, time, messaging: [ {sender:{id}, recipient:{id}, timestamp, message | postback
//! | reaction | delivery | read | …} ]}` (or `standby` when another app owns the thread).
//! `entry.id` is the Page or the Instagram account; `sender.id` the person's Page- or
//! Instagram-scoped id, except on an echo (`message.is_echo`), where the business is the
//! sender and the person the recipient. Reading is tolerant: an item wm cannot apply is kept
//! as [`PlatformEvent::Unapplied`], never dropped in silence.

use serde_json::Value;
use wm_core::platform::{
    Content, EchoMessage, InboundMedia, InboundMessage, Person, PlatformEvent, Story, Unapplied,
    no_nul,
};
use wm_types::enums::RecipientStatus;
use wm_types::messages::{MessageInteractive, MessageType};

/// Reads a body for `object` (`page` or `instagram`); `Err` when it is not that envelope.
pub fn parse(object: &str, body: &[u8]) -> Result<Vec<PlatformEvent>, String> {
    let root: Value =
        serde_json::from_slice(body).map_err(|e| format!("the webhook is not JSON: {e}"))?;
    // Meta's Instagram page shows the envelope inside an array: read either.
    let envelopes: Vec<&Value> = match &root {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::new();
    for envelope in envelopes {
        let got = envelope.get("object").and_then(Value::as_str);
        if got != Some(object) {
            return Err(format!("the webhook's object is {got:?}, not {object:?}"));
        }
        let entries = envelope
            .get("entry")
            .and_then(Value::as_array)
            .ok_or("the webhook has no entry array")?;
        for entry in entries {
            let account = entry.get("id").map(id_text).unwrap_or_default();
            let items = ["messaging", "standby"]
                .iter()
                .filter_map(|k| entry.get(*k).and_then(Value::as_array))
                .flatten();
            let mut any = false;
            for item in items {
                any = true;
                read_item(&account, item, &mut out);
            }
            if !any {
                out.push(PlatformEvent::Unapplied(Unapplied::new(
                    Some(&account),
                    "field not handled",
                    &entry.to_string(),
                )));
            }
        }
    }
    Ok(out)
}

/// An id Meta gives as a string or (in some payloads) a number.
fn id_text(v: &Value) -> String {
    match v {
        Value::String(s) => no_nul(s),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

fn read_item(account: &str, item: &Value, out: &mut Vec<PlatformEvent>) {
    let sender = item.pointer("/sender/id").map(id_text);
    let recipient = item.pointer("/recipient/id").map(id_text);
    let at_ms = item.get("timestamp").and_then(|t| {
        t.as_i64()
            .or_else(|| t.as_str().and_then(|s| s.parse::<i64>().ok()))
            // A string of seconds (the postback reference's example).
            .map(|n| if n < 100_000_000_000 { n * 1000 } else { n })
    });
    let unapplied = |reason: &'static str| {
        PlatformEvent::Unapplied(Unapplied::new(Some(account), reason, &item.to_string()))
    };
    let person = |id: Option<String>| Person {
        user_id: id,
        ..Person::default()
    };
    if let Some(message) = item.get("message") {
        let mid = str_at(message, "/mid").map(no_nul);
        let echo = message.get("is_echo").and_then(Value::as_bool) == Some(true);
        let (Some(mid), Some(sender), Some(recipient)) = (mid, sender, recipient) else {
            out.push(unapplied("message without a sender"));
            return;
        };
        if message.get("is_deleted").and_then(Value::as_bool) == Some(true) {
            out.push(unapplied("message deleted by the person"));
            return;
        }
        let contents = contents(message);
        let many = contents.len() > 1;
        for (i, content) in contents.into_iter().enumerate() {
            // Several attachments in one message: one message each, the first under the
            // platform's id.
            let message_id = if i == 0 || !many {
                mid.clone()
            } else {
                format!("{mid}#{i}")
            };
            if echo {
                out.push(PlatformEvent::Echo(Box::new(EchoMessage {
                    account: account.to_owned(),
                    message_id,
                    to: person(Some(recipient.clone())),
                    at_ms,
                    content,
                    app_id: message.get("app_id").map(id_text),
                })));
            } else {
                out.push(PlatformEvent::Inbound(Box::new(InboundMessage {
                    account: account.to_owned(),
                    message_id,
                    from: person(Some(sender.clone())),
                    at_ms,
                    content,
                    context_id: str_at(message, "/reply_to/mid").map(no_nul),
                })));
            }
        }
        return;
    }
    let Some(sender) = sender else {
        out.push(unapplied("message without a sender"));
        return;
    };
    if let Some(postback) = item.get("postback") {
        let title = str_at(postback, "/title").map(no_nul);
        let mut content = Content::of(MessageType::Interactive, "postback");
        content.text = title.clone();
        content.interactive = Some(MessageInteractive {
            kind: "postback".into(),
            reply_id: str_at(postback, "/payload").map(no_nul),
            title,
            buttons: Vec::new(),
        });
        let message_id = str_at(postback, "/mid").map_or_else(
            || format!("postback:{sender}:{}", at_ms.unwrap_or_default()),
            no_nul,
        );
        out.push(inbound(account, message_id, &sender, at_ms, content));
    } else if let Some(reaction) = item.get("reaction") {
        let target = str_at(reaction, "/mid").map(no_nul).unwrap_or_default();
        let unreact = str_at(reaction, "/action") == Some("unreact");
        let emoji = (!unreact)
            .then(|| str_at(reaction, "/emoji").or(str_at(reaction, "/reaction")))
            .flatten()
            .map(no_nul);
        let mut content = Content::of(MessageType::Reaction, "reaction");
        content.reaction = Some((target.clone(), emoji));
        let action = if unreact { "unreact" } else { "react" };
        let message_id = format!(
            "reaction:{sender}:{target}:{action}:{}",
            at_ms.unwrap_or_default()
        );
        out.push(inbound(account, message_id, &sender, at_ms, content));
    } else if let Some(delivery) = item.get("delivery") {
        out.push(PlatformEvent::Watermark {
            account: account.to_owned(),
            person: person(Some(sender)),
            status: RecipientStatus::Delivered,
            upto_ms: delivery.get("watermark").and_then(Value::as_i64),
            message_ids: delivery
                .get("mids")
                .and_then(Value::as_array)
                .map(|m| m.iter().filter_map(Value::as_str).map(no_nul).collect())
                .unwrap_or_default(),
        });
    } else if let Some(read) = item.get("read") {
        out.push(PlatformEvent::Watermark {
            account: account.to_owned(),
            person: person(Some(sender)),
            status: RecipientStatus::Read,
            upto_ms: read.get("watermark").and_then(Value::as_i64),
            message_ids: str_at(read, "/mid").map(no_nul).into_iter().collect(),
        });
    } else {
        out.push(unapplied("field not handled"));
    }
}

fn inbound(
    account: &str,
    message_id: String,
    sender: &str,
    at_ms: Option<i64>,
    content: Content,
) -> PlatformEvent {
    PlatformEvent::Inbound(Box::new(InboundMessage {
        account: account.to_owned(),
        message_id,
        from: Person {
            user_id: Some(sender.to_owned()),
            ..Person::default()
        },
        at_ms,
        content,
        context_id: None,
    }))
}

/// What a `message` holds: its text (with a quick reply's payload), or one content per
/// attachment (the text, if any, with the first).
fn contents(message: &Value) -> Vec<Content> {
    let text = str_at(message, "/text").map(no_nul);
    let story_reply = message.pointer("/reply_to/story").map(|s| Story {
        kind: "REPLY",
        url: str_at(s, "/url").map(no_nul),
        id: s.get("id").map(id_text),
    });
    if message.get("is_unsupported").and_then(Value::as_bool) == Some(true) {
        let mut c = Content::of(MessageType::Unsupported, "unsupported");
        c.text = text;
        return vec![c];
    }
    let attachments = message
        .get("attachments")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if attachments.is_empty() {
        let mut c = Content::of(MessageType::Text, "text");
        c.text = text.clone();
        c.story = story_reply;
        if let Some(payload) = str_at(message, "/quick_reply/payload") {
            c.kind = MessageType::Interactive;
            c.platform_type = "quick_reply".into();
            c.interactive = Some(MessageInteractive {
                kind: "quick_reply".into(),
                reply_id: Some(no_nul(payload)),
                title: text,
                buttons: Vec::new(),
            });
        }
        return vec![c];
    }
    let mut out: Vec<Content> = Vec::new();
    for (i, a) in attachments.iter().enumerate() {
        let kind = str_at(a, "/type").unwrap_or("unknown");
        let url = str_at(a, "/payload/url").map(no_nul);
        let (message_type, mime) = match kind {
            "image" => (MessageType::Image, None),
            "sticker" => (MessageType::Sticker, None),
            "video" | "reel" | "ig_reel" => (MessageType::Video, None),
            "audio" => (MessageType::Audio, None),
            "file" => (MessageType::Document, None),
            "story_mention" => (MessageType::Story, None),
            _ => (MessageType::Unsupported, None::<String>),
        };
        let mut c = Content::of(message_type, kind);
        if i == 0 {
            c.text = text.clone();
            c.story = story_reply.clone();
        }
        match message_type {
            MessageType::Story => {
                c.story = Some(Story {
                    kind: "MENTION",
                    url,
                    id: None,
                });
            }
            MessageType::Unsupported => {
                if c.text.is_none() {
                    c.text = str_at(a, "/payload/title").map(no_nul).or(url);
                }
            }
            _ => match url {
                Some(url) => {
                    c.media = Some(InboundMedia {
                        platform_id: url,
                        mime_type: mime,
                        sha256: None,
                        filename: None,
                    });
                }
                None => c.kind = MessageType::Unsupported,
            },
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metas_documented_messenger_text_and_echo() {
        let body = br#"{"object":"page","entry":[{"id":"PAGE","time":1458692752478,"messaging":[
            {"sender":{"id":"PSID"},"recipient":{"id":"PAGE"},"timestamp":1458692752478,
             "message":{"mid":"mid.1457764197618:41d102a3e1ae206a38","text":"hello, world!",
               "quick_reply":{"payload":"DEVELOPER_DEFINED_PAYLOAD"}}}]},
          {"id":"PAGE","time":1457764197627,"messaging":[
            {"sender":{"id":"PAGE"},"recipient":{"id":"PSID"},"timestamp":1457764197627,
             "message":{"is_echo":true,"app_id":1517776481860111,"metadata":"x",
               "mid":"mid.1457764197618:41d102a3e1ae206a39","text":"hello, world!"}}]}]}"#;
        let events = parse("page", body).unwrap();
        assert_eq!(events.len(), 2);
        match &events[0] {
            PlatformEvent::Inbound(m) => {
                assert_eq!(m.from.user_id.as_deref(), Some("PSID"));
                assert_eq!(m.content.kind, MessageType::Interactive);
                assert_eq!(
                    m.content
                        .interactive
                        .as_ref()
                        .and_then(|i| i.reply_id.as_deref()),
                    Some("DEVELOPER_DEFINED_PAYLOAD")
                );
                assert_eq!(m.at_ms, Some(1458692752478));
            }
            other => panic!("{other:?}"),
        }
        match &events[1] {
            PlatformEvent::Echo(e) => {
                assert_eq!(e.to.user_id.as_deref(), Some("PSID"));
                assert_eq!(e.app_id.as_deref(), Some("1517776481860111"));
            }
            other => panic!("{other:?}"),
        }
        assert!(parse("instagram", body).is_err());
    }

    #[test]
    fn metas_documented_receipts_reactions_and_story_mention() {
        let body = br#"{"object":"instagram","entry":[{"id":"IGID","time":1569262486134,"messaging":[
            {"sender":{"id":"IGSID"},"recipient":{"id":"IGID"},"timestamp":1569262485349,
             "message":{"mid":"MID1","attachments":[{"type":"story_mention","payload":{"url":"https://cdn/x"}}]}},
            {"sender":{"id":"IGSID"},"recipient":{"id":"IGID"},"timestamp":1458668856463,
             "reaction":{"mid":"MID0","action":"react","reaction":"love","emoji":"\u2764\ufe0f"}},
            {"sender":{"id":"IGSID"},"recipient":{"id":"IGID"},"timestamp":1458668856463,
             "read":{"mid":"MID0"}},
            {"sender":{"id":"IGSID"},"recipient":{"id":"IGID"},"timestamp":1,
             "message":{"mid":"MID2","is_deleted":true}},
            {"sender":{"id":"IGSID"},"recipient":{"id":"IGID"},"timestamp":1,
             "message_edit":{"mid":"MID2","text":"x","num_edit":"1"}}]}]}"#;
        let events = parse("instagram", body).unwrap();
        assert!(matches!(&events[0], PlatformEvent::Inbound(m)
            if m.content.kind == MessageType::Story
                && m.content.story.as_ref().is_some_and(|s| s.kind == "MENTION")));
        assert!(matches!(&events[1], PlatformEvent::Inbound(m)
            if m.content.reaction == Some(("MID0".into(), Some("\u{2764}\u{fe0f}".into())))));
        assert!(
            matches!(&events[2], PlatformEvent::Watermark { status: RecipientStatus::Read, message_ids, .. }
            if message_ids == &vec!["MID0".to_owned()])
        );
        assert!(
            matches!(&events[3], PlatformEvent::Unapplied(u) if u.reason == "message deleted by the person")
        );
        assert!(
            matches!(&events[4], PlatformEvent::Unapplied(u) if u.reason == "field not handled")
        );
    }
}
