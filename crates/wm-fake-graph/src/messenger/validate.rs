//! Send API body checks: `messaging_type`/`tag`, `message` (text, attachment, quick
//! replies, metadata) and `sender_action`.
//!
//! Documented limits enforced (send-messages page, Send API reference, quick-replies
//! pages, saving-assets page; see the module docs of [`super`]): Messenger text "less
//! than 2000 characters", Instagram text "1000 bytes or less", up to 13 quick replies
//! (text ones need a `title` and a `payload` of at most 1000 characters), `metadata`
//! "less than 1000 characters", up to ten Instagram `attachments`, phone/email quick
//! replies disabled on Instagram (Oct 5, 2026). Meta documents none of the error
//! *messages* for these: each answers code 100 with Graph-style wording chosen here.
//! The three tags removed on April 27, 2026 answer code 100 subcode 1893061 "Invalid
//! parameter", as apps reported after that date (chatwoot/chatwoot#14669).

use serde_json::Value;

use super::body::Params;
use super::errors::{self, param};
use super::model::Platform;
use super::store::Store;
use crate::errors::GraphError;

/// The rate bucket of a send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bucket {
    /// Text, links, reactions, stickers (and, assumed, images, files, sender actions).
    Text,
    /// Audio or video.
    Media,
}

/// Where an attachment's bytes come from (for the echo and reusable sends).
#[derive(Debug, Clone)]
pub(crate) enum Source {
    Url(String),
    Stored(String),
    File,
    Payload(Value),
}

/// A checked `message`.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub messaging_type: String,
    pub tag: Option<String>,
    pub human_agent: bool,
    pub message: Value,
    pub reply_to: Option<String>,
    pub metadata: Option<String>,
    /// `(type, source)` of each attachment.
    pub attachments: Vec<(String, Source)>,
    /// `payload.is_reusable` was set (the answer carries `attachment_id`).
    pub reusable: bool,
}

const REMOVED_TAGS: &[&str] = &[
    "CONFIRMED_EVENT_UPDATE",
    "ACCOUNT_UPDATE",
    "POST_PURCHASE_UPDATE",
];

/// Which bucket a send counts against.
pub(crate) fn bucket_of(params: &Params) -> Bucket {
    let kind = params
        .fields
        .get("message")
        .and_then(|m| m.get("attachment"))
        .and_then(|a| a.get("type"))
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    let file_mime = params.file.as_ref().and_then(|f| f.mime.clone());
    let media = matches!(kind.as_deref(), Some("audio" | "video"))
        || file_mime.is_some_and(|m| m.starts_with("audio/") || m.starts_with("video/"));
    if media { Bucket::Media } else { Bucket::Text }
}

/// `messaging_type` (default `RESPONSE`: Meta's own attachment and Instagram examples
/// omit it) and `tag`. `UTILITY` (utility templates) is not modelled and is refused.
pub(crate) fn check_type(
    params: &Params,
    human_agent_feature: bool,
) -> Result<(String, Option<String>, bool), GraphError> {
    let mt = params
        .str("messaging_type")
        .unwrap_or("RESPONSE")
        .to_owned();
    match mt.as_str() {
        "RESPONSE" | "UPDATE" => Ok((mt, None, false)),
        "MESSAGE_TAG" => {
            let Some(tag) = params.str("tag") else {
                return Err(param(
                    "The parameter tag is required when messaging_type is MESSAGE_TAG",
                ));
            };
            if REMOVED_TAGS.contains(&tag) {
                return Err(errors::graph(100, Some(1_893_061), "Invalid parameter"));
            }
            if tag != "HUMAN_AGENT" {
                return Err(param(&format!(
                    "Param tag must be one of {{HUMAN_AGENT}} - got \"{tag}\"."
                )));
            }
            if !human_agent_feature {
                // Meta documents the App Review requirement, not the refusal itself.
                return Err(errors::graph(
                    10,
                    None,
                    "Application does not have permission for this action",
                ));
            }
            Ok((mt, Some(tag.to_owned()), true))
        }
        other => Err(param(&format!(
            "Param messaging_type must be one of {{RESPONSE, UPDATE, MESSAGE_TAG}} - got \"{other}\"."
        ))),
    }
}

/// A `sender_action` request: `(action, payload)`; `None` for a message send.
pub(crate) fn check_action(params: &Params) -> Result<Option<(String, Option<Value>)>, GraphError> {
    let Some(action) = params.fields.get("sender_action") else {
        return Ok(None);
    };
    let action = action.as_str().unwrap_or_default().to_owned();
    if params.fields.contains_key("message") {
        return Err(param("sender_action cannot be sent with message"));
    }
    let payload = params.fields.get("payload").cloned();
    match action.as_str() {
        "typing_on" | "typing_off" | "mark_seen" => Ok(Some((action, payload))),
        "react" | "unreact" => {
            let mid = payload
                .as_ref()
                .and_then(|p| p.get("message_id"))
                .and_then(Value::as_str);
            if mid.is_none_or(str::is_empty) {
                return Err(param("The parameter payload[message_id] is required"));
            }
            let reaction = payload.as_ref().and_then(|p| p.get("reaction"));
            if action == "react" && reaction.and_then(Value::as_str).is_none_or(str::is_empty) {
                return Err(param("The parameter payload[reaction] is required"));
            }
            Ok(Some((action, payload)))
        }
        other => Err(param(&format!(
            "Param sender_action must be one of {{typing_on, typing_off, mark_seen, react, unreact}} - got \"{other}\"."
        ))),
    }
}

fn check_text(text: &str, platform: Platform) -> Result<(), GraphError> {
    match platform {
        Platform::Messenger if text.chars().count() >= 2000 => Err(param(
            "Length of param message[text] must be less than 2000 characters",
        )),
        Platform::Instagram if text.len() > 1000 => Err(param(
            "Length of param message[text] must be at most 1000 bytes",
        )),
        _ => Ok(()),
    }
}

/// Checks one attachment object; its `(type, source)`. An `attachment_id` must be one
/// this Page uploaded for the same platform (an id uploaded without
/// `"platform":"instagram"` is not usable for Instagram and vice versa: assumed, Meta
/// only says the id is private to the Page).
fn check_attachment(
    att: &Value,
    store: &Store,
    page_id: &str,
    platform: Platform,
    has_file: bool,
) -> Result<(String, Source, bool), GraphError> {
    let kind = att
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let allowed: &[&str] = match platform {
        Platform::Messenger => &["audio", "file", "image", "template", "video"],
        Platform::Instagram => &[
            "audio",
            "file",
            "image",
            "template",
            "video",
            "like_heart",
            "media_share",
        ],
    };
    if !allowed.contains(&kind.as_str()) {
        return Err(param(&format!(
            "Param message[attachment][type] must be one of {{{}}}",
            allowed.join(", ")
        )));
    }
    let payload = att.get("payload").cloned().unwrap_or(Value::Null);
    let reusable = matches!(payload.get("is_reusable"), Some(Value::Bool(true)))
        || payload.get("is_reusable").and_then(Value::as_str) == Some("true");
    match kind.as_str() {
        "like_heart" => return Ok((kind, Source::Payload(payload), false)),
        "template" => {
            if payload.get("template_type").is_none() {
                return Err(param(
                    "Param message[attachment][payload][template_type] is required",
                ));
            }
            return Ok((kind, Source::Payload(payload), false));
        }
        "media_share" => {
            // An uploaded attachment id or one of the account's own posts (which the fake
            // cannot know, so any other id is taken as a post).
            let id = id_of(payload.get("id")).unwrap_or_default();
            if id.is_empty() {
                return Err(param(
                    "The parameter message[attachment][payload][id] is required",
                ));
            }
            return match store.attachments.get(&id) {
                Some(a) if a.page_id != page_id => Err(errors::attachment_not_owned()),
                Some(_) => Ok((kind, Source::Stored(id), false)),
                None => Ok((kind, Source::Payload(payload), false)),
            };
        }
        _ => {}
    }
    if let Some(id) = id_of(payload.get("attachment_id")) {
        let owned = store
            .attachments
            .get(&id)
            .is_some_and(|a| a.page_id == page_id && a.platform == platform);
        if !owned {
            return Err(errors::attachment_not_owned());
        }
        return Ok((kind, Source::Stored(id), false));
    }
    if let Some(url) = payload.get("url").and_then(Value::as_str) {
        if reqwest::Url::parse(url).is_err()
            || !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(param(
                "Param message[attachment][payload][url] must be a valid URL",
            ));
        }
        return Ok((kind, Source::Url(url.to_owned()), reusable));
    }
    if has_file {
        return Ok((kind, Source::File, reusable));
    }
    Err(param(
        "Param message[attachment][payload] must have a url or an attachment_id",
    ))
}

/// An id given as a string or a number.
fn id_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Checks the `message` of a send (after `messaging_type`).
pub(crate) fn check_message(
    params: &Params,
    store: &Store,
    page_id: &str,
    platform: Platform,
    typ: (String, Option<String>, bool),
) -> Result<Checked, GraphError> {
    let Some(message) = params.fields.get("message") else {
        return Err(param("Must send either message or sender_action"));
    };
    let Some(obj) = message.as_object() else {
        return Err(param("Param message must be a JSON object"));
    };
    let text = obj.get("text").and_then(Value::as_str);
    let mut attachments = Vec::new();
    let mut reusable = false;
    if let Some(att) = obj.get("attachment") {
        let (kind, source, r) =
            check_attachment(att, store, page_id, platform, params.file.is_some())?;
        attachments.push((kind, source));
        reusable = r;
    }
    if let Some(list) = obj.get("attachments") {
        let Some(list) = list.as_array().filter(|_| platform == Platform::Instagram) else {
            return Err(param(
                "Param message[attachments] is not supported; use message[attachment]",
            ));
        };
        if list.is_empty() || list.len() > 10 {
            return Err(param(
                "Param message[attachments] must have between 1 and 10 elements",
            ));
        }
        for att in list {
            if att.get("type").and_then(Value::as_str) != Some("image") {
                return Err(param(
                    "Param message[attachments] may only hold image attachments",
                ));
            }
            let (kind, source, _) = check_attachment(att, store, page_id, platform, false)?;
            attachments.push((kind, source));
        }
    }
    match (text, attachments.is_empty()) {
        (None, true) => {
            return Err(errors::graph(
                100,
                Some(2_018_034),
                "Message cannot be empty, must provide valid attachment or text",
            ));
        }
        (Some(_), false) => {
            return Err(param(
                "Only one of message[text] or message[attachment] may be set",
            ));
        }
        (Some(t), true) => check_text(t, platform)?,
        (None, false) => {}
    }
    if let Some(qrs) = obj.get("quick_replies") {
        super::quick_replies::check(qrs, platform)?;
    }
    let metadata = obj
        .get("metadata")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if metadata.as_ref().is_some_and(|m| m.chars().count() >= 1000) {
        return Err(param(
            "Length of param message[metadata] must be less than 1000 characters",
        ));
    }
    let reply_to = params
        .fields
        .get("reply_to")
        .and_then(|r| r.get("mid"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let (messaging_type, tag, human_agent) = typ;
    Ok(Checked {
        messaging_type,
        tag,
        human_agent,
        message: message.clone(),
        reply_to,
        metadata,
        attachments,
        reusable,
    })
}
