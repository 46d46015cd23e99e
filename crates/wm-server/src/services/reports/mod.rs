//! Reports: figures per calendar day in the organisation's time zone (every day of the
//! period has a row), counted by the database wherever a table can be large (contacts,
//! recipients, conversations, notes: grouped counts, `day_groups`, `day_counts`) and
//! placed on days here; only small sets (stage moves, deals, ledger entries) come back whole.

mod contacts;
mod inbox;
mod money;
mod query;

pub use contacts::{commercial, lifecycle};
pub use inbox::{conversations, team};
pub use money::{campaigns, wallet};
