//! `/automations`: the list with its summary (unpaginated), the detail, and the log of runs
//! (paginated, with a stream). Automations are defined by the operator, not through API v1.
//!
//! ```no_run
//! use futures::TryStreamExt;
//! use wm_client::types::automations::{AutomationTab, RunFilter, TriggerType};
//! # async fn run(client: wm_client::Client) -> Result<(), wm_client::Error> {
//! let list = client
//!     .automations()
//!     .list()
//!     .tab(AutomationTab::Active)
//!     .trigger(TriggerType::LifecycleStageEntered)
//!     .send()
//!     .await?;
//! println!("{} runs in 7 days", list.summary.runs7d);
//! for a in &list.data {
//!     let failed: Vec<_> = client.automations().logs(a.id).result(RunFilter::Failed).stream()
//!         .try_collect().await?;
//!     println!("{}: {} — {} failed runs", a.name, a.trigger_label, failed.len());
//! }
//! # Ok(()) }
//! ```

use uuid::Uuid;
use wm_types::automations::{
    Automation, AutomationList, AutomationRun, AutomationTab, ListAutomationsQuery, LogsQuery,
    RunFilter, TriggerType,
};
use wm_types::common::Page;

use crate::http::Request;
use crate::pagination::{PageStream, page_setters, stream_list};
use crate::{Client, Error};

impl Client {
    /// The automations resource (scope `automations:read`).
    pub fn automations(&self) -> Automations<'_> {
        Automations { client: self }
    }
}

/// The automations resource: `client.automations()`.
#[derive(Debug, Clone, Copy)]
pub struct Automations<'c> {
    client: &'c Client,
}

impl<'c> Automations<'c> {
    /// `GET /automations`: a builder of filters, then `.send()` (the list is not paginated).
    pub fn list(&self) -> ListAutomations<'c> {
        ListAutomations {
            client: self.client,
            query: ListAutomationsQuery::default(),
        }
    }

    /// `GET /automations/{id}`.
    pub async fn get(&self, id: Uuid) -> Result<Automation, Error> {
        self.client
            .send(Request::get(format!("/automations/{id}")))
            .await
    }

    /// `GET /automations/{id}/logs`: the runs, newest first; a builder, then `.send()` or
    /// `.stream()`.
    pub fn logs(&self, id: Uuid) -> ListRuns<'c> {
        ListRuns {
            client: self.client,
            id,
            query: LogsQuery::default(),
        }
    }
}

/// `GET /automations` filters. Unset filters are not sent.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send()"]
pub struct ListAutomations<'c> {
    client: &'c Client,
    query: ListAutomationsQuery,
}

impl ListAutomations<'_> {
    /// Replaces every filter with a wire query struct.
    pub fn with_query(mut self, query: ListAutomationsQuery) -> Self {
        self.query = query;
        self
    }

    /// The filters as they will be sent.
    pub fn query(&self) -> &ListAutomationsQuery {
        &self.query
    }

    /// `tab`: all, active, paused (PAUSED and PAUSED_BY_FAILURE) or drafts.
    pub fn tab(mut self, tab: AutomationTab) -> Self {
        self.query.tab = Some(tab);
        self
    }

    /// `trigger`: the trigger type.
    pub fn trigger(mut self, trigger: TriggerType) -> Self {
        self.query.trigger = Some(trigger);
        self
    }

    /// `q`: name substring (max 120).
    pub fn q(mut self, q: impl Into<String>) -> Self {
        self.query.q = Some(q.into());
        self
    }

    /// `includeArchived=true|false`: whether ARCHIVED automations are listed too.
    pub fn include_archived(mut self, include: bool) -> Self {
        self.query.include_archived = Some(include);
        self
    }

    /// Fetches the list (newest first) with its `summary`.
    pub async fn send(self) -> Result<AutomationList, Error> {
        self.client
            .send(Request::get("/automations").query(&self.query)?)
            .await
    }
}

/// `GET /automations/{id}/logs` query.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListRuns<'c> {
    client: &'c Client,
    id: Uuid,
    query: LogsQuery,
}

impl ListRuns<'_> {
    /// `result`: all, completed, waiting, condition, skipped or failed.
    pub fn result(mut self, result: RunFilter) -> Self {
        self.query.result = Some(result);
        self
    }

    page_setters!();

    /// Fetches one page, newest first.
    pub async fn send(self) -> Result<Page<AutomationRun>, Error> {
        let path = format!("/automations/{}/logs", self.id);
        self.client
            .send(Request::get(path).query(&self.query)?)
            .await
    }

    /// Every matching run, across pages.
    pub fn stream(self) -> PageStream<AutomationRun> {
        stream_list::<Page<AutomationRun>, _>(
            self.client,
            format!("/automations/{}/logs", self.id),
            self.query,
        )
    }
}
