//! Automations (`wm_types::automations`): a row with its definition read back, its labels
//! and its runs of the last 7 days.

use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;
use wm_core::automations::{step_summary, trigger_label};
use wm_types::Timestamp;
use wm_types::automations::{Automation, AutomationRun, RunStep};
use wm_types::campaigns::RecipientContact;

use crate::db::automations::{self, config_of, steps_of};
use crate::db::entities::{automation, automation_run, contact};

const WEEK_MS: i64 = 7 * 86_400_000;

fn view(a: automation::Model, runs7d: u64) -> Automation {
    let steps = steps_of(&a);
    let config = config_of(&a);
    let trigger = a.trigger_type;
    let template_key = wm_core::automations::template_key(a.template_key.as_deref(), &steps);
    Automation {
        id: a.id,
        organization_id: a.organization_id,
        created_by_user_id: a.created_by_user_id,
        name: a.name,
        status: a.status,
        trigger_label: trigger_label(trigger, &config),
        steps_summary: steps.iter().map(step_summary).collect(),
        trigger_type: trigger,
        trigger_config: config,
        steps,
        paused_reason: a.paused_reason,
        failure_count: u32::try_from(a.failure_count).unwrap_or(0),
        last_run_at: a.last_run_at.map(Timestamp::from_millis),
        template_key,
        created_at: Timestamp::from_millis(a.created_at),
        updated_at: Timestamp::from_millis(a.updated_at),
        runs7d,
    }
}

/// Builds wire automations with their runs of the last 7 days, counted for the whole batch
/// in one grouped query.
pub async fn load(
    conn: &impl ConnectionTrait,
    rows: Vec<automation::Model>,
    now: i64,
) -> Result<Vec<Automation>, DbErr> {
    let runs =
        automations::runs_since(conn, rows.iter().map(|a| a.id).collect(), now - WEEK_MS).await?;
    Ok(rows
        .into_iter()
        .map(|a| {
            let n = runs.get(&a.id).copied().unwrap_or(0);
            view(a, n)
        })
        .collect())
}

/// Builds wire runs with their contacts, loaded for the whole batch in one query.
pub async fn load_runs(
    conn: &impl ConnectionTrait,
    rows: Vec<automation_run::Model>,
) -> Result<Vec<AutomationRun>, DbErr> {
    let ids: Vec<Uuid> = rows.iter().filter_map(|r| r.contact_id).collect();
    let contacts = crate::db::by_id::<contact::Entity>(conn, ids, |c| c.id).await?;
    Ok(rows
        .into_iter()
        .map(|r| AutomationRun {
            id: r.id,
            automation_id: r.automation_id,
            contact: r.contact_id.map(|id| {
                let c = contacts.get(&id);
                RecipientContact {
                    id,
                    full_name: c.and_then(|c| c.full_name.clone()),
                    primary_phone: c.and_then(|c| c.primary_phone.clone()),
                }
            }),
            result: r.result,
            steps: crate::db::stored::json::<Vec<RunStep>>(
                "automation_runs.steps_log",
                r.id,
                &r.steps_log,
            ),
            error: r.error,
            started_at: Timestamp::from_millis(r.started_at),
            finished_at: r.finished_at.map(Timestamp::from_millis),
        })
        .collect())
}
