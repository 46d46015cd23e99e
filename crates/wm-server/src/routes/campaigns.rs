//! `/campaigns`: create, list, detail, audience, cost preview, send, pause, resume and
//! duplicate.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use wm_types::Page;
use wm_types::campaigns::{
    Audience, AudienceResult, Campaign, CampaignList, CostPreview, CreateCampaign,
    ListCampaignsQuery, Recipient, RecipientsQuery, SendCampaign,
};

use crate::error::ApiResult;
use crate::extract::{
    Authed, CampaignId, CampaignsRead, CampaignsWrite, NoBody, NoQuery, ValidatedJson,
    ValidatedQuery,
};
use crate::reply::{Created, Json};
use crate::services::campaigns as svc;
use crate::state::AppState;

/// The campaign routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/campaigns", get(list).post(create))
        .route("/campaigns/{id}", get(detail))
        .route(
            "/campaigns/{id}/recipients",
            get(recipients).post(add_audience),
        )
        .route("/campaigns/{id}/preview-cost", get(preview_cost))
        .route("/campaigns/{id}/send", post(send))
        .route("/campaigns/{id}/pause", post(pause))
        .route("/campaigns/{id}/resume", post(resume))
        .route("/campaigns/{id}/duplicate", post(duplicate))
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    ValidatedQuery(q): ValidatedQuery<ListCampaignsQuery>,
) -> ApiResult<Json<CampaignList>> {
    Ok(Json(svc::list(&s, auth.org_id, &q).await?))
}

async fn create(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateCampaign>,
) -> ApiResult<Created<Campaign>> {
    Ok(Created(svc::create(&s, auth.org_id, body).await?))
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    _: NoQuery,
    CampaignId(id): CampaignId,
) -> ApiResult<Json<Campaign>> {
    Ok(Json(svc::get(&s, auth.org_id, id).await?))
}

async fn recipients(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    ValidatedQuery(q): ValidatedQuery<RecipientsQuery>,
    CampaignId(id): CampaignId,
) -> ApiResult<Json<Page<Recipient>>> {
    Ok(Json(svc::recipients(&s, auth.org_id, id, &q).await?))
}

async fn add_audience(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    _: NoQuery,
    CampaignId(id): CampaignId,
    ValidatedJson(body): ValidatedJson<Audience>,
) -> ApiResult<Json<AudienceResult>> {
    Ok(Json(svc::add_audience(&s, auth.org_id, id, body).await?))
}

async fn preview_cost(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    _: NoQuery,
    CampaignId(id): CampaignId,
) -> ApiResult<Json<CostPreview>> {
    Ok(Json(svc::preview_cost(&s, auth.org_id, id).await?))
}

async fn send(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    _: NoQuery,
    CampaignId(id): CampaignId,
    ValidatedJson(body): ValidatedJson<SendCampaign>,
) -> ApiResult<Json<Campaign>> {
    Ok(Json(svc::send(&s, auth.org_id, id, body).await?))
}

async fn pause(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    _: NoQuery,
    CampaignId(id): CampaignId,
    _: NoBody,
) -> ApiResult<Json<Campaign>> {
    Ok(Json(svc::pause(&s, auth.org_id, id).await?))
}

async fn resume(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    _: NoQuery,
    CampaignId(id): CampaignId,
    _: NoBody,
) -> ApiResult<Json<Campaign>> {
    Ok(Json(svc::resume(&s, auth.org_id, id).await?))
}

async fn duplicate(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    _: NoQuery,
    CampaignId(id): CampaignId,
    _: NoBody,
) -> ApiResult<Created<Campaign>> {
    Ok(Created(svc::duplicate(&s, auth.org_id, id).await?))
}
