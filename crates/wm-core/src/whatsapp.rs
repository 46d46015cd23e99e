//! What the WhatsApp Business Cloud API's answers mean for the sending pipeline.
//!
//! The provider only reads the platform's numbers; this module decides, in one table, what
//! each error code does to a recipient or a campaign (DESIGN §9), what a template's status
//! means for the campaigns using it, and which quality rating a number's quality event
//! implies. Everything here is pure: no I/O, no storage.
//!
//! # Sources
//!
//! - Error codes, titles and HTTP statuses: Meta, *Cloud API error codes*,
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes>
//!   (as transcribed by <https://docs.ycloud.com/en/api-reference/guides/whatsapp-platform/handle-whatsapp-errors>
//!   and <https://niswey.com/knowledge-base/error-codes-meta>), and Graph's
//!   <https://developers.facebook.com/docs/graph-api/guides/error-handling> (190, subcode 33).
//! - Template events: Meta, *message_template_status_update webhook reference*,
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/message_template_status_update/>.
//! - Quality events: Meta, *phone_number_quality_update webhook reference*,
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/phone_number_quality_update>,
//!   and the quality-rating help text ("Flagged: this status occurs when the quality rating
//!   reaches a low state"), e.g.
//!   <https://docs.aws.amazon.com/social-messaging/latest/userguide/understanding-phone-number-quality-rating.html>.

use crate::provider::SendError;

/// What the pipeline does with a message the platform refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorAction {
    /// Not sent, the platform could not take it now: keep it charged and queued, try again
    /// after a backoff.
    RetryLater,
    /// This recipient cannot get it: fail the recipient and refund; `opt_out` also opts the
    /// contact out (131050, the person stopped marketing messages).
    FailRecipient {
        /// Whether the contact opted out.
        opt_out: bool,
    },
    /// No message of this sender or template will go through until someone acts: pause the
    /// campaign with this `stopReason`.
    PauseCampaign {
        /// One of [`ALL_STOP_REASONS`].
        stop_reason: &'static str,
    },
}

/// The access token expired or was invalidated (0, 190).
pub const PLATFORM_TOKEN_EXPIRED: &str = "PLATFORM_TOKEN_EXPIRED";
/// The token lacks a permission (3, 10, 200–299, 131005).
pub const PLATFORM_PERMISSION_DENIED: &str = "PLATFORM_PERMISSION_DENIED";
/// The WhatsApp Business Account is locked (131031).
pub const PLATFORM_ACCOUNT_LOCKED: &str = "PLATFORM_ACCOUNT_LOCKED";
/// The number's spam rate limit (131048): too many messages were blocked or reported.
pub const PLATFORM_SPAM_LIMIT: &str = "PLATFORM_SPAM_LIMIT";
/// The account is restricted for a policy violation (368).
pub const PLATFORM_POLICY_BLOCK: &str = "PLATFORM_POLICY_BLOCK";
/// The account's payment method or credit line is not usable (131042).
pub const PLATFORM_PAYMENT_ISSUE: &str = "PLATFORM_PAYMENT_ISSUE";
/// The sender number is not (or no longer) registered on the platform (33, 100/33, 131045,
/// 133010) or its display name is not approved yet (131037).
pub const PLATFORM_NUMBER_NOT_REGISTERED: &str = "PLATFORM_NUMBER_NOT_REGISTERED";
/// The sender number has no platform account configured in wm (no phone number id or token).
pub const PLATFORM_NOT_CONFIGURED: &str = "PLATFORM_NOT_CONFIGURED";
/// The platform answered something that is not the Graph API (wrong URL, a proxy's page).
pub const PLATFORM_BAD_RESPONSE: &str = "PLATFORM_BAD_RESPONSE";
/// The template does not exist in that language, or is not approved (132001; template
/// events REJECTED, PENDING, DELETED, PENDING_DELETION, ARCHIVED, IN_APPEAL…).
pub const TEMPLATE_NOT_FOUND: &str = "TEMPLATE_NOT_FOUND";
/// The template is paused for low quality (132015).
pub const TEMPLATE_PAUSED: &str = "TEMPLATE_PAUSED";
/// The template is disabled for good (132016).
pub const TEMPLATE_DISABLED: &str = "TEMPLATE_DISABLED";

/// Every `stopReason` this module produces.
pub const ALL_STOP_REASONS: &[&str] = &[
    PLATFORM_TOKEN_EXPIRED,
    PLATFORM_PERMISSION_DENIED,
    PLATFORM_ACCOUNT_LOCKED,
    PLATFORM_SPAM_LIMIT,
    PLATFORM_POLICY_BLOCK,
    PLATFORM_PAYMENT_ISSUE,
    PLATFORM_NUMBER_NOT_REGISTERED,
    PLATFORM_NOT_CONFIGURED,
    PLATFORM_BAD_RESPONSE,
    TEMPLATE_NOT_FOUND,
    TEMPLATE_PAUSED,
    TEMPLATE_DISABLED,
];

/// Opt-out code: "User has stopped receipt of marketing messages".
pub const OPT_OUT_CODE: i64 = 131050;

const fn fail() -> Option<ErrorAction> {
    Some(ErrorAction::FailRecipient { opt_out: false })
}

const fn pause(stop_reason: &'static str) -> Option<ErrorAction> {
    Some(ErrorAction::PauseCampaign { stop_reason })
}

/// What a platform error code means; `None` for a code not in the table (the caller fails
/// the recipient with the platform's message, or retries when the HTTP status was 5xx).
pub fn classify(code: i64) -> Option<ErrorAction> {
    match code {
        // Throttling and transient service errors: nothing was sent.
        1 | 2 | 4 | 80007 | 130429 | 131000 | 131016 | 131056 | 131057 => {
            Some(ErrorAction::RetryLater)
        }
        // This recipient (or this request for them) cannot be served.
        100 | 130472 | 130497 | 131008 | 131009 | 131021 | 131026 | 131047 | 131049 | 131051
        | 131052 | 131053 | 131062 | 132000 | 132005 | 132007 | 132012 => fail(),
        OPT_OUT_CODE => Some(ErrorAction::FailRecipient { opt_out: true }),
        // The sender, its account or the template needs someone to act.
        0 | 190 => pause(PLATFORM_TOKEN_EXPIRED),
        3 | 10 | 131005 | 200..=299 => pause(PLATFORM_PERMISSION_DENIED),
        33 | 131037 | 131045 | 133010 => pause(PLATFORM_NUMBER_NOT_REGISTERED),
        131031 => pause(PLATFORM_ACCOUNT_LOCKED),
        131042 => pause(PLATFORM_PAYMENT_ISSUE),
        131048 => pause(PLATFORM_SPAM_LIMIT),
        368 => pause(PLATFORM_POLICY_BLOCK),
        132001 => pause(TEMPLATE_NOT_FOUND),
        132015 => pause(TEMPLATE_PAUSED),
        132016 => pause(TEMPLATE_DISABLED),
        _ => None,
    }
}

/// [`classify`], also reading Graph's `error_subcode`: code 100 with subcode 33 is "the
/// object does not exist or the token cannot see it" — a wrong phone number id, which would
/// otherwise fail every recipient of the campaign one by one.
pub fn classify_with_subcode(code: i64, subcode: Option<i64>) -> Option<ErrorAction> {
    match (code, subcode) {
        (100, Some(33)) => pause(PLATFORM_NUMBER_NOT_REGISTERED),
        _ => classify(code),
    }
}

/// The text wm keeps for a platform error: `(#code) title: details`, without repeating a
/// prefix the platform already wrote, U+0000 removed (PostgreSQL refuses it) and at most
/// 1000 characters.
pub fn error_text(code: i64, title: &str, details: Option<&str>) -> String {
    let title = title.trim();
    let mut text = if title.starts_with("(#") {
        title.to_owned()
    } else if title.is_empty() {
        format!("(#{code}) Platform error")
    } else {
        format!("(#{code}) {title}")
    };
    if let Some(details) = details.map(str::trim).filter(|d| !d.is_empty())
        && !text.contains(details)
    {
        text.push_str(": ");
        text.push_str(details);
    }
    let text = text.replace('\0', "\u{FFFD}");
    match text.char_indices().nth(1000) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text,
    }
}

/// The [`SendError`] for a platform error `code` with the platform's `message` (already
/// formatted, e.g. by [`error_text`]); unknown codes reject the recipient.
pub fn send_error(code: i64, message: &str) -> SendError {
    action_error(classify(code), message)
}

/// [`send_error`] with Graph's `error_subcode` (see [`classify_with_subcode`]).
pub fn send_error_with_subcode(code: i64, subcode: Option<i64>, message: &str) -> SendError {
    action_error(classify_with_subcode(code, subcode), message)
}

fn action_error(action: Option<ErrorAction>, message: &str) -> SendError {
    let reason = message.to_owned();
    match action {
        Some(ErrorAction::RetryLater) => SendError::RetryLater(reason),
        Some(ErrorAction::FailRecipient { opt_out }) => SendError::Rejected { reason, opt_out },
        Some(ErrorAction::PauseCampaign { stop_reason }) => SendError::Paused {
            stop_reason: stop_reason.to_owned(),
            reason,
        },
        None => SendError::Rejected {
            reason,
            opt_out: false,
        },
    }
}

/// Business-scoped user id recipients are not supported for this message (131062).
pub const USER_ID_NOT_SUPPORTED: i64 = 131062;

/// Why a template of `category` cannot go to a person known only by their business-scoped
/// user id, decided before any call: the platform refuses authentication templates to
/// them with 131062 ("one-tap, zero-tap, and copy code authentication templates … require
/// user phone numbers", the business-scoped user ids guide).
pub fn refuses_user_id(category: wm_types::campaigns::TemplateCategory) -> Option<&'static str> {
    (category == wm_types::campaigns::TemplateCategory::Authentication).then_some(
        "(#131062) Authentication templates cannot be sent to a person known only by their business-scoped user id (no phone number)",
    )
}

/// Whether a platform error code means the contact opted out (for status webhooks).
pub fn is_opt_out(code: i64) -> bool {
    matches!(
        classify(code),
        Some(ErrorAction::FailRecipient { opt_out: true })
    )
}

/// The `stopReason` for campaigns using a template after a `message_template_status_update`
/// event; `None` when the template can be sent (APPROVED, REINSTATED, UNARCHIVED) or the
/// event says nothing about sending (FLAGGED is a warning, LOCKED only blocks edits,
/// LIMIT_EXCEEDED is about creating templates) or is unknown.
pub fn template_stop_reason(status: &str) -> Option<&'static str> {
    match status.trim().to_ascii_uppercase().as_str() {
        "PAUSED" => Some(TEMPLATE_PAUSED),
        "DISABLED" => Some(TEMPLATE_DISABLED),
        // Sends of these get 132001 ("does not exist … or has not been approved").
        "REJECTED" | "PENDING" | "IN_APPEAL" | "DELETED" | "PENDING_DELETION" | "ARCHIVED" => {
            Some(TEMPLATE_NOT_FOUND)
        }
        _ => None,
    }
}

/// The quality rating (`GREEN`, `YELLOW`, `RED`) a `phone_number_quality_update` event
/// implies, where it implies one.
///
/// - `FLAGGED` → `RED`: Meta moves a number to *Flagged* "when the quality rating reaches a
///   low state" (red).
/// - `UNFLAGGED` → `GREEN`: Meta says the number "is eligible to receive a messaging limit
///   increase if it continues to receive positive feedback"; limit increases need a rating
///   that is not low. The docs do not say high vs medium; wm shows GREEN (an inference).
/// - `UPGRADE`, `DOWNGRADE`, `THROUGHPUT_UPGRADE`, `ONBOARDING` and anything else change
///   the messaging limit or registration, not the rating: `None`.
pub fn quality_rating(event: &str) -> Option<&'static str> {
    match event.trim().to_ascii_uppercase().as_str() {
        "FLAGGED" => Some("RED"),
        "UNFLAGGED" => Some("GREEN"),
        _ => None,
    }
}

const MB: u64 = 1024 * 1024;

/// The media types the Cloud API takes, per Meta's "Supported media types": each MIME type,
/// the message kind it is sent as, and its largest size in bytes (image 5 MB; video and
/// audio 16 MB; document 100 MB; sticker (WebP) 500 KB). One table for the check
/// ([`media_limit`]) and for what an upload form offers.
pub const MEDIA_TYPES: &[(&str, wm_types::messages::MessageType, u64)] = {
    use wm_types::messages::MessageType as T;
    &[
        ("image/jpeg", T::Image, 5 * MB),
        ("image/png", T::Image, 5 * MB),
        ("image/webp", T::Sticker, 500 * 1024),
        ("video/mp4", T::Video, 16 * MB),
        ("video/3gpp", T::Video, 16 * MB),
        ("audio/aac", T::Audio, 16 * MB),
        ("audio/amr", T::Audio, 16 * MB),
        ("audio/mpeg", T::Audio, 16 * MB),
        ("audio/mp4", T::Audio, 16 * MB),
        ("audio/ogg", T::Audio, 16 * MB),
        ("text/plain", T::Document, 100 * MB),
        ("application/pdf", T::Document, 100 * MB),
        ("application/vnd.ms-powerpoint", T::Document, 100 * MB),
        ("application/msword", T::Document, 100 * MB),
        ("application/vnd.ms-excel", T::Document, 100 * MB),
        (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            T::Document,
            100 * MB,
        ),
        (
            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            T::Document,
            100 * MB,
        ),
        (
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            T::Document,
            100 * MB,
        ),
    ]
};

/// What the Cloud API takes as a media file of type `mime` (parameters such as `; codecs=`
/// ignored): the message kind it is sent as and its largest size in bytes, from
/// [`MEDIA_TYPES`]. `None`: the platform refuses the type.
pub fn media_limit(mime: &str) -> Option<(wm_types::messages::MessageType, u64)> {
    let base = mime.split(';').next().unwrap_or("").trim();
    MEDIA_TYPES
        .iter()
        .find(|(m, _, _)| m.eq_ignore_ascii_case(base))
        .map(|(_, kind, max)| (*kind, *max))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_stop_reason_is_documented() {
        use wm_types::campaigns::StopReason;
        for r in ALL_STOP_REASONS
            .iter()
            .chain([&wm_types::campaigns::STOP_INSUFFICIENT_BALANCE])
        {
            assert!(StopReason::ALL.iter().any(|d| d.as_str() == *r), "{r}");
        }
    }

    use super::*;

    const RETRY: Option<ErrorAction> = Some(ErrorAction::RetryLater);
    const FAIL: Option<ErrorAction> = Some(ErrorAction::FailRecipient { opt_out: false });

    #[test]
    fn every_listed_code_is_classified() {
        let table: &[(i64, Option<ErrorAction>)] = &[
            (1, RETRY),
            (2, RETRY),
            (4, RETRY),
            (80007, RETRY),
            (130429, RETRY),
            (131000, RETRY),
            (131016, RETRY),
            (131056, RETRY),
            (131057, RETRY),
            (100, FAIL),
            (130472, FAIL),
            (130497, FAIL),
            (131008, FAIL),
            (131009, FAIL),
            (131021, FAIL),
            (131026, FAIL),
            (131047, FAIL),
            (131049, FAIL),
            (131051, FAIL),
            (131052, FAIL),
            (131053, FAIL),
            (131062, FAIL),
            (132000, FAIL),
            (132005, FAIL),
            (132007, FAIL),
            (132012, FAIL),
            (131050, Some(ErrorAction::FailRecipient { opt_out: true })),
            (0, pause(PLATFORM_TOKEN_EXPIRED)),
            (190, pause(PLATFORM_TOKEN_EXPIRED)),
            (3, pause(PLATFORM_PERMISSION_DENIED)),
            (10, pause(PLATFORM_PERMISSION_DENIED)),
            (200, pause(PLATFORM_PERMISSION_DENIED)),
            (299, pause(PLATFORM_PERMISSION_DENIED)),
            (131005, pause(PLATFORM_PERMISSION_DENIED)),
            (33, pause(PLATFORM_NUMBER_NOT_REGISTERED)),
            (131037, pause(PLATFORM_NUMBER_NOT_REGISTERED)),
            (131045, pause(PLATFORM_NUMBER_NOT_REGISTERED)),
            (133010, pause(PLATFORM_NUMBER_NOT_REGISTERED)),
            (131031, pause(PLATFORM_ACCOUNT_LOCKED)),
            (131042, pause(PLATFORM_PAYMENT_ISSUE)),
            (131048, pause(PLATFORM_SPAM_LIMIT)),
            (368, pause(PLATFORM_POLICY_BLOCK)),
            (132001, pause(TEMPLATE_NOT_FOUND)),
            (132015, pause(TEMPLATE_PAUSED)),
            (132016, pause(TEMPLATE_DISABLED)),
            (300, None),
            (135000, None),
            (-1, None),
        ];
        for &(code, want) in table {
            assert_eq!(classify(code), want, "code {code}");
        }
    }

    #[test]
    fn stop_reasons_are_listed_and_screaming_snake_case() {
        for code in 0..140_000 {
            if let Some(ErrorAction::PauseCampaign { stop_reason }) = classify(code) {
                assert!(ALL_STOP_REASONS.contains(&stop_reason), "{stop_reason}");
            }
        }
        for reason in ALL_STOP_REASONS {
            assert!(reason.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
        }
    }

    #[test]
    fn subcode_33_of_code_100_pauses() {
        assert_eq!(
            classify_with_subcode(100, Some(33)),
            pause(PLATFORM_NUMBER_NOT_REGISTERED)
        );
        assert_eq!(classify_with_subcode(100, None), FAIL);
        assert_eq!(
            classify_with_subcode(131048, Some(2_494_055)),
            pause(PLATFORM_SPAM_LIMIT)
        );
    }

    #[test]
    fn send_errors_carry_the_text() {
        let text = "(#131026) Message undeliverable: not on WhatsApp";
        assert_eq!(
            send_error(131026, text),
            SendError::Rejected {
                reason: text.into(),
                opt_out: false
            }
        );
        assert_eq!(
            send_error(131050, "x"),
            SendError::Rejected {
                reason: "x".into(),
                opt_out: true
            }
        );
        assert_eq!(send_error(130429, "x"), SendError::RetryLater("x".into()));
        assert_eq!(
            send_error(190, "x"),
            SendError::Paused {
                stop_reason: PLATFORM_TOKEN_EXPIRED.into(),
                reason: "x".into()
            }
        );
        assert_eq!(
            send_error(987_654, "x"),
            SendError::Rejected {
                reason: "x".into(),
                opt_out: false
            }
        );
        assert!(is_opt_out(131050));
        assert!(!is_opt_out(131026));
    }

    #[test]
    fn error_text_formats_once() {
        assert_eq!(
            error_text(
                131026,
                "(#131026) Message undeliverable",
                Some("Unable to deliver.")
            ),
            "(#131026) Message undeliverable: Unable to deliver."
        );
        assert_eq!(
            error_text(131026, "Message undeliverable", None),
            "(#131026) Message undeliverable"
        );
        assert_eq!(error_text(190, "", Some("")), "(#190) Platform error");
        assert_eq!(error_text(1, "a\0b", Some("a\0b")), "(#1) a\u{FFFD}b");
        assert_eq!(error_text(1, &"x".repeat(5000), None).chars().count(), 1000);
    }

    #[test]
    fn template_statuses() {
        let table = [
            ("APPROVED", None),
            ("REINSTATED", None),
            ("UNARCHIVED", None),
            ("FLAGGED", None),
            ("LOCKED", None),
            ("LIMIT_EXCEEDED", None),
            ("SOMETHING_NEW", None),
            ("PAUSED", Some(TEMPLATE_PAUSED)),
            ("paused", Some(TEMPLATE_PAUSED)),
            ("DISABLED", Some(TEMPLATE_DISABLED)),
            ("REJECTED", Some(TEMPLATE_NOT_FOUND)),
            ("PENDING", Some(TEMPLATE_NOT_FOUND)),
            ("IN_APPEAL", Some(TEMPLATE_NOT_FOUND)),
            ("DELETED", Some(TEMPLATE_NOT_FOUND)),
            ("PENDING_DELETION", Some(TEMPLATE_NOT_FOUND)),
            ("ARCHIVED", Some(TEMPLATE_NOT_FOUND)),
        ];
        for (status, want) in table {
            assert_eq!(template_stop_reason(status), want, "{status}");
        }
    }

    #[test]
    fn quality_events() {
        assert_eq!(quality_rating("FLAGGED"), Some("RED"));
        assert_eq!(quality_rating("UNFLAGGED"), Some("GREEN"));
        for event in [
            "UPGRADE",
            "DOWNGRADE",
            "THROUGHPUT_UPGRADE",
            "ONBOARDING",
            "",
        ] {
            assert_eq!(quality_rating(event), None, "{event}");
        }
    }

    #[test]
    fn media_types_and_sizes_are_metas() {
        use wm_types::messages::MessageType as T;
        assert_eq!(media_limit("image/jpeg"), Some((T::Image, 5 * 1024 * 1024)));
        assert_eq!(media_limit("IMAGE/PNG"), Some((T::Image, 5 * 1024 * 1024)));
        assert_eq!(
            media_limit("audio/ogg; codecs=opus").map(|l| l.0),
            Some(T::Audio)
        );
        assert_eq!(media_limit("image/webp"), Some((T::Sticker, 500 * 1024)));
        assert_eq!(
            media_limit("application/pdf").map(|l| l.1),
            Some(100 * 1024 * 1024)
        );
        for refused in ["image/gif", "application/zip", "video/quicktime", ""] {
            assert_eq!(media_limit(refused), None, "{refused}");
        }
    }
}
