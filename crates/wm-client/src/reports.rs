//! `/reports/{commercial,lifecycle,campaigns,wallet,team,conversations}` (scope
//! `reports:read`): each a builder with an inclusive `from`/`to` (calendar days in the
//! organisation's time zone; by default the 30 days ending today, at most 366), answering a
//! [`Report`] — the period, the totals and one series row per day, zeros included.
//!
//! ```no_run
//! use wm_client::reports::NaiveDate;
//! # async fn run(client: wm_client::Client) -> Result<(), wm_client::Error> {
//! let from = NaiveDate::from_ymd_opt(2026, 11, 1).expect("date");
//! let r = client.reports().campaigns().from(from).to("2026-11-21").send().await?;
//! println!("{} sent, spend {:.2}", r.totals.sent, r.totals.spend.to_decimal());
//! for day in &r.series {
//!     println!("{}: {} delivered", day.date, day.delivered);
//! }
//! # Ok(()) }
//! ```

use std::fmt;
use std::marker::PhantomData;

/// The calendar date type `from`/`to` take (a re-export of `chrono::NaiveDate`).
pub use chrono::NaiveDate;
use serde::de::DeserializeOwned;
use wm_types::reports::{
    CampaignDay, CampaignTotals, CommercialDay, CommercialTotals, ConversationDay,
    ConversationTotals, LifecycleDay, LifecycleTotals, Report, ReportQuery, TeamDay, TeamTotals,
    WalletDay, WalletTotals,
};

use crate::http::Request;
use crate::{Client, Error};

/// `GET /reports/commercial`: contacts, customers and deals.
pub type CommercialReport = Report<CommercialTotals, CommercialDay>;
/// `GET /reports/lifecycle`: stage changes and contacts per stage.
pub type LifecycleReport = Report<LifecycleTotals, LifecycleDay>;
/// `GET /reports/campaigns`: messages by step and net spend.
pub type CampaignReport = Report<CampaignTotals, CampaignDay>;
/// `GET /reports/wallet`: top-ups, charges, refunds and the daily balance.
pub type WalletReport = Report<WalletTotals, WalletDay>;
/// `GET /reports/team`: per user notes, contacts and conversations.
pub type TeamReport = Report<TeamTotals, TeamDay>;
/// `GET /reports/conversations`: opened, resolved, time to resolution.
pub type ConversationReport = Report<ConversationTotals, ConversationDay>;

impl Client {
    /// The reports (scope `reports:read`).
    pub fn reports(&self) -> Reports<'_> {
        Reports { client: self }
    }
}

/// The reports: `client.reports()`.
#[derive(Debug, Clone, Copy)]
pub struct Reports<'c> {
    client: &'c Client,
}

impl<'c> Reports<'c> {
    fn report<T, D>(&self, name: &'static str) -> GetReport<'c, T, D> {
        GetReport {
            client: self.client,
            name,
            query: ReportQuery::default(),
            _report: PhantomData,
        }
    }

    /// `GET /reports/commercial`: contacts created, new customers, deals and their value.
    pub fn commercial(&self) -> GetReport<'c, CommercialTotals, CommercialDay> {
        self.report("commercial")
    }

    /// `GET /reports/lifecycle`: stage changes per day, contacts per stage now.
    pub fn lifecycle(&self) -> GetReport<'c, LifecycleTotals, LifecycleDay> {
        self.report("lifecycle")
    }

    /// `GET /reports/campaigns`: sent, delivered, read, replied, failed and net spend.
    pub fn campaigns(&self) -> GetReport<'c, CampaignTotals, CampaignDay> {
        self.report("campaigns")
    }

    /// `GET /reports/wallet`: top-ups, charges, refunds and the end-of-day balance.
    pub fn wallet(&self) -> GetReport<'c, WalletTotals, WalletDay> {
        self.report("wallet")
    }

    /// `GET /reports/team`: per user contacts owned, notes written, conversations.
    pub fn team(&self) -> GetReport<'c, TeamTotals, TeamDay> {
        self.report("team")
    }

    /// `GET /reports/conversations`: opened, resolved, open now, minutes to resolution.
    pub fn conversations(&self) -> GetReport<'c, ConversationTotals, ConversationDay> {
        self.report("conversations")
    }
}

/// A day of a report's period, sent as `YYYY-MM-DD`: from a [`NaiveDate`], or from text
/// (sent as given; the server answers 400 to a malformed one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportDate(String);

impl ReportDate {
    /// The text sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<NaiveDate> for ReportDate {
    fn from(d: NaiveDate) -> Self {
        ReportDate(d.format("%Y-%m-%d").to_string())
    }
}

impl From<&NaiveDate> for ReportDate {
    fn from(d: &NaiveDate) -> Self {
        ReportDate::from(*d)
    }
}

impl From<&str> for ReportDate {
    fn from(s: &str) -> Self {
        ReportDate(s.to_owned())
    }
}

impl From<String> for ReportDate {
    fn from(s: String) -> Self {
        ReportDate(s)
    }
}

/// One report's query: `from`, `to`, then `.send()`. Unset days are not sent (the server
/// then uses the 30 days ending today).
#[must_use = "a report builder does nothing until .send()"]
pub struct GetReport<'c, T, D> {
    client: &'c Client,
    name: &'static str,
    query: ReportQuery,
    _report: PhantomData<fn() -> (T, D)>,
}

impl<T, D> Clone for GetReport<'_, T, D> {
    fn clone(&self) -> Self {
        GetReport {
            client: self.client,
            name: self.name,
            query: self.query.clone(),
            _report: PhantomData,
        }
    }
}

impl<T, D> fmt::Debug for GetReport<'_, T, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetReport")
            .field("path", &self.path())
            .field("query", &self.query)
            .finish_non_exhaustive()
    }
}

impl<T, D> GetReport<'_, T, D> {
    /// The route, relative to the base URL (`/reports/campaigns`).
    pub fn path(&self) -> String {
        format!("/reports/{}", self.name)
    }

    /// The query as it will be sent.
    pub fn query(&self) -> &ReportQuery {
        &self.query
    }

    /// `from`: the first day, inclusive.
    pub fn from(mut self, day: impl Into<ReportDate>) -> Self {
        self.query.from = Some(day.into().0);
        self
    }

    /// `to`: the last day, inclusive.
    pub fn to(mut self, day: impl Into<ReportDate>) -> Self {
        self.query.to = Some(day.into().0);
        self
    }
}

impl<T: DeserializeOwned, D: DeserializeOwned> GetReport<'_, T, D> {
    /// Fetches the report.
    pub async fn send(self) -> Result<Report<T, D>, Error> {
        self.client
            .send(Request::get(self.path()).query(&self.query)?)
            .await
    }
}
