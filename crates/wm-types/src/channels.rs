//! Connecting accounts as channels (operator API): a Facebook Page (Messenger), an
//! Instagram professional account (through the Page it is linked to), a website chat.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `POST /admin/organizations/{orgId}/channels/messenger`: a Facebook Page whose inbox
/// becomes a SOCIAL_MSG_A channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConnectPage {
    /// The Page's id (Meta's numeric id).
    #[schemars(length(min = 1, max = 64), extend("format" = "digits"))]
    pub page_id: String,
    /// How the business calls it.
    #[schemars(length(min = 1, max = 160))]
    pub name: String,
    /// A Page access token with `pages_messaging` (kept encrypted).
    #[schemars(length(min = 1, max = 2048))]
    pub access_token: String,
    /// Whether a human agent's reply may be sent up to 7 days after the person's last
    /// message with Meta's `HUMAN_AGENT` tag (Meta must have approved the app for it).
    #[serde(default)]
    pub human_agent: Option<bool>,
}

/// `POST /admin/organizations/{orgId}/channels/instagram`: an Instagram professional
/// account, messaged through the Facebook Page it is linked to (SOCIAL_APP_A).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConnectInstagram {
    /// The Instagram professional account's id (the `id` Meta's webhooks name).
    #[schemars(length(min = 1, max = 64), extend("format" = "digits"))]
    pub instagram_id: String,
    /// The Page it is linked to, whose token sends.
    #[schemars(length(min = 1, max = 64), extend("format" = "digits"))]
    pub page_id: String,
    /// How the business calls it.
    #[schemars(length(min = 1, max = 160))]
    pub name: String,
    /// The Page's access token with `instagram_basic` and `instagram_manage_messages`.
    #[schemars(length(min = 1, max = 2048))]
    pub access_token: String,
    /// As for a Page: a human agent's late reply tagged `HUMAN_AGENT`.
    #[serde(default)]
    pub human_agent: Option<bool>,
}

/// `POST /admin/organizations/{orgId}/channels/webchat`: a chat on the business's own site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWebchat {
    /// How the business calls it (shown in the widget's title).
    #[schemars(length(min = 1, max = 160))]
    pub name: String,
    /// The sites that may embed it (`https://shop.example`); others are refused.
    #[schemars(length(min = 1, max = 20))]
    pub allowed_origins: Vec<String>,
    /// The first words visitors read.
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub greeting: Option<String>,
    /// The widget's colour, `#rrggbb`.
    #[serde(default)]
    #[schemars(extend("format" = "hex-color"))]
    pub color: Option<String>,
}

/// `PATCH /admin/organizations/{orgId}/channels/{id}`: only sent fields change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateChannel {
    /// Name.
    #[serde(default)]
    #[schemars(length(min = 1, max = 160))]
    pub name: Option<String>,
    /// A new token (a Page's or the Instagram account's Page's); the channel is ACTIVE again.
    #[serde(default)]
    #[schemars(length(min = 1, max = 2048))]
    pub access_token: Option<String>,
    /// Whether late human replies are tagged `HUMAN_AGENT`.
    #[serde(default)]
    pub human_agent: Option<bool>,
    /// A website chat's allowed sites.
    #[serde(default)]
    #[schemars(length(min = 1, max = 20))]
    pub allowed_origins: Option<Vec<String>>,
    /// A website chat's greeting.
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub greeting: Option<String>,
    /// A website chat's colour.
    #[serde(default)]
    #[schemars(extend("format" = "hex-color"))]
    pub color: Option<String>,
    /// Whether the channel is active.
    #[serde(default)]
    pub active: Option<bool>,
}

/// A website chat's settings, as the widget and the operator read them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebchatSettings {
    /// The sites that may embed it.
    pub allowed_origins: Vec<String>,
    /// The greeting.
    pub greeting: Option<String>,
    /// The colour.
    pub color: Option<String>,
}
