//! Automation rules: request schemas, the validation of a definition (trigger settings and
//! step kinds), their wording, and the evaluation of conditions; [`run`] decides how a run
//! executes step by step.

use serde_json::{Map, Value};
use wm_types::automations::{
    CreateAutomation, ListAutomationsQuery, LogsQuery, Step, StepKind, StepType, TriggerType,
    UpdateAutomation,
};
use wm_types::enums::ChannelType;

use crate::validate::validated;

pub mod run;

/// Consecutive failed runs that pause an automation.
pub const FAILURES_TO_PAUSE: i32 = 5;
/// Most steps in an automation (declared with the wire type).
pub use wm_types::automations::MAX_STEPS;
/// Longest wait, in minutes (30 days).
pub const MAX_WAIT_MINUTES: i64 = 43_200;

validated!(
    CreateAutomation,
    UpdateAutomation,
    ListAutomationsQuery,
    LogsQuery,
);

/// Checks a trigger's settings and every step (kind fits type, value fits kind).
pub fn check_definition(
    trigger: TriggerType,
    config: &Map<String, Value>,
    steps: &[Step],
) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let stage = config.get("stage").and_then(Value::as_str);
    let days = config.get("days").and_then(Value::as_i64);
    let threshold = config.get("threshold").and_then(Value::as_f64);
    let problem = match trigger {
        TriggerType::LifecycleStageEntered if stage.is_none_or(|s| s.trim().is_empty()) => {
            Some("triggerConfig.stage must be the name of a lifecycle stage")
        }
        TriggerType::NoResponseDays if days.is_none_or(|d| !(1..=365).contains(&d)) => {
            Some("triggerConfig.days must be an integer from 1 to 365")
        }
        TriggerType::WalletLowBalance if threshold.is_none_or(|t| t <= 0.0) => {
            Some("triggerConfig.threshold must be a positive amount")
        }
        _ => None,
    };
    errors.extend(problem.map(str::to_owned));
    for (i, s) in steps.iter().enumerate() {
        let kind = s.config.kind;
        let fits = matches!(
            (s.step_type, kind),
            (StepType::Condition, StepKind::ChannelIs | StepKind::HasTag)
                | (
                    StepType::Action,
                    StepKind::SendTemplate | StepKind::AddTag | StepKind::SetStage
                )
                | (StepType::Wait, StepKind::Minutes)
        );
        if !fits {
            errors.push(format!(
                "steps.{i}.config.kind {kind} does not fit a {} step",
                s.step_type
            ));
            continue;
        }
        let v = &s.config.value;
        let ok = match kind {
            StepKind::ChannelIs => v.as_str().and_then(ChannelType::parse).is_some(),
            StepKind::Minutes => v
                .as_i64()
                .is_some_and(|m| (1..=MAX_WAIT_MINUTES).contains(&m)),
            _ => v
                .as_str()
                .is_some_and(|s| !s.trim().is_empty() && s.chars().count() <= 120),
        };
        if !ok {
            let what = match kind {
                StepKind::ChannelIs => "a channel type",
                StepKind::Minutes => "a number of minutes from 1 to 43200",
                StepKind::HasTag | StepKind::AddTag => "a tag",
                StepKind::SendTemplate => "a template name",
                StepKind::SetStage => "a lifecycle stage name",
                _ => "a known value",
            };
            errors.push(format!("steps.{i}.config.value must be {what}"));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The trigger in words.
pub fn trigger_label(trigger: TriggerType, config: &Map<String, Value>) -> String {
    let get = |k: &str| config.get(k).map(text).unwrap_or_default();
    match trigger {
        TriggerType::LifecycleStageEntered => {
            format!("When a contact enters the stage {}", get("stage"))
        }
        TriggerType::CampaignReplied => "When a contact replies to a campaign".to_owned(),
        TriggerType::NoResponseDays => format!(
            "When a campaign message gets no reply for {} days",
            get("days")
        ),
        TriggerType::WalletLowBalance => {
            format!("When the wallet balance falls below {}", get("threshold"))
        }
        _ => "Unknown trigger".to_owned(),
    }
}

/// A step in words.
pub fn step_summary(step: &Step) -> String {
    let v = text(&step.config.value);
    match step.config.kind {
        StepKind::ChannelIs => format!("If the channel is {v}"),
        StepKind::HasTag => format!("If the contact has the tag {v}"),
        StepKind::SendTemplate => format!("Send the template {v}"),
        StepKind::AddTag => format!("Add the tag {v}"),
        StepKind::SetStage => format!("Move to the stage {v}"),
        StepKind::Minutes => format!("Wait {v} minutes"),
        _ => "Unknown step".to_owned(),
    }
}

/// What a condition looks at.
#[derive(Debug, Clone, Default)]
pub struct ContactFacts {
    /// Channel types the contact has an identity on.
    pub channel_types: Vec<ChannelType>,
    /// Tags (any spelling).
    pub tags: Vec<String>,
}

/// Whether a condition step holds for a contact.
pub fn condition_holds(step: &Step, facts: &ContactFacts) -> bool {
    let v = step.config.value.as_str().unwrap_or_default();
    match step.config.kind {
        StepKind::ChannelIs => {
            ChannelType::parse(v).is_some_and(|c| facts.channel_types.contains(&c))
        }
        StepKind::HasTag => facts
            .tags
            .iter()
            .any(|t| crate::tags::tag_key(t) == crate::tags::tag_key(v)),
        _ => false,
    }
}

/// The automation's `templateKey` (always a string): the one the operator gave, else the
/// template name of its first SEND_TEMPLATE step, else `""` for a flow that sends none.
pub fn template_key(given: Option<&str>, steps: &[Step]) -> String {
    if let Some(k) = given.map(str::trim).filter(|k| !k.is_empty()) {
        return k.to_owned();
    }
    steps
        .iter()
        .find(|s| s.step_type == StepType::Action && s.config.kind == StepKind::SendTemplate)
        .and_then(|s| s.config.value.as_str())
        .map(|v| v.trim().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn template_key_is_given_or_the_first_template_sent() {
        let steps = vec![
            step(StepType::Action, StepKind::AddTag, json!("vip")),
            step(StepType::Action, StepKind::SendTemplate, json!("welcome")),
            step(StepType::Action, StepKind::SendTemplate, json!("later")),
        ];
        assert_eq!(template_key(Some("promo"), &steps), "promo");
        assert_eq!(template_key(None, &steps), "welcome");
        assert_eq!(template_key(Some("  "), &steps), "welcome");
        assert_eq!(template_key(None, &steps[..1]), "");
    }

    fn step(t: StepType, k: StepKind, v: Value) -> Step {
        Step {
            step_type: t,
            config: wm_types::automations::StepConfig { kind: k, value: v },
        }
    }

    #[test]
    fn definitions_are_checked() {
        let good = vec![
            step(
                StepType::Condition,
                StepKind::ChannelIs,
                json!("MESSAGING_APP_A"),
            ),
            step(StepType::Wait, StepKind::Minutes, json!(30)),
            step(StepType::Action, StepKind::SendTemplate, json!("welcome")),
        ];
        let cfg: Map<String, Value> = json!({"stage": "Customer"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(check_definition(TriggerType::LifecycleStageEntered, &cfg, &good).is_ok());
        let bad = vec![
            step(StepType::Condition, StepKind::SendTemplate, json!("x")),
            step(StepType::Wait, StepKind::Minutes, json!(0)),
            step(StepType::Condition, StepKind::ChannelIs, json!("FAX")),
        ];
        let e = check_definition(TriggerType::NoResponseDays, &Map::new(), &bad).unwrap_err();
        assert_eq!(e.len(), 4, "{e:?}");
        assert!(e[0].starts_with("triggerConfig.days"));
    }

    #[test]
    fn wording_and_conditions() {
        let cfg: Map<String, Value> = json!({"stage": "Customer"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            trigger_label(TriggerType::LifecycleStageEntered, &cfg),
            "When a contact enters the stage Customer"
        );
        let s = step(StepType::Condition, StepKind::HasTag, json!("VIP"));
        assert_eq!(step_summary(&s), "If the contact has the tag VIP");
        assert!(condition_holds(
            &s,
            &ContactFacts {
                channel_types: vec![],
                tags: vec!["vip".into()]
            }
        ));
        let c = step(StepType::Condition, StepKind::ChannelIs, json!("EMAIL"));
        assert!(!condition_holds(
            &c,
            &ContactFacts {
                channel_types: vec![ChannelType::MessagingAppA],
                tags: vec![]
            }
        ));
        assert_eq!(
            step_summary(&step(StepType::Wait, StepKind::Minutes, json!(30))),
            "Wait 30 minutes"
        );
    }
}
