//! `ApiError`: every failure a handler can answer, mapped to the spec's two error bodies.

use aide::OperationOutput;
use aide::generate::GenContext;
use aide::openapi::{Operation, StatusCode as DocStatus};
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use schemars::json_schema;
use sea_orm::{DbErr, SqlErr};
use serde_json::{Map, Value};
use wm_types::common::{BusinessErrorBody, ValidationErrorBody};
use wm_types::enums::ErrorCode;

use crate::observe::request_log::LoggedError;

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

/// What any operation can answer besides its success: a validation or business 400, 401
/// (key), 403 (scope), 404 and 429 (rate limit). The 409 of writes is added by
/// [`crate::openapi::document`], which knows the method.
impl OperationOutput for ApiError {
    type Inner = Self;

    fn inferred_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<DocStatus>, aide::openapi::Response)> {
        let mut out = vec![(Some(DocStatus::Code(400)), error_response(ctx, true))];
        for status in [401, 403, 404, 429] {
            out.push((Some(DocStatus::Code(status)), error_response(ctx, false)));
        }
        out
    }
}

/// The documented error: the business body, or either body when `validation` (a 400).
pub fn error_response(ctx: &mut GenContext, validation: bool) -> aide::openapi::Response {
    let business = ctx.schema.subschema_for::<BusinessErrorBody>();
    let schema = if validation {
        let fields = ctx.schema.subschema_for::<ValidationErrorBody>();
        json_schema!({"oneOf": [fields, business]})
    } else {
        business
    };
    crate::openapi::json_response("Error", schema)
}
