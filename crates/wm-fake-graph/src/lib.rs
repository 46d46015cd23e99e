//! A faithful fake of the WhatsApp Business Cloud API (Meta Graph API) for
//! wm's tests.
//!
//! wm's WhatsApp provider is written against Meta's documentation; its tests
//! point it at this fake, which follows the *published* request, response,
//! error and webhook shapes (never "whatever wm's code expects") and adds
//! knobs to reproduce the platform's failure modes on demand.
//!
//! # Endpoints
//!
//! * `POST /{version}/{phone_number_id}/messages` — template sends (addressed by `to`, a
//!   phone, or `recipient`, a BSUID; see [`users`]), free-form sends
//!   (`text`, `image`/`video`/`audio`/`document`/`sticker`, `interactive` reply buttons,
//!   `reaction`; see [`freeform`], subject to the 24-hour customer-service window, see
//!   [`window`]) and mark-as-read requests (`status: "read"`, [`FakeGraph::reads`]).
//! * `GET /{version}/{waba_id}/message_templates` — cursor-paged template list.
//! * `GET|DELETE /{version}/{media_id}`, `POST /{version}/{phone_number_id}/media` and the
//!   download URL `GET /whatsapp_business/attachments/?mid&ext&hash` — media (see [`media`]).
//! * `/_fake/...` — a JSON control API mirroring the Rust [`FakeGraph`] API
//!   (see [`control`]).
//! * Messenger Platform and Instagram messaging through a Facebook Page (see
//!   [`messenger`]): `POST /{version}/{page_id|me}/messages` (Send API),
//!   `POST /{version}/{page_id|me}/message_attachments`, `GET /{version}/{psid|igsid}`
//!   (User Profile API), signed `object: "page"` / `"instagram"` webhooks
//!   ([`FakeGraph::messenger_write`]) and `/_fake/messenger/...`. These share
//!   `/{id}/messages` and `GET /{id}` with the WhatsApp endpoints only for registered
//!   Pages, their people and Page tokens ([`FakeGraph::register_page`]).
//!
//! # Documented shapes followed (and where they were read)
//!
//! * Error response `{"error":{"message","type","code","error_data":{"messaging_product","details"},"fbtrace_id"}}`,
//!   the code table with HTTP statuses, and "errors are returned synchronously,
//!   asynchronously via webhook, or both":
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes>
//!   (HTTP statuses per code cross-checked against two public transcriptions of
//!   that table, and <https://docs.ycloud.com/en/api-reference/guides/whatsapp-platform/handle-whatsapp-errors>,
//!   which restores Meta's table).
//! * Graph error object, `OAuthException` code 190, `error_subcode`, `fbtrace_id`:
//!   <https://developers.facebook.com/docs/graph-api/guides/error-handling>.
//! * Send-message template object `{name, language:{policy?,code}, components:[{type:"body", parameters:[{type:"text",text}]}]}`:
//!   <https://whatsapp.github.io/WhatsApp-Nodejs-SDK/api-reference/types/TemplateObject>.
//! * Send response `{"messaging_product","contacts":[{"input","wa_id"}],"messages":[{"id","message_status"}]}`
//!   with `message_status` `accepted` | `held_for_quality_assessment` (template sends):
//!   <https://whatsappapijs.web.app/types/types.ServerSentMessageResponse.html>,
//!   <https://dualhook.com/docs/messaging-best-practices>.
//! * Status webhook (`statuses[]`: `id`, `status`, `timestamp` as a string of
//!   unix seconds, `recipient_id`, `biz_opaque_callback_data` only when sent
//!   with it, `conversation`/`pricing` only with `sent` and one of
//!   `delivered`/`read`, `errors[]` `{code,title,message,error_data:{details},href}`
//!   on `failed`; the `whatsapp_business_account` envelope with `metadata`):
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status/>
//!   (read via <https://developers.secure.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status/>).
//! * Webhook `errors[]` object shape:
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/errors>.
//! * Inbound messages (`contacts:[{profile:{name},wa_id}]`, `messages:[{from,id,timestamp,type,text:{body}}]`):
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages>;
//!   quick-reply `button:{payload,text}` with `context:{from,id}`:
//!   <https://docs.nextaibot.tech/flows/blocks/wa-template> (template quick replies arrive as `type:"button"`);
//!   `interactive` `button_reply:{id,title}` / `list_reply:{id,title,description}`:
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/interactive-reply-buttons-messages>,
//!   <https://whatsappapijs.web.app/types/types.ServerInteractiveListMessage.html>.
//! * `unsupported` messages (`errors:[{code:131051,title:"Message type unknown",…}]`) and
//!   `system` messages (`system:{body, wa_id, user_id, type:"user_changed_number"}`, no `contacts`):
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/>.
//! * `user_preferences` (`user_preferences:[{wa_id, detail, category:"marketing_messages",
//!   value:"stop"|"resume", timestamp}]` beside `contacts`):
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/user_preferences>.
//! * A person's `wa_id` may be another spelling of the number sent to (Mexico's `521`,
//!   Brazil's ninth digit): the send answer's `contacts[].wa_id` and statuses'
//!   `recipient_id` carry it ([`FakeGraph::register_wa_id`]).
//! * `message_template_status_update` (`entry[].id` = WABA id, `entry[].time`,
//!   value `{event, message_template_id (number), message_template_name,
//!   message_template_language, reason, message_template_category}`):
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/message_template_status_update>.
//! * `phone_number_quality_update` (value `{display_phone_number, event,
//!   old_limit?, current_limit, max_daily_conversations_per_business}`):
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/phone_number_quality_update>.
//! * Cursor paging (`data`, `paging.cursors.{before,after}`, `previous`,
//!   `next` absent on the last page; `limit`/`before`/`after` parameters):
//!   <https://developers.facebook.com/docs/graph-api/results/>. The template
//!   node fields (`name`, `components[{type:"BODY",text}]`, `language`,
//!   `status`, `category`, `id`) and the `fields=`/`limit=` usage on
//!   `/{waba_id}/message_templates`: <https://micaelgarcez.com.br/notes/error-132000-whatsapp-api-template-not-found>
//!   (the reference page itself, <https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/message_templates>,
//!   was not retrievable here).
//! * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>`:
//!   <https://developers.secure.facebook.com/docs/graph-api/webhooks/getting-started>,
//!   <https://docsx.wazapin.com/api/webhook-signature-examples>.
//! * Media: upload (multipart `file`, `type`, `messaging_product` → `{id}`, kept 30 days),
//!   retrieve (`{messaging_product, url, mime_type, sha256, file_size, id}`, URL valid 5
//!   minutes, `?phone_number_id=` ownership check), delete (`{success:true}`), download with
//!   the bearer token: <https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media>;
//!   the lookaside URL shape `…/whatsapp_business/attachments/?mid=&ext=&hash=` and numeric
//!   `file_size`: <https://dualhook.com/docs/media-upload>, <https://docs.360dialog.com/docs/messaging-api/api-reference/media>;
//!   types and limits: <https://docs.aws.amazon.com/social-messaging/latest/userguide/supported-media-types.html>
//!   (a transcription of Meta's "Supported Media Types").
//! * Free-form sends (`text {body, preview_url?}`, media `{id | link, caption?, filename?}`,
//!   `interactive` reply buttons, `reaction {message_id, emoji}`, `context {message_id}`) and
//!   their limits: <https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages>
//!   and the "Send messages" guides (details in [`freeform`]).
//! * Per-message pricing in statuses (from July 2025): `pricing {billable, pricing_model:"PMP",
//!   category, type}` with `type` `regular` for templates and `free_customer_service` (not
//!   billable, category `service`) for free-form replies inside the customer-service window:
//!   <https://developers.facebook.com/docs/whatsapp/pricing/updates-to-pricing/>.
//! * The 24-hour customer-service window and 131047 (see [`window`]); mark as read with
//!   optional `typing_indicator {type:"text"}` → `{"success":true}`:
//!   <https://developers.facebook.com/docs/whatsapp/cloud-api/guides/mark-message-as-read>.
//! * Redelivery of webhooks that do not get a 2xx:
//!   <https://docs.360dialog.com/docs/waba-basics/webhook-events-and-notifications>.
//!
//! ## Business-scoped user ids (BSUID) and usernames
//!
//! From Meta's *Business-scoped user IDs* guide
//! (<https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/>,
//! June 29, 2026 text) unless said otherwise; users, their BSUIDs and when their phone
//! may be shared live in the registry of [`users`] ([`FakeGraph::register_user`],
//! [`FakeGraph::user`]; a phone never registered gets a generated `<ISO2>.<19 digits>`).
//!
//! * BSUID: ISO 3166 alpha-2 country code, a period, up to 128 alphanumerics
//!   (`US.13491208655302741918`); parent BSUID with `ENT.` (`US.ENT.11815799212886844830`);
//!   "regenerated if a user changes their phone number".
//! * Inbound `messages`: `contacts:[{profile:{name, username?}, wa_id?, user_id,
//!   parent_user_id?}]`, `messages:[{from?, from_user_id, from_parent_user_id?, id, …}]`;
//!   `user_id`/`from_user_id` always; `wa_id`/`from` only when the phone may be shared
//!   (a username user: the business messaged or called that phone, or was messaged from it,
//!   in the last 30 days, or has them in its contact book), omitted rather than `""`.
//! * Send: `recipient` (BSUID or parent BSUID) instead of `to`, `to` winning when both
//!   are given; answer `contacts:[{input, user_id}]` for a BSUID send and
//!   `contacts:[{input, wa_id}]` for a phone send; neither `to` nor `recipient`:
//!   `{"error":{"message":"The parameter to is required.","type":"OAuthException","code":100,"fbtrace_id"}}`
//!   (documented for `/marketing_messages`, which shares these rules:
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/marketing-messages/send-marketing-messages>).
//!   An unknown BSUID is answered 100 with `error_data` (not documented by Meta).
//! * 131062 `(#131062) Business-scoped User ID (BSUID) recipients are not supported for
//!   this message.` (`OAuthException`, `error_data {messaging_product, details}`, full
//!   object from the marketing-messages page) for an authentication template sent to a
//!   BSUID; its `details` text for that case is the fake's own.
//! * Statuses: `recipient_user_id` always except on `failed` of a message sent to a
//!   phone; `recipient_id` for a message sent to a phone, or when the phone may be shared;
//!   `recipient_parent_user_id`; `contacts:[{profile:{name, username?}, wa_id?, user_id,
//!   parent_user_id?}]` on `sent` (without `username`), `delivered` and `read`, never on
//!   `failed` (see [`webhooks`]).
//! * `user_id_update` (its own webhook field): `contacts:[{profile:{name}, wa_id?}]`,
//!   `user_id_update:[{wa_id?, detail:"User id for <name> has been updated.",
//!   user_id:{previous, current}, parent_user_id?:{previous, current}, timestamp}]`
//!   ([`FakeGraph::post_user_id_update`]).
//! * System messages (no `contacts`): `user_changed_user_id` with `from?`,
//!   `from_user_id` (old BSUID), `system:{body:"User <name> changed from <OLD> to <NEW>",
//!   user_id:<NEW>, parent_user_id?, type}` ([`FakeGraph::post_user_changed_user_id`]);
//!   `user_changed_number` with `system:{body, wa_id, user_id:<new BSUID>,
//!   parent_user_id?, type}` ([`FakeGraph::post_number_change`]). The split between the
//!   two types is from the system messages reference (Aug 11, 2026):
//!   <https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/>.
//! * `user_preferences` items carry `user_id` (and `parent_user_id`), `wa_id` only when
//!   the phone may be shared; its contact carries `username`, `user_id`, `parent_user_id`.
//!
//! # Sync vs async error reporting (defaults)
//!
//! Per the error-codes page, some codes arrive in the send response and some
//! only in a later `failed` status webhook. Defaults here (each injection can
//! override the mode): **async** (wamid, then `failed`) for 131026, 131047 (also
//! produced by free-form sends outside the customer-service window), 131049, 131050
//! and 130472 — the recipient/delivery-side codes the platform
//! reports after accepting the message (e.g. 131049 "most often arrives
//! asynchronously in `statuses[].errors[]`", <https://dualhook.com/docs/whatsapp-error-131049>);
//! **sync** for everything else (auth 190, 100/131008/131009/131051/131062 request
//! errors, 131053 for media a number cannot use, 132xxx template errors which have
//! no wamid to report against — <https://dualhook.com/docs/whatsapp-error-132012> —, throttling 4/80007/130429/131048/131056,
//! account 368/131031, and 1/2/131000 server errors).

pub mod control;
pub mod errors;
pub mod freeform;
mod inbound;
pub mod media;
mod media_http;
pub mod messenger;
pub mod model;
mod read;
mod records;
mod send;
pub mod server;
mod state;
pub mod templates;
pub mod users;
mod validate;
pub mod webhooks;
pub mod window;

pub use control::Setup;
pub use errors::{CodeInfo, Delivery, GraphError, code_info};
pub use media::{MediaInfo, MediaOrigin, MediaSpec, MediaStats};
pub use messenger::{
    MessengerAttachment, MessengerPosted, MessengerSend, MessengerSenderAction, PageSpec,
    PersonSpec, Platform, RawSignature, ReactionAction, Write, WriteKind,
};
pub use model::*;
pub use state::FakeGraph;
pub use users::{country_of, generated_user_id, is_user_id};
pub use validate::{MAX_OPAQUE_LEN, wa_id};
pub use webhooks::{sign, verify};
pub use window::CUSTOMER_SERVICE_WINDOW;
