//! Success answers as types: a handler's return type says its status ([`Json`] 200,
//! [`Created`] 201, [`Accepted`] 202) instead of a `(StatusCode, Json)` pair built in its
//! body.

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Serialize;

macro_rules! success {
    ($($(#[$doc:meta])* $name:ident => $status:ident;)+) => {$(
        $(#[$doc])*
        pub struct $name<T>(pub T);

        impl<T: Serialize> IntoResponse for $name<T> {
            fn into_response(self) -> axum::response::Response {
                (StatusCode::$status, axum::Json(self.0)).into_response()
            }
        }
    )+};
}

success! {
    /// 200 with `T` as JSON.
    Json => OK;
    /// 201 with the created `T` as JSON.
    Created => CREATED;
    /// 202 with `T` as JSON: the work was queued.
    Accepted => ACCEPTED;
}
