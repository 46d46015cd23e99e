//! How errors are documented: every operation's error answers, in the spec's two bodies.

use aide::OperationOutput;
use aide::generate::GenContext;
use aide::openapi::{Operation, StatusCode as DocStatus};
use schemars::json_schema;
use wm_types::common::{BusinessErrorBody, ValidationErrorBody};

use crate::error::ApiError;

/// What any operation can answer besides its success: a validation or business 400, 401
/// (key), 403 (scope), 404 and 429 (rate limit). The 409 of writes is added by
/// the document, which knows the method.
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
    super::parts::json_response("Error", schema)
}
