//! Campaign rules: the validation schemas of the campaign, wallet and operator bodies, the
//! audience source, the send plan, and the campaign state machine as one pure function.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;
use wm_types::campaigns::{
    Audience, CampaignStatus, CreateCampaign, CreatePhoneNumber, CreateTemplate, Inbound,
    ListCampaignsQuery, ProviderEvent, RecipientsQuery, STOP_INSUFFICIENT_BALANCE, SendCampaign,
    SendWhen, TopUp, UpdatePhoneNumber,
};
use wm_types::enums::ErrorCode;

use crate::validate::validated;

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

/// How a send goes out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendPlan {
    /// Everything now, in one batch.
    Now,
    /// Everything at a later time.
    Scheduled {
        /// When.
        at: DateTime<Utc>,
    },
    /// Batches of `batch_size` every `interval_min` minutes.
    Staggered {
        /// When the first batch goes out (`None`: now).
        start: Option<DateTime<Utc>>,
        /// Recipients per batch.
        batch_size: u32,
        /// Minutes between batches.
        interval_min: u32,
    },
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

/// What happens to a campaign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `POST /campaigns/{id}/send`.
    Send(SendPlan),
    /// `POST /campaigns/{id}/pause`.
    Pause,
    /// `POST /campaigns/{id}/resume`.
    Resume,
    /// The worker reaches a scheduled campaign's start time.
    StartScheduled,
    /// The worker cannot charge the next batch.
    BalanceShort,
    /// Every recipient has been processed.
    AllProcessed,
    /// The platform refuses this campaign's messages until someone acts (an expired token,
    /// a locked account, a paused template): the stop reason.
    PlatformBlocked(String),
}

/// What the server read before deciding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Recipients of the campaign.
    pub recipients: u64,
    /// Template positions the campaign's variables do not cover.
    pub missing_variables: Vec<String>,
    /// Whether the wallet balance covers the next batch (the whole audience for `now`).
    pub balance_covers_next_batch: bool,
    /// The campaign's current stop reason (informative; no rule depends on it).
    pub stop_reason: Option<String>,
}

/// The outcome of an allowed action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The new status.
    pub to: CampaignStatus,
    /// Some(None) clears stopReason, Some(Some(r)) sets it, None leaves it.
    pub stop_reason: Option<Option<String>>,
    /// Whether a batch must be charged and sent now.
    pub send_batch_now: bool,
}

/// Why an action was refused (all answer 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub enum CampaignError {
    /// Only drafts and scheduled campaigns can be sent (or the action does not apply).
    InvalidState,
    /// The wallet does not cover the batch; the campaign is unchanged.
    InsufficientBalance,
    /// The campaign has no recipients.
    NoRecipients,
    /// Template positions without a source.
    VariablesRequired {
        /// The positions (`["1", "3"]`).
        missing: Vec<String>,
    },
    /// scheduledAt is less than a minute ahead.
    ScheduleTooSoon,
    /// `when=scheduled` without scheduledAt.
    MissingSchedule,
    /// `when=staggered` without batchSize or batchIntervalMin.
    MissingBatchSettings,
    /// Pause of a campaign that is not sending.
    NotSending,
    /// Resume of a campaign that is not paused.
    NotPaused,
}

impl CampaignError {
    /// The message for a person (the spec's Spanish texts where it gives them).
    pub fn message(&self) -> String {
        match self {
            CampaignError::InvalidState => {
                "La campaña ya fue enviada o está en un estado inválido.".to_owned()
            }
            CampaignError::InsufficientBalance => "Saldo insuficiente en la wallet.".to_owned(),
            CampaignError::NoRecipients => "La campaña no tiene destinatarios.".to_owned(),
            CampaignError::VariablesRequired { missing } => format!(
                "The template has variables without a value in the campaign's variables: {}",
                missing
                    .iter()
                    .map(|p| format!("{{{{{p}}}}}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            CampaignError::ScheduleTooSoon => {
                "scheduledAt must be at least one minute in the future".to_owned()
            }
            CampaignError::MissingSchedule => {
                "scheduledAt is required when when=scheduled".to_owned()
            }
            CampaignError::MissingBatchSettings => {
                "batchSize and batchIntervalMin are required when when=staggered".to_owned()
            }
            CampaignError::NotSending => {
                "Only a campaign that is sending can be paused.".to_owned()
            }
            CampaignError::NotPaused => "Only a paused campaign can be resumed.".to_owned(),
        }
    }

    /// The stable code, for the errors callers must tell apart.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            CampaignError::VariablesRequired { .. } => Some(ErrorCode::CampaignVariablesRequired),
            _ => None,
        }
    }
}

fn to(status: CampaignStatus, stop_reason: Option<Option<String>>, send: bool) -> Transition {
    Transition {
        to: status,
        stop_reason,
        send_batch_now: send,
    }
}

fn balance_pause() -> Option<Option<String>> {
    Some(Some(STOP_INSUFFICIENT_BALANCE.to_owned()))
}

fn send(plan: &SendPlan, facts: &Facts) -> Result<Transition, CampaignError> {
    if facts.recipients == 0 {
        return Err(CampaignError::NoRecipients);
    }
    if !facts.missing_variables.is_empty() {
        return Err(CampaignError::VariablesRequired {
            missing: facts.missing_variables.clone(),
        });
    }
    match plan {
        SendPlan::Now | SendPlan::Staggered { start: None, .. } => {
            if facts.balance_covers_next_batch {
                Ok(to(CampaignStatus::Sending, Some(None), true))
            } else {
                Err(CampaignError::InsufficientBalance)
            }
        }
        SendPlan::Scheduled { .. } | SendPlan::Staggered { start: Some(_), .. } => {
            Ok(to(CampaignStatus::Scheduled, Some(None), false))
        }
    }
}

/// The campaign state machine: what `action` does to a campaign in `state`, given `facts`.
///
/// | action | from | to |
/// |---|---|---|
/// | Send(now / staggered without start) | DRAFT, SCHEDULED | SENDING, stopReason null, batch now (balance must cover it) |
/// | Send(scheduled / staggered with start) | DRAFT, SCHEDULED | SCHEDULED, stopReason null |
/// | StartScheduled | SCHEDULED | SENDING, batch now; PAUSED (INSUFFICIENT_BALANCE) if not covered |
/// | Pause | SENDING | PAUSED, stopReason null |
/// | Resume | PAUSED | SENDING, stopReason null, batch now (balance must cover it) |
/// | BalanceShort | SENDING | PAUSED (INSUFFICIENT_BALANCE) |
/// | AllProcessed | SENDING | COMPLETED |
/// | PlatformBlocked(reason) | SENDING, SCHEDULED | PAUSED (reason) |
///
/// Sends check, in order: state, recipients, variables, balance.
pub fn transition(
    state: CampaignStatus,
    action: &Action,
    facts: &Facts,
) -> Result<Transition, CampaignError> {
    use CampaignStatus as S;
    match (state, action) {
        (S::Draft | S::Scheduled, Action::Send(plan)) => send(plan, facts),
        (S::Scheduled, Action::StartScheduled) => Ok(if facts.balance_covers_next_batch {
            to(S::Sending, None, true)
        } else {
            to(S::Paused, balance_pause(), false)
        }),
        (S::Sending, Action::Pause) => Ok(to(S::Paused, Some(None), false)),
        (_, Action::Pause) => Err(CampaignError::NotSending),
        (S::Paused, Action::Resume) => {
            if facts.balance_covers_next_batch {
                Ok(to(S::Sending, Some(None), true))
            } else {
                Err(CampaignError::InsufficientBalance)
            }
        }
        (_, Action::Resume) => Err(CampaignError::NotPaused),
        (S::Sending, Action::BalanceShort) => Ok(to(S::Paused, balance_pause(), false)),
        (S::Sending, Action::AllProcessed) => Ok(to(S::Completed, None, false)),
        (S::Sending | S::Scheduled, Action::PlatformBlocked(reason)) => {
            Ok(to(S::Paused, Some(Some(reason.clone())), false))
        }
        _ => Err(CampaignError::InvalidState),
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

    fn now() -> DateTime<Utc> {
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

    fn ok_facts() -> Facts {
        Facts {
            recipients: 3,
            missing_variables: vec![],
            balance_covers_next_batch: true,
            stop_reason: None,
        }
    }

    fn actions() -> Vec<Action> {
        let t = now() + Duration::hours(1);
        vec![
            Action::Send(SendPlan::Now),
            Action::Send(SendPlan::Scheduled { at: t }),
            Action::Send(SendPlan::Staggered {
                start: None,
                batch_size: 10,
                interval_min: 5,
            }),
            Action::Send(SendPlan::Staggered {
                start: Some(t),
                batch_size: 10,
                interval_min: 5,
            }),
            Action::Pause,
            Action::Resume,
            Action::StartScheduled,
            Action::BalanceShort,
            Action::AllProcessed,
            Action::PlatformBlocked("TEMPLATE_PAUSED".into()),
        ]
    }

    /// Compact expectation: `>STATUS` with `!` when a batch goes now, `~` when stopReason
    /// is cleared, `$` when it is set to INSUFFICIENT_BALANCE; or an error name.
    fn outcome(r: Result<Transition, CampaignError>) -> String {
        match r {
            Ok(t) => format!(
                ">{}{}{}",
                t.to,
                if t.send_batch_now { "!" } else { "" },
                match t.stop_reason {
                    None => "",
                    Some(None) => "~",
                    Some(Some(ref r)) if r == STOP_INSUFFICIENT_BALANCE => "$",
                    Some(Some(ref r)) if r == "TEMPLATE_PAUSED" => "#",
                    Some(Some(_)) => "?",
                }
            ),
            Err(e) => format!("{e:?}"),
        }
    }

    #[test]
    fn every_state_and_action_with_all_facts_in_order() {
        #[rustfmt::skip]
        let table: [(CampaignStatus, [&str; 10]); 5] = [
            //                          Send now        Send sched.     Send stag. now  Send stag. at   Pause           Resume          StartScheduled  BalanceShort    AllProcessed    PlatformBlocked
            (CampaignStatus::Draft,     [">SENDING!~",   ">SCHEDULED~",  ">SENDING!~",   ">SCHEDULED~",   "NotSending",   "NotPaused",    "InvalidState", "InvalidState", "InvalidState", "InvalidState"]),
            (CampaignStatus::Scheduled, [">SENDING!~",   ">SCHEDULED~",  ">SENDING!~",   ">SCHEDULED~",   "NotSending",   "NotPaused",    ">SENDING!",    "InvalidState", "InvalidState", ">PAUSED#"]),
            (CampaignStatus::Sending,   ["InvalidState", "InvalidState", "InvalidState", "InvalidState", ">PAUSED~",     "NotPaused",    "InvalidState", ">PAUSED$",     ">COMPLETED",   ">PAUSED#"]),
            (CampaignStatus::Paused,    ["InvalidState", "InvalidState", "InvalidState", "InvalidState", "NotSending",   ">SENDING!~",   "InvalidState", "InvalidState", "InvalidState", "InvalidState"]),
            (CampaignStatus::Completed, ["InvalidState", "InvalidState", "InvalidState", "InvalidState", "NotSending",   "NotPaused",    "InvalidState", "InvalidState", "InvalidState", "InvalidState"]),
        ];
        assert_eq!(
            table.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            CampaignStatus::ALL.to_vec()
        );
        for (state, expected) in table {
            for (action, want) in actions().iter().zip(expected) {
                let got = outcome(transition(state, action, &ok_facts()));
                assert_eq!(got, want, "{state} {action:?}");
            }
        }
    }

    #[test]
    fn every_state_and_action_without_balance() {
        let facts = Facts {
            balance_covers_next_batch: false,
            ..ok_facts()
        };
        #[rustfmt::skip]
        let table: [(CampaignStatus, [&str; 9]); 5] = [
            //                          Send now               Send sched.     Send stag. now         Send stag. at   Pause         Resume                 StartScheduled  BalanceShort    AllProcessed
            (CampaignStatus::Draft,     ["InsufficientBalance", ">SCHEDULED~",  "InsufficientBalance", ">SCHEDULED~",   "NotSending", "NotPaused",           "InvalidState", "InvalidState", "InvalidState"]),
            (CampaignStatus::Scheduled, ["InsufficientBalance", ">SCHEDULED~",  "InsufficientBalance", ">SCHEDULED~",   "NotSending", "NotPaused",           ">PAUSED$",     "InvalidState", "InvalidState"]),
            (CampaignStatus::Sending,   ["InvalidState",        "InvalidState", "InvalidState",        "InvalidState", ">PAUSED~",   "NotPaused",           "InvalidState", ">PAUSED$",     ">COMPLETED"]),
            (CampaignStatus::Paused,    ["InvalidState",        "InvalidState", "InvalidState",        "InvalidState", "NotSending", "InsufficientBalance", "InvalidState", "InvalidState", "InvalidState"]),
            (CampaignStatus::Completed, ["InvalidState",        "InvalidState", "InvalidState",        "InvalidState", "NotSending", "NotPaused",           "InvalidState", "InvalidState", "InvalidState"]),
        ];
        for (state, expected) in table {
            for (action, want) in actions().iter().zip(expected) {
                let got = outcome(transition(state, action, &facts));
                assert_eq!(got, want, "{state} {action:?}");
            }
        }
    }

    #[test]
    fn send_checks_state_then_recipients_then_variables_then_balance() {
        let send_now = Action::Send(SendPlan::Now);
        let all_wrong = Facts {
            recipients: 0,
            missing_variables: vec!["1".into(), "3".into()],
            balance_covers_next_batch: false,
            stop_reason: None,
        };
        assert_eq!(
            transition(CampaignStatus::Completed, &send_now, &all_wrong),
            Err(CampaignError::InvalidState)
        );
        assert_eq!(
            transition(CampaignStatus::Draft, &send_now, &all_wrong),
            Err(CampaignError::NoRecipients)
        );
        let with_recipients = Facts {
            recipients: 1,
            ..all_wrong.clone()
        };
        let err = transition(CampaignStatus::Draft, &send_now, &with_recipients).unwrap_err();
        assert_eq!(
            err,
            CampaignError::VariablesRequired {
                missing: vec!["1".into(), "3".into()]
            }
        );
        // Scheduling also needs recipients and variables, but not balance yet.
        let later = Action::Send(SendPlan::Scheduled {
            at: now() + Duration::hours(1),
        });
        assert_eq!(
            transition(CampaignStatus::Scheduled, &later, &with_recipients),
            Err(err)
        );
        assert_eq!(
            transition(CampaignStatus::Draft, &later, &all_wrong),
            Err(CampaignError::NoRecipients)
        );
        // An unknown status never moves.
        for action in actions() {
            let r = transition(CampaignStatus::Unknown, &action, &ok_facts());
            assert!(r.is_err(), "{action:?}");
        }
    }

    #[test]
    fn errors_have_the_spec_texts_and_codes() {
        let all = [
            CampaignError::InvalidState,
            CampaignError::InsufficientBalance,
            CampaignError::NoRecipients,
            CampaignError::VariablesRequired {
                missing: vec!["1".into(), "2".into()],
            },
            CampaignError::ScheduleTooSoon,
            CampaignError::MissingSchedule,
            CampaignError::MissingBatchSettings,
            CampaignError::NotSending,
            CampaignError::NotPaused,
        ];
        let messages: Vec<String> = all.iter().map(CampaignError::message).collect();
        assert_eq!(
            messages,
            vec![
                "La campaña ya fue enviada o está en un estado inválido.",
                "Saldo insuficiente en la wallet.",
                "La campaña no tiene destinatarios.",
                "The template has variables without a value in the campaign's variables: {{1}}, {{2}}",
                "scheduledAt must be at least one minute in the future",
                "scheduledAt is required when when=scheduled",
                "batchSize and batchIntervalMin are required when when=staggered",
                "Only a campaign that is sending can be paused.",
                "Only a paused campaign can be resumed.",
            ]
        );
        let codes: Vec<_> = all.iter().map(CampaignError::code).collect();
        assert_eq!(
            codes,
            vec![
                None,
                None,
                None,
                Some(ErrorCode::CampaignVariablesRequired),
                None,
                None,
                None,
                None,
                None
            ]
        );
        assert_eq!(
            CampaignError::NoRecipients.to_string(),
            "La campaña no tiene destinatarios."
        );
    }
}
