//! The campaign state machine: what an action does to a campaign in a state, given the
//! facts the shell gathered (recipients, variables, balance). Every status and stop reason
//! the server writes comes from here.

use wm_types::campaigns::{CampaignStatus, STOP_INSUFFICIENT_BALANCE};
use wm_types::enums::ErrorCode;

use chrono::{DateTime, Utc};

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
    /// The worker reaches a staggered campaign's next batch.
    NextBatch,
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
/// | NextBatch | SENDING | SENDING, batch now; PAUSED (INSUFFICIENT_BALANCE) if not covered |
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
        (S::Sending, Action::NextBatch) => Ok(if facts.balance_covers_next_batch {
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
    use super::super::tests::now;
    use super::*;
    use chrono::Duration;

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
            Action::NextBatch,
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
        let table: [(CampaignStatus, [&str; 11]); 5] = [
            //                          Send now        Send sched.     Send stag. now  Send stag. at   Pause           Resume          StartScheduled  BalanceShort    AllProcessed    PlatformBlocked NextBatch
            (CampaignStatus::Draft,     [">SENDING!~",   ">SCHEDULED~",  ">SENDING!~",   ">SCHEDULED~",   "NotSending",   "NotPaused",    "InvalidState", "InvalidState", "InvalidState", "InvalidState", "InvalidState"]),
            (CampaignStatus::Scheduled, [">SENDING!~",   ">SCHEDULED~",  ">SENDING!~",   ">SCHEDULED~",   "NotSending",   "NotPaused",    ">SENDING!",    "InvalidState", "InvalidState", ">PAUSED#",     "InvalidState"]),
            (CampaignStatus::Sending,   ["InvalidState", "InvalidState", "InvalidState", "InvalidState", ">PAUSED~",     "NotPaused",    "InvalidState", ">PAUSED$",     ">COMPLETED",   ">PAUSED#",     ">SENDING!"]),
            (CampaignStatus::Paused,    ["InvalidState", "InvalidState", "InvalidState", "InvalidState", "NotSending",   ">SENDING!~",   "InvalidState", "InvalidState", "InvalidState", "InvalidState", "InvalidState"]),
            (CampaignStatus::Completed, ["InvalidState", "InvalidState", "InvalidState", "InvalidState", "NotSending",   "NotPaused",    "InvalidState", "InvalidState", "InvalidState", "InvalidState", "InvalidState"]),
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
        let table: [(CampaignStatus, [&str; 11]); 5] = [
            //                          Send now               Send sched.     Send stag. now         Send stag. at   Pause         Resume                 StartScheduled  BalanceShort    AllProcessed    PlatformBlocked NextBatch
            (CampaignStatus::Draft,     ["InsufficientBalance", ">SCHEDULED~",  "InsufficientBalance", ">SCHEDULED~",   "NotSending", "NotPaused",           "InvalidState", "InvalidState", "InvalidState", "InvalidState", "InvalidState"]),
            (CampaignStatus::Scheduled, ["InsufficientBalance", ">SCHEDULED~",  "InsufficientBalance", ">SCHEDULED~",   "NotSending", "NotPaused",           ">PAUSED$",     "InvalidState", "InvalidState", ">PAUSED#",     "InvalidState"]),
            (CampaignStatus::Sending,   ["InvalidState",        "InvalidState", "InvalidState",        "InvalidState", ">PAUSED~",   "NotPaused",           "InvalidState", ">PAUSED$",     ">COMPLETED",   ">PAUSED#",     ">PAUSED$"]),
            (CampaignStatus::Paused,    ["InvalidState",        "InvalidState", "InvalidState",        "InvalidState", "NotSending", "InsufficientBalance", "InvalidState", "InvalidState", "InvalidState", "InvalidState", "InvalidState"]),
            (CampaignStatus::Completed, ["InvalidState",        "InvalidState", "InvalidState",        "InvalidState", "NotSending", "NotPaused",           "InvalidState", "InvalidState", "InvalidState", "InvalidState", "InvalidState"]),
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
