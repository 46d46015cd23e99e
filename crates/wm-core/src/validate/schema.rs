//! What the validator checks against: a [`Kind`] per field, a [`Schema`] per object, built
//! by hand or derived from a type's JSON Schema, and the address checks kinds share.

use std::borrow::Cow;

/// What a field must hold.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A string with optional length bounds (in characters).
    Str {
        /// Minimum length.
        min: Option<usize>,
        /// Maximum length.
        max: Option<usize>,
        /// Must contain a non-blank character.
        not_blank: bool,
    },
    /// An e-mail address.
    Email,
    /// A UUID in its hyphenated form.
    Uuid,
    /// `true` or `false`.
    Bool,
    /// An integer with optional bounds.
    Int {
        /// Minimum.
        min: Option<i64>,
        /// Maximum.
        max: Option<i64>,
    },
    /// A number with optional bounds.
    Number {
        /// Minimum.
        min: Option<f64>,
        /// Maximum.
        max: Option<f64>,
    },
    /// One of a fixed set of strings.
    OneOf(Vec<String>),
    /// One of a fixed set of strings, or an older spelling of one (`(alias, value)`), which
    /// is rewritten to the value it stands for.
    OneOfAliased {
        /// The spellings of today.
        values: Vec<String>,
        /// Older spellings and the value each stands for.
        aliases: Vec<(String, String)>,
    },
    /// One of a fixed set of integers.
    IntOneOf(Vec<i64>),
    /// An ISO 8601 date or date-time; normalised to RFC 3339 with milliseconds.
    DateTime,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// A phone number in international format (`+` and 6–15 digits after removing
    /// spaces, dashes, dots and parentheses), optionally no longer than `max` as typed.
    Phone {
        /// Longest text accepted, checked before the number itself.
        max: Option<usize>,
    },
    /// An array.
    Array {
        /// Kind of each item.
        item: Box<Kind>,
        /// Minimum size.
        min: Option<usize>,
        /// Maximum size.
        max: Option<usize>,
    },
    /// A nested object with its own schema.
    Object(Box<Schema>),
    /// Any object (free-form settings such as campaign `variables`).
    Map,
    /// Any value but `null` (class-validator's `IsNotEmpty` on an untyped field).
    Any,
    /// A custom check: returns the failure message suffix (after the field name).
    Custom(fn(&serde_json::Value) -> Option<String>),
}

/// One field of a schema.
#[derive(Debug, Clone)]
pub struct Field {
    pub(super) name: Cow<'static, str>,
    pub(super) kind: Kind,
    pub(super) required: bool,
    pub(super) nullable: bool,
}

/// The fields an object may hold; any other property is rejected.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    pub(super) fields: Vec<Field>,
    /// Fields given in a query that may repeat or hold comma-separated lists.
    pub(super) list_fields: Vec<Cow<'static, str>>,
}

impl Schema {
    /// An empty schema (accepts only `{}`).
    pub fn new() -> Self {
        Schema::default()
    }

    fn push(
        mut self,
        name: impl Into<Cow<'static, str>>,
        kind: Kind,
        required: bool,
        nullable: bool,
    ) -> Self {
        let name = name.into();
        if matches!(kind, Kind::Array { .. }) {
            // An array in a query is a list (`ids=a,b` or repeated `ids=`).
            self.list_fields.push(name.clone());
        }
        self.fields.push(Field {
            name,
            kind,
            required,
            nullable,
        });
        self
    }

    /// An optional field; `null` counts as absent.
    pub fn optional(self, name: impl Into<Cow<'static, str>>, kind: Kind) -> Self {
        self.push(name, kind, false, true)
    }

    /// An optional field that may not be `null` (a PATCH field with no "clear" meaning).
    pub fn optional_not_null(self, name: impl Into<Cow<'static, str>>, kind: Kind) -> Self {
        self.push(name, kind, false, false)
    }

    /// A required field.
    pub fn required(self, name: impl Into<Cow<'static, str>>, kind: Kind) -> Self {
        self.push(name, kind, true, false)
    }

    pub(super) fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// An e-mail address as class-validator's `IsEmail` accepts it: a valid address whose
/// domain has a dot and an alphabetic top-level part of two or more letters.
pub fn is_email(s: &str) -> bool {
    if s.len() > 254 || !email_address::EmailAddress::is_valid(s) {
        return false;
    }
    let Some((_, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let Some((_, tld)) = domain.rsplit_once('.') else {
        return false;
    };
    tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic())
}

/// A UUID in the hyphenated 8-4-4-4-12 form (braced, URN and bare forms are refused).
pub fn is_uuid(s: &str) -> bool {
    s.len() == 36 && uuid::Uuid::try_parse(s).is_ok()
}
