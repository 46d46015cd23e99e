//! The spec's enumerations. Each tolerates values added later (`Unknown`).

wire_enum!(
    /// A messaging channel.
    ChannelType {
        MessagingAppA = "MESSAGING_APP_A",
        SocialAppA = "SOCIAL_APP_A",
        SocialMsgA = "SOCIAL_MSG_A",
        SocialAppB = "SOCIAL_APP_B",
        MessagingAppB = "MESSAGING_APP_B",
        SocialAppC = "SOCIAL_APP_C",
        Webchat = "WEBCHAT",
        Email = "EMAIL",
        Sms = "SMS",
        MessagingAppC = "MESSAGING_APP_C",
        Voice = "VOICE",
    }
);

wire_enum!(
    /// Where a contact came from.
    ContactSource {
        Other = "OTHER",
        Manual = "MANUAL",
        Import = "IMPORT",
        MessagingAppAInbound = "MESSAGING_APP_A_INBOUND",
        Campaign = "CAMPAIGN",
        WebsiteForm = "WEBSITE_FORM",
        Referral = "REFERRAL",
    }
);

wire_enum!(
    /// How consent was obtained.
    ConsentHow {
        Other = "OTHER",
        WebsiteForm = "WEBSITE_FORM",
        Phone = "PHONE",
        MessagingAppAReply = "MESSAGING_APP_A_REPLY",
        Contract = "CONTRACT",
    }
);

wire_enum!(
    /// The category of a lifecycle stage; the contact tabs are built on it.
    StageCategory {
        Lead = "LEAD",
        InProgress = "IN_PROGRESS",
        Customer = "CUSTOMER",
        Inactive = "INACTIVE",
    }
);

wire_enum!(
    /// A permission carried by an API key. No scope implies another.
    Scope {
        ContactsRead = "contacts:read",
        ContactsWrite = "contacts:write",
        ConversationsRead = "conversations:read",
        ConversationsWrite = "conversations:write",
        AutomationsRead = "automations:read",
        CampaignsRead = "campaigns:read",
        CampaignsWrite = "campaigns:write",
        ReportsRead = "reports:read",
        WebhooksRead = "webhooks:read",
        WebhooksWrite = "webhooks:write",
    }
);

wire_enum!(
    /// The state of a deal; open deals block contact deletion.
    DealStatus {
        Open = "OPEN",
        Won = "WON",
        Lost = "LOST",
    }
);

wire_enum!(
    /// The state of an inbox conversation.
    ConversationStatus {
        Open = "OPEN",
        Pending = "PENDING",
        Resolved = "RESOLVED",
    }
);

wire_enum!(
    /// The state of a campaign recipient.
    RecipientStatus {
        Pending = "PENDING",
        Sent = "SENT",
        Delivered = "DELIVERED",
        Read = "READ",
        Replied = "REPLIED",
        Failed = "FAILED",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_values_do_not_fail_deserialisation() {
        let c: ChannelType = serde_json::from_str("\"TELEPATHY\"").unwrap();
        assert_eq!(c, ChannelType::Unknown);
        let c: ChannelType = serde_json::from_str("\"MESSAGING_APP_A\"").unwrap();
        assert_eq!(c, ChannelType::MessagingAppA);
        assert_eq!(
            serde_json::to_string(&Scope::ContactsRead).unwrap(),
            "\"contacts:read\""
        );
    }

    #[test]
    fn all_lists_known_values_in_order() {
        assert_eq!(ChannelType::ALL.len(), 11);
        assert_eq!(ContactSource::wire_values()[3], "MESSAGING_APP_A_INBOUND");
    }
}

wire_enum!(
    /// The stable `code` of a business error (spec: "Errors"); one definition for the server
    /// that answers it and the client that matches on it.
    ErrorCode {
        ApiKeyInvalid = "API_KEY_INVALID",
        ApiKeyExpired = "API_KEY_EXPIRED",
        ApiKeyScopeMissing = "API_KEY_SCOPE_MISSING",
        ApiKeyNotAllowedHere = "API_KEY_NOT_ALLOWED_HERE",
        ApiKeyRateLimited = "API_KEY_RATE_LIMITED",
        ContactPhoneExists = "CONTACT_PHONE_EXISTS",
        ContactHasHistory = "CONTACT_HAS_HISTORY",
        CampaignVariablesRequired = "CAMPAIGN_VARIABLES_REQUIRED",
        PhoneNumberNotOwned = "PHONE_NUMBER_NOT_OWNED",
        AdminTokenInvalid = "ADMIN_TOKEN_INVALID",
        ConversationWindowClosed = "CONVERSATION_WINDOW_CLOSED",
        IdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED",
        IdempotencyKeyInUse = "IDEMPOTENCY_KEY_IN_USE",
        IdempotencyKeyAnswerLost = "IDEMPOTENCY_KEY_ANSWER_LOST",
    }
);
