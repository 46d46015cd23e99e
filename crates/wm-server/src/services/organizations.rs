//! Organisations and their defaults, users and API keys (used by the operator API and the
//! demo seed).

use crate::db::Unique;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ConnectionTrait, EntityTrait, IntoActiveModel, QueryOrder,
};
use uuid::Uuid;
use wm_types::admin::{
    ApiKey, ApiKeyCreated, Channel, CreateApiKey, CreateLifecycleStage, CreateOrganization,
    CreateUser, Organization,
};
use wm_types::enums::{ChannelType, StageCategory};
use wm_types::lookups::{LifecycleStage, List, User};

use crate::db::entities::{api_key, channel, lifecycle_stage, organization, user};
use crate::db::tenant::find_in_org;
use crate::error::{ApiError, ApiResult, is_unique_violation};
use crate::keys::{generate_key, hash_key, scopes_to_db};
use crate::state::AppState;

/// The stages every new organisation starts with.
pub const DEFAULT_STAGES: [(&str, StageCategory, i32); 4] = [
    ("Lead", StageCategory::Lead, 1),
    ("Qualified", StageCategory::InProgress, 2),
    ("Customer", StageCategory::Customer, 3),
    ("Inactive", StageCategory::Inactive, 4),
];

/// Creates an organisation with its default stages and an active MESSAGING_APP_A channel.
pub async fn create(
    conn: &impl ConnectionTrait,
    body: CreateOrganization,
    now: i64,
) -> ApiResult<organization::Model> {
    let org = organization::Entity::insert(organization::ActiveModel {
        id: Set(Uuid::now_v7()),
        name: Set(body.name.trim().to_owned()),
        currency: Set(body.currency.unwrap_or_else(|| "USD".to_owned())),
        timezone: Set(body.timezone.unwrap_or_else(|| "UTC".to_owned())),
        included_utility_messages: Set(body.included_utility_messages.unwrap_or(0)),
        created_at: Set(now),
        rate_overrides: Set(None),
        contact_deletes: Set(0),
    })
    .exec_with_returning(conn)
    .await?;
    for (name, category, order) in DEFAULT_STAGES {
        add_stage(conn, org.id, name, category, order, now).await?;
    }
    add_channel(conn, org.id, ChannelType::MessagingAppA, now).await?;
    crate::services::wallet::ensure(conn, org.id, now).await?;
    Ok(org)
}

/// Adds a lifecycle stage.
pub async fn add_stage(
    conn: &impl ConnectionTrait,
    org: Uuid,
    name: &str,
    category: StageCategory,
    order: i32,
    now: i64,
) -> ApiResult<lifecycle_stage::Model> {
    Ok(
        lifecycle_stage::Entity::insert(lifecycle_stage::ActiveModel {
            id: Set(Uuid::now_v7()),
            organization_id: Set(org),
            name: Set(name.trim().to_owned()),
            position: Set(order),
            category: Set(category),
            created_at: Set(now),
        })
        .exec_with_returning(conn)
        .await?,
    )
}

/// Adds an active channel.
pub async fn add_channel(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: ChannelType,
    now: i64,
) -> ApiResult<channel::Model> {
    Ok(crate::db::channels::insert(conn, org, kind, Default::default(), now).await?)
}

/// Adds a user; 409 when the e-mail is taken in the organisation.
pub async fn add_user(
    conn: &impl ConnectionTrait,
    org: Uuid,
    full_name: &str,
    email: &str,
    now: i64,
) -> ApiResult<user::Model> {
    user::Entity::insert(user::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        full_name: Set(full_name.trim().to_owned()),
        email: Set(email.trim().to_lowercase()),
        created_at: Set(now),
    })
    .exec_with_returning(conn)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            ApiError::conflict("A user with this email already exists in the organization.")
        } else {
            e.into()
        }
    })
}

/// Creates an API key for a user of the organisation; returns the row and the plaintext key,
/// which is never stored.
pub async fn add_api_key(
    conn: &impl ConnectionTrait,
    org: Uuid,
    body: CreateApiKey,
    now: i64,
) -> ApiResult<(api_key::Model, String)> {
    if crate::db::lookups::user(conn, org, body.user_id)
        .await?
        .is_none()
    {
        return Err(ApiError::invalid(
            "userId must be a user of this organization",
        ));
    }
    if body.expires_at.is_some_and(|t| t.millis() <= now) {
        return Err(ApiError::invalid("expiresAt must be in the future"));
    }
    let key = generate_key();
    let row = api_key::Entity::insert(api_key::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        user_id: Set(body.user_id),
        name: Set(body.name.trim().to_owned()),
        key_hash: Set(hash_key(&key)),
        prefix: Set(key[..12].to_owned()),
        scopes: Set(scopes_to_db(&body.scopes)),
        expires_at: Set(body.expires_at.map(|t| t.millis())),
        revoked_at: Set(None),
        created_at: Set(now),
    })
    .exec_with_returning(conn)
    .await?;
    Ok((row, key))
}

/// `POST /admin/organizations/{orgId}/api-keys`: the key, with its plaintext shown once.
pub async fn create_api_key(
    state: &AppState,
    org: Uuid,
    body: CreateApiKey,
) -> ApiResult<ApiKeyCreated> {
    let txn = state.db.write().await?;
    let (row, key) = add_api_key(&*txn, org, body, state.now_ms()).await?;
    txn.commit().await?;
    Ok(ApiKeyCreated {
        api_key: ApiKey::from(row),
        key,
    })
}

/// `POST /admin/organizations/{orgId}/api-keys/{id}/revoke`: revoked at once here and, through
/// the change feed, on every replica; revoking twice keeps the first instant.
pub async fn revoke_api_key(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<ApiKey> {
    let txn = state.db.write().await?;
    let row = find_in_org::<api_key::Entity>(org, id)
        .unique(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found("API key"))?;
    let row = if row.revoked_at.is_none() {
        let mut am = row.into_active_model();
        am.revoked_at = Set(Some(state.now_ms()));
        am.update(&*txn).await?
    } else {
        row
    };
    txn.commit().await?;
    crate::changes::publish(state, crate::changes::Change::Key(id)).await;
    Ok(ApiKey::from(row))
}

/// `POST /admin/organizations/{orgId}/channels`: one active channel per type (409 otherwise).
pub async fn create_channel(state: &AppState, org: Uuid, kind: ChannelType) -> ApiResult<Channel> {
    let txn = state.db.write().await?;
    if crate::db::lookups::active_channel(&*txn, org, kind)
        .await?
        .is_some()
    {
        return Err(ApiError::conflict(format!(
            "A {kind} channel is already active in this organization."
        )));
    }
    let ch = add_channel(&*txn, org, kind, state.now_ms()).await?;
    txn.commit().await?;
    crate::changes::publish(state, crate::changes::Change::Org(org)).await;
    Ok(Channel::from(ch))
}

/// `POST /admin/organizations`: the organisation with its defaults, in one transaction.
pub async fn create_organization(
    state: &AppState,
    body: CreateOrganization,
) -> ApiResult<Organization> {
    let txn = state.db.write().await?;
    let org = create(&*txn, body, state.now_ms()).await?;
    txn.commit().await?;
    Ok(Organization::from(org))
}

/// `GET /admin/organizations`, oldest first.
pub async fn list_organizations(state: &AppState) -> ApiResult<Vec<Organization>> {
    let rows = organization::Entity::find()
        .order_by_asc(organization::Column::CreatedAt)
        .all(&state.db.conn)
        .await?;
    Ok(rows.into_iter().map(Organization::from).collect())
}

/// `GET /admin/organizations/{orgId}`.
pub async fn get_organization(state: &AppState, id: Uuid) -> ApiResult<Organization> {
    organization::Entity::find_by_id(id)
        .unique(&state.db.conn)
        .await?
        .map(Organization::from)
        .ok_or_else(|| ApiError::not_found("Organization"))
}

/// `POST /admin/organizations/{orgId}/lifecycle-stages`; every replica's lookups refresh.
pub async fn create_stage(
    state: &AppState,
    org: Uuid,
    body: CreateLifecycleStage,
) -> ApiResult<LifecycleStage> {
    let txn = state.db.write().await?;
    let now = state.now_ms();
    let stage = add_stage(&*txn, org, &body.name, body.category, body.order, now).await?;
    txn.commit().await?;
    crate::changes::publish(state, crate::changes::Change::Org(org)).await;
    Ok(LifecycleStage::from(stage))
}

/// `POST /admin/organizations/{orgId}/users`; every replica's lookups refresh.
pub async fn create_user(state: &AppState, org: Uuid, body: CreateUser) -> ApiResult<User> {
    let txn = state.db.write().await?;
    let user = add_user(&*txn, org, &body.full_name, &body.email, state.now_ms()).await?;
    txn.commit().await?;
    crate::changes::publish(state, crate::changes::Change::Org(org)).await;
    Ok(User::from(user))
}

/// The organisation's lifecycle stages in order: the API's list and the operator's.
pub async fn stages(state: &AppState, org: Uuid) -> ApiResult<List<LifecycleStage>> {
    let rows = crate::db::lookups::stages(&state.db.conn, org).await?;
    Ok(List {
        data: rows.into_iter().map(LifecycleStage::from).collect(),
    })
}

/// The organisation's users: the API's list and the operator's.
pub async fn users(state: &AppState, org: Uuid) -> ApiResult<List<User>> {
    let rows = crate::db::lookups::users(&state.db.conn, org).await?;
    Ok(List {
        data: rows.into_iter().map(User::from).collect(),
    })
}
