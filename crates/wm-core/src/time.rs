//! Time: an injectable clock and ISO 8601 parsing.

use std::sync::Mutex;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use wm_types::Timestamp;

/// The source of "now". Injected everywhere so tests drive time instead of sleeping.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> DateTime<Utc>;
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to, for tests and simulations.
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock(Mutex::new(start))
    }
    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *t += by;
    }
    /// Sets the clock.
    pub fn set(&self, to: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Parses an ISO 8601 date-time with a zone (`2026-11-21T10:00:00Z`, `...+01:00`) or a
/// plain date (`2026-11-21`, taken as midnight UTC).
pub fn parse_iso8601(s: &str) -> Option<Timestamp> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(Timestamp(t.with_timezone(&Utc)));
    }
    let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
    Some(Timestamp(d.and_hms_opt(0, 0, 0)?.and_utc()))
}

/// Whether `tz` names a time zone the server can use for calendar days. Offsets are not
/// zones; only `UTC`, `Etc/*` and `Area/City` names are accepted (the name is checked for
/// form here; the server resolves it).
pub fn is_timezone(tz: &str) -> bool {
    tz == "UTC"
        || (tz.contains('/')
            && tz.len() <= 64
            && tz
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b'+')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_dates_and_datetimes() {
        assert_eq!(
            parse_iso8601("2026-11-21").unwrap().to_string(),
            "2026-11-21T00:00:00.000Z"
        );
        assert_eq!(
            parse_iso8601("2026-11-21T10:00:00.5+02:00")
                .unwrap()
                .to_string(),
            "2026-11-21T08:00:00.500Z"
        );
        assert!(parse_iso8601("21/11/2026").is_none());
        assert!(parse_iso8601("2026-11-21T10:00:00").is_none());
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let start = Utc::now();
        let c = ManualClock::new(start);
        assert_eq!(c.now(), start);
        c.advance(Duration::minutes(5));
        assert_eq!(c.now(), start + Duration::minutes(5));
    }
}
