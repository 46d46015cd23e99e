//! `GET /{version}/{id}?fields=…` with a Page token: the User Profile API for a PSID or
//! IGSID, and the Page node itself (`me` or the Page id).
//!
//! Messenger (user-profile page): fields `id`, `name`, `first_name`, `last_name`,
//! `profile_pic` (`locale`, `timezone`, `gender` need extra permissions the fake does not
//! grant and are left out); without `fields` the fake answers `first_name`, `last_name`,
//! `profile_pic` (Meta's example request; Graph always adds `id`). Someone who never
//! wrote: "If the app is unable to access the person's profile, an empty object is
//! returned" — the fake answers `{}` (the documented 100/2018218 "No profile available
//! for this user." is for phone-number accounts; inject it with
//! [`crate::FakeGraph::set_profile_failure`]).
//!
//! Instagram (IG-FB user-profile page): `id`, `name`, `username`, `profile_pic`,
//! `follower_count`, `is_user_follow_business`, `is_business_follow_user`,
//! `is_verified_user` (the last four are not in [`super::PersonSpec`] and read `0` /
//! `false`, assumed); `name` and `profile_pic` "can be null"; default fields `name`,
//! `username`, `profile_pic`. Someone who never wrote: "User consent is required to
//! access user profile" (code 230 assumed, see [`super::errors`]).
//!
//! A field the node does not have answers Graph's `(#100) Tried accessing nonexisting
//! field (<f>) on node type (<type>)`; an id the Page cannot see 100/33.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::body::{self, query_param};
use super::errors::{self, param};
use super::model::PageSpec;
use super::store::{Person, Store};
use super::{auth, routes::is_version};
use crate::FakeGraph;
use crate::errors::GraphError;

const MSG_FIELDS: &[&str] = &["id", "name", "first_name", "last_name", "profile_pic"];
const IG_FIELDS: &[&str] = &[
    "id",
    "name",
    "username",
    "profile_pic",
    "follower_count",
    "is_user_follow_business",
    "is_business_follow_user",
    "is_verified_user",
];

fn requested(fields: Option<&str>, default: &[&str]) -> Vec<String> {
    match fields.map(str::trim).filter(|f| !f.is_empty()) {
        Some(f) => f
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        None => default.iter().map(|s| (*s).to_owned()).collect(),
    }
}

fn nonexisting(field: &str, node: &str) -> GraphError {
    param(&format!(
        "Tried accessing nonexisting field ({field}) on node type ({node})"
    ))
}

fn page_node(page: &PageSpec, fields: Option<&str>) -> Result<Value, GraphError> {
    let mut out = Map::new();
    for f in requested(fields, &["name"]) {
        match f.as_str() {
            "id" => {}
            "name" => {
                out.insert(f, json!(page.name));
            }
            // `{"instagram_business_account":{"id":…},"id":…}`; absent without a linked account.
            "instagram_business_account" => {
                if let Some(ig) = &page.instagram_id {
                    out.insert(f, json!({ "id": ig }));
                }
            }
            _ => return Err(nonexisting(&f, "Page")),
        }
    }
    out.insert("id".into(), json!(page.page_id));
    Ok(Value::Object(out))
}

fn opt(v: Option<&String>) -> Value {
    v.filter(|s| !s.is_empty())
        .map_or(Value::Null, |s| json!(s))
}

fn messenger_profile(p: &Person, fields: Option<&str>) -> Result<Value, GraphError> {
    let wanted = requested(fields, &["first_name", "last_name", "profile_pic"]);
    if let Some(bad) = wanted.iter().find(|f| !MSG_FIELDS.contains(&f.as_str())) {
        return Err(nonexisting(bad, "User"));
    }
    if !p.consented {
        return Ok(json!({}));
    }
    let mut out = Map::new();
    for f in wanted {
        let v = match f.as_str() {
            "name" => json!(p.spec.name),
            "first_name" => json!(p.spec.first_name),
            "last_name" => json!(p.spec.last_name),
            "profile_pic" => match &p.spec.profile_pic {
                Some(u) => json!(u),
                None => continue,
            },
            _ => continue,
        };
        out.insert(f, v);
    }
    out.insert("id".into(), json!(p.spec.scoped_id));
    Ok(Value::Object(out))
}

fn instagram_profile(p: &Person, fields: Option<&str>) -> Result<Value, GraphError> {
    let wanted = requested(fields, &["name", "username", "profile_pic"]);
    if let Some(bad) = wanted.iter().find(|f| !IG_FIELDS.contains(&f.as_str())) {
        return Err(nonexisting(bad, "InstagramUser"));
    }
    if !p.consented {
        return Err(errors::consent_required());
    }
    let mut out = Map::new();
    for f in wanted {
        let v = match f.as_str() {
            "name" => opt(Some(&p.spec.name)),
            "username" => opt(p.spec.username.as_ref()),
            "profile_pic" => opt(p.spec.profile_pic.as_ref()),
            "follower_count" => json!(0),
            "is_user_follow_business" | "is_business_follow_user" | "is_verified_user" => {
                json!(false)
            }
            _ => continue,
        };
        out.insert(f, v);
    }
    out.insert("id".into(), json!(p.spec.scoped_id));
    Ok(Value::Object(out))
}

/// The answer for `GET /{id}` with a Page token.
pub(crate) fn lookup(
    store: &Store,
    token: Option<&str>,
    id: &str,
    fields: Option<&str>,
) -> Result<Value, GraphError> {
    let page = auth::page_for_token(store, token)?;
    if id == "me" || id == page.page_id {
        return page_node(&page, fields);
    }
    if let Some(p) = store.person(&page.page_id, id) {
        if let Some(code) = p.profile_failure {
            return Err(errors::by_code(code));
        }
        return messenger_profile(p, fields);
    }
    if let Some(p) = page
        .instagram_id
        .as_ref()
        .and_then(|ig| store.person(ig, id))
    {
        if let Some(code) = p.profile_failure {
            return Err(errors::by_code(code));
        }
        return instagram_profile(p, fields);
    }
    Err(GraphError::unknown_object("get", id))
}

/// `GET /{version}/{id}` answered by the Messenger side.
pub(crate) async fn get_node(
    State(fake): State<FakeGraph>,
    Path((version, id)): Path<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if !is_version(&version) {
        return crate::server::unknown_path(uri).await;
    }
    let q = query.as_deref();
    let token = body::token(&headers, q, &body::Params::default());
    let fields = query_param(q, "fields");
    match lookup(&fake.msgr(), token.as_deref(), &id, fields.as_deref()) {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}
