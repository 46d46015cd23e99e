//! The small pieces of the document every operation is built from: a media type, a JSON
//! response, a request body.

use aide::openapi::{MediaType, RequestBody, Response, SchemaObject};
use schemars::Schema;

/// A media type's entry: its schema only.
pub fn media_type(json_schema: Schema) -> MediaType {
    MediaType {
        schema: Some(SchemaObject {
            json_schema,
            example: None,
            external_docs: None,
        }),
        ..Default::default()
    }
}

/// A JSON response.
pub fn json_response(description: &str, schema: Schema) -> Response {
    Response {
        description: description.to_owned(),
        content: [("application/json".to_owned(), media_type(schema))].into(),
        ..Default::default()
    }
}

/// An optional request body of one media type.
pub fn request_body(media: &str, schema: Schema) -> RequestBody {
    RequestBody {
        description: None,
        content: [(media.to_owned(), media_type(schema))].into(),
        required: false,
        extensions: Default::default(),
    }
}
