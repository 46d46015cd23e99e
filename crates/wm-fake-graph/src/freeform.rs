//! Free-form (non-template) message objects: `text`, media (`image`, `video`, `audio`,
//! `document`, `sticker`), `interactive` reply buttons and `reaction`.
//!
//! Shapes and limits follow the Messages reference and the "Send messages" guides
//! (<https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages>,
//! <https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/interactive-reply-buttons-messages>):
//! text `body` 1..=4096 characters with optional `preview_url`; media by `id` *or*
//! `link` (HTTP/HTTPS only), `caption` (≤ 1024) on image/video/document, `filename` on
//! document; reply buttons: body text ≤ 1024, 1 to 3 buttons of `type: "reply"` with
//! `id` ≤ 256 and `title` ≤ 20 characters, header/footer text ≤ 60.
//!
//! Why these codes: a malformed object is a Graph parameter error, answered with code
//! 100 "Invalid parameter" and `error_data.details` naming the parameter in Graph's
//! `Param x['y']` style; a required parameter that is absent keeps 131008 like the rest
//! of the send validation. Media that the number cannot use (unknown, expired, owned by
//! another number, or of a type the message cannot carry) is 131053 "Media upload
//! error", answered synchronously (see `check_media`).

use serde_json::{Map, Value};

use crate::errors::GraphError;
use crate::media::MediaInfo;

/// Longest `text.body` (characters).
pub const MAX_TEXT_BODY: usize = 4096;
/// Longest media `caption` (characters).
pub const MAX_CAPTION: usize = 1024;
/// Longest interactive `body.text` (characters).
pub const MAX_INTERACTIVE_BODY: usize = 1024;
/// Longest interactive header or footer text (characters).
pub const MAX_HEADER_FOOTER: usize = 60;
/// Most reply buttons in one message.
pub const MAX_BUTTONS: usize = 3;
/// Longest reply button `title` (characters).
pub const MAX_BUTTON_TITLE: usize = 20;
/// Longest reply button `id` (characters).
pub const MAX_BUTTON_ID: usize = 256;

/// The media message types.
pub(crate) const MEDIA_TYPES: &[&str] = &["image", "video", "audio", "document", "sticker"];

/// A media reference from a send body.
#[derive(Debug, Clone)]
pub(crate) struct MediaRef {
    /// `image`, `video`, `audio`, `document` or `sticker`.
    pub kind: String,
    /// The media id, when sent by id.
    pub id: Option<String>,
}

/// What the send path needs from a validated free-form object.
#[derive(Debug, Default)]
pub(crate) struct FreeForm {
    pub text_body: Option<String>,
    pub media: Option<MediaRef>,
}

type Obj = Map<String, Value>;

fn bad(details: &str) -> GraphError {
    GraphError::invalid_parameter(details)
}

fn missing(path: &str) -> GraphError {
    GraphError::whatsapp(
        131008,
        Some(&format!("The parameter {path} is required.")),
        None,
    )
}

/// The object under `key` of `parent` (reported as `path`).
fn object<'a>(parent: &'a Obj, key: &str, path: &str) -> Result<&'a Obj, GraphError> {
    match parent.get(key) {
        None | Some(Value::Null) => Err(missing(path)),
        Some(Value::Object(o)) => Ok(o),
        Some(_) => Err(bad(&format!("Param {path} must be a JSON object."))),
    }
}

fn check_keys(obj: &Obj, path: &str, allowed: &[&str]) -> Result<(), GraphError> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(bad(&format!("Unexpected key \"{k}\" on param {path}."))),
        None => Ok(()),
    }
}

/// An optional string parameter.
fn opt_str<'a>(obj: &'a Obj, key: &str, path: &str) -> Result<Option<&'a str>, GraphError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad(&format!("Param {path} must be a string."))),
    }
}

/// A required string parameter.
fn req_str<'a>(obj: &'a Obj, key: &str, path: &str) -> Result<&'a str, GraphError> {
    opt_str(obj, key, path)?.ok_or_else(|| missing(path))
}

fn check_len(s: &str, path: &str, min: usize, max: usize) -> Result<(), GraphError> {
    let n = s.chars().count();
    if n < min {
        let unit = if min == 1 { "character" } else { "characters" };
        return Err(bad(&format!(
            "Param {path} must be at least {min} {unit} long."
        )));
    }
    if n > max {
        return Err(bad(&format!(
            "Param {path} must be at most {max} characters long."
        )));
    }
    Ok(())
}

/// Validates the object of a free-form `type` (anything but `template`).
pub(crate) fn parse(body: &Obj, ty: &str) -> Result<FreeForm, GraphError> {
    match ty {
        "text" => text(body),
        "interactive" => interactive(body),
        "reaction" => reaction(body),
        t if MEDIA_TYPES.contains(&t) => media(body, t),
        other => Err(GraphError::whatsapp(
            131051,
            Some(&format!(
                "Message type {other} is currently not supported (the fake models template, text, image, video, audio, document, sticker, interactive button and reaction)."
            )),
            None,
        )),
    }
}

fn text(body: &Obj) -> Result<FreeForm, GraphError> {
    let text = object(body, "text", "text")?;
    check_keys(text, "text", &["body", "preview_url"])?;
    let content = req_str(text, "body", "text['body']")?;
    check_len(content, "text['body']", 1, MAX_TEXT_BODY)?;
    if text.get("preview_url").is_some_and(|v| !v.is_boolean()) {
        return Err(bad("Param text['preview_url'] must be a boolean."));
    }
    Ok(FreeForm {
        text_body: Some(content.to_owned()),
        media: None,
    })
}

fn media(body: &Obj, kind: &str) -> Result<FreeForm, GraphError> {
    let obj = object(body, kind, kind)?;
    let allowed: &[&str] = match kind {
        "image" | "video" => &["id", "link", "caption"],
        "document" => &["id", "link", "caption", "filename"],
        _ => &["id", "link"],
    };
    check_keys(obj, kind, allowed)?;
    let id = opt_str(obj, "id", &format!("{kind}['id']"))?;
    let link = opt_str(obj, "link", &format!("{kind}['link']"))?;
    match (id, link) {
        (Some(_), Some(_)) => {
            return Err(bad(&format!(
                "Param {kind} must have either 'id' or 'link', not both."
            )));
        }
        (None, None) => {
            return Err(bad(&format!(
                "Param {kind} must have either 'id' or 'link'."
            )));
        }
        (Some(id), None) if id.trim().is_empty() => {
            return Err(bad(&format!("Param {kind}['id'] must be a media id.")));
        }
        (None, Some(link)) if !is_http_url(link) => {
            return Err(bad(&format!(
                "Param {kind}['link'] must be a valid HTTP or HTTPS URL."
            )));
        }
        _ => {}
    }
    if let Some(caption) = opt_str(obj, "caption", &format!("{kind}['caption']"))? {
        check_len(caption, &format!("{kind}['caption']"), 0, MAX_CAPTION)?;
    }
    opt_str(obj, "filename", &format!("{kind}['filename']"))?;
    Ok(FreeForm {
        text_body: None,
        media: Some(MediaRef {
            kind: kind.to_owned(),
            id: id.map(str::to_owned),
        }),
    })
}

fn is_http_url(link: &str) -> bool {
    reqwest::Url::parse(link).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    })
}

fn interactive(body: &Obj) -> Result<FreeForm, GraphError> {
    let obj = object(body, "interactive", "interactive")?;
    check_keys(
        obj,
        "interactive",
        &["type", "header", "body", "footer", "action"],
    )?;
    match req_str(obj, "type", "interactive['type']")? {
        "button" => {}
        other => {
            return Err(GraphError::whatsapp(
                131051,
                Some(&format!(
                    "Interactive type {other} is not supported by the fake (it models reply buttons, type \"button\")."
                )),
                None,
            ));
        }
    }
    let inner_body = object(obj, "body", "interactive['body']")?;
    check_keys(inner_body, "interactive['body']", &["text"])?;
    let text = req_str(inner_body, "text", "interactive['body']['text']")?;
    check_len(text, "interactive['body']['text']", 1, MAX_INTERACTIVE_BODY)?;
    if obj.contains_key("footer") {
        let footer = object(obj, "footer", "interactive['footer']")?;
        check_keys(footer, "interactive['footer']", &["text"])?;
        let text = req_str(footer, "text", "interactive['footer']['text']")?;
        check_len(text, "interactive['footer']['text']", 1, MAX_HEADER_FOOTER)?;
    }
    if obj.contains_key("header") {
        let header = object(obj, "header", "interactive['header']")?;
        match req_str(header, "type", "interactive['header']['type']")? {
            "text" => {
                let text = req_str(header, "text", "interactive['header']['text']")?;
                check_len(text, "interactive['header']['text']", 1, MAX_HEADER_FOOTER)?;
            }
            "image" | "video" | "document" => {}
            other => {
                return Err(bad(&format!(
                    "Param interactive['header']['type'] must be one of {{text, image, video, document}} - got \"{other}\"."
                )));
            }
        }
    }
    let action = object(obj, "action", "interactive['action']")?;
    check_keys(action, "interactive['action']", &["buttons"])?;
    let buttons = match action.get("buttons") {
        None | Some(Value::Null) => return Err(missing("interactive['action']['buttons']")),
        Some(Value::Array(b)) => b,
        Some(_) => {
            return Err(bad(
                "Param interactive['action']['buttons'] must be an array.",
            ));
        }
    };
    if buttons.is_empty() {
        return Err(bad(
            "Param interactive['action']['buttons'] must contain at least 1 element.",
        ));
    }
    if buttons.len() > MAX_BUTTONS {
        return Err(bad(&format!(
            "Param interactive['action']['buttons'] must contain at most {MAX_BUTTONS} elements."
        )));
    }
    for (i, button) in buttons.iter().enumerate() {
        let path = format!("interactive['action']['buttons'][{i}]");
        let Some(button) = button.as_object() else {
            return Err(bad(&format!("Param {path} must be a JSON object.")));
        };
        check_keys(button, &path, &["type", "reply"])?;
        match req_str(button, "type", &format!("{path}['type']"))? {
            "reply" => {}
            other => {
                return Err(bad(&format!(
                    "Param {path}['type'] must be one of {{reply}} - got \"{other}\"."
                )));
            }
        }
        let reply = object(button, "reply", &format!("{path}['reply']"))?;
        check_keys(reply, &format!("{path}['reply']"), &["id", "title"])?;
        let id_path = format!("{path}['reply']['id']");
        check_len(req_str(reply, "id", &id_path)?, &id_path, 1, MAX_BUTTON_ID)?;
        let title_path = format!("{path}['reply']['title']");
        check_len(
            req_str(reply, "title", &title_path)?,
            &title_path,
            1,
            MAX_BUTTON_TITLE,
        )?;
    }
    Ok(FreeForm::default())
}

fn reaction(body: &Obj) -> Result<FreeForm, GraphError> {
    let obj = object(body, "reaction", "reaction")?;
    check_keys(obj, "reaction", &["message_id", "emoji"])?;
    let id = req_str(obj, "message_id", "reaction['message_id']")?;
    check_len(id, "reaction['message_id']", 1, usize::MAX)?;
    // An empty emoji removes an earlier reaction, as the guide documents.
    req_str(obj, "emoji", "reaction['emoji']")?;
    Ok(FreeForm::default())
}

/// The media id a send body refers to (`body[type].id`), looked up before the registry
/// lock is taken (the media store has its own lock; see [`crate::media`]).
pub(crate) fn media_id_of(body: &Value) -> Option<&str> {
    let ty = body.get("type").and_then(Value::as_str)?;
    if !MEDIA_TYPES.contains(&ty) {
        return None;
    }
    body.get(ty)?.get("id")?.as_str()
}

/// Whether a file of this MIME type can be sent as this media message type
/// ("Supported Media Types": images are JPEG/PNG, stickers WebP, videos MP4/3GPP).
fn mime_fits(kind: &str, mime: &str) -> bool {
    let base = mime
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match kind {
        "image" => matches!(base.as_str(), "image/jpeg" | "image/png"),
        "sticker" => base == "image/webp",
        "video" => matches!(base.as_str(), "video/mp4" | "video/3gpp"),
        "audio" => base.starts_with("audio/"),
        _ => true,
    }
}

/// Checks a media id against what the fake holds (`held`: its [`MediaInfo`], `None`
/// when unknown or deleted). Unknown, expired and other-number media all get the same
/// 131053 answer, as Graph does not reveal objects a token cannot see.
///
/// Sync or async: the reference does not say which for a bad id (failed *link*
/// downloads are reported asynchronously); the fake answers synchronously, matching
/// 131053's default in [`crate::errors`], so a test sees the refusal at once. An
/// injection of 131053 in async mode reproduces the webhook form.
pub(crate) fn check_media(
    media: &MediaRef,
    held: Option<&MediaInfo>,
    phone_number_id: &str,
) -> Result<(), GraphError> {
    let Some(id) = &media.id else {
        return Ok(());
    };
    let usable = held.filter(|m| !m.expired && m.phone_number_id == phone_number_id);
    let Some(info) = usable else {
        let details = format!(
            "Unable to use media {id}: it does not exist, has expired, or was not uploaded by this phone number."
        );
        return Err(GraphError::whatsapp(131053, Some(&details), None));
    };
    if !mime_fits(&media.kind, &info.mime_type) {
        let details = format!(
            "Media {id} is {}, which is not a supported {} type.",
            info.mime_type, media.kind
        );
        return Err(GraphError::whatsapp(131053, Some(&details), None));
    }
    Ok(())
}
