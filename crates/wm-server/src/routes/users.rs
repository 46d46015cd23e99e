//! `/users`: the organisation's users, so integrators can fill `ownerId`.

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::lookups::{List, User};

use crate::db;
use crate::error::ApiResult;
use crate::extract::{Authed, ContactsRead, NoQuery};
use crate::reply::Json;
use crate::state::AppState;
use crate::views::user_view;

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
    let data = db::lookups::users(&s.db.conn, auth.org_id)
        .await?
        .into_iter()
        .map(user_view)
        .collect();
    Ok(Json(List { data }))
}
