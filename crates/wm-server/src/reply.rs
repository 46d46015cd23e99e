//! Success answers as types: a handler's return type says its status ([`Json`] 200,
//! [`Created`] 201, [`Accepted`] 202), so the router and the OpenAPI document read it from
//! the same place instead of a table that repeats it.

use aide::OperationOutput;
use aide::generate::GenContext;
use aide::openapi::{
    Header, HeaderStyle, Operation, ParameterSchemaOrContent, ReferenceOr, Response, SchemaObject,
    StatusCode as DocStatus,
};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use schemars::{JsonSchema, json_schema};
use serde::Serialize;

use crate::openapi;

macro_rules! success {
    ($($(#[$doc:meta])* $name:ident => $status:ident;)+) => {$(
        $(#[$doc])*
        pub struct $name<T>(pub T);

        impl<T: Serialize> IntoResponse for $name<T> {
            fn into_response(self) -> axum::response::Response {
                (StatusCode::$status, axum::Json(self.0)).into_response()
            }
        }

        impl<T: JsonSchema> OperationOutput for $name<T> {
            type Inner = T;

            fn operation_response(ctx: &mut GenContext, _: &mut Operation) -> Option<Response> {
                Some(success::<T>(ctx))
            }

            fn inferred_responses(
                ctx: &mut GenContext,
                _: &mut Operation,
            ) -> Vec<(Option<DocStatus>, Response)> {
                let status = DocStatus::Code(StatusCode::$status.as_u16());
                vec![(Some(status), success::<T>(ctx))]
            }
        }
    )+};
}

success! {
    /// 200 with `T` as JSON. Not axum's `Json`, which aide would document without the
    /// rate-limit headers (aide's `axum-json` feature is off, so a documented route cannot
    /// return axum's by mistake).
    Json => OK;
    /// 201 with the created `T` as JSON.
    Created => CREATED;
    /// 202 with `T` as JSON: the work was queued.
    Accepted => ACCEPTED;
}

/// A success: `T`, with the rate-limit headers that [`crate::auth::api_key_auth`] adds to
/// every answer.
pub fn success<T: JsonSchema>(ctx: &mut GenContext) -> Response {
    let mut response = openapi::json_response("Success", ctx.schema.subschema_for::<T>());
    response.headers = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]
        .into_iter()
        .map(|name| (name.to_owned(), ReferenceOr::Item(integer_header())))
        .collect();
    response
}

fn integer_header() -> Header {
    Header {
        description: None,
        style: HeaderStyle::Simple,
        required: false,
        deprecated: None,
        format: ParameterSchemaOrContent::Schema(SchemaObject {
            json_schema: json_schema!({"type": "integer"}),
            example: None,
            external_docs: None,
        }),
        example: None,
        examples: Default::default(),
        extensions: Default::default(),
    }
}
