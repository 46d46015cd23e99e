//! `/campaigns`: create, list, detail, audience, cost preview, send, pause, resume and
//! duplicate.

use aide::axum::ApiRouter;
use aide::axum::routing::{get_with, post_with};
use axum::extract::State;
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

const TAG: &str = "Campaigns";

/// The campaign routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/campaigns",
            get_with(list, |op| {
                op.tag(TAG).summary("List campaigns with tabs and summary")
            })
            .post_with(create, |op| {
                op.tag(TAG).summary("Create a campaign (DRAFT)")
            }),
        )
        .api_route(
            "/campaigns/{id}",
            get_with(detail, |op| op.tag(TAG).summary("Get a campaign")),
        )
        .api_route(
            "/campaigns/{id}/recipients",
            get_with(recipients, |op| {
                op.tag(TAG).summary("A campaign's recipients")
            })
            .post_with(add_audience, |op| op.tag(TAG).summary("Add an audience")),
        )
        .api_route(
            "/campaigns/{id}/preview-cost",
            get_with(preview_cost, |op| {
                op.tag(TAG).summary("Preview the cost per market")
            }),
        )
        .api_route(
            "/campaigns/{id}/send",
            post_with(send, |op| {
                op.tag(TAG).summary("Send now, scheduled or staggered")
            }),
        )
        .api_route(
            "/campaigns/{id}/pause",
            post_with(pause, |op| op.tag(TAG).summary("Pause a sending campaign")),
        )
        .api_route(
            "/campaigns/{id}/resume",
            post_with(resume, |op| op.tag(TAG).summary("Resume a paused campaign")),
        )
        .api_route(
            "/campaigns/{id}/duplicate",
            post_with(duplicate, |op| {
                op.tag(TAG).summary("Duplicate as a new DRAFT")
            }),
        )
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
