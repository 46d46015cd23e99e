//! Templates and sender numbers, as the platform's catalog left them (read-only here: the
//! operator API and the template sync change them).

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use maud::html;
use wm_types::catalog::{PhoneNumber, Template};
use wm_types::lookups::List;

use crate::console::context::Console;
use crate::console::page::{Page, PageResult, page};
use crate::console::session::Session;
use crate::console::view::{badge, table, when};

/// The catalog routes.
pub fn routes() -> Router<Console> {
    Router::new()
        .route("/console/templates", get(templates))
        .route("/console/numbers", get(numbers))
}

/// `GET /console/templates`.
async fn templates(State(_): State<Console>, s: Session) -> PageResult<Page> {
    let list: List<Template> = s.api.get("/templates").await?;
    Ok(page(
        &s,
        "Templates",
        "Templates",
        html! {
            h1 { "Templates" }
            (table(
                None,
                "Message templates, as the platform approved them",
                &["Name", "Language", "Category", "Status", "Text", "Variables"],
                html! {
                        @for t in &list.data {
                            tr {
                                td { (t.name) }
                                td { (t.language) }
                                td { (t.category.as_str()) }
                                td { (badge(t.status.as_str())) }
                                td { (t.body_text) }
                                td { (t.variables.join(", ")) }
                            }
                        }
                },
                list.data.is_empty().then_some("No template yet."),
            ))
        },
    ))
}

/// `GET /console/numbers`.
async fn numbers(State(_): State<Console>, s: Session) -> PageResult<Page> {
    let list: List<PhoneNumber> = s.api.get("/phone-numbers").await?;
    Ok(page(
        &s,
        "Numbers",
        "Sender numbers",
        html! {
            h1 { "Sender numbers" }
            (table(
                None,
                "The numbers campaigns and replies are sent from",
                &["Name", "Number", "Quality", "#Messages per second", "Platform id", "Token", "Added"],
                html! {
                        @for n in &list.data {
                            tr {
                                td { (n.display_name) }
                                td { (n.number_e164) }
                                td { (badge(n.quality_rating.as_str())) }
                                td.num { (n.mps.map(|m| m.to_string()).unwrap_or_else(|| "default".into())) }
                                td { (n.platform_phone_number_id.as_deref().unwrap_or("—")) }
                                td { @if n.access_token_set { "Set" } @else { "Not set" } }
                                td { (when(s.tz, &n.created_at)) }
                            }
                        }
                },
                list.data.is_empty().then_some("No sender number yet."),
            ))
        },
    ))
}
