//! The Prometheus series, declared once: each has a function here that the code calls at
//! the moment it happens, and a line in [`SERIES`] (name, kind, help) that the exporter
//! describes and the README lists.
//!
//! They go through the `metrics` facade: without an installed recorder every call is a
//! no-op, so library users and tests pay nothing and tests can install a recorder of their
//! own (`metrics::set_default_local_recorder`). Labels take values from fixed sets only
//! (matched routes, statuses, outcomes, worker names): never ids.

use std::collections::HashMap;
use std::sync::{OnceLock, PoisonError, RwLock};
use std::time::Duration;

use axum::http::StatusCode;
use metrics::{Counter, Gauge, Histogram, counter, gauge, histogram};

use crate::state::health::Worker;

/// Every series: name, kind, help. Histograms end in `_seconds` and get [`BUCKETS`].
pub const SERIES: &[(&str, &str, &str)] = &[
    (
        "wm_http_requests_total",
        "counter",
        "HTTP requests answered, by method, matched route and status.",
    ),
    (
        "wm_http_request_duration_seconds",
        "histogram",
        "Time to answer an HTTP request, by method, matched route and status.",
    ),
    (
        "wm_http_requests_in_flight",
        "gauge",
        "HTTP requests being answered now.",
    ),
    (
        "wm_rate_limited_total",
        "counter",
        "Requests refused with 429 by the per-key rate limit.",
    ),
    (
        "wm_stored_json_errors_total",
        "counter",
        "Stored JSON values that did not parse (corrupt rows), by column.",
    ),
    (
        "wm_messages_sent_total",
        "counter",
        "Messages the platform accepted, by provider and source (campaign, automation).",
    ),
    (
        "wm_messages_failed_total",
        "counter",
        "Messages not sent, by provider, source and reason (rejected, unavailable = retried later, unpriceable, ineligible = the contact opted out or withdrew consent).",
    ),
    (
        "wm_messages_refunded_total",
        "counter",
        "Rejected messages whose price went back to the wallet, by provider and source.",
    ),
    (
        "wm_campaign_batches_total",
        "counter",
        "Campaign batches, by result (charged, insufficient_balance).",
    ),
    (
        "wm_recipients_pending",
        "gauge",
        "Campaign recipients not yet sent, by the status of their campaign (collector).",
    ),
    (
        "wm_wallet_charges_total",
        "counter",
        "Wallet charges (campaign batches, automation messages).",
    ),
    (
        "wm_wallet_charged_micros_total",
        "counter",
        "Money charged, in micro-units of each organisation's currency.",
    ),
    ("wm_wallet_refunds_total", "counter", "Wallet refunds."),
    (
        "wm_wallet_refunded_micros_total",
        "counter",
        "Money refunded, in micro-units of each organisation's currency.",
    ),
    (
        "wm_webhook_deliveries_total",
        "counter",
        "Webhook attempts, by outcome (delivered, retrying, failed = retries exhausted).",
    ),
    (
        "wm_webhook_attempt_duration_seconds",
        "histogram",
        "Time of one webhook POST, answered or not.",
    ),
    (
        "wm_webhook_queue_depth",
        "gauge",
        "Webhook deliveries by status: pending (due or retrying) and failed (kept 7 days) (collector).",
    ),
    (
        "wm_outbox_lag_seconds",
        "gauge",
        "Age of the oldest event not yet fanned out to webhooks; 0 when none waits (collector).",
    ),
    (
        "wm_automation_runs_total",
        "counter",
        "Automation runs that ended or paused, by result (completed, waiting, condition, skipped, failed).",
    ),
    (
        "wm_db_pool_connections",
        "gauge",
        "Database pool connections, by state (in_use, idle).",
    ),
    (
        "wm_db_pool_max_connections",
        "gauge",
        "The database pool's size limit.",
    ),
    (
        "wm_worker_pass_duration_seconds",
        "histogram",
        "Time of one worker pass, by worker.",
    ),
    (
        "wm_platform_unapplied_total",
        "counter",
        "Parts of platform webhooks wm could not apply, by provider and reason (each logged at WARN and kept for the operator).",
    ),
    (
        "wm_worker_passes_total",
        "counter",
        "Worker passes, by worker and result (ok, error).",
    ),
    (
        "wm_worker_last_success_timestamp_seconds",
        "gauge",
        "Unix time of each worker's last successful pass.",
    ),
];

/// Histogram buckets (seconds): from a cached read to a webhook timeout.
pub const BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Registers the help text of every series with the current recorder.
pub fn describe() {
    for (name, kind, help) in SERIES {
        match *kind {
            "counter" => metrics::describe_counter!(*name, *help),
            "gauge" => metrics::describe_gauge!(*name, *help),
            _ => metrics::describe_histogram!(*name, metrics::Unit::Seconds, *help),
        }
    }
}

/// One HTTP request answered.
pub fn http_request(method: &'static str, route: &str, status: StatusCode, took: Duration) {
    if let Some(http) = HttpSeries::current() {
        http.record(method, route, status, took);
        return;
    }
    let labels = http_labels(method, route, status);
    counter!("wm_http_requests_total", &labels).increment(1);
    histogram!("wm_http_request_duration_seconds", &labels).record(took);
}

fn http_labels(
    method: &'static str,
    route: &str,
    status: StatusCode,
) -> [(&'static str, metrics::SharedString); 3] {
    [
        ("method", metrics::SharedString::const_str(method)),
        ("route", route.to_owned().into()),
        ("status", status.as_str().to_owned().into()),
    ]
}

/// A request started (+1) or ended (-1).
pub fn in_flight(delta: f64) {
    match HttpSeries::current() {
        Some(http) => http.in_flight.increment(delta),
        None => gauge!("wm_http_requests_in_flight").increment(delta),
    }
}

/// The handles of the HTTP series in the global recorder, kept so that a request records
/// through them: building a key of three labels and finding it in the recorder's registry,
/// twice per request plus the in-flight gauge, was most of what metrics cost per request
/// (`benches/observe.rs`). Used only while the global recorder is the current one: a
/// thread-local recorder (tests) gets the plain lookups.
struct HttpSeries {
    /// Address of the global recorder the handles belong to.
    recorder: usize,
    in_flight: Gauge,
    /// Route → (method, status, requests, duration): a handful of entries per route.
    routes: RwLock<HashMap<Box<str>, Vec<HttpHandles>>>,
}

struct HttpHandles {
    method: &'static str,
    status: StatusCode,
    requests: Counter,
    duration: Histogram,
}

static HTTP: OnceLock<HttpSeries> = OnceLock::new();

/// The address of the recorder `metrics` uses on this thread.
fn current_recorder() -> usize {
    metrics::with_recorder(|r| std::ptr::from_ref(r).cast::<()>() as usize)
}

impl HttpSeries {
    /// The cached handles, when the current recorder is the global one they belong to.
    fn current() -> Option<&'static HttpSeries> {
        HTTP.get().filter(|h| h.recorder == current_recorder())
    }

    fn record(&self, method: &'static str, route: &str, status: StatusCode, took: Duration) {
        let record = |list: &[HttpHandles]| {
            let h = list
                .iter()
                .find(|h| h.method == method && h.status == status)?;
            h.requests.increment(1);
            h.duration.record(took);
            Some(())
        };
        let routes = self.routes.read().unwrap_or_else(PoisonError::into_inner);
        if routes.get(route).and_then(|l| record(l)).is_some() {
            return;
        }
        drop(routes);
        let labels = http_labels(method, route, status);
        let handles = HttpHandles {
            method,
            status,
            requests: counter!("wm_http_requests_total", &labels),
            duration: histogram!("wm_http_request_duration_seconds", &labels),
        };
        let mut routes = self.routes.write().unwrap_or_else(PoisonError::into_inner);
        let list = routes.entry(route.into()).or_default();
        if record(list).is_none() {
            list.push(handles);
            record(list);
        }
    }
}

/// Keeps the HTTP series' handles of the global recorder just installed (called once by
/// [`super::exporter::serve`]). Its address is read on a thread of its own, where no
/// thread-local recorder can hide it.
pub(super) fn cache_global_handles() {
    let global = std::thread::scope(|s| {
        s.spawn(|| (current_recorder(), gauge!("wm_http_requests_in_flight")))
            .join()
    });
    if let Ok((recorder, in_flight)) = global {
        let _ = HTTP.set(HttpSeries {
            recorder,
            in_flight,
            routes: RwLock::default(),
        });
    }
}

/// A request refused by the rate limit.
pub fn rate_limited() {
    counter!("wm_rate_limited_total").increment(1);
}

/// A part of a platform webhook wm could not apply, and why.
pub fn platform_unapplied(provider: &str, reason: &'static str) {
    counter!("wm_platform_unapplied_total", "provider" => provider.to_owned(), "reason" => reason)
        .increment(1);
}

/// Where a message came from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A campaign recipient.
    Campaign,
    /// An automation's SEND_TEMPLATE step.
    Automation,
    /// A person's (or a bot's) reply in a conversation.
    Reply,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Campaign => "campaign",
            Source::Automation => "automation",
            Source::Reply => "reply",
        }
    }
}

/// Messages the platform accepted.
pub fn messages_sent(provider: &'static str, source: Source, n: usize) {
    counter!("wm_messages_sent_total", "provider" => provider, "source" => source.as_str())
        .increment(n as u64);
}

/// Messages not sent; `reason` is `rejected`, `unavailable`, `ambiguous`, `paused`,
/// `unpriceable` or `ineligible` (the contact may no longer be messaged).
pub fn messages_failed(provider: &'static str, source: Source, reason: &'static str, n: usize) {
    if n == 0 {
        return;
    }
    counter!("wm_messages_failed_total", "provider" => provider, "source" => source.as_str(), "reason" => reason)
        .increment(n as u64);
}

/// Rejected messages refunded.
pub fn messages_refunded(provider: &'static str, source: Source, n: usize) {
    if n == 0 {
        return;
    }
    counter!("wm_messages_refunded_total", "provider" => provider, "source" => source.as_str())
        .increment(n as u64);
}

/// A campaign batch charged, or refused for the balance.
pub fn campaign_batch(charged: bool) {
    let result = if charged {
        "charged"
    } else {
        "insufficient_balance"
    };
    counter!("wm_campaign_batches_total", "result" => result).increment(1);
}

/// Money taken from a wallet.
pub fn wallet_charged(micros: i64) {
    counter!("wm_wallet_charges_total").increment(1);
    counter!("wm_wallet_charged_micros_total").increment(micros.unsigned_abs());
}

/// Money given back to a wallet.
pub fn wallet_refunded(micros: i64) {
    counter!("wm_wallet_refunds_total").increment(1);
    counter!("wm_wallet_refunded_micros_total").increment(micros.unsigned_abs());
}

/// One webhook attempt: `outcome` is `delivered`, `retrying` or `failed`.
pub fn webhook_attempt(outcome: &'static str, took: Duration) {
    counter!("wm_webhook_deliveries_total", "outcome" => outcome).increment(1);
    histogram!("wm_webhook_attempt_duration_seconds").record(took);
}

/// An automation run ended or paused with `result`.
pub fn automation_run(result: &str) {
    let result: &'static str = match result {
        "completed" => "completed",
        "waiting" => "waiting",
        "condition" => "condition",
        "skipped" => "skipped",
        "failed" => "failed",
        _ => "other",
    };
    counter!("wm_automation_runs_total", "result" => result).increment(1);
}

/// One worker pass, at `now_ms` of the state's clock.
pub fn worker_pass(w: Worker, took: Duration, ok: bool, now_ms: i64) {
    let worker = w.as_str();
    histogram!("wm_worker_pass_duration_seconds", "worker" => worker).record(took);
    let result = if ok { "ok" } else { "error" };
    counter!("wm_worker_passes_total", "worker" => worker, "result" => result).increment(1);
    if ok {
        gauge!("wm_worker_last_success_timestamp_seconds", "worker" => worker)
            .set(now_ms as f64 / 1000.0);
    }
}

/// Sets a gauge the collector refreshes.
pub(super) fn set_gauge(name: &'static str, label: Option<(&'static str, &'static str)>, v: f64) {
    match label {
        Some((k, val)) => gauge!(name, k => val).set(v),
        None => gauge!(name).set(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The only test of the crate that installs the global recorder.
    #[test]
    fn http_series_reach_the_global_recorder_and_a_local_one_gets_its_own() {
        let global = super::super::exporter::recorder();
        let handle = global.handle();
        assert!(metrics::set_global_recorder(global).is_ok());
        cache_global_handles();
        let route = "/api/v1/contacts/{id}";
        let took = Duration::from_millis(2);
        for _ in 0..3 {
            http_request("GET", route, StatusCode::OK, took);
        }
        http_request("GET", route, StatusCode::NOT_FOUND, took);
        http_request("PATCH", route, StatusCode::OK, took);
        in_flight(1.0);
        in_flight(1.0);
        in_flight(-1.0);
        let local = super::super::exporter::recorder();
        let local_handle = local.handle();
        metrics::with_local_recorder(&local, || {
            http_request("GET", route, StatusCode::OK, took);
            in_flight(1.0);
        });

        let line = |method: &str, status: &str, n: u32| {
            format!(
                "wm_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {n}"
            )
        };
        let text = handle.render();
        for want in [
            line("GET", "200", 3),
            line("GET", "404", 1),
            line("PATCH", "200", 1),
            format!(
                "wm_http_request_duration_seconds_count{{method=\"GET\",route=\"{route}\",status=\"200\"}} 3"
            ),
            "wm_http_requests_in_flight 1".to_owned(),
        ] {
            assert!(text.contains(&want), "{want} missing in\n{text}");
        }
        let text = local_handle.render();
        for want in [
            line("GET", "200", 1),
            "wm_http_requests_in_flight 1".to_owned(),
        ] {
            assert!(text.contains(&want), "{want} missing in\n{text}");
        }
    }
}
