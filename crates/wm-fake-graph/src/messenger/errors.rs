//! Graph errors as the Messenger Platform answers them.
//!
//! Shape: `{"error":{"message","type":"OAuthException","code","error_subcode"?,"fbtrace_id"}}`
//! (Graph error-handling guide; Messenger error-codes table for the code/subcode pairs
//! and their messages). Messages carry Graph's `(#<code>) ` prefix, as the answers apps
//! log show (`(#100) No matching user found`, `(#10) This message is sent outside of
//! allowed window. …`), except token errors (190) and the transient codes 1 and 2,
//! whose messages Graph gives bare.
//!
//! HTTP status (assumed where Meta is silent): 400 for every code, as Graph answers
//! request, permission, window and token errors (apps report "Request failed with status
//! code 400" for the window error and for 190); 500 for the transient codes 1 and 2,
//! which also carry `"is_transient": true`. The WhatsApp side of the fake keeps its own
//! per-code table ([`crate::errors`]).

use serde_json::json;

use crate::errors::{GraphError, fbtrace_id};

/// A Messenger Graph error.
pub(crate) fn graph(code: i64, subcode: Option<i64>, message: &str) -> GraphError {
    let bare = matches!(code, 1 | 2 | 190);
    let text = if bare {
        message.to_owned()
    } else {
        format!("(#{code}) {message}")
    };
    let mut error = json!({
        "message": text,
        "type": "OAuthException",
        "code": code,
    });
    if let Some(s) = subcode {
        error["error_subcode"] = json!(s);
    }
    if matches!(code, 1 | 2) {
        error["is_transient"] = json!(true);
    }
    error["fbtrace_id"] = json!(fbtrace_id());
    GraphError {
        http_status: if matches!(code, 1 | 2) { 500 } else { 400 },
        body: json!({ "error": error }),
        code,
    }
}

/// `(#100) <message>` without a subcode: a missing or malformed parameter.
pub(crate) fn param(message: &str) -> GraphError {
    graph(100, None, message)
}

/// No token at all. Graph's wording for a missing token; the code is 190 like every
/// other token failure here (the brief's choice: Graph has also been seen answering
/// code 104 for this case).
pub(crate) fn token_missing() -> GraphError {
    graph(
        190,
        None,
        "An access token is required to request this resource.",
    )
}

/// A token the fake does not know.
pub(crate) fn token_invalid() -> GraphError {
    graph(
        190,
        None,
        "Invalid OAuth access token - Cannot parse access token",
    )
}

/// An expired Page token: 190 subcode 463, worded as Graph words an expired session
/// (`Error validating access token: Session has expired on <when>. The current time is
/// <now>.`; the subcode as seen in public fixtures, the guide's subcode list was not
/// fully readable).
pub(crate) fn token_expired(expired_at: chrono::DateTime<chrono::Utc>) -> GraphError {
    let pacific = chrono::FixedOffset::west_opt(7 * 3600)
        .unwrap_or_else(|| unreachable!("a 7-hour offset is valid"));
    let fmt = |t: chrono::DateTime<chrono::Utc>| {
        t.with_timezone(&pacific)
            .format("%A, %d-%b-%y %H:%M:%S PDT")
            .to_string()
    };
    graph(
        190,
        Some(463),
        &format!(
            "Error validating access token: Session has expired on {}. The current time is {}.",
            fmt(expired_at),
            fmt(chrono::Utc::now())
        ),
    )
}

/// 100/2018001: a recipient id the Page does not know.
pub(crate) fn no_matching_user() -> GraphError {
    graph(100, Some(2_018_001), "No matching user found")
}

/// 100/2534014: not an IGSID of the Page's Instagram account.
pub(crate) fn no_matching_instagram_user() -> GraphError {
    graph(100, Some(2_534_014), "No matching Instagram user")
}

/// 100/2534013: an Instagram call through a Page with no linked account.
pub(crate) fn page_not_linked() -> GraphError {
    graph(
        100,
        Some(2_534_013),
        "The page is not linked to an Instagram account",
    )
}

/// 10/2534022: outside the standard (or Human Agent) window.
pub(crate) fn outside_window() -> GraphError {
    graph(
        10,
        Some(2_534_022),
        "This message is sent outside of allowed window.",
    )
}

/// 613/2534040: the Send API rate limit.
pub(crate) fn rate_limited() -> GraphError {
    graph(
        613,
        Some(2_534_040),
        "Calls to this api have exceeded the rate limit.",
    )
}

/// 100/2018074: an attachment id that does not exist or is another Page's.
pub(crate) fn attachment_not_owned() -> GraphError {
    graph(
        100,
        Some(2_018_074),
        "Possible invalid ID or you do not own the attachment.",
    )
}

/// 100/2018109: a file over the size limit.
pub(crate) fn attachment_too_large() -> GraphError {
    graph(
        100,
        Some(2_018_109),
        "Attachment size exceeds allowable limit",
    )
}

/// 100/2018008: the file could not be fetched from the URL.
pub(crate) fn fetch_failed() -> GraphError {
    graph(
        100,
        Some(2_018_008),
        "Failed to fetch the file from the url",
    )
}

/// 100/2018047: the file's type does not match the declared attachment type.
pub(crate) fn type_mismatch() -> GraphError {
    graph(
        100,
        Some(2_018_047),
        "Upload attachment failure: the media type does not match the file.",
    )
}

/// The answer for a code set with `set_profile_failure` (or any injected code): the
/// documented message where the Messenger table has one, a generic one otherwise.
pub(crate) fn by_code(code: i64) -> GraphError {
    match code {
        1 => graph(1, Some(99), "An unknown error occurred."),
        2 => graph(
            2,
            None,
            "An unexpected error has occurred. Please retry your request later.",
        ),
        4 => graph(4, None, "Application request limit reached"),
        10 => graph(
            10,
            None,
            "Application does not have permission for this action",
        ),
        190 => token_invalid(),
        230 => consent_required(),
        613 => rate_limited(),
        2_018_218 => graph(100, Some(2_018_218), "No profile available for this user."),
        2_018_247 => graph(
            100,
            Some(2_018_247),
            "Insufficient permission to access user profile.",
        ),
        other => graph(other, None, "Injected error."),
    }
}

/// Instagram profile of someone who never wrote. Meta documents the message but no
/// code; 230 follows public integrations (Chatwoot) and is unverified.
pub(crate) fn consent_required() -> GraphError {
    graph(230, None, "User consent is required to access user profile")
}
