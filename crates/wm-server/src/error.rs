//! `ApiError`: every failure a handler can answer, mapped to the spec's two error bodies.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use sea_orm::{DbErr, SqlErr};
use serde_json::{Map, Value};
use wm_types::common::{BusinessErrorBody, ValidationErrorBody};
use wm_types::enums::ErrorCode;

/// A failure, as the caller sees it.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400 with `{statusCode, message: [..], error: "Bad Request"}`.
    #[error("validation failed: {0:?}")]
    Validation(Vec<String>),
    /// `{statusCode, code?, message, ...extra}`.
    #[error("{status} {code:?}: {message}")]
    Business {
        /// HTTP status.
        status: StatusCode,
        /// Stable code, when callers need one.
        code: Option<ErrorCode>,
        /// For a person.
        message: String,
        /// Extra fields of the code.
        extra: Map<String, Value>,
    },
    /// 500; the cause is logged, never shown.
    #[error("internal error: {0:#}")]
    Internal(#[from] anyhow::Error),
}

/// Handler result.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// Whether this is a write lost to a unique index (which the caller may explain).
    pub fn is_unique_violation(&self) -> bool {
        matches!(self, ApiError::Internal(e)
            if e.downcast_ref::<DbErr>().is_some_and(is_unique_violation))
    }

    /// A business error without extra fields.
    pub fn business(
        status: StatusCode,
        code: Option<ErrorCode>,
        message: impl Into<String>,
    ) -> Self {
        ApiError::Business {
            status,
            code,
            message: message.into(),
            extra: Map::new(),
        }
    }

    /// 404 for a resource that does not exist or is another organisation's.
    pub fn not_found(what: &str) -> Self {
        Self::business(StatusCode::NOT_FOUND, None, format!("{what} not found"))
    }

    /// 400 with a message only (an action that does not apply in the current state).
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::business(StatusCode::BAD_REQUEST, None, message)
    }

    /// 409 with a message only.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::business(StatusCode::CONFLICT, None, message)
    }

    /// A validation error with one message.
    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError::Validation(vec![message.into()])
    }

    /// Adds an extra field to a business error.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        if let ApiError::Business { extra, .. } = &mut self {
            extra.insert(key.to_owned(), value.into());
        }
        self
    }
}

impl From<DbErr> for ApiError {
    fn from(e: DbErr) -> Self {
        ApiError::Internal(e.into())
    }
}

/// Whether a database error is a unique-constraint violation (SQLite and PostgreSQL alike).
pub fn is_unique_violation(e: &DbErr) -> bool {
    matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_)))
}

impl IntoResponse for ApiError {
    /// The spec's body, with the error's code in the response extensions for the request
    /// log ([`LoggedError`]). A 500 logs its cause chain here, inside the request's span.
    fn into_response(self) -> Response {
        let logged = match &self {
            ApiError::Validation(_) => Some("VALIDATION_FAILED"),
            ApiError::Business { code, .. } => code.map(|c| c.as_str()),
            ApiError::Internal(_) => Some("INTERNAL"),
        };
        let mut response = match self {
            ApiError::Validation(message) => (
                StatusCode::BAD_REQUEST,
                Json(ValidationErrorBody {
                    status_code: 400,
                    message,
                    error: "Bad Request".to_owned(),
                }),
            )
                .into_response(),
            ApiError::Business {
                status,
                code,
                message,
                extra,
            } => (
                status,
                Json(BusinessErrorBody {
                    status_code: status.as_u16(),
                    code,
                    message,
                    extra,
                }),
            )
                .into_response(),
            ApiError::Internal(e) => {
                tracing::error!(error = %format!("{e:#}"), "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Json(BusinessErrorBody {
                        status_code: 500,
                        code: None,
                        message: "Internal server error".to_owned(),
                        extra: Map::new(),
                    }),
                )
                    .into_response()
            }
        };
        if let Some(code) = logged {
            response.extensions_mut().insert(LoggedError(code));
        }
        response
    }
}

/// What the request log says about a failed request: the error's stable code (never its
/// message, which may quote the caller's input). [`ApiError`] puts it in the response's
/// extensions; [`crate::observe`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedError(pub &'static str);

/// The 408 of a body that missed the request-body deadline.
pub fn body_timeout() -> ApiError {
    ApiError::business(
        StatusCode::REQUEST_TIMEOUT,
        None,
        "The request body did not arrive in time.",
    )
}

/// Whether a body-read failure was the request-body timeout (tower-http's `TimeoutBody`).
pub fn is_timeout(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        source = err.source();
    }
    false
}
