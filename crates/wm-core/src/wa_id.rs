//! The forms one WhatsApp number takes.
//!
//! A person's WhatsApp id (`wa_id`: the `from` of their messages, the `recipient_id` of
//! statuses, the `contacts[].wa_id` of a send's answer) is usually their number's digits,
//! but not always: accounts registered before a country changed its numbering plan keep
//! the old form. A business stores the number as the person gives it today, so the same
//! person can arrive under another spelling and must still resolve to one contact.
//!
//! The forms handled, and where each came from:
//!
//! - **Mexico, `52` ↔ `521`.** Mobile numbers used to be dialled from abroad with a `1`
//!   after the country code; WhatsApp ids created then keep it (`5215512345678` for
//!   `+52 55 1234 5678`), newer ones do not. Both directions. Sources: Gupshup, *A brief
//!   note on the inconsistencies for mobile numbers and their WhatsApp IDs in Brazil
//!   (digit 9) & Mexico (digit 1)*; Zoho, *Inconsistencies in mobile numbers and their
//!   WhatsApp IDs in Brazil and Mexico*; Whapi, *Specifics of sending messages to numbers of
//!   different countries*; Chatwoot's `MexicoPhoneNormalizer` (issue #14048).
//! - **Brazil, the mobile ninth digit.** In 2010–2016 ANATEL put a `9` in front of every
//!   mobile number (`+55 31 8765-4321` became `+55 31 98765-4321`); accounts registered
//!   before keep the 8-digit form outside area codes 11–19, 21, 22, 24, 27 and 28. Both
//!   directions, and only for a mobile number: the 8-digit subscriber number starts with
//!   6–9 (landlines start with 2–5 and never take the `9`). Sources: the same Gupshup,
//!   Zoho and Whapi notes; Chatwoot's `BrazilPhoneNormalizer` (issue #5840).
//! - **Argentina, `549` → `54`.** Mobiles are `+54 9 …` from abroad and their WhatsApp id
//!   carries the `9`, but businesses often store them without it. Only that direction: a
//!   `54` number without the `9` is a valid landline, so a `549` form is never made up
//!   for one (Chatwoot's `ArgentinaPhoneNormalizer` keeps the same rule). Source: Whapi's
//!   note above.
//!
//! Everything here is pure: the shell looks the forms up.

/// The forms under which `digits` (a WhatsApp id or a stored number's digits, without `+`)
/// may be stored for the same person: `digits` itself first, then the others. Numbers of
/// other countries have one form.
pub fn forms(digits: &str) -> Vec<String> {
    let mut out = vec![digits.to_owned()];
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return out;
    }
    if let Some(rest) = digits.strip_prefix("521")
        && rest.len() == 10
    {
        out.push(format!("52{rest}"));
    } else if let Some(rest) = digits.strip_prefix("52")
        && rest.len() == 10
    {
        out.push(format!("521{rest}"));
    }
    if let Some(rest) = digits.strip_prefix("55") {
        let (area, number) = rest.split_at(rest.len().min(2));
        let valid_area = area.len() == 2 && !area.starts_with('0') && !area.ends_with('0');
        match number.len() {
            9 if valid_area && number.starts_with('9') && is_old_mobile(&number[1..]) => {
                out.push(format!("55{area}{}", &number[1..]));
            }
            8 if valid_area && is_old_mobile(number) => out.push(format!("55{area}9{number}")),
            _ => {}
        }
    }
    if let Some(rest) = digits.strip_prefix("549")
        && rest.len() == 10
    {
        out.push(format!("54{rest}"));
    }
    out
}

/// Whether an 8-digit Brazilian subscriber number is in the mobile ranges (6–9).
fn is_old_mobile(number: &str) -> bool {
    number.len() == 8 && matches!(number.as_bytes()[0], b'6'..=b'9')
}

#[cfg(test)]
mod tests {
    use super::forms;

    #[test]
    fn mexico_takes_both_spellings() {
        assert_eq!(forms("5215559784978"), ["5215559784978", "525559784978"]);
        assert_eq!(forms("525559784978"), ["525559784978", "5215559784978"]);
        // Not a ten-digit national number: left alone.
        assert_eq!(forms("52155597849"), ["52155597849"]);
    }

    #[test]
    fn brazil_adds_or_drops_the_ninth_digit_of_mobiles_only() {
        assert_eq!(forms("5531987654321"), ["5531987654321", "553187654321"]);
        assert_eq!(forms("553187654321"), ["553187654321", "5531987654321"]);
        // A landline (2–5) never takes a 9; a 9 before a non-mobile range is not dropped.
        assert_eq!(forms("553133334444"), ["553133334444"]);
        assert_eq!(forms("5531912345678"), ["5531912345678"]);
        // No area code starts or ends with 0.
        assert_eq!(forms("550187654321"), ["550187654321"]);
    }

    #[test]
    fn argentina_drops_the_mobile_nine_but_never_invents_it() {
        assert_eq!(forms("5491158749895"), ["5491158749895", "541158749895"]);
        assert_eq!(forms("541158749895"), ["541158749895"]);
    }

    #[test]
    fn other_numbers_have_one_form() {
        assert_eq!(forms("16505551234"), ["16505551234"]);
        assert_eq!(forms("447700900123"), ["447700900123"]);
        assert_eq!(forms("not digits"), ["not digits"]);
    }
}
