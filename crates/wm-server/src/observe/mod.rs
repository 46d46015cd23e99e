//! Operating the server: request logs with ids, worker spans, Prometheus metrics, and the
//! health probes.
//!
//! - [`request_log`]: one `info` line per request in a span carrying its `X-Request-Id`;
//! - [`metrics`]: the `wm_*` series, declared once, recorded through the `metrics` facade;
//! - [`exporter`]: the recorder, the `GET /metrics` listener and the database collector;
//! - [`health`]: readiness (`GET /health/ready`) and the worker pass, over the heartbeats
//!   and drain flag of [`crate::state::health`].
//!
//! Nothing here needs a subscriber or a recorder: a host app that mounts
//! [`crate::router`] gets request ids and spans, and its own subscriber and recorder (if
//! any) receive the logs and series.

pub mod exporter;
pub mod health;
pub mod metrics;
pub mod request_log;

use std::cell::RefCell;
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use chrono::Datelike;
use tower_http::catch_panic::CatchPanicLayer;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

use crate::error::ApiError;

/// The log line format (`WM_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// `key=value` lines for people.
    #[default]
    Text,
    /// One JSON object per line for log pipelines.
    Json,
}

/// The subscriber of the binary: `filter` (`RUST_LOG`, default `info`) in `format`, to
/// `writer`. Tests build the same one over a buffer. Lines are plain text, never coloured:
/// tracing-subscriber is built without its `ansi` feature, whose styling path alone cost
/// about 1.5 % of a `GET /contacts/{id}` even with colours off (`benches/observe.rs`).
/// Control characters in logged values are still escaped.
pub fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    writer: W,
) -> Box<dyn tracing::Subscriber + Send + Sync>
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let fmt = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_timer(Timestamp)
        .with_writer(writer);
    match format {
        LogFormat::Text => Box::new(fmt.finish()),
        LogFormat::Json => Box::new(
            fmt.json()
                .flatten_event(true)
                .with_current_span(true)
                .with_span_list(true)
                .finish(),
        ),
    }
}

/// The timestamps of the log lines: UTC, RFC 3339 with microseconds, as tracing-subscriber's
/// own `SystemTime` writes them (`2026-10-01T12:00:00.123456Z`), but the part up to the
/// second is formatted once per second per thread rather than on every line: the full
/// format was about 14 % of what logging costs per request (`benches/observe.rs`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timestamp;

impl FormatTime for Timestamp {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        thread_local! {
            /// The second last formatted on this thread, and its text.
            static SECOND: RefCell<(u64, String)> = const { RefCell::new((0, String::new())) };
        }
        let Ok(since_epoch) = SystemTime::now().duration_since(UNIX_EPOCH) else {
            return tracing_subscriber::fmt::time::SystemTime.format_time(w);
        };
        let (secs, micros) = (since_epoch.as_secs(), since_epoch.subsec_micros());
        SECOND.with_borrow_mut(|(second, text)| {
            if *second != secs || text.is_empty() {
                let Some(at) = i64::try_from(secs)
                    .ok()
                    .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
                    .filter(|at| at.year() <= 9999)
                else {
                    return tracing_subscriber::fmt::time::SystemTime.format_time(w);
                };
                text.clear();
                let _ = write!(text, "{}", at.format("%Y-%m-%dT%H:%M:%S"));
                *second = secs;
            }
            let mut fraction = *b".000000Z";
            let mut rest = micros;
            for digit in fraction[1..7].iter_mut().rev() {
                *digit = b'0' + (rest % 10) as u8;
                rest /= 10;
            }
            w.write_str(text)?;
            // Only ASCII digits, a dot and a Z.
            w.write_str(std::str::from_utf8(&fraction).unwrap_or(".000000Z"))
        })
    }
}

/// Installs [`subscriber`] on stdout as the process's default. Lines go through a
/// background writer thread (a request only formats its line; it never waits on stdout,
/// unless 128k lines are queued), which writes whatever has queued up in one go and
/// flushes whenever the queue is empty: under load one `write` carries many lines, idle
/// lines still appear at once. Keep the returned guard alive, it flushes on drop.
pub fn init_tracing(
    format: LogFormat,
) -> anyhow::Result<tracing_appender::non_blocking::WorkerGuard> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .thread_name("wm-log-writer")
        .finish(std::io::BufWriter::with_capacity(
            1 << 16,
            std::io::stdout(),
        ));
    tracing::subscriber::set_global_default(subscriber(format, filter, writer))?;
    Ok(guard)
}

/// The layers every route (and the fallback) of the API gets: a panic becomes the spec's
/// 500 (its message logged), inside the request log, so that it too has its line and its
/// `X-Request-Id`.
pub fn wrap<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    router
        .layer(CatchPanicLayer::custom(
            |panic: Box<dyn std::any::Any + Send>| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                axum::response::IntoResponse::into_response(ApiError::Internal(anyhow::anyhow!(
                    "handler panicked: {what}"
                )))
            },
        ))
        .layer(axum::middleware::from_fn(request_log::middleware))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(timer: impl FormatTime) -> String {
        let mut out = String::new();
        timer.format_time(&mut Writer::new(&mut out)).unwrap();
        out
    }

    #[test]
    fn timestamps_look_like_tracing_subscribers_own() {
        for _ in 0..3 {
            let (ours, theirs) = (
                format(Timestamp),
                format(tracing_subscriber::fmt::time::SystemTime),
            );
            assert_eq!(ours.len(), theirs.len(), "{ours} vs {theirs}");
            // Same second (or the next one, at a boundary) and the same shape.
            let shape = |s: &str| {
                s.chars()
                    .map(|c| if c.is_ascii_digit() { '0' } else { c })
                    .collect::<String>()
            };
            assert_eq!(shape(&ours), shape(&theirs));
            assert!(ours[..19] <= theirs[..19], "{ours} vs {theirs}");
            assert!(
                chrono::DateTime::parse_from_rfc3339(&ours).is_ok(),
                "{ours}"
            );
        }
    }
}
