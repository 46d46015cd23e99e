//! The Graph / Cloud API error catalogue and the error body shape.
//!
//! Why a table: the platform documents, per code, a title, a default `details`
//! text and an HTTP status; the fake answers from this one table so that every
//! injected or naturally produced error has the documented shape.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The URL the platform puts in `href` of webhook error objects.
pub const ERROR_CODES_HREF: &str =
    "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/";

/// How the platform reports a code by default: in the send response, or later
/// in a `failed` status webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// The send answers the error (no wamid).
    Sync,
    /// The send succeeds with a wamid; a `failed` status webhook carries the error.
    Async,
}

/// One row of the documented error-code table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeInfo {
    /// The numeric `code`.
    pub code: i64,
    /// The documented HTTP status of the synchronous response.
    pub http_status: u16,
    /// The Graph `type` field.
    pub kind: &'static str,
    /// The documented title (also used as `title` in webhook errors).
    pub title: &'static str,
    /// The default `error_data.details` text.
    pub details: &'static str,
    /// How the fake reports this code when an injection does not say.
    pub default_delivery: Delivery,
}

const OAUTH: &str = "OAuthException";

/// The documented table (see the crate docs for the sources).
const TABLE: &[(i64, u16, &str, &str, Delivery)] = &[
    (
        0,
        401,
        "AuthException",
        "We were unable to authenticate the app user.",
        Delivery::Sync,
    ),
    (
        1,
        400,
        "API Unknown",
        "Invalid request or possible server error.",
        Delivery::Sync,
    ),
    (
        2,
        503,
        "API Service",
        "Temporary due to downtime or due to being overloaded.",
        Delivery::Sync,
    ),
    (
        3,
        403,
        "API Method",
        "Capability or permissions issue.",
        Delivery::Sync,
    ),
    (
        4,
        429,
        "API Too Many Calls",
        "The app has reached its API call rate limit.",
        Delivery::Sync,
    ),
    (
        10,
        403,
        "Permission Denied",
        "Permission is either not granted or has been removed.",
        Delivery::Sync,
    ),
    (
        100,
        400,
        "Invalid parameter",
        "The request included one or more unsupported or misspelled parameters.",
        Delivery::Sync,
    ),
    (
        190,
        401,
        "Access token has expired",
        "Your access token has expired.",
        Delivery::Sync,
    ),
    (
        368,
        403,
        "Temporarily blocked for policies violations",
        "The WhatsApp Business Account associated with the app has been restricted or disabled for violating a platform policy.",
        Delivery::Sync,
    ),
    (
        80007,
        429,
        "Rate limit issues",
        "The WhatsApp Business Account has reached its rate limit.",
        Delivery::Sync,
    ),
    (
        130429,
        429,
        "Rate limit hit",
        "Cloud API message throughput has been reached.",
        Delivery::Sync,
    ),
    (
        130472,
        400,
        "User's number is part of an experiment",
        "Message was not sent as part of an experiment.",
        Delivery::Async,
    ),
    (
        131000,
        500,
        "Something went wrong",
        "Message failed to send due to an unknown error.",
        Delivery::Sync,
    ),
    (
        131005,
        403,
        "Access denied",
        "Permission is either not granted or has been removed.",
        Delivery::Sync,
    ),
    (
        131008,
        400,
        "Required parameter is missing",
        "The request is missing a required parameter.",
        Delivery::Sync,
    ),
    (
        131009,
        400,
        "Parameter value is not valid",
        "One or more parameter values are invalid.",
        Delivery::Sync,
    ),
    (
        131016,
        503,
        "Service unavailable",
        "A service is temporarily unavailable.",
        Delivery::Sync,
    ),
    (
        131021,
        400,
        "Recipient cannot be sender",
        "Sender and recipient phone number is the same.",
        Delivery::Sync,
    ),
    (
        131026,
        400,
        "Message undeliverable",
        "Unable to deliver message. Reasons can include: the recipient phone number is not a WhatsApp phone number; the recipient has not accepted the Terms of Service; the recipient is using an old WhatsApp version.",
        Delivery::Async,
    ),
    (
        131031,
        403,
        "Account has been locked",
        "The WhatsApp Business Account associated with the app has been restricted or disabled for violating a platform policy, or we were unable to verify data included in the request against data set on the WhatsApp Business Account.",
        Delivery::Sync,
    ),
    (
        131042,
        400,
        "Business eligibility payment issue",
        "Message failed to send because there were one or more errors related to your payment method.",
        Delivery::Sync,
    ),
    (
        131047,
        429,
        "Re-engagement message",
        "Message failed to send because more than 24 hours have passed since the customer last replied to this number.",
        Delivery::Async,
    ),
    (
        131048,
        429,
        "Spam rate limit hit",
        "Message failed to send because there are restrictions on how many messages can be sent from this phone number. This may be because too many previous messages were blocked or flagged as spam.",
        Delivery::Sync,
    ),
    (
        131049,
        429,
        "Meta chose not to deliver",
        "This message was not delivered to maintain healthy ecosystem engagement.",
        Delivery::Async,
    ),
    (
        131050,
        400,
        "User has stopped receipt of marketing messages",
        "Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business.",
        Delivery::Async,
    ),
    (
        131051,
        400,
        "Unsupported message type",
        "Message type is currently not supported.",
        Delivery::Sync,
    ),
    (
        131053,
        400,
        "Media upload error",
        "Unable to upload the media used in the message.",
        Delivery::Sync,
    ),
    (
        131056,
        429,
        "(Business Account, Consumer Account) pair rate limit hit",
        "Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.",
        Delivery::Sync,
    ),
    (
        131057,
        503,
        "Account in maintenance mode",
        "Business Account is in maintenance mode.",
        Delivery::Sync,
    ),
    // Business-scoped user ids guide (Messages API: "Error code — 131062", "Details —
    // Business-scoped User ID (BSUID) recipients are not supported for this message.");
    // the full object, HTTP 400 as a request error, from "Send Marketing Messages".
    (
        131062,
        400,
        "Business-scoped User ID (BSUID) recipients are not supported for this message.",
        "Business-scoped User ID (BSUID) recipients are not supported for this message.",
        Delivery::Sync,
    ),
    (
        132000,
        400,
        "Template Param Count Mismatch",
        "The number of variable parameter values included in the request did not match the number of variable parameters defined in the template.",
        Delivery::Sync,
    ),
    (
        132001,
        400,
        "Template does not exist",
        "The template does not exist in the specified language or the template has not been approved.",
        Delivery::Sync,
    ),
    (
        132005,
        400,
        "Template Hydrated Text Too Long",
        "Translated text is too long.",
        Delivery::Sync,
    ),
    (
        132012,
        400,
        "Template Parameter Format Mismatch",
        "Variable parameter values formatted incorrectly.",
        Delivery::Sync,
    ),
    (
        132015,
        400,
        "Template is Paused",
        "Template is paused due to low quality so it cannot be sent in a template message.",
        Delivery::Sync,
    ),
    (
        132016,
        400,
        "Template is Disabled",
        "Template has been paused too many times due to low quality and is now permanently disabled.",
        Delivery::Sync,
    ),
    (
        133010,
        400,
        "Phone number Not Registered",
        "Phone number not registered on the WhatsApp Business Platform.",
        Delivery::Sync,
    ),
];

/// Looks a code up in the documented table; unknown codes get a generic row
/// (HTTP 400, synchronous) so that any code can still be injected.
pub fn code_info(code: i64) -> CodeInfo {
    for &(c, http, title, details, delivery) in TABLE {
        if c == code {
            return CodeInfo {
                code,
                http_status: http,
                kind: if code == 0 { "AuthException" } else { OAUTH },
                title,
                details,
                default_delivery: delivery,
            };
        }
    }
    CodeInfo {
        code,
        http_status: 400,
        kind: OAUTH,
        title: "Error",
        details: "Injected error.",
        default_delivery: Delivery::Sync,
    }
}

/// A Graph API error response, ready to be serialized in the documented shape.
#[derive(Debug, Clone)]
pub struct GraphError {
    /// HTTP status of the response.
    pub http_status: u16,
    /// The `error` object.
    pub body: Value,
    /// The numeric code (for logs and counters).
    pub code: i64,
}

/// A random `fbtrace_id`-like identifier.
pub fn fbtrace_id() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    let mut rng = rand::rng();
    (0..23)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

impl GraphError {
    /// A WhatsApp messaging error:
    /// `{"error":{"message","type","code","error_data":{"messaging_product","details"},"fbtrace_id"}}`.
    pub fn whatsapp(code: i64, details: Option<&str>, http_status: Option<u16>) -> Self {
        let info = code_info(code);
        let details = details.unwrap_or(info.details);
        let body = json!({
            "error": {
                "message": format!("(#{code}) {}", info.title),
                "type": info.kind,
                "code": code,
                "error_data": {
                    "messaging_product": "whatsapp",
                    "details": details,
                },
                "fbtrace_id": fbtrace_id(),
            }
        });
        Self {
            http_status: http_status.unwrap_or(info.http_status),
            body,
            code,
        }
    }

    /// Graph-level OAuth failure (code 190, HTTP 401): no `error_data`, as the
    /// Graph API error-handling guide shows.
    pub fn oauth(message: &str) -> Self {
        let body = json!({
            "error": {
                "message": message,
                "type": OAUTH,
                "code": 190,
                "fbtrace_id": fbtrace_id(),
            }
        });
        Self {
            http_status: 401,
            body,
            code: 190,
        }
    }

    /// The Graph answer for an object id that does not exist (or the token
    /// cannot see): code 100, subcode 33, `GraphMethodException`, HTTP 400.
    pub fn unknown_object(method: &str, id: &str) -> Self {
        let body = json!({
            "error": {
                "message": format!(
                    "Unsupported {method} request. Object with ID '{id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api"
                ),
                "type": "GraphMethodException",
                "code": 100,
                "error_subcode": 33,
                "fbtrace_id": fbtrace_id(),
            }
        });
        Self {
            http_status: 400,
            body,
            code: 100,
        }
    }

    /// Code 100 with Graph's own wording as the message and no `error_data`, the way
    /// Graph answers a missing or malformed form parameter, e.g.
    /// `(#100) The parameter messaging_product is required.`
    pub fn param_message(message: &str) -> Self {
        let body = json!({
            "error": {
                "message": message,
                "type": OAUTH,
                "code": 100,
                "fbtrace_id": fbtrace_id(),
            }
        });
        Self {
            http_status: 400,
            body,
            code: 100,
        }
    }

    /// Code 100 "Invalid parameter" with a specific message, as Graph words
    /// unsupported/misspelled parameters.
    pub fn invalid_parameter(details: &str) -> Self {
        Self::whatsapp(100, Some(details), None)
    }

    /// The webhook form of an error (inside `statuses[].errors[]`).
    pub fn webhook_error(code: i64, details: Option<&str>) -> Value {
        let info = code_info(code);
        json!({
            "code": code,
            "title": info.title,
            "message": info.title,
            "error_data": { "details": details.unwrap_or(info.details) },
            "href": ERROR_CODES_HREF,
        })
    }
}

impl IntoResponse for GraphError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.http_status).unwrap_or(StatusCode::BAD_REQUEST);
        (status, axum::Json(self.body)).into_response()
    }
}
