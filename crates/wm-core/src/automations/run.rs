//! How a run executes, decided here and carried out by the worker: what a step asks for, what
//! each outcome writes to the run's log and whether the run goes on, waits or ends, and what
//! the end does to the automation's streak of failures.

use wm_types::automations::{Step, StepKind, StepType};

use super::{ContactFacts, FAILURES_TO_PAUSE, condition_holds};

/// How a run stands; the stored `result` (and the words of `GET /automations/{id}/logs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunResult {
    /// Waiting on a WAIT step (or not started yet).
    Waiting,
    /// Ran every step.
    Completed,
    /// Stopped by a condition that did not hold.
    Condition,
    /// Not applicable (an opted-out contact, an automation no longer active).
    Skipped,
    /// A step failed.
    Failed,
}

impl RunResult {
    /// The stored word.
    pub fn as_str(self) -> &'static str {
        match self {
            RunResult::Waiting => "waiting",
            RunResult::Completed => "completed",
            RunResult::Condition => "condition",
            RunResult::Skipped => "skipped",
            RunResult::Failed => "failed",
        }
    }

    /// What a finished run with this result does to the automation's consecutive failures:
    /// a failure counts, a run that did its job resets the streak, a skip leaves it.
    pub fn streak(self) -> Streak {
        match self {
            RunResult::Failed => Streak::Increment,
            RunResult::Completed | RunResult::Condition => Streak::Reset,
            RunResult::Waiting | RunResult::Skipped => Streak::Keep,
        }
    }
}

/// The effect of a finished run on the automation's failure count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streak {
    /// One more consecutive failure.
    Increment,
    /// Back to zero.
    Reset,
    /// Unchanged.
    Keep,
}

/// The `pausedReason` of an automation paused by its failures.
pub fn paused_reason(last_error: &str) -> String {
    format!("Paused after {FAILURES_TO_PAUSE} consecutive failed runs; last error: {last_error}")
}

/// What the worker must carry out for one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepPlan {
    /// A WAIT of this many minutes.
    Wait {
        /// Minutes to wait.
        minutes: i64,
    },
    /// A condition; the worker evaluates it with [`holds`] on fresh contact facts, since an
    /// earlier step of the same run may have changed them.
    Condition,
    /// Add a tag to the contact.
    AddTag(String),
    /// Move the contact to the lifecycle stage of this name.
    SetStage(String),
    /// Send the APPROVED template of this name (charged like a campaign message).
    SendTemplate(String),
    /// A step the engine cannot run (a kind that does not fit its type).
    Unsupported,
}

/// What a step asks for.
pub fn plan(step: &Step) -> StepPlan {
    let text = || {
        step.config
            .value
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    match (step.step_type, step.config.kind) {
        (StepType::Wait, _) => StepPlan::Wait {
            minutes: step.config.value.as_i64().unwrap_or(0),
        },
        (StepType::Condition, _) => StepPlan::Condition,
        (StepType::Action, StepKind::AddTag) => StepPlan::AddTag(text()),
        (StepType::Action, StepKind::SetStage) => StepPlan::SetStage(text()),
        (StepType::Action, StepKind::SendTemplate) => StepPlan::SendTemplate(text()),
        _ => StepPlan::Unsupported,
    }
}

/// Whether a condition step holds for the contact (none: it never does).
pub fn holds(step: &Step, facts: Option<&ContactFacts>) -> bool {
    facts.is_some_and(|f| condition_holds(step, f))
}

/// What carrying out a step gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    /// The wait was scheduled.
    Waited {
        /// Minutes waited.
        minutes: i64,
    },
    /// The condition was evaluated.
    Checked(bool),
    /// The action was done, with a detail for the log.
    Done(Option<String>),
    /// A template was sent at this price; the detail names it and the platform's message.
    Sent {
        /// For the log.
        detail: String,
        /// What the wallet was charged, in micro-units.
        price_micros: i64,
    },
    /// The step does not apply to this contact (opted out, no consent); the run ends skipped.
    Skipped(String),
    /// The step failed with this error.
    Failed(String),
}

/// Where the run goes after a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Then {
    /// The next step.
    Continue,
    /// Stop here and resume with the next step after this many milliseconds.
    ResumeAfter(i64),
    /// End the run with this result and error.
    End(RunResult, Option<String>),
}

/// What a step's outcome writes to the log (`outcome`, `detail`) and where the run goes.
pub fn after(outcome: StepOutcome) -> (&'static str, Option<String>, Then) {
    match outcome {
        StepOutcome::Waited { minutes } => (
            "waiting",
            Some(format!("{minutes} minutes")),
            Then::ResumeAfter(minutes.saturating_mul(60_000)),
        ),
        StepOutcome::Checked(true) => ("passed", None, Then::Continue),
        StepOutcome::Checked(false) => ("not_met", None, Then::End(RunResult::Condition, None)),
        StepOutcome::Done(detail) => ("done", detail, Then::Continue),
        StepOutcome::Sent { detail, .. } => ("sent", Some(detail), Then::Continue),
        StepOutcome::Skipped(why) => (
            "skipped",
            Some(why.clone()),
            Then::End(RunResult::Skipped, Some(why)),
        ),
        StepOutcome::Failed(why) => (
            "failed",
            Some(why.clone()),
            Then::End(RunResult::Failed, Some(why)),
        ),
    }
}

/// The error of a run whose automation is gone or no longer ACTIVE (it ends skipped).
pub fn not_runnable(status: Option<&str>) -> String {
    match status {
        None => "automation deleted".to_owned(),
        Some(s) => format!("automation is {s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use wm_types::automations::StepConfig;
    use wm_types::enums::ChannelType;

    fn step(t: StepType, k: StepKind, v: Value) -> Step {
        Step {
            step_type: t,
            config: StepConfig { kind: k, value: v },
        }
    }

    #[test]
    fn every_step_type_and_kind_plans_one_thing() {
        use StepKind as K;
        use StepType as T;
        let table = [
            (
                T::Wait,
                K::Minutes,
                json!(30),
                StepPlan::Wait { minutes: 30 },
            ),
            (T::Condition, K::HasTag, json!("vip"), StepPlan::Condition),
            (
                T::Condition,
                K::ChannelIs,
                json!("EMAIL"),
                StepPlan::Condition,
            ),
            (
                T::Action,
                K::AddTag,
                json!(" vip "),
                StepPlan::AddTag("vip".into()),
            ),
            (
                T::Action,
                K::SetStage,
                json!("Customer"),
                StepPlan::SetStage("Customer".into()),
            ),
            (
                T::Action,
                K::SendTemplate,
                json!("welcome"),
                StepPlan::SendTemplate("welcome".into()),
            ),
            (T::Action, K::HasTag, json!("vip"), StepPlan::Unsupported),
            (T::Action, K::Minutes, json!(5), StepPlan::Unsupported),
        ];
        for (t, k, v, want) in table {
            assert_eq!(plan(&step(t, k, v)), want, "{t} {k}");
        }
    }

    #[test]
    fn every_outcome_logs_a_word_and_moves_the_run() {
        let table = [
            (
                StepOutcome::Waited { minutes: 2 },
                "waiting",
                Then::ResumeAfter(120_000),
            ),
            (StepOutcome::Checked(true), "passed", Then::Continue),
            (
                StepOutcome::Checked(false),
                "not_met",
                Then::End(RunResult::Condition, None),
            ),
            (StepOutcome::Done(None), "done", Then::Continue),
            (
                StepOutcome::Sent {
                    detail: "welcome".into(),
                    price_micros: 1,
                },
                "sent",
                Then::Continue,
            ),
            (
                StepOutcome::Skipped("opted out".into()),
                "skipped",
                Then::End(RunResult::Skipped, Some("opted out".into())),
            ),
            (
                StepOutcome::Failed("boom".into()),
                "failed",
                Then::End(RunResult::Failed, Some("boom".into())),
            ),
        ];
        for (outcome, word, then) in table {
            let (logged, _, next) = after(outcome.clone());
            assert_eq!((logged, next), (word, then), "{outcome:?}");
        }
    }

    #[test]
    fn failures_count_completions_reset_skips_keep() {
        let table = [
            (RunResult::Failed, Streak::Increment, "failed"),
            (RunResult::Completed, Streak::Reset, "completed"),
            (RunResult::Condition, Streak::Reset, "condition"),
            (RunResult::Skipped, Streak::Keep, "skipped"),
            (RunResult::Waiting, Streak::Keep, "waiting"),
        ];
        for (r, streak, word) in table {
            assert_eq!((r.streak(), r.as_str()), (streak, word));
        }
        assert_eq!(
            paused_reason("boom"),
            "Paused after 5 consecutive failed runs; last error: boom"
        );
    }

    #[test]
    fn a_condition_without_a_contact_never_holds() {
        let s = step(StepType::Condition, StepKind::HasTag, json!("vip"));
        let facts = ContactFacts {
            channel_types: vec![ChannelType::MessagingAppA],
            tags: vec!["VIP".into()],
        };
        assert!(holds(&s, Some(&facts)));
        assert!(!holds(&s, None));
    }

    #[test]
    fn results_and_outcomes_are_the_documented_words() {
        use wm_types::automations::{RunResult as Documented, StepOutcome as Words};
        let documented = |w: &str| Documented::ALL.iter().any(|d| d.as_str() == w);
        for r in [
            RunResult::Waiting,
            RunResult::Completed,
            RunResult::Condition,
            RunResult::Skipped,
            RunResult::Failed,
        ] {
            assert!(documented(r.as_str()), "{r:?}");
        }
        let outcomes = [
            StepOutcome::Waited { minutes: 1 },
            StepOutcome::Checked(true),
            StepOutcome::Checked(false),
            StepOutcome::Done(None),
            StepOutcome::Sent {
                detail: "x".into(),
                price_micros: 1,
            },
            StepOutcome::Skipped("x".into()),
            StepOutcome::Failed("x".into()),
        ];
        for o in outcomes {
            let (word, ..) = after(o);
            assert!(Words::ALL.iter().any(|d| d.as_str() == word), "{word}");
        }
    }
}
