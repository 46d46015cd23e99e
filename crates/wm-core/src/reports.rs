//! Report periods: `from`/`to` dates, defaulting to the last 30 days, at most 366 days.

use chrono::{Duration, NaiveDate};
use wm_types::reports::ReportQuery;

use crate::validate::validated;

/// Longest period, in days.
pub const MAX_DAYS: i64 = 366;

validated!(ReportQuery);

/// The inclusive days of a report, given today's date in the organisation's zone.
pub fn period(q: &ReportQuery, today: NaiveDate) -> Result<(NaiveDate, NaiveDate), String> {
    let parse = |s: &Option<String>| {
        s.as_deref()
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
    };
    let to = parse(&q.to).unwrap_or(today);
    let from = parse(&q.from).unwrap_or(to - Duration::days(29));
    if from > to {
        return Err("from must not be after to".to_owned());
    }
    if (to - from).num_days() + 1 > MAX_DAYS {
        return Err(format!(
            "the period must not be longer than {MAX_DAYS} days"
        ));
    }
    Ok((from, to))
}

/// Every day of a period.
pub fn days(from: NaiveDate, to: NaiveDate) -> Vec<NaiveDate> {
    from.iter_days().take_while(|d| *d <= to).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        let (f, t) = period(&ReportQuery::default(), today).unwrap();
        assert_eq!(
            (f.to_string(), t.to_string()),
            ("2026-10-23".into(), "2026-11-21".into())
        );
        assert_eq!(days(f, t).len(), 30);
        let q = ReportQuery {
            from: Some("2026-11-22".into()),
            to: Some("2026-11-21".into()),
        };
        assert!(period(&q, today).is_err());
        let q = ReportQuery {
            from: Some("2024-01-01".into()),
            to: None,
        };
        assert!(period(&q, today).is_err());
    }
}
