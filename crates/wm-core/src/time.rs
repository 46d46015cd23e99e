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

/// Whether `tz` names an IANA time zone (`UTC`, `America/Mexico_City`).
pub fn is_timezone(tz: &str) -> bool {
    tz.parse::<chrono_tz::Tz>().is_ok()
}

/// Start (ms since epoch) of the calendar day containing `now` in `tz`, and of the day
/// before; falls back to UTC for an unknown zone.
pub fn day_starts(tz: &str, now: DateTime<Utc>) -> (i64, i64) {
    use chrono::TimeZone;
    let zone: chrono_tz::Tz = tz.parse().unwrap_or(chrono_tz::UTC);
    let local = now.with_timezone(&zone).date_naive();
    let start = |d: NaiveDate| {
        d.and_hms_opt(0, 0, 0)
            .and_then(|t| zone.from_local_datetime(&t).earliest())
            .map_or(now.timestamp_millis(), |t| t.timestamp_millis())
    };
    let yesterday = local.pred_opt().unwrap_or(local);
    (start(local), start(yesterday))
}

/// The calendar date of an instant in `tz`.
pub fn local_date(tz: &str, ms: i64) -> NaiveDate {
    let zone: chrono_tz::Tz = tz.parse().unwrap_or(chrono_tz::UTC);
    Timestamp::from_millis(ms)
        .0
        .with_timezone(&zone)
        .date_naive()
}

/// Start (ms) of a calendar date in `tz`.
pub fn date_start(tz: &str, date: NaiveDate) -> i64 {
    use chrono::TimeZone;
    let zone: chrono_tz::Tz = tz.parse().unwrap_or(chrono_tz::UTC);
    date.and_hms_opt(0, 0, 0)
        .and_then(|t| zone.from_local_datetime(&t).earliest())
        .map_or(0, |t| t.timestamp_millis())
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
    fn days_follow_the_zone() {
        let now = DateTime::parse_from_rfc3339("2026-11-21T03:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        // 21 Nov 03:00 UTC is 20 Nov 21:00 in Mexico City (UTC-6).
        let (today, yesterday) = day_starts("America/Mexico_City", now);
        assert_eq!(
            Timestamp::from_millis(today).to_string(),
            "2026-11-20T06:00:00.000Z"
        );
        assert_eq!(
            Timestamp::from_millis(yesterday).to_string(),
            "2026-11-19T06:00:00.000Z"
        );
        assert_eq!(
            local_date("America/Mexico_City", now.timestamp_millis()).to_string(),
            "2026-11-20"
        );
        assert!(is_timezone("Europe/Madrid") && is_timezone("UTC") && !is_timezone("Mars/Base"));
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
