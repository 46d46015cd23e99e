//! `POST /admin/organizations/{orgId}/templates/sync`: the organisation's templates as the
//! platform has them. Every business account (WABA) of the organisation's numbers (read
//! with that number's token) is listed, all pages, and upserted by (name, language) with
//! category, status and body text.
//!
//! Templates no account lists are left as they are and reported (`left`, `leftTemplates`):
//! wm cannot tell a template deleted at the platform from one the operator added here (the
//! simulated platform's, or a number whose account has no token any more), so it changes
//! neither; one the platform really dropped pauses its campaign with TEMPLATE_NOT_FOUND
//! when sent, and the list tells the operator which to review.

use std::collections::{BTreeMap, HashSet};

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder,
};
use uuid::Uuid;
use wm_types::campaigns::{TemplateCategory, TemplateRef, TemplateStatus, TemplateSync};

use crate::db::entities::{phone_number, template};
use crate::db::tenant::in_org;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use wm_types::enums::ChannelType;

/// Syncs the organisation's templates from the platform.
pub async fn sync(state: &AppState, org: Uuid) -> ApiResult<TemplateSync> {
    let client = state
        .registry
        .catalog(ChannelType::MessagingAppA)
        .ok_or_else(|| ApiError::bad_request("No platform template catalog is configured."))?;
    let key = state
        .secret_key
        .as_ref()
        .ok_or_else(|| ApiError::bad_request("The server has no WM_SECRET_KEY to read tokens."))?;
    // One token per WABA: the first number of each that has one.
    let numbers = in_org::<phone_number::Entity>(org)
        .filter(phone_number::Column::WabaId.is_not_null())
        .filter(phone_number::Column::AccessTokenEnc.is_not_null())
        .all(&state.db.conn)
        .await?;
    let mut accounts: BTreeMap<String, String> = BTreeMap::new();
    for n in numbers {
        let (Some(waba), Some(enc)) = (n.waba_id, n.access_token_enc) else {
            continue;
        };
        if accounts.contains_key(&waba) {
            continue;
        }
        let token = key.decrypt(&enc).map_err(|e| {
            ApiError::bad_request(format!("A stored access token cannot be read: {e}"))
        })?;
        accounts.insert(waba, token);
    }
    if accounts.is_empty() {
        return Err(ApiError::bad_request(
            "No sender number of this organization has a wabaId and an accessToken.",
        ));
    }
    let mut out = TemplateSync {
        accounts: accounts.len() as u64,
        ..Default::default()
    };
    let mut listed_keys: HashSet<(String, String)> = HashSet::new();
    for (waba, token) in &accounts {
        let listed = client.list_templates(waba, token).await.map_err(|e| {
            ApiError::business(
                axum::http::StatusCode::BAD_GATEWAY,
                None,
                format!("The platform did not list the templates of {waba}: {e}"),
            )
        })?;
        let now = state.now_ms();
        let txn = state.db.write().await?;
        for t in listed {
            listed_keys.insert((t.name.clone(), t.language.clone()));
            let category =
                TemplateCategory::parse(&t.category).unwrap_or(TemplateCategory::Marketing);
            let status = TemplateStatus::parse(&t.status).unwrap_or(TemplateStatus::Unknown);
            let body = t.body_text.clone().unwrap_or_default();
            let existing = in_org::<template::Entity>(org)
                .filter(template::Column::Name.eq(t.name.clone()))
                .filter(template::Column::Language.eq(t.language.clone()))
                .one(&*txn)
                .await?;
            match existing {
                Some(e) if e.category == category && e.status == status && e.body_text == body => {
                    out.unchanged += 1;
                }
                Some(e) => {
                    let mut am: template::ActiveModel = e.into();
                    am.category = Set(category);
                    am.status = Set(status);
                    am.body_text = Set(body);
                    am.update(&*txn).await?;
                    out.updated += 1;
                }
                None => {
                    template::Entity::insert(template::ActiveModel {
                        id: Set(Uuid::now_v7()),
                        organization_id: Set(org),
                        name: Set(t.name.clone()),
                        category: Set(category),
                        language: Set(t.language.clone()),
                        body_text: Set(body),
                        status: Set(status),
                        created_at: Set(now),
                    })
                    .exec_without_returning(&*txn)
                    .await?;
                    out.created += 1;
                }
            }
        }
        txn.commit().await?;
    }
    let left: Vec<TemplateRef> = in_org::<template::Entity>(org)
        .order_by_asc(template::Column::Name)
        .order_by_asc(template::Column::Language)
        .all(&state.db.conn)
        .await?
        .into_iter()
        .filter(|t| !listed_keys.contains(&(t.name.clone(), t.language.clone())))
        .map(|t| TemplateRef {
            id: t.id,
            status: t.status,
            name: t.name,
            language: t.language,
        })
        .collect();
    out.left = left.len() as u64;
    out.left_templates = left;
    Ok(out)
}
