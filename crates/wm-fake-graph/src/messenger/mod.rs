//! A fake of the Messenger Platform (Facebook Pages) and of Instagram messaging through
//! a Facebook Page ("Messenger API for Instagram", IG-FB), on the same server as the
//! WhatsApp fake.
//!
//! # Endpoints
//!
//! * `POST /{version}/{page_id|me}/messages` — Send API (messages and sender actions),
//!   Page token in `access_token` or `Authorization: Bearer`, JSON, form or multipart
//!   body (`send.rs`, checks in `validate.rs`).
//! * `POST /{version}/{page_id|me}/message_attachments` — Attachment Upload API
//!   (`attachments.rs`).
//! * `GET /{version}/{psid|igsid}?fields=…` — User Profile API; `GET /{version}/{page_id|me}`
//!   — the Page node (`name`, `instagram_business_account`) (`profile.rs`).
//! * `GET /fbcdn/v/…`, `GET /ig_messaging_cdn/?…` — files people sent (`cdn.rs`).
//! * `/_fake/messenger/...` — control API (`control.rs`).
//!
//! The shared paths are taken from the WhatsApp side only for Messenger state
//! (`routes.rs`): WhatsApp calls are answered as before.
//!
//! # Meta pages each shape follows
//!
//! * Webhook envelope, one `messaging` item per entry, entries batched, `entry.time` in
//!   ms, the `message`/`quick_reply`/`reply_to`/`attachments`/`postback`/`reaction`
//!   items: <https://developers.facebook.com/documentation/business-messaging/messenger-platform/webhooks/webhook-events>
//!   and its event pages `…/webhook-events/messages`, `…/message-echoes`,
//!   `…/message-deliveries`, `…/message-reads`, `…/message-reactions`,
//!   `…/messaging_postbacks`.
//! * Signature `X-Hub-Signature-256: sha256=…` over the escaped-unicode body, 200 to
//!   acknowledge: <https://developers.facebook.com/documentation/business-messaging/messenger-platform/webhooks>,
//!   <https://developers.facebook.com/docs/graph-api/webhooks/getting-started>.
//! * Instagram envelope, the id table (`entry.id` = IG account, echoes with sender = IG
//!   account), `read.mid`, reactions without `reaction`/`emoji` on `unreact`, postbacks:
//!   <https://developers.facebook.com/docs/instagram-platform/webhooks/examples>;
//!   `is_deleted`, `is_echo`, `is_unsupported`, `reply_to.story`:
//!   <https://developers.facebook.com/docs/instagram-messaging/webhooks>; story mentions:
//!   <https://developers.facebook.com/docs/messenger-platform/instagram/features/story-mention>.
//! * Send API body (`recipient`, `messaging_type`, `tag`, `message.text|attachment|quick_replies|metadata`,
//!   top-level `reply_to`), answer `{recipient_id, message_id}`:
//!   <https://developers.facebook.com/docs/messenger-platform/reference/send-api>,
//!   <https://developers.facebook.com/documentation/business-messaging/messenger-platform/send-messages>;
//!   sender actions: <https://developers.facebook.com/documentation/business-messaging/messenger-platform/send-messages/sender-actions>;
//!   quick replies: <https://developers.facebook.com/documentation/business-messaging/messenger-platform/send-messages/quick-replies>,
//!   <https://developers.facebook.com/docs/messenger-platform/instagram/features/quick-replies/>;
//!   Instagram sends through the Page: <https://developers.facebook.com/docs/messenger-platform/instagram/features/send-message>.
//! * Windows and tags (24 h, HUMAN_AGENT 7 days, three tags removed April 27, 2026):
//!   the send-messages page above and <https://developers.facebook.com/docs/messenger-platform/send-messages/message-tags/>.
//! * Attachment Upload API, reuse, 90-day ids, 8 MB / 25 MB: <https://developers.facebook.com/documentation/business-messaging/messenger-platform/send-messages/saving-assets>;
//!   Instagram: <https://developers.facebook.com/documentation/business-messaging/instagram-messaging/features/attachment-upload>.
//! * Error shape: <https://developers.facebook.com/docs/graph-api/guides/error-handling>;
//!   codes and messages (10/2534022, 100/2018001, 100/2534014, 100/2534013, 100/2018074,
//!   100/2018109, 100/2018008, 100/2018047, 613/2534040, 2018218):
//!   <https://developers.facebook.com/documentation/business-messaging/messenger-platform/error-codes>.
//! * Rate limits (300/s text, 10/s audio/video per Page and per IG account):
//!   <https://developers.facebook.com/documentation/business-messaging/messenger-platform/overview/rate-limiting>.
//! * User profiles: <https://developers.facebook.com/documentation/business-messaging/messenger-platform/identity/user-profile>,
//!   <https://developers.facebook.com/documentation/business-messaging/instagram-messaging/features/user-profile>.
//! * Page → IG account (`instagram_business_account`): <https://developers.facebook.com/docs/instagram-platform/instagram-api-with-facebook-login/get-started>.
//!
//! # Where Meta is silent (choices, each documented where it is made)
//!
//! HTTP 400 for every Graph error but the transient 1/2 (500); the wording of the
//! validation errors (text length, quick replies, metadata); the code of the Instagram
//! consent error (230); the Human Agent refusal (code 10); `messaging_type` defaulting to
//! `RESPONSE`; sender actions held to the 24-hour window; mid formats; CDN URL lifetime;
//! `follower_count`/follow flags in Instagram profiles; which URLs are fetched.

mod accounts;
mod attachments;
mod auth;
mod body;
mod cdn;
mod control;
mod errors;
pub mod model;
mod profile;
mod quick_replies;
pub(crate) mod routes;
mod send;
mod store;
mod validate;
mod webhooks;
mod writes;

pub use attachments::{IMAGE_LIMIT, OTHER_LIMIT};
pub use model::{
    MessengerAttachment, MessengerPosted, MessengerSend, MessengerSenderAction, PageSpec,
    PersonSpec, Platform, RawSignature, ReactionAction, Write, WriteKind,
};
pub(crate) use store::Store;
pub use store::{
    DEFAULT_APP_ID, HUMAN_AGENT_WINDOW, MEDIA_CALLS_PER_SEC, PAGE_INBOX_APP_ID, STANDARD_WINDOW,
    TEXT_CALLS_PER_SEC,
};
