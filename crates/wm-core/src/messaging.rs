//! Who may be messaged: one rule for campaign audiences, batch charges, the platform call
//! and automations, so a contact who opts out or withdraws consent after being added to an
//! audience is neither charged for nor sent a message.

/// Why a contact may not be messaged now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ineligible {
    /// `optedOut` is true: the contact withdrew from messaging.
    OptedOut,
    /// `consent.given` is false.
    NoConsent,
    /// The contact has no phone number (nor a platform id to be reached by).
    NoPhone,
}

impl Ineligible {
    /// The reason recorded on a recipient (its `errorMessage`) or an automation step.
    pub fn reason(self) -> &'static str {
        match self {
            Ineligible::OptedOut => "The contact opted out of messaging",
            Ineligible::NoConsent => "The contact has not given consent to be messaged",
            Ineligible::NoPhone => "The contact has no phone number",
        }
    }
}

/// Whether a contact may be messaged, and at which address: not opted out, consent given, and
/// an address (a phone, or the platform's id of a person who hides theirs:
/// [`whatsapp_address`]). Opt-out is checked first, then consent, then the address (the
/// audience counts follow this order). Callers that hold a recipient's address snapshot
/// pass `Some(())`.
pub fn messageable<P>(
    opted_out: bool,
    consent_given: bool,
    phone: Option<P>,
) -> Result<P, Ineligible> {
    if opted_out {
        Err(Ineligible::OptedOut)
    } else if !consent_given {
        Err(Ineligible::NoConsent)
    } else {
        phone.ok_or(Ineligible::NoPhone)
    }
}

/// Where a contact is messaged on MESSAGING_APP_A: its primary phone, else the business-scoped
/// user id of a person who hides their phone behind a username (one of its MESSAGING_APP_A
/// identities of that form); `None` when it has neither.
pub fn whatsapp_address<'a>(
    primary_phone: Option<&str>,
    identities: impl IntoIterator<Item = (wm_types::enums::ChannelType, &'a str)>,
) -> Option<crate::address::Address> {
    use crate::address::{Address, is_user_id};
    if let Some(phone) = primary_phone {
        return Some(Address::Phone(crate::phone::Phone::from_stored(
            phone.to_owned(),
        )));
    }
    identities
        .into_iter()
        .find(|(kind, id)| *kind == wm_types::enums::ChannelType::MessagingAppA && is_user_id(id))
        .map(|(_, id)| Address::UserId(id.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(opted_out: bool, consent_given: bool, has_phone: bool) -> Result<(), Ineligible> {
        messageable(opted_out, consent_given, has_phone.then_some(()))
    }

    #[test]
    fn a_phone_first_else_a_business_scoped_id() {
        use crate::address::Address;
        use wm_types::enums::ChannelType::{Email, MessagingAppA};
        let ids = [(Email, "a@b.co"), (MessagingAppA, "US.1349120865")];
        assert_eq!(
            whatsapp_address(Some("+15550001111"), ids).map(|a| a.stored().to_owned()),
            Some("+15550001111".to_owned())
        );
        assert_eq!(
            whatsapp_address(None, ids),
            Some(Address::UserId("US.1349120865".into()))
        );
        assert_eq!(
            whatsapp_address(None, [(MessagingAppA, "15550001111")]),
            None
        );
        assert_eq!(whatsapp_address(None, []), None);
    }

    #[test]
    fn every_combination() {
        assert_eq!(r(false, true, true), Ok(()));
        assert_eq!(r(true, true, true), Err(Ineligible::OptedOut));
        assert_eq!(r(true, false, false), Err(Ineligible::OptedOut));
        assert_eq!(r(false, false, true), Err(Ineligible::NoConsent));
        assert_eq!(r(false, false, false), Err(Ineligible::NoConsent));
        assert_eq!(r(false, true, false), Err(Ineligible::NoPhone));
    }
}
