//! Campaign rules: the validation schemas of the campaign, wallet and operator bodies, the
//! audience source and the send plan; [`state`] holds the campaign state machine as one
//! pure function (re-exported here).

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;
use wm_types::campaigns::{
    Audience, CreateCampaign, CreatePhoneNumber, CreateTemplate, Inbound, ListCampaignsQuery,
    ProviderEvent, RecipientsQuery, SendCampaign, SendWhen, TopUp, UpdatePhoneNumber,
};

use crate::validate::validated;

pub mod state;
pub use state::{Action, CampaignError, Facts, SendPlan, Transition, transition};

/// The limits of campaign requests, declared on the wire types.
pub use wm_types::campaigns::{
    BATCH_INTERVAL_MIN, BATCH_SIZE, MAX_CONTACT_IDS, MAX_NAME, MAX_SEARCH, MAX_TAG, MIN_NAME, MPS,
};
/// How far ahead a scheduled start must be.
pub const MIN_SCHEDULE_AHEAD_SECS: i64 = 60;

validated!(
    CreateCampaign,
    Audience,
    SendCampaign,
    ListCampaignsQuery,
    RecipientsQuery,
    CreatePhoneNumber,
    UpdatePhoneNumber,
    CreateTemplate,
    TopUp,
    ProviderEvent,
    Inbound,
    wm_types::campaigns::SetRates,
);

/// Where an audience comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AudienceSource {
    /// Explicit contacts.
    Contacts(Vec<Uuid>),
    /// Everyone in a lifecycle stage.
    Stage(Uuid),
    /// Everyone with a tag.
    Tag(String),
    /// Everyone.
    All,
}

/// The message when an audience does not name exactly one source.
pub const AUDIENCE_SOURCE_MESSAGE: &str =
    "exactly one of contactIds, lifecycleStageId, tag or all must be given";

/// The one source of a validated audience body. `all: false` counts as not given (only
/// `true` means everyone); zero or several sources are refused.
pub fn audience_source(a: &Audience) -> Result<AudienceSource, String> {
    let mut sources = Vec::with_capacity(1);
    if let Some(ids) = &a.contact_ids {
        sources.push(AudienceSource::Contacts(ids.clone()));
    }
    if let Some(stage) = a.lifecycle_stage_id {
        sources.push(AudienceSource::Stage(stage));
    }
    if let Some(tag) = &a.tag {
        sources.push(AudienceSource::Tag(tag.clone()));
    }
    if a.all == Some(true) {
        sources.push(AudienceSource::All);
    }
    match <[AudienceSource; 1]>::try_from(sources) {
        Ok([one]) => Ok(one),
        Err(_) => Err(AUDIENCE_SOURCE_MESSAGE.to_owned()),
    }
}

fn future_enough(at: DateTime<Utc>, now: DateTime<Utc>) -> Result<DateTime<Utc>, CampaignError> {
    if at < now + Duration::seconds(MIN_SCHEDULE_AHEAD_SECS) {
        Err(CampaignError::ScheduleTooSoon)
    } else {
        Ok(at)
    }
}

/// Parses a validated SendCampaign body at `now`: no `when` = Now; `scheduled` needs
/// scheduledAt ≥ now + 60 s; `staggered` needs batchSize and batchIntervalMin (scheduledAt
/// optional, same ≥ 60 s rule when given).
pub fn send_plan(body: &SendCampaign, now: DateTime<Utc>) -> Result<SendPlan, CampaignError> {
    match body.when.unwrap_or_default() {
        SendWhen::Now => Ok(SendPlan::Now),
        SendWhen::Scheduled => {
            let at = body.scheduled_at.ok_or(CampaignError::MissingSchedule)?.0;
            Ok(SendPlan::Scheduled {
                at: future_enough(at, now)?,
            })
        }
        SendWhen::Staggered => {
            let (Some(batch_size), Some(interval_min)) = (body.batch_size, body.batch_interval_min)
            else {
                return Err(CampaignError::MissingBatchSettings);
            };
            let start = body
                .scheduled_at
                .map(|t| future_enough(t.0, now))
                .transpose()?;
            Ok(SendPlan::Staggered {
                start,
                batch_size,
                interval_min,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Validated;
    use chrono::TimeZone;
    use serde_json::Value;
    use serde_json::json;
    use wm_types::Timestamp;
    use wm_types::enums::ChannelType;

    fn errors<T: Validated>(v: Value) -> Vec<String> {
        let mut v = v;
        T::schema().check(&mut v).err().unwrap_or_default()
    }

    const ID: &str = "67e55044-10b1-426f-9247-bb680e5fe0c8";

    #[test]
    fn create_campaign_schema() {
        assert!(
            errors::<CreateCampaign>(json!({
                "name": "Promo", "phoneNumberId": ID, "templateId": ID,
                "scheduledAt": "2026-12-01T10:00:00Z", "variables": {"1": "{{firstName}}"}
            }))
            .is_empty()
        );
        let e = errors::<CreateCampaign>(json!({"name": "P", "variables": [], "x": 1}));
        assert_eq!(
            e,
            vec![
                "property x should not exist",
                "name must be longer than or equal to 2 characters",
                "phoneNumberId must be a UUID",
                "templateId must be a UUID",
                "variables must be an object",
            ]
        );
        let e = errors::<CreateCampaign>(json!({}));
        assert!(e.contains(&"name must be a string".to_owned()), "{e:?}");
        assert!(e.contains(&"name must be shorter than or equal to 200 characters".to_owned()));
        let body: CreateCampaign = crate::validate::parse_value(
            CreateCampaign::schema(),
            json!({"name": "Promo", "phoneNumberId": ID, "templateId": ID, "scheduledAt": "2026-12-01"}),
        )
        .unwrap();
        assert_eq!(
            body.scheduled_at.unwrap().to_string(),
            "2026-12-01T00:00:00.000Z"
        );
    }

    #[test]
    fn audience_schema_and_source() {
        let e = errors::<Audience>(json!({
            "contactIds": ["nope"], "tag": "x".repeat(61), "all": "yes", "lifecycleStageId": 1
        }));
        assert_eq!(
            e,
            vec![
                "each value in contactIds must be a UUID",
                "lifecycleStageId must be a UUID",
                "tag must be shorter than or equal to 60 characters",
                "all must be a boolean value",
            ]
        );
        let too_many: Vec<&str> = vec![ID; MAX_CONTACT_IDS + 1];
        assert_eq!(
            errors::<Audience>(json!({ "contactIds": too_many })),
            vec!["contactIds must contain no more than 20000 elements"]
        );

        let id = Uuid::parse_str(ID).unwrap();
        let a = |v: Value| -> Audience { serde_json::from_value(v).unwrap() };
        assert_eq!(
            audience_source(&a(json!({"contactIds": [ID]}))),
            Ok(AudienceSource::Contacts(vec![id]))
        );
        assert_eq!(
            audience_source(&a(json!({"lifecycleStageId": ID}))),
            Ok(AudienceSource::Stage(id))
        );
        assert_eq!(
            audience_source(&a(json!({"tag": "vip"}))),
            Ok(AudienceSource::Tag("vip".into()))
        );
        assert_eq!(
            audience_source(&a(json!({"all": true}))),
            Ok(AudienceSource::All)
        );
        assert_eq!(
            audience_source(&a(json!({"all": false, "tag": "vip"}))),
            Ok(AudienceSource::Tag("vip".into()))
        );
        for bad in [
            json!({}),
            json!({"all": false}),
            json!({"all": true, "tag": "vip"}),
            json!({"contactIds": [], "lifecycleStageId": ID}),
        ] {
            assert_eq!(
                audience_source(&a(bad)),
                Err(AUDIENCE_SOURCE_MESSAGE.to_owned())
            );
        }
    }

    #[test]
    fn send_and_query_schemas() {
        assert!(errors::<SendCampaign>(json!({})).is_empty());
        assert_eq!(
            errors::<SendCampaign>(json!({
                "when": "later", "scheduledAt": "mañana", "batchSize": 9, "batchIntervalMin": 1441
            })),
            vec![
                "when must be one of the following values: now, scheduled, staggered",
                "scheduledAt must be a valid ISO 8601 date string",
                "batchSize must not be less than 10",
                "batchIntervalMin must not be greater than 1440",
            ]
        );
        assert_eq!(
            errors::<ListCampaignsQuery>(json!({
                "tab": "old", "category": "SPAM", "phoneNumberId": "x", "q": "x".repeat(101),
                "days": 366, "page": 0, "pageSize": 101
            })),
            vec![
                "page must not be less than 1",
                "pageSize must not be greater than 100",
                "tab must be one of the following values: all, sending, scheduled, drafts, errors, finished",
                "category must be one of the following values: MARKETING, UTILITY, AUTHENTICATION",
                "phoneNumberId must be a UUID",
                "q must be shorter than or equal to 100 characters",
                "days must not be greater than 365",
            ]
        );
        let q = ListCampaignsQuery::schema().query_value(&[
            ("days".to_owned(), "30".to_owned()),
            ("tab".to_owned(), "sending".to_owned()),
        ]);
        let q: ListCampaignsQuery =
            crate::validate::parse_value(ListCampaignsQuery::schema(), q).unwrap();
        assert_eq!(q.days, Some(30));
        assert_eq!(
            errors::<RecipientsQuery>(json!({"filter": "sent", "page": 2})),
            vec![
                "filter must be one of the following values: all, delivered, read, replied, failed, pending"
            ]
        );
    }

    #[test]
    fn operator_schemas() {
        assert!(
            errors::<CreatePhoneNumber>(
                json!({"numberE164": "+52 55 1234 5678", "displayName": "Ventas"})
            )
            .is_empty()
        );
        assert_eq!(
            errors::<CreatePhoneNumber>(
                json!({"numberE164": "5512345678", "displayName": "", "qualityRating": "BLUE"})
            ),
            vec![
                "numberE164 must be a phone number in international format (+ followed by 6 to 15 digits)",
                "displayName must be longer than or equal to 1 characters",
                "qualityRating must be one of the following values: GREEN, YELLOW, RED",
            ]
        );
        assert_eq!(
            errors::<CreateTemplate>(json!({
                "name": "t", "category": "PROMO", "language": "e", "bodyText": "x".repeat(1025),
                "status": "DRAFT"
            })),
            vec![
                "category must be one of the following values: MARKETING, UTILITY, AUTHENTICATION",
                "language must be longer than or equal to 2 characters",
                "bodyText must be shorter than or equal to 1024 characters",
                "status must be one of the following values: APPROVED, PENDING, REJECTED, PAUSED, DISABLED, IN_APPEAL, PENDING_DELETION, DELETED, LIMIT_EXCEEDED",
            ]
        );
        assert!(errors::<TopUp>(json!({"amount": 0.000001})).is_empty());
        assert_eq!(
            errors::<TopUp>(json!({"amount": 0})),
            vec!["amount must not be less than 0.000001"]
        );
        assert_eq!(
            errors::<TopUp>(json!({"amount": 1e10})),
            vec!["amount must not be greater than 1000000000"]
        );
        assert_eq!(
            errors::<TopUp>(json!({"amount": "5"})),
            vec![
                "amount must not be less than 0.000001",
                "amount must not be greater than 1000000000",
                "amount must be a number conforming to the specified constraints",
            ]
        );
        assert_eq!(
            errors::<ProviderEvent>(json!({
                "providerMessageId": "", "status": "SENT", "error": "x".repeat(501)
            })),
            vec![
                "providerMessageId must be longer than or equal to 1 characters",
                "status must be one of the following values: DELIVERED, READ, FAILED",
                "error must be shorter than or equal to 500 characters",
            ]
        );
        assert!(
            errors::<Inbound>(
                json!({"channelType": "MESSAGING_APP_A", "externalId": "5215512345678"})
            )
            .is_empty()
        );
        assert_eq!(
            errors::<Inbound>(json!({
                "channelType": "FAX", "externalId": "  ", "fullName": "x".repeat(161)
            })),
            vec![
                format!(
                    "channelType must be one of the following values: {}",
                    ChannelType::wire_values().join(", ")
                ),
                "externalId should not be empty".to_owned(),
                "fullName must be shorter than or equal to 160 characters".to_owned(),
            ]
        );
    }

    pub(super) fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap()
    }

    fn body(
        when: Option<&str>,
        at_secs: Option<i64>,
        size: Option<u32>,
        every: Option<u32>,
    ) -> SendCampaign {
        SendCampaign {
            when: when.map(|w| serde_json::from_value(serde_json::json!(w)).unwrap()),
            scheduled_at: at_secs.map(|s| Timestamp(now() + Duration::seconds(s))),
            batch_size: size,
            batch_interval_min: every,
        }
    }

    #[test]
    fn send_plans() {
        let at = |s| now() + Duration::seconds(s);
        assert_eq!(
            send_plan(&body(None, None, None, None), now()),
            Ok(SendPlan::Now)
        );
        assert_eq!(
            send_plan(&body(Some("now"), Some(-5), None, None), now()),
            Ok(SendPlan::Now)
        );
        assert_eq!(
            send_plan(&body(Some("scheduled"), Some(60), None, None), now()),
            Ok(SendPlan::Scheduled { at: at(60) })
        );
        assert_eq!(
            send_plan(&body(Some("scheduled"), Some(59), None, None), now()),
            Err(CampaignError::ScheduleTooSoon)
        );
        assert_eq!(
            send_plan(&body(Some("scheduled"), Some(-3600), None, None), now()),
            Err(CampaignError::ScheduleTooSoon)
        );
        assert_eq!(
            send_plan(&body(Some("scheduled"), None, Some(10), Some(5)), now()),
            Err(CampaignError::MissingSchedule)
        );
        assert_eq!(
            send_plan(&body(Some("staggered"), None, Some(100), Some(15)), now()),
            Ok(SendPlan::Staggered {
                start: None,
                batch_size: 100,
                interval_min: 15
            })
        );
        assert_eq!(
            send_plan(
                &body(Some("staggered"), Some(3600), Some(100), Some(15)),
                now()
            ),
            Ok(SendPlan::Staggered {
                start: Some(at(3600)),
                batch_size: 100,
                interval_min: 15
            })
        );
        assert_eq!(
            send_plan(
                &body(Some("staggered"), Some(30), Some(100), Some(15)),
                now()
            ),
            Err(CampaignError::ScheduleTooSoon)
        );
        assert_eq!(
            send_plan(&body(Some("staggered"), None, Some(100), None), now()),
            Err(CampaignError::MissingBatchSettings)
        );
        assert_eq!(
            send_plan(&body(Some("staggered"), Some(3600), None, Some(5)), now()),
            Err(CampaignError::MissingBatchSettings)
        );
    }
}
