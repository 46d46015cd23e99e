//! Services: each use case as one function that runs its checks and writes in one
//! transaction (events included) and returns wire types. Handlers only parse and call these.

pub mod announce;
pub mod automations;
pub mod campaigns;
pub mod catalog;
pub mod channels;
pub mod contacts;
pub mod conversations;
pub mod deals;
pub mod imports;
pub mod inbound;
pub mod media;
pub mod messages;
pub mod organizations;
pub mod outbound;
pub mod phone_numbers;
pub mod platform;
pub mod profiles;
pub mod replies;
pub mod reports;
pub mod sending;
pub mod template_sync;
pub mod wallet;
pub mod webchat;
pub mod webhooks;
