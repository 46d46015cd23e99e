//! Every operation's id, as generators name their methods (`listContacts`, `sendCampaign`):
//! verb and noun, stable whatever the path's spelling. A test checks that every documented
//! operation has one and that they are unique.

/// (method, path, operation id).
pub const OPERATION_IDS: &[(&str, &str, &str)] = &[
    ("get", "/contacts/imports", "listContactImports"),
    ("post", "/contacts/imports", "importContacts"),
    ("get", "/contacts/imports/{id}", "getContactImport"),
    ("get", "/contacts", "listContacts"),
    ("post", "/contacts", "createContact"),
    ("post", "/contacts/bulk", "bulkUpdateContacts"),
    ("get", "/contacts/{id}", "getContact"),
    ("delete", "/contacts/{id}", "deleteContact"),
    ("patch", "/contacts/{id}", "updateContact"),
    ("get", "/contacts/{id}/timeline", "listContactTimeline"),
    ("get", "/contacts/{id}/messages", "listContactMessages"),
    ("post", "/contacts/{id}/identities", "addContactIdentity"),
    ("get", "/contacts/{id}/notes", "listContactNotes"),
    ("post", "/contacts/{id}/notes", "createContactNote"),
    ("get", "/lifecycle-stages", "listLifecycleStages"),
    ("get", "/users", "listUsers"),
    ("get", "/templates", "listTemplates"),
    ("get", "/phone-numbers", "listPhoneNumbers"),
    ("get", "/wallet", "getWallet"),
    ("get", "/conversations", "listConversations"),
    ("get", "/conversations/{id}", "getConversation"),
    ("patch", "/conversations/{id}", "updateConversation"),
    (
        "get",
        "/conversations/{id}/messages",
        "listConversationMessages",
    ),
    (
        "post",
        "/conversations/{id}/messages",
        "sendConversationMessage",
    ),
    ("post", "/conversations/{id}/read", "markConversationRead"),
    ("get", "/automations", "listAutomations"),
    ("get", "/automations/{id}", "getAutomation"),
    ("get", "/automations/{id}/logs", "listAutomationLogs"),
    ("get", "/campaigns", "listCampaigns"),
    ("post", "/campaigns", "createCampaign"),
    ("get", "/campaigns/{id}", "getCampaign"),
    (
        "get",
        "/campaigns/{id}/recipients",
        "listCampaignRecipients",
    ),
    (
        "post",
        "/campaigns/{id}/recipients",
        "addCampaignRecipients",
    ),
    ("get", "/campaigns/{id}/preview-cost", "previewCampaignCost"),
    ("post", "/campaigns/{id}/send", "sendCampaign"),
    ("post", "/campaigns/{id}/pause", "pauseCampaign"),
    ("post", "/campaigns/{id}/resume", "resumeCampaign"),
    ("post", "/campaigns/{id}/duplicate", "duplicateCampaign"),
    ("get", "/reports/commercial", "getCommercialReport"),
    ("get", "/reports/lifecycle", "getLifecycleReport"),
    ("get", "/reports/campaigns", "getCampaignsReport"),
    ("get", "/reports/wallet", "getWalletReport"),
    ("get", "/reports/team", "getTeamReport"),
    ("get", "/reports/conversations", "getConversationsReport"),
    ("get", "/webhooks", "listWebhooks"),
    ("post", "/webhooks", "createWebhook"),
    ("get", "/webhooks/{id}", "getWebhook"),
    ("delete", "/webhooks/{id}", "deleteWebhook"),
    ("patch", "/webhooks/{id}", "updateWebhook"),
    ("get", "/webhooks/{id}/deliveries", "listWebhookDeliveries"),
    (
        "post",
        "/webhooks/{id}/deliveries/{deliveryId}/retry",
        "retryWebhookDelivery",
    ),
    ("post", "/media", "uploadMedia"),
    ("get", "/media/{id}", "getMedia"),
];

/// The id of the operation `method path`, if it has one.
pub fn operation_id(method: &str, path: &str) -> Option<&'static str> {
    OPERATION_IDS
        .iter()
        .find(|(m, p, _)| *m == method && *p == path)
        .map(|(.., id)| *id)
}
