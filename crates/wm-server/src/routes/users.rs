//! `/users`: the organisation's users, so integrators can fill `ownerId`.

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::lookups::{List, User};

use crate::error::ApiResult;
use crate::extract::{Authed, ContactsRead, NoQuery};
use crate::reply::Json;
use crate::state::AppState;

/// The user routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/users",
        get_with(list, |op| op.tag("Lookups").summary("Users")),
    )
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    _: NoQuery,
) -> ApiResult<Json<List<User>>> {
    crate::services::organizations::users(&s, auth.org_id)
        .await
        .map(Json)
}
