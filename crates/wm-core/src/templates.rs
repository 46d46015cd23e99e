//! Template variables: the positions a body uses (`{{1}}`, `{{2}}`), where a campaign takes
//! each one from (a contact field or fixed text), and the rendered text of one message.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// A contact field a variable can take its value from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContactField {
    /// `{{fullName}}`.
    FullName,
    /// `{{firstName}}`: the first word of the full name.
    FirstName,
    /// `{{primaryPhone}}`.
    PrimaryPhone,
    /// `{{primaryEmail}}`.
    PrimaryEmail,
    /// `{{company}}`.
    Company,
    /// `{{country}}`.
    Country,
}

impl ContactField {
    /// Every field, in the spec's order.
    pub const ALL: [ContactField; 6] = [
        ContactField::FullName,
        ContactField::FirstName,
        ContactField::PrimaryPhone,
        ContactField::PrimaryEmail,
        ContactField::Company,
        ContactField::Country,
    ];

    /// The placeholder a campaign writes for it (`{{firstName}}`).
    pub fn placeholder(self) -> &'static str {
        match self {
            ContactField::FullName => "{{fullName}}",
            ContactField::FirstName => "{{firstName}}",
            ContactField::PrimaryPhone => "{{primaryPhone}}",
            ContactField::PrimaryEmail => "{{primaryEmail}}",
            ContactField::Company => "{{company}}",
            ContactField::Country => "{{country}}",
        }
    }

    /// The field of an exact placeholder.
    pub fn from_placeholder(s: &str) -> Option<ContactField> {
        Self::ALL.into_iter().find(|f| f.placeholder() == s)
    }

    /// The field's name as the API spells it (`firstName`).
    pub fn name(self) -> &'static str {
        let p = self.placeholder();
        &p[2..p.len() - 2]
    }
}

/// Where a template variable takes its value from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VarSource {
    /// A field of the recipient's contact.
    Field(ContactField),
    /// The same text for every recipient.
    Fixed(String),
}

impl VarSource {
    /// The wire form: the placeholder of a field, or the fixed text.
    pub fn to_wire(&self) -> String {
        match self {
            VarSource::Field(f) => f.placeholder().to_owned(),
            VarSource::Fixed(s) => s.clone(),
        }
    }
}

/// The fields of one contact that variables can use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContactValues<'a> {
    /// Full name.
    pub full_name: Option<&'a str>,
    /// Phone, normalised.
    pub primary_phone: Option<&'a str>,
    /// E-mail.
    pub primary_email: Option<&'a str>,
    /// Company.
    pub company: Option<&'a str>,
    /// Country code.
    pub country: Option<&'a str>,
}

impl<'a> ContactValues<'a> {
    /// The value of a field (`None` when the contact lacks it).
    pub fn get(&self, field: ContactField) -> Option<&'a str> {
        match field {
            ContactField::FullName => self.full_name,
            ContactField::FirstName => self.full_name.and_then(|n| n.split_whitespace().next()),
            ContactField::PrimaryPhone => self.primary_phone,
            ContactField::PrimaryEmail => self.primary_email,
            ContactField::Company => self.company,
            ContactField::Country => self.country,
        }
    }
}

/// One `{{n}}` found in a body: byte range and the position as a string (`"1"`).
fn variables(body: &str) -> impl Iterator<Item = (std::ops::Range<usize>, String)> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(open) = body.get(from..)?.find("{{").map(|i| i + from) {
            let inner_start = open + 2;
            let digits = body[inner_start..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let close = inner_start + digits;
            if digits > 0 && body[close..].starts_with("}}") {
                from = close + 2;
                // Leading zeros name the same position: `{{01}}` is `{{1}}`.
                let position = body[inner_start..close].trim_start_matches('0');
                let position = if position.is_empty() { "0" } else { position };
                return Some((open..from, position.to_owned()));
            }
            from = open + 1;
        }
        None
    })
}

/// Orders positions numerically (`"2"` before `"10"`); positions carry no leading zeros.
fn numeric_order(a: &String, b: &String) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Distinct positions used by a body ("{{1}}", "{{2}}"), in numeric order, as strings.
pub fn positions(body: &str) -> Vec<String> {
    let mut found: Vec<String> = variables(body).map(|(_, p)| p).collect();
    found.sort_by(numeric_order);
    found.dedup();
    found
}

/// Checks a campaign's `variables` object against the template's positions: keys must be
/// positions of the template, values must be non-empty strings; a value that is exactly one
/// of the placeholders {{fullName}} {{firstName}} {{primaryPhone}} {{primaryEmail}}
/// {{company}} {{country}} is a field, anything else fixed text. Errors are
/// class-validator-style messages, e.g. "variables.3 is not a variable of the template",
/// "variables.1 must be a non-empty string".
pub fn parse_variables(
    vars: &Map<String, Value>,
    positions: &[String],
) -> Result<BTreeMap<String, VarSource>, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut errors = Vec::new();
    for (key, value) in vars {
        if !positions.contains(key) {
            errors.push(format!("variables.{key} is not a variable of the template"));
        }
        match value.as_str() {
            Some(s) if !s.trim().is_empty() => {
                let source = ContactField::from_placeholder(s)
                    .map_or_else(|| VarSource::Fixed(s.to_owned()), VarSource::Field);
                out.insert(key.clone(), source);
            }
            _ => errors.push(format!("variables.{key} must be a non-empty string")),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Positions of the template the variables do not cover.
pub fn missing(positions: &[String], vars: &BTreeMap<String, VarSource>) -> Vec<String> {
    positions
        .iter()
        .filter(|p| !vars.contains_key(p.as_str()))
        .cloned()
        .collect()
}

/// The body with every {{n}} replaced (firstName = first word of fullName; a missing field
/// renders as ""). Replacement is one pass: text that a value brings in is not expanded
/// again. A position without a source also renders as "".
pub fn render(body: &str, vars: &BTreeMap<String, VarSource>, contact: &ContactValues) -> String {
    let mut out = String::with_capacity(body.len());
    let mut last = 0;
    for (range, position) in variables(body) {
        out.push_str(&body[last..range.start]);
        match vars.get(&position) {
            Some(VarSource::Fixed(text)) => out.push_str(text),
            Some(VarSource::Field(field)) => out.push_str(contact.get(*field).unwrap_or("")),
            None => {}
        }
        last = range.end;
    }
    out.push_str(&body[last..]);
    out
}

/// A template variable with no text for one contact. The platform refuses a message whose
/// body parameter is empty (WhatsApp answers `(#100) Invalid parameter`), and a message
/// that reads "Hola ," is not one to pay for anyway: that recipient fails before the call,
/// refunded, with this as its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmptyVariable {
    /// The position (`"1"`).
    pub position: String,
    /// The contact field it takes its value from; `None` when no source covers it.
    pub field: Option<ContactField>,
}

impl std::fmt::Display for EmptyVariable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field {
            Some(field) => write!(
                f,
                "Template variable {{{{{}}}}} ({}) is empty for this contact",
                self.position,
                field.name()
            ),
            None => write!(
                f,
                "Template variable {{{{{}}}}} has no value",
                self.position
            ),
        }
    }
}

impl std::error::Error for EmptyVariable {}

/// The values of the body's variables in position order (`{{1}}`, `{{2}}`, …), as a
/// platform that fills templates itself (WhatsApp's body parameters) wants them. The first
/// position whose value is empty (or only blanks) for this contact is an error: the message
/// cannot go out as the template means it.
pub fn parameters(
    body: &str,
    vars: &BTreeMap<String, VarSource>,
    contact: &ContactValues,
) -> Result<Vec<String>, EmptyVariable> {
    positions(body)
        .into_iter()
        .map(|p| {
            let (value, field) = match vars.get(&p) {
                Some(VarSource::Fixed(text)) => (Some(text.as_str()), None),
                Some(VarSource::Field(field)) => (contact.get(*field), Some(*field)),
                None => (None, None),
            };
            match value {
                Some(v) if !v.trim().is_empty() => Ok(v.to_owned()),
                _ => Err(EmptyVariable { position: p, field }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_follow_the_positions() {
        let body = "Hola {{1}}, pedido {{2}} ({{1}}) y {{10}}";
        let vars = parse_variables(
            &map(json!({"1": "{{firstName}}", "2": "A-100", "10": "{{company}}"})),
            &positions(body),
        )
        .unwrap();
        let c = ContactValues {
            full_name: Some("Ana Pérez"),
            ..Default::default()
        };
        assert_eq!(
            parameters(body, &vars, &c),
            Err(EmptyVariable {
                position: "10".into(),
                field: Some(ContactField::Company),
            })
        );
        let with_company = ContactValues {
            company: Some("ACME"),
            ..c
        };
        assert_eq!(
            parameters(body, &vars, &with_company),
            Ok(strings(&["Ana", "A-100", "ACME"]))
        );
    }

    #[test]
    fn an_empty_variable_names_its_position_and_field() {
        let body = "Hola {{1}} de {{2}}";
        let pos = positions(body);
        let vars = parse_variables(
            &map(json!({"1": "{{firstName}}", "2": "{{company}}"})),
            &pos,
        )
        .unwrap();
        let blank = ContactValues {
            full_name: Some("   "),
            company: Some("ACME"),
            ..Default::default()
        };
        let e = parameters(body, &vars, &blank).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Template variable {{1}} (firstName) is empty for this contact"
        );
        let blank_company = ContactValues {
            full_name: Some("Ana"),
            company: Some(" "),
            ..Default::default()
        };
        assert_eq!(
            parameters(body, &vars, &blank_company)
                .unwrap_err()
                .to_string(),
            "Template variable {{2}} (company) is empty for this contact"
        );
        let uncovered = parse_variables(&map(json!({"1": "Ana"})), &pos).unwrap();
        assert_eq!(
            parameters(body, &uncovered, &blank)
                .unwrap_err()
                .to_string(),
            "Template variable {{2}} has no value"
        );
        assert_eq!(ContactField::PrimaryEmail.name(), "primaryEmail");
    }

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn positions_are_distinct_and_numeric() {
        assert_eq!(
            positions("Hola {{2}}, {{1}} y {{10}} y {{2}} {{ 3 }} {{x}} {{4}"),
            strings(&["1", "2", "10"])
        );
        assert_eq!(positions("{{{1}}}"), strings(&["1"]));
        assert_eq!(positions("{{01}} {{1}}"), strings(&["1"]));
        assert!(positions("no variables").is_empty());
        assert!(positions("{{}} {{").is_empty());
        assert_eq!(positions("ñandú {{1}} ☃"), strings(&["1"]));
    }

    #[test]
    fn variables_are_fields_or_fixed_text() {
        let pos = strings(&["1", "2", "3"]);
        let vars = parse_variables(
            &map(json!({"1": "{{firstName}}", "2": "ACME", "3": " {{company}}"})),
            &pos,
        )
        .unwrap();
        assert_eq!(vars["1"], VarSource::Field(ContactField::FirstName));
        assert_eq!(vars["2"], VarSource::Fixed("ACME".into()));
        assert_eq!(vars["3"], VarSource::Fixed(" {{company}}".into()));
        assert_eq!(vars["1"].to_wire(), "{{firstName}}");
        for f in ContactField::ALL {
            assert_eq!(ContactField::from_placeholder(f.placeholder()), Some(f));
        }
    }

    #[test]
    fn bad_variables_answer_in_class_validator_words() {
        let pos = strings(&["1", "2"]);
        let e =
            parse_variables(&map(json!({"1": "", "2": 5, "3": "x", "4": null})), &pos).unwrap_err();
        assert_eq!(
            e,
            vec![
                "variables.1 must be a non-empty string",
                "variables.2 must be a non-empty string",
                "variables.3 is not a variable of the template",
                "variables.4 is not a variable of the template",
                "variables.4 must be a non-empty string",
            ]
        );
        assert!(parse_variables(&Map::new(), &pos).unwrap().is_empty());
    }

    #[test]
    fn missing_lists_uncovered_positions() {
        let pos = strings(&["1", "2", "3"]);
        let vars = parse_variables(&map(json!({"2": "x"})), &pos).unwrap();
        assert_eq!(missing(&pos, &vars), strings(&["1", "3"]));
        assert!(missing(&[], &vars).is_empty());
    }

    #[test]
    fn render_fills_every_position() {
        let pos = strings(&["1", "2", "3", "4"]);
        let vars = parse_variables(
            &map(json!({
                "1": "{{firstName}}", "2": "{{company}}", "3": "{{2}} 50%", "4": "{{country}}"
            })),
            &pos,
        )
        .unwrap();
        let contact = ContactValues {
            full_name: Some("  Ana María López "),
            company: None,
            country: Some("MX"),
            ..Default::default()
        };
        assert_eq!(
            render(
                "Hola {{1}} de {{2}}: {{3}} ({{4}}) {{1}} {{9}}.",
                &vars,
                &contact
            ),
            "Hola Ana de : {{2}} 50% (MX) Ana ."
        );
        assert_eq!(render("sin variables", &vars, &contact), "sin variables");
        let nobody = ContactValues::default();
        assert_eq!(render("{{1}}!", &vars, &nobody), "!");
    }

    #[test]
    fn contact_values_by_field() {
        let c = ContactValues {
            full_name: Some("Ana López"),
            primary_phone: Some("+525512345678"),
            primary_email: Some("ana@example.com"),
            company: Some("ACME"),
            country: Some("MX"),
        };
        let got: Vec<_> = ContactField::ALL.iter().map(|f| c.get(*f)).collect();
        assert_eq!(
            got,
            vec![
                Some("Ana López"),
                Some("Ana"),
                Some("+525512345678"),
                Some("ana@example.com"),
                Some("ACME"),
                Some("MX")
            ]
        );
        let blank = ContactValues {
            full_name: Some("   "),
            ..Default::default()
        };
        assert_eq!(blank.get(ContactField::FirstName), None);
    }
}
