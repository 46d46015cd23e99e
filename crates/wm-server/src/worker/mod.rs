//! Background workers. Each claims its work in the database (so replicas can run side by
//! side and a restart loses nothing) and exposes `run_once()` so tests drive it
//! deterministically; `spawn_all` runs them until the cancellation token fires.

pub mod automations;
pub mod campaigns;
pub mod counts;
pub mod dispatch;
pub mod imports;
pub mod media;
pub mod platform;
pub mod poll;
pub mod profiles;
pub mod queue;
pub mod replies;
pub mod webhooks;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::state::AppState;

/// Starts every worker, and the collector of the database gauges of
/// [`crate::observe::metrics`].
pub fn spawn_all(
    state: &AppState,
    cancel: CancellationToken,
) -> anyhow::Result<Vec<JoinHandle<()>>> {
    let hooks = webhooks::WebhookWorker::new(state.clone())?;
    let campaigns = campaigns::CampaignWorker::new(state.clone());
    let automations = automations::AutomationWorker::new(state.clone());
    let imports = imports::ImportWorker::new(state.clone());
    Ok(vec![
        tokio::spawn(automations.run(cancel.clone())),
        tokio::spawn(imports.run(cancel.clone())),
        tokio::spawn(hooks.run(cancel.clone())),
        tokio::spawn(crate::observe::exporter::collector(
            state.clone(),
            cancel.clone(),
        )),
        tokio::spawn(crate::changes::listen(state.clone(), cancel.clone())),
        tokio::spawn(platform::applier(state.clone(), cancel.clone())),
        tokio::spawn(media::fetcher(state.clone(), cancel.clone())),
        tokio::spawn(profiles::reader(state.clone(), cancel.clone())),
        tokio::spawn(replies::sender(state.clone(), cancel.clone())),
        tokio::spawn(counts::folder(state.clone(), cancel.clone())),
        tokio::spawn(queue::queuer(state.clone(), cancel.clone())),
        tokio::spawn(campaigns.run(cancel)),
    ])
}
