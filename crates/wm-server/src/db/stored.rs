//! JSON kept in text columns (a contact's tags and identities, a campaign's variables, an
//! automation's steps, an import's errors…), read back. A row that does not parse is a
//! corrupt row: it is logged with its column and row and counted
//! (`wm_stored_json_errors_total{column}`), and the read goes on with the empty value, so
//! one bad row neither hides itself nor breaks every list it is on.

use serde::de::DeserializeOwned;

/// Reads `text` (column `column` of row `row`) as `T`; its empty value when it does not
/// parse, logged and counted.
pub fn json<T: DeserializeOwned + Default>(
    column: &'static str,
    row: impl std::fmt::Display,
    text: &str,
) -> T {
    match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            tracing::error!(column, %row, error = %e, "a stored JSON value does not parse; read as empty");
            // Counted here with the metrics facade itself: storage calls nothing above it
            // (the series is described with the others in `observe::metrics`).
            metrics::counter!("wm_stored_json_errors_total", "column" => column).increment(1);
            T::default()
        }
    }
}

/// [`json`] for a nullable column: `None` stays `None`.
pub fn json_opt<T: DeserializeOwned + Default>(
    column: &'static str,
    row: impl std::fmt::Display,
    text: Option<&str>,
) -> T {
    text.map_or_else(T::default, |t| json(column, row, t))
}
