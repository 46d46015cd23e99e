//! The customer-service window: free-form messages only reach a user who wrote to the
//! business number in the last 24 hours.
//!
//! Behaviour chosen, and why: on the Cloud API a free-form (non-template) send outside
//! the window is *accepted* — HTTP 200 with a wamid — and the refusal arrives later as
//! a `failed` status webhook whose `errors[]` carries code 131047 "Re-engagement
//! message" ("Message failed to send because more than 24 hours have passed since the
//! customer last replied to this number."); no `sent`/`delivered` statuses follow. The
//! error-codes reference lists 131047 among the codes reported in webhooks, and apps
//! meeting it report the same ("Meta accepts synchronously, then rejects async via the
//! status webhook", <https://github.com/fabrahaingo/joel/pull/314>). The fake does
//! exactly that: the send is logged as accepted with `async_error: Some(131047)`.
//! Templates are never subject to the window.
//!
//! The window opens (or restarts) with every message posted by
//! [`FakeGraph::post_inbound`]; tests move it with [`FakeGraph::set_last_inbound`].
//! Windows are kept per business number and per *user* (see [`crate::users`]), so a send
//! finds the window whether it addresses the user by phone (in any spelling, including a
//! registered other spelling, [`FakeGraph::register_wa_id`]), by BSUID (`recipient`) or
//! by parent BSUID, and the window survives a BSUID change.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::FakeGraph;
use crate::state::Inner;

/// How long after a user's last message free-form sends are allowed (Meta: 24 hours).
pub const CUSTOMER_SERVICE_WINDOW: Duration = Duration::from_secs(24 * 3600);

fn key(inner: &mut Inner, phone_number_id: &str, user: &str) -> (String, String) {
    (phone_number_id.to_owned(), crate::users::key(inner, user))
}

/// Whether a free-form send from the number to this user (its key, [`crate::users::key`])
/// is inside the window now.
pub(crate) fn is_open(inner: &Inner, phone_number_id: &str, user_key: &str) -> bool {
    let k = (phone_number_id.to_owned(), user_key.to_owned());
    let Some(last) = inner.last_inbound.get(&k) else {
        return false;
    };
    let window = chrono::Duration::from_std(CUSTOMER_SERVICE_WINDOW)
        .unwrap_or_else(|_| chrono::Duration::hours(24));
    Utc::now() < *last + window
}

/// Records an inbound message from the user (its key) to the number at `at`.
pub(crate) fn touch(inner: &mut Inner, phone_number_id: &str, user_key: &str, at: DateTime<Utc>) {
    inner
        .last_inbound
        .insert((phone_number_id.to_owned(), user_key.to_owned()), at);
}

impl FakeGraph {
    /// Sets when the user `wa_id` names (a phone or a BSUID) last wrote to the business
    /// number (`None`: never), so tests can put a user inside or outside the 24-hour
    /// customer-service window without waiting; e.g.
    /// `Some(Utc::now() - chrono::Duration::hours(25))` closes it.
    pub fn set_last_inbound(&self, phone_number_id: &str, wa_id: &str, at: Option<DateTime<Utc>>) {
        let mut inner = self.shared.lock();
        let k = key(&mut inner, phone_number_id, wa_id);
        match at {
            Some(at) => {
                inner.last_inbound.insert(k, at);
            }
            None => {
                inner.last_inbound.remove(&k);
            }
        }
    }

    /// When the user `wa_id` names (a phone or a BSUID) last wrote to the business number.
    pub fn last_inbound(&self, phone_number_id: &str, wa_id: &str) -> Option<DateTime<Utc>> {
        let mut inner = self.shared.lock();
        let k = key(&mut inner, phone_number_id, wa_id);
        inner.last_inbound.get(&k).copied()
    }

    /// Whether free-form messages from the number to the user `wa_id` names (a phone or a
    /// BSUID) would be delivered now.
    pub fn window_open(&self, phone_number_id: &str, wa_id: &str) -> bool {
        let mut inner = self.shared.lock();
        let k = key(&mut inner, phone_number_id, wa_id);
        is_open(&inner, &k.0, &k.1)
    }
}
