//! Phone numbers, parsed once into a normalised newtype.

use std::fmt;

/// A phone number in international format: `+` then 6–15 digits, the first not 0.
///
/// Spaces, dashes, dots and parentheses are removed first, so `+52 (55) 1234-5678` and
/// `+525512345678` are the same number; uniqueness is decided on this form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Phone(String);

/// Why a phone number was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a phone number in international format (+ followed by 6 to 15 digits)")]
pub struct InvalidPhone;

impl Phone {
    /// Normalises and checks `raw`.
    pub fn parse(raw: &str) -> Result<Phone, InvalidPhone> {
        let compact: String = raw
            .trim()
            .chars()
            .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')' | '\t'))
            .collect();
        let digits = compact.strip_prefix('+').ok_or(InvalidPhone)?;
        let ok = (6..=15).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !digits.starts_with('0');
        if ok {
            Ok(Phone(compact))
        } else {
            Err(InvalidPhone)
        }
    }

    /// The normalised form, `+` included.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The digits without `+`: the MESSAGING_APP_A external id.
    pub fn digits(&self) -> &str {
        &self.0[1..]
    }

    /// Takes back a value that was stored normalised.
    pub fn from_stored(s: String) -> Phone {
        Phone(s)
    }
}

impl fmt::Display for Phone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_separators() {
        let p = Phone::parse(" +52 (55) 1234-5678 ").unwrap();
        assert_eq!(p.as_str(), "+525512345678");
        assert_eq!(p.digits(), "525512345678");
        assert_eq!(
            Phone::parse("+1.415.555.0100").unwrap().as_str(),
            "+14155550100"
        );
    }

    #[test]
    fn refuses_what_is_not_international() {
        for bad in [
            "5512345678",
            "+12345",
            "+1234567890123456",
            "+52abc12345",
            "+0123456789",
            "++525512345678",
            "",
        ] {
            assert_eq!(Phone::parse(bad), Err(InvalidPhone), "{bad}");
        }
        assert!(Phone::parse("+123456").is_ok());
        assert!(Phone::parse("+123456789012345").is_ok());
    }
}
