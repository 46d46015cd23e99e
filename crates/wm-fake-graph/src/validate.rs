//! Validation of the send-message body against the documented shape.
//!
//! Malformed requests get the documented codes: 100 for unknown or misspelled
//! parameters, a bad `messaging_product` and an empty text parameter (the answer users
//! report, <https://github.com/shridarpatil/frappe_whatsapp/issues/43>), 131008 for a
//! missing required parameter, 131009 for an invalid value, 131051 for an unsupported type.
//! The objects of free-form types are checked in [`crate::freeform`].

use serde_json::Value;

use crate::errors::GraphError;

/// Documented maximum length of `biz_opaque_callback_data`.
pub const MAX_OPAQUE_LEN: usize = 512;

const TOP_LEVEL_KEYS: &[&str] = &[
    "messaging_product",
    "recipient_type",
    "to",
    "recipient",
    "type",
    "template",
    "text",
    "biz_opaque_callback_data",
    "context",
    "image",
    "audio",
    "document",
    "video",
    "sticker",
    "location",
    "contacts",
    "interactive",
    "reaction",
    "status",
    "message_id",
];

/// A validated send body.
#[derive(Debug)]
pub(crate) struct ParsedSend {
    /// The recipient as written: `to`, or `recipient` when there is no `to`.
    pub to: String,
    /// Addressed by `recipient` (a BSUID or parent BSUID) rather than `to`.
    pub by_user_id: bool,
    /// The request's `type` (`text` when absent, as the platform defaults it).
    pub kind: String,
    pub template: Option<(String, String, Vec<String>)>,
    pub text_body: Option<String>,
    pub media: Option<crate::freeform::MediaRef>,
    pub context: Option<String>,
    pub opaque: Option<String>,
}

fn missing(what: &str) -> GraphError {
    GraphError::whatsapp(
        131008,
        Some(&format!("The parameter {what} is required.")),
        None,
    )
}

fn invalid(details: &str) -> GraphError {
    GraphError::whatsapp(131009, Some(details), None)
}

pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Validates the body against the documented send-message shape.
pub(crate) fn parse_send(body: &Value) -> Result<ParsedSend, GraphError> {
    let Some(obj) = body.as_object() else {
        return Err(GraphError::invalid_parameter(
            "(#100) The parameter messaging_product is required.",
        ));
    };
    if let Some(k) = obj.keys().find(|k| !TOP_LEVEL_KEYS.contains(&k.as_str())) {
        return Err(GraphError::invalid_parameter(&format!(
            "(#100) Unexpected key \"{k}\" on param."
        )));
    }
    match obj.get("messaging_product") {
        None => {
            return Err(GraphError::invalid_parameter(
                "(#100) The parameter messaging_product is required.",
            ));
        }
        Some(Value::String(s)) if s == "whatsapp" => {}
        Some(other) => {
            return Err(GraphError::invalid_parameter(&format!(
                "(#100) Param messaging_product must be one of {{WHATSAPP}} - got {other}."
            )));
        }
    }
    if let Some(rt) = obj.get("recipient_type")
        && !matches!(rt.as_str(), Some("individual"))
    {
        return Err(invalid("Parameter recipient_type must be \"individual\"."));
    }
    let (to, by_user_id) = recipient(obj)?;
    let opaque = match obj.get("biz_opaque_callback_data") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.chars().count() <= MAX_OPAQUE_LEN => Some(s.clone()),
        Some(Value::String(_)) => {
            return Err(invalid(&format!(
                "Parameter biz_opaque_callback_data exceeds {MAX_OPAQUE_LEN} characters."
            )));
        }
        Some(_) => {
            return Err(invalid(
                "Parameter biz_opaque_callback_data must be a string.",
            ));
        }
    };
    let context = match obj.get("context") {
        None | Some(Value::Null) => None,
        Some(Value::Object(c)) => match c.get("message_id") {
            Some(Value::String(id)) if !id.is_empty() => Some(id.clone()),
            None | Some(Value::Null) => return Err(missing("context.message_id")),
            Some(_) => {
                return Err(GraphError::invalid_parameter(
                    "Param context['message_id'] must be a non-empty string.",
                ));
            }
        },
        Some(_) => {
            return Err(GraphError::invalid_parameter(
                "Param context must be a JSON object.",
            ));
        }
    };
    let ty = match obj.get("type") {
        None => "text",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(invalid("Parameter type must be a string.")),
    };
    match ty {
        "template" => {
            let t = obj.get("template").ok_or_else(|| missing("template"))?;
            let name = str_field(t, "name").ok_or_else(|| missing("template.name"))?;
            let lang = t
                .get("language")
                .ok_or_else(|| missing("template.language"))?;
            let code = str_field(lang, "code").ok_or_else(|| missing("template.language.code"))?;
            if let Some(p) = lang.get("policy")
                && p.as_str() != Some("deterministic")
            {
                return Err(invalid(
                    "Parameter template.language.policy must be \"deterministic\".",
                ));
            }
            let params = body_params(t.get("components"))?;
            Ok(ParsedSend {
                to,
                by_user_id,
                kind: "template".to_owned(),
                template: Some((name.to_owned(), code.to_owned(), params)),
                text_body: None,
                media: None,
                context,
                opaque,
            })
        }
        other => {
            let free = crate::freeform::parse(obj, other)?;
            Ok(ParsedSend {
                to,
                by_user_id,
                kind: other.to_owned(),
                template: None,
                text_body: free.text_body,
                media: free.media,
                context,
                opaque,
            })
        }
    }
}

/// The addressee: `to` (a phone number) when present, else `recipient` (a BSUID or
/// parent BSUID); "If both are present, `to` (phone number) will take precedence"
/// (business-scoped user ids guide). With neither, the answer documented for
/// `/marketing_messages`, which shares the `to`/`recipient` rules: code 100, message
/// `The parameter to is required.`, no `error_data`.
fn recipient(obj: &serde_json::Map<String, Value>) -> Result<(String, bool), GraphError> {
    let recipient = match obj.get("recipient") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid("Parameter recipient must be a string.")),
    };
    let to = match obj.get("to") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid("Parameter to must be a string.")),
    };
    let Some(to) = to else {
        return match recipient {
            // Meta does not document the answer for a `recipient` that is not a BSUID;
            // the fake answers it like an unknown BSUID (see `unknown_user_id`).
            Some(r) if crate::users::is_user_id(&r) => Ok((r, true)),
            Some(r) => Err(unknown_user_id(&r)),
            None => Err(GraphError::param_message("The parameter to is required.")),
        };
    };
    let digits = wa_id(&to);
    let clean = to
        .chars()
        .all(|c| c.is_ascii_digit() || " +-()".contains(c));
    if digits.len() < 5 || digits.len() > 15 || !clean {
        return Err(invalid("Parameter to is not a valid phone number."));
    }
    Ok((to, false))
}

/// The answer to a `recipient` the business cannot send to (not a BSUID, or a BSUID the
/// platform does not know for this business). Meta documents no error for this case; the
/// fake answers a documented-shaped invalid-parameter error (code 100, HTTP 400) whose
/// `error_data.details` names the parameter.
pub(crate) fn unknown_user_id(recipient: &str) -> GraphError {
    GraphError::invalid_parameter(&format!(
        "Param recipient ({recipient}) is not a valid business-scoped user ID (BSUID) for this business."
    ))
}

/// Texts of the BODY parameters, in order.
fn body_params(components: Option<&Value>) -> Result<Vec<String>, GraphError> {
    let Some(components) = components else {
        return Ok(Vec::new());
    };
    let Some(list) = components.as_array() else {
        return Err(invalid("Parameter template.components must be an array."));
    };
    let mut out = Vec::new();
    for c in list {
        let ty = str_field(c, "type").ok_or_else(|| missing("template.components[].type"))?;
        match ty.to_ascii_lowercase().as_str() {
            "body" => {}
            "header" | "button" | "footer" => continue,
            _ => return Err(invalid(&format!("Invalid component type \"{ty}\"."))),
        }
        let Some(params) = c.get("parameters") else {
            continue;
        };
        let Some(params) = params.as_array() else {
            return Err(invalid(
                "Parameter components[].parameters must be an array.",
            ));
        };
        for p in params {
            let text = match str_field(p, "type") {
                Some("text") => match str_field(p, "text") {
                    None => return Err(missing("parameters[].text")),
                    // The platform refuses an empty text parameter (seen answered as
                    // `(#100) Invalid parameter` with this detail).
                    Some("") => {
                        return Err(GraphError::invalid_parameter(
                            "Parameter 'text' is mandatory for component parameter type 'text'",
                        ));
                    }
                    Some(text) => text,
                },
                Some(kind @ ("currency" | "date_time")) => p
                    .get(kind)
                    .and_then(|o| str_field(o, "fallback_value"))
                    .ok_or_else(|| missing(&format!("parameters[].{kind}.fallback_value")))?,
                Some(other) => {
                    return Err(invalid(&format!(
                        "Invalid body parameter type \"{other}\"."
                    )));
                }
                None => return Err(missing("parameters[].type")),
            };
            out.push(text.to_owned());
        }
    }
    Ok(out)
}

/// The digits of a phone number (the `wa_id` the platform returns).
pub fn wa_id(to: &str) -> String {
    to.chars().filter(char::is_ascii_digit).collect()
}
