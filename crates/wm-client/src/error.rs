//! Typed errors: the spec's business codes (tolerant of codes added later) and the
//! validation messages.

use wm_types::common::{BusinessErrorBody, ValidationErrorBody};

/// A stable error code of API v1.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCode {
    /// Key missing, unknown or revoked.
    ApiKeyInvalid,
    /// Key expired.
    ApiKeyExpired,
    /// The key lacks the route's scope.
    ApiKeyScopeMissing,
    /// The route is not open to API keys.
    ApiKeyNotAllowedHere,
    /// Rate limit.
    ApiKeyRateLimited,
    /// The phone belongs to another contact.
    ContactPhoneExists,
    /// The contact has history and cannot be deleted.
    ContactHasHistory,
    /// The campaign's template variables are not mapped.
    CampaignVariablesRequired,
    /// The sender number is not the organisation's.
    PhoneNumberNotOwned,
    /// A code this client does not know yet.
    Other(String),
}

impl ErrorCode {
    fn parse(s: &str) -> ErrorCode {
        match s {
            "API_KEY_INVALID" => ErrorCode::ApiKeyInvalid,
            "API_KEY_EXPIRED" => ErrorCode::ApiKeyExpired,
            "API_KEY_SCOPE_MISSING" => ErrorCode::ApiKeyScopeMissing,
            "API_KEY_NOT_ALLOWED_HERE" => ErrorCode::ApiKeyNotAllowedHere,
            "API_KEY_RATE_LIMITED" => ErrorCode::ApiKeyRateLimited,
            "CONTACT_PHONE_EXISTS" => ErrorCode::ContactPhoneExists,
            "CONTACT_HAS_HISTORY" => ErrorCode::ContactHasHistory,
            "CAMPAIGN_VARIABLES_REQUIRED" => ErrorCode::CampaignVariablesRequired,
            "PHONE_NUMBER_NOT_OWNED" => ErrorCode::PhoneNumberNotOwned,
            other => ErrorCode::Other(other.to_owned()),
        }
    }
}

/// What can go wrong with a call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// 400 with one message per failed constraint.
    #[error("validation failed: {}", messages.join("; "))]
    Validation {
        /// The messages.
        messages: Vec<String>,
    },
    /// Any other error answer.
    #[error("{status}: {message}")]
    Api {
        /// HTTP status.
        status: u16,
        /// Stable code, when the API gives one.
        code: Option<ErrorCode>,
        /// For a person.
        message: String,
        /// The whole body (extra fields such as `contactId`).
        body: serde_json::Value,
    },
    /// The request did not complete.
    #[error("transport: {0}")]
    Transport(reqwest::Error),
    /// The answer was not what the API documents.
    #[error("unexpected response: {0}")]
    Decode(String),
    /// The client could not be built.
    #[error("client configuration: {0}")]
    Config(String),
}

impl Error {
    pub(crate) fn from_body(status: u16, bytes: &[u8]) -> Error {
        if let Ok(v) = serde_json::from_slice::<ValidationErrorBody>(bytes) {
            return Error::Validation {
                messages: v.message,
            };
        }
        let body: serde_json::Value =
            serde_json::from_slice(bytes).unwrap_or(serde_json::Value::Null);
        match serde_json::from_value::<BusinessErrorBody>(body.clone()) {
            Ok(b) => Error::Api {
                status,
                code: b.code.as_deref().map(ErrorCode::parse),
                message: b.message,
                body,
            },
            Err(_) => Error::Api {
                status,
                code: None,
                message: String::from_utf8_lossy(bytes).into_owned(),
                body,
            },
        }
    }

    /// The business code, if any.
    pub fn code(&self) -> Option<&ErrorCode> {
        match self {
            Error::Api { code, .. } => code.as_ref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_become_typed_errors() {
        let e = Error::from_body(
            409,
            br#"{"statusCode":409,"code":"CONTACT_PHONE_EXISTS","message":"x","contactId":"a"}"#,
        );
        assert_eq!(e.code(), Some(&ErrorCode::ContactPhoneExists));
        let e = Error::from_body(
            400,
            br#"{"statusCode":400,"message":["a","b"],"error":"Bad Request"}"#,
        );
        assert!(matches!(e, Error::Validation { ref messages } if messages.len() == 2));
        let e = Error::from_body(418, br#"{"statusCode":418,"code":"TEAPOT","message":"t"}"#);
        assert_eq!(e.code(), Some(&ErrorCode::Other("TEAPOT".into())));
    }
}
