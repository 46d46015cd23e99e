//! `message.quick_replies` checks: "up to 13" (Messenger quick-replies page); a `text`
//! quick reply needs a `title` and a `payload` of at most 1000 characters (Send API
//! reference; titles over 20 characters are truncated by Meta, not refused);
//! `user_phone_number` / `user_email` quick replies are refused on Instagram since
//! Oct 5, 2026 ("Phone number and email quick replies are disabled for Instagram
//! messaging", Instagram Platform changelog). The error wording is the fake's own (Meta
//! documents none): code 100, no subcode.

use serde_json::Value;

use super::errors::param;
use super::model::Platform;
use crate::errors::GraphError;

/// Checks the `quick_replies` array of a message sent on `platform`.
pub(crate) fn check(qrs: &Value, platform: Platform) -> Result<(), GraphError> {
    let Some(list) = qrs.as_array() else {
        return Err(param("Param message[quick_replies] must be an array"));
    };
    if list.len() > 13 {
        return Err(param(
            "Param message[quick_replies] must have at most 13 elements",
        ));
    }
    for qr in list {
        match qr.get("content_type").and_then(Value::as_str) {
            Some("text") => {
                let title = qr.get("title").and_then(Value::as_str).unwrap_or_default();
                let payload = qr.get("payload").map(|p| match p {
                    Value::String(s) => s.chars().count(),
                    other => other.to_string().chars().count(),
                });
                if title.is_empty() {
                    return Err(param("Param message[quick_replies][title] is required"));
                }
                match payload {
                    None => return Err(param("Param message[quick_replies][payload] is required")),
                    Some(n) if n > 1000 => {
                        return Err(param(
                            "Length of param message[quick_replies][payload] must be at most 1000 characters",
                        ));
                    }
                    Some(_) => {}
                }
            }
            Some("user_phone_number" | "user_email") if platform == Platform::Instagram => {
                return Err(param(
                    "Phone number and email quick replies are not supported for Instagram messaging",
                ));
            }
            Some("user_phone_number" | "user_email") => {}
            _ => {
                return Err(param(
                    "Param message[quick_replies][content_type] must be one of {text, user_phone_number, user_email}",
                ));
            }
        }
    }
    Ok(())
}
