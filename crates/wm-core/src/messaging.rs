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
    /// The contact has no phone number.
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

/// Whether a contact may be messaged, and at which phone: not opted out, consent given, and
/// a phone. Opt-out is checked first, then consent, then the phone (the audience counts
/// follow this order). Callers that hold a recipient's phone snapshot pass `Some(())`.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn r(opted_out: bool, consent_given: bool, has_phone: bool) -> Result<(), Ineligible> {
        messageable(opted_out, consent_given, has_phone.then_some(()))
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
