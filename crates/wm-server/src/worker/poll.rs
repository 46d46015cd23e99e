//! How often the workers look for work when nothing woke them.

use std::time::Duration;

/// How often workers look for work.
pub const POLL: Duration = Duration::from_millis(200);
