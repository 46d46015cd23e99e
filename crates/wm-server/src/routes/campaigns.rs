//! `/campaigns`: create, list, detail, audience, cost preview, send, pause, resume and
//! duplicate.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use wm_types::Page;
use wm_types::campaigns::{
    Audience, AudienceResult, Campaign, CampaignList, CostPreview, CreateCampaign,
    ListCampaignsQuery, Recipient, RecipientsQuery, SendCampaign,
};

use crate::error::ApiResult;
use crate::extract::{
    Authed, CampaignsRead, CampaignsWrite, NoBody, NoQuery, ValidatedJson, ValidatedQuery, path_id,
};
use crate::services::campaigns as svc;
use crate::state::AppState;

const WHAT: &str = "Campaign";

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
) -> ApiResult<(StatusCode, Json<Campaign>)> {
    Ok((
        StatusCode::CREATED,
        Json(svc::create(&s, auth.org_id, body).await?),
    ))
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    Path(id): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<Campaign>> {
    Ok(Json(svc::get(&s, auth.org_id, path_id(&id, WHAT)?).await?))
}

async fn recipients(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    Path(id): Path<String>,
    ValidatedQuery(q): ValidatedQuery<RecipientsQuery>,
) -> ApiResult<Json<Page<Recipient>>> {
    Ok(Json(
        svc::recipients(&s, auth.org_id, path_id(&id, WHAT)?, &q).await?,
    ))
}

async fn add_audience(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<Audience>,
) -> ApiResult<Json<AudienceResult>> {
    Ok(Json(
        svc::add_audience(&s, auth.org_id, path_id(&id, WHAT)?, body).await?,
    ))
}

async fn preview_cost(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    Path(id): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<CostPreview>> {
    Ok(Json(
        svc::preview_cost(&s, auth.org_id, path_id(&id, WHAT)?).await?,
    ))
}

async fn send(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<SendCampaign>,
) -> ApiResult<Json<Campaign>> {
    Ok(Json(
        svc::send(&s, auth.org_id, path_id(&id, WHAT)?, body).await?,
    ))
}

async fn pause(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    _: NoBody,
) -> ApiResult<Json<Campaign>> {
    Ok(Json(
        svc::pause(&s, auth.org_id, path_id(&id, WHAT)?).await?,
    ))
}

async fn resume(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    _: NoBody,
) -> ApiResult<Json<Campaign>> {
    Ok(Json(
        svc::resume(&s, auth.org_id, path_id(&id, WHAT)?).await?,
    ))
}

async fn duplicate(
    State(s): State<AppState>,
    auth: Authed<CampaignsWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    _: NoBody,
) -> ApiResult<(StatusCode, Json<Campaign>)> {
    Ok((
        StatusCode::CREATED,
        Json(svc::duplicate(&s, auth.org_id, path_id(&id, WHAT)?).await?),
    ))
}
