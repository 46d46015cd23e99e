//! Small pieces every page is built from: form fields (each with its label), the hidden
//! fields of a form, tabs, pagers, badges, and the formatting of money and times.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use chrono_tz::Tz;
use maud::{Markup, html};
use wm_types::Money;
use wm_types::common::{PageMeta, Timestamp};
use wm_types::enums::ChannelType;

use super::answer::ConsoleError;
use super::session::Session;

/// Money in the organisation's currency: two decimals, more when the amount has them
/// (per-message prices are fractions of a cent).
pub fn money(m: Money, currency: &str) -> String {
    let micros = m.0;
    let sign = if micros < 0 { "-" } else { "" };
    let abs = micros.unsigned_abs();
    let units = abs / 1_000_000;
    let mut frac = format!("{:06}", abs % 1_000_000);
    while frac.len() > 2 && frac.ends_with('0') {
        frac.pop();
    }
    format!("{sign}{units}.{frac} {currency}")
}

/// A time as people read it: to the minute, in the organisation's time zone, named by its
/// abbreviation (`2026-11-28 02:21 CST`).
pub fn when(tz: Tz, t: &Timestamp) -> String {
    t.0.with_timezone(&tz)
        .format("%Y-%m-%d %H:%M %Z")
        .to_string()
}

/// [`when`], or a dash.
pub fn when_opt(tz: Tz, t: Option<&Timestamp>) -> String {
    t.map(|t| when(tz, t)).unwrap_or_else(|| "—".to_owned())
}

/// A `datetime-local` field's value (`2026-11-28T09:30`, no zone) read as a time in `tz`.
/// A time the clocks skip (spring forward) is refused; one they pass twice (fall back) is
/// the first.
pub fn local_time(tz: Tz, value: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    use chrono::TimeZone;
    let naive = chrono::NaiveDateTime::parse_from_str(value, "%Y-%m-%dT%H:%M")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(value, "%Y-%m-%dT%H:%M:%S"))
        .map_err(|_| format!("{value} is not a date and time."))?;
    tz.from_local_datetime(&naive)
        .earliest()
        .map(|t| t.with_timezone(&chrono::Utc))
        .ok_or_else(|| format!("{value} does not exist in {tz}: the clocks skip it."))
}

/// A percentage with one decimal.
pub fn pct(v: f64) -> String {
    format!("{v:.1}%")
}

/// A channel by the name people know it by (never the contract's code).
pub fn channel_name(kind: ChannelType) -> &'static str {
    match kind {
        ChannelType::MessagingAppA => "WhatsApp",
        ChannelType::SocialAppA => "Instagram",
        ChannelType::SocialMsgA => "Messenger",
        ChannelType::Webchat => "Website",
        ChannelType::Email => "Email",
        ChannelType::Sms => "SMS",
        ChannelType::Voice => "Voice",
        ChannelType::SocialAppB => "Social app B",
        ChannelType::MessagingAppB => "Messaging app B",
        ChannelType::SocialAppC => "Social app C",
        ChannelType::MessagingAppC => "Messaging app C",
        _ => "Another channel",
    }
}

/// A status word as a badge (its colour follows the word).
pub fn badge(word: &str) -> Markup {
    html! { span class={ "badge " (word) } { (word) } }
}

/// The hidden fields every form carries: the session's CSRF token and, for forms that
/// create something, a fresh Idempotency-Key so sending it twice creates it once.
pub fn hidden(s: &Session) -> Markup {
    html! {
        input type="hidden" name="_csrf" value=(s.csrf);
        input type="hidden" name="_idem" value=(uuid::Uuid::new_v4());
    }
}

fn field_id(name: &str) -> String {
    format!(
        "f-{}",
        name.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
    )
}

/// A labelled input.
pub fn input(label: &str, name: &str, kind: &str, value: &str, required: bool) -> Markup {
    let id = field_id(name);
    html! {
        div.field {
            label for=(id) { (label) }
            input id=(id) type=(kind) name=(name) value=(value) required[required];
        }
    }
}

/// A labelled input with a hint under its label.
pub fn input_hint(label: &str, name: &str, kind: &str, value: &str, hint: &str) -> Markup {
    let id = field_id(name);
    let hint_id = format!("{id}-hint");
    html! {
        div.field {
            label for=(id) { (label) }
            span.hint id=(hint_id) { (hint) }
            input id=(id) type=(kind) name=(name) value=(value) aria-describedby=(hint_id);
        }
    }
}

/// A labelled select; `blank`: the text of an empty first choice.
pub fn select(
    label: &str,
    name: &str,
    options: &[(String, String)],
    selected: &str,
    blank: Option<&str>,
) -> Markup {
    let id = field_id(name);
    html! {
        div.field {
            label for=(id) { (label) }
            select id=(id) name=(name) {
                @if let Some(blank) = blank {
                    option value="" { (blank) }
                }
                @for (value, text) in options {
                    option value=(value) selected[value == selected] { (text) }
                }
            }
        }
    }
}

/// A labelled checkbox.
pub fn checkbox(label: &str, name: &str, value: &str, checked: bool) -> Markup {
    let id = format!("{}-{}", field_id(name), field_id(value));
    html! {
        label.check for=(id) {
            input id=(id) type="checkbox" name=(name) value=(value) checked[checked];
            (label)
        }
    }
}

/// The last section of a page that can delete what it shows: what deleting takes with it,
/// and a box to tick before the button does anything (no script needed; [`Fields::confirmed`]
/// checks it on the server too).
pub fn delete_form(s: &Session, action: &str, what: &str, consequence: &str) -> Markup {
    html! {
        section.card.danger aria-labelledby="delete-h" {
            h2 id="delete-h" { "Delete " (what) }
            p { (consequence) }
            form.stack method="post" action=(action) {
                (hidden(s))
                label.check for="f-confirm" {
                    input id="f-confirm" type="checkbox" name="confirm" value="yes" required;
                    "Yes, delete this " (what)
                }
                div { button.danger type="submit" { "Delete " (what) } }
            }
        }
    }
}

/// A list's tabs (or filters): their (label, key) pairs, in order, and the one shown.
pub struct Tabs<'a> {
    defs: &'a [(&'a str, &'a str)],
    current: &'a str,
}

impl<'a> Tabs<'a> {
    /// The tabs `defs`, `asked` being the key the query named (the first tab when none or
    /// an unknown one).
    pub fn new(defs: &'a [(&'a str, &'a str)], asked: &'a str) -> Tabs<'a> {
        let current = defs
            .iter()
            .find(|(_, key)| *key == asked)
            .or(defs.first())
            .map(|(_, key)| *key)
            .unwrap_or_default();
        Tabs { defs, current }
    }

    /// The key shown (what the API is asked for).
    pub fn key(&self) -> &'a str {
        self.current
    }

    /// The label shown.
    pub fn label(&self) -> &'a str {
        self.defs
            .iter()
            .find(|(_, key)| *key == self.current)
            .map(|(label, _)| *label)
            .unwrap_or_default()
    }

    /// The tabs as links, with their counts when given (`counts` in `defs`' order);
    /// `link(key)` is a tab's URL.
    pub fn render(&self, aria: &str, counts: &[u64], link: impl Fn(&str) -> String) -> Markup {
        html! {
            nav aria-label=(aria) {
                ul.tabs {
                    @for (i, (label, key)) in self.defs.iter().enumerate() {
                        li {
                            a href=(link(key)) aria-current=[(*key == self.current).then_some("page")] {
                                (label)
                                @if let Some(n) = counts.get(i) { " (" (n) ")" }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The query of a list page: its tab (`filter` and `result` on some pages), search text
/// and page.
#[derive(Debug, Default, serde::Deserialize)]
pub struct ListQuery {
    /// The tab's key.
    #[serde(default, alias = "filter", alias = "result")]
    pub tab: String,
    /// The search text.
    #[serde(default)]
    pub q: String,
    /// The page (1 when absent).
    #[serde(default)]
    pub page: Option<u64>,
}

impl ListQuery {
    /// The page number, as a query value.
    pub fn page_no(&self) -> String {
        self.page.unwrap_or(1).to_string()
    }

    /// The API's list at `path` for this query (25 a page), its tab named `tab_param`.
    pub fn api(&self, path: &str, tab_param: &str, tab: &str) -> String {
        super::api::with_query(
            path,
            &[
                (tab_param, tab),
                ("q", &self.q),
                ("page", &self.page_no()),
                ("pageSize", "25"),
            ],
        )
    }

    /// The console's page `base` at `tab` and `page`, with this query's search.
    pub fn link(&self, base: &str, tab_param: &str, tab: &str, page: u64) -> String {
        let page = page.to_string();
        super::api::with_query(base, &[(tab_param, tab), ("q", &self.q), ("page", &page)])
    }
}

/// A list's table, written once for every list page: `caption` (read by screen readers),
/// the column `heads` (a head starting with `#` is a number column), the `rows`, and `none`,
/// what to say when there are no rows. `id` names a table the script or tests look for.
pub fn table(
    id: Option<&str>,
    caption: &str,
    heads: &[&str],
    rows: Markup,
    none: Option<&str>,
) -> Markup {
    html! {
        div.table-wrap {
            table id=[id] {
                caption.muted { (caption) }
                thead {
                    tr {
                        @for h in heads {
                            @if let Some(n) = h.strip_prefix('#') { th.num { (n) } } @else { th { (h) } }
                        }
                    }
                }
                tbody { (rows) }
            }
        }
        @if let Some(none) = none { p.muted { (none) } }
    }
}

/// A list's search box at `action`, keeping the list's current tab (`tab_param=tab`).
pub fn search_box(action: &str, tab_param: &str, tab: &str, q: &str) -> Markup {
    html! {
        form.inline method="get" action=(action) role="search" {
            input type="hidden" name=(tab_param) value=(tab);
            div.field {
                label for="f-q" { "Search" }
                input id="f-q" type="search" name="q" value=(q) maxlength="100";
            }
            button type="submit" { "Search" }
        }
    }
}

/// Previous / next links of a paged list; `link(page)` gives a page's URL.
pub fn pager(meta: &PageMeta, link: impl Fn(u64) -> String) -> Markup {
    html! {
        nav.pager aria-label="Pages" {
            @if meta.page > 1 {
                a href=(link(meta.page - 1)) rel="prev" { "← Previous" }
            }
            span.muted { "Page " (meta.page) " of " (meta.total_pages.max(1)) " · " (meta.total) " in all" }
            @if meta.page < meta.total_pages {
                a href=(link(meta.page + 1)) rel="next" { "Next →" }
            }
        }
    }
}

/// The form field of template `template`'s variable `position`.
fn variable_field(template: uuid::Uuid, position: &str) -> String {
    format!("var:{template}:{position}")
}

/// The inputs of a template's variables, shown only while that template is chosen (the
/// script hides the others); `typed`: what was typed in a field before.
pub fn template_variables(
    t: &wm_types::catalog::Template,
    typed: impl Fn(&str) -> String,
) -> Markup {
    html! {
        @if !t.variables.is_empty() {
            fieldset data-template=(t.id) {
                legend { "Variables of " (t.name) }
                p.hint { (t.body_text) }
                @for v in &t.variables {
                    @let name = variable_field(t.id, v);
                    (input(&format!("Variable {v}"), &name, "text", &typed(&name), false))
                }
                p.hint { "Fixed text, or a contact's field such as {{fullName}}." }
            }
        }
    }
}

/// A URL-encoded form as sent (repeated names kept: checkboxes).
pub struct Fields(Vec<(String, String)>);

impl Fields {
    /// The first value of `name`, trimmed; `None` when absent or blank.
    pub fn text(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// The first value of `name` as sent, or empty.
    pub fn raw(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_default()
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Every (name, value) pair, in the order sent.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The variables typed for `template` ([`template_variables`]), blanks left out;
    /// `None` when there are none.
    pub fn variables(
        &self,
        template: uuid::Uuid,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        let prefix = variable_field(template, "");
        let variables: serde_json::Map<String, serde_json::Value> = self
            .pairs()
            .filter_map(|(k, v)| {
                let position = k.strip_prefix(&prefix)?;
                let v = v.trim();
                (!v.is_empty()).then(|| (position.to_owned(), serde_json::Value::from(v)))
            })
            .collect();
        (!variables.is_empty()).then_some(variables)
    }

    /// Whether a checkbox `name` was ticked.
    pub fn on(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k == name)
    }

    /// The form's Idempotency-Key.
    pub fn idempotency(&self) -> Option<String> {
        self.text("_idem")
    }

    /// Whether the box of a [`delete_form`] was ticked.
    pub fn confirmed(&self) -> bool {
        self.raw("confirm") == "yes"
    }
}

impl<S: Send + Sync> FromRequest<S> for Fields {
    type Rejection = ConsoleError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ConsoleError::Internal(anyhow::anyhow!("reading the form: {e}")))?;
        Ok(Fields(
            form_urlencoded::parse(&bytes)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_keeps_fractions_of_a_cent() {
        assert_eq!(money(Money(25_000_000), "USD"), "25.00 USD");
        assert_eq!(money(Money(62_500), "USD"), "0.0625 USD");
        assert_eq!(money(Money(-1_500_000), "MXN"), "-1.50 MXN");
    }
}
