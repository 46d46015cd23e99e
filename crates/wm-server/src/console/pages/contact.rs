//! One contact: details, consent, tags, identities, open deals, the timeline and notes;
//! when the key may write, a note box, a new identity and deleting the contact.

use axum::extract::{Path, State};
use axum::http::Method;
use axum::response::Response;
use maud::{Markup, html};
use uuid::Uuid;
use wm_types::common::Page as ApiPage;
use wm_types::contacts::{
    Contact, CreateIdentity, CreateNote, Identity, Note, TimelineEntry, TimelineKind,
};
use wm_types::enums::{ChannelType, Scope};
use wm_types::messages::MessageList;

use crate::console::context::Console;
use crate::console::page::{
    Page, PageResult, delete_confirmed, done, failed, page, problem, redirect,
};
use crate::console::session::Session;
use crate::console::view::{
    Fields, badge, channel_name, delete_form, hidden, input_hint, money, select, when,
};

/// `GET /console/contacts/{id}`.
pub async fn show(State(_): State<Console>, s: Session, Path(id): Path<Uuid>) -> PageResult<Page> {
    let (c, timeline, notes, messages) = tokio::try_join!(
        s.api.get::<Contact>(format!("/contacts/{id}")),
        s.api
            .get::<ApiPage<TimelineEntry>>(format!("/contacts/{id}/timeline?pageSize=30")),
        s.api
            .get::<ApiPage<Note>>(format!("/contacts/{id}/notes?pageSize=20")),
        s.api
            .get::<MessageList>(format!("/contacts/{id}/messages?pageSize=20")),
    )?;
    let name = c
        .full_name
        .clone()
        .unwrap_or_else(|| "Unnamed contact".into());
    Ok(page(
        &s,
        "Contacts",
        &name,
        html! {
            h1 { (name) }
            @if s.can(Scope::ContactsWrite) {
                p { a.button href={ "/console/contacts/" (id) "/edit" } { "Edit contact" } }
            }
            div.grid {
                section.card aria-labelledby="details-h" {
                    h2 id="details-h" { "Details" }
                    dl.facts {
                        dt { "Phone" } dd { (c.primary_phone.as_deref().unwrap_or("—")) }
                        dt { "E-mail" } dd { (c.primary_email.as_deref().unwrap_or("—")) }
                        dt { "Company" } dd { (c.company.as_deref().unwrap_or("—")) }
                        dt { "Country" } dd { (c.country.as_deref().unwrap_or("—")) }
                        dt { "Stage" } dd { (c.lifecycle_stage.as_ref().map(|st| st.name.as_str()).unwrap_or("—")) }
                        dt { "Owner" } dd { (c.owner.as_ref().map(|o| o.full_name.as_str()).unwrap_or("—")) }
                        dt { "Source" } dd { (c.source.as_str()) }
                        dt { "Created" } dd { (when(s.tz, &c.created_at)) }
                    }
                }
                section.card aria-labelledby="consent-h" {
                    h2 id="consent-h" { "Consent and tags" }
                    dl.facts {
                        dt { "Consent" }
                        dd {
                            @if c.consent.given { "Given" } @else { "Not given" }
                            @if let Some(how) = &c.consent.how { " (" (how.as_str()) ")" }
                            @if let Some(at) = &c.consent.at { " on " (when(s.tz, at)) }
                        }
                        dt { "Messaging" } dd { @if c.opted_out { (badge("OPTED_OUT")) } @else { "Allowed" } }
                        dt { "Tags" } dd { @if c.tags.is_empty() { "—" } @else { (c.tags.join(", ")) } }
                        dt { "Identities" }
                        dd {
                            @if c.identities.is_empty() { "—" }
                            @for i in &c.identities { (channel_name(i.channel_type)) ": " (i.external_id) br; }
                        }
                    }
                    @if s.can(Scope::ContactsWrite) { (identity_form(&s, id)) }
                    @if let Some(deals) = c.open_deals.as_ref().filter(|d| !d.is_empty()) {
                        h3 { "Open deals" }
                        ul { @for d in deals { li { (d.title) " · " (money(d.value, "")) } } }
                    }
                }
            }
            section.card aria-labelledby="notes-h" {
                h2 id="notes-h" { "Notes" }
                @if s.can(Scope::ContactsWrite) {
                    form.stack method="post" action={ "/console/contacts/" (id) "/notes" } {
                        (hidden(&s))
                        div.field {
                            label for="note-body" { "New note" }
                            textarea id="note-body" name="body" required maxlength="4000" {}
                        }
                        div { button type="submit" { "Add note" } }
                    }
                }
                @if notes.data.is_empty() { p.muted { "No notes yet." } }
                ul {
                    @for n in &notes.data {
                        li { (n.body) " " span.muted { "— " (n.author.full_name) ", " (when(s.tz, &n.created_at)) } }
                    }
                }
            }
            section.card aria-labelledby="messages-h" {
                h2 id="messages-h" { "Messages" }
                p.muted { "Everything sent to and received from this contact on every channel, campaigns to people who never answered included; the 20 newest, oldest first." }
                @if messages.data.is_empty() { p.muted { "No message yet." } }
                ol.thread aria-label="Messages, oldest first" {
                    @for (i, m) in messages.data.iter().rev().enumerate() {
                        // Where a conversation starts in the list, a link to it.
                        @if let Some(conversation) = m.conversation_id.filter(|c| {
                            i == 0 || messages.data.iter().rev().nth(i - 1).and_then(|p| p.conversation_id) != Some(*c)
                        }) {
                            li.muted { a href={ "/console/inbox/" (conversation) } { "Open the conversation" } }
                        }
                        (super::thread::message(m, s.tz))
                    }
                }
            }
            section.card aria-labelledby="timeline-h" {
                h2 id="timeline-h" { "Timeline" }
                ol {
                    @for e in &timeline.data {
                        li { span.muted { (when(s.tz, &e.at)) } " · " (entry(&e.kind)) }
                    }
                }
            }
            @if s.can(Scope::ContactsWrite) {
                (delete_form(&s, &format!("/console/contacts/{id}/delete"), "contact",
                    "Its notes, tags and identities go with it. A contact with history (conversations, campaigns, messages or open deals) is kept: set Opted out instead to stop messaging them."))
            }
        },
    ))
}

/// Another channel's id for the contact (the API refuses an inactive channel, and an id that
/// is another contact's).
fn identity_form(s: &Session, id: Uuid) -> Markup {
    let channels: Vec<(String, String)> = ChannelType::ALL
        .iter()
        .map(|c| (c.as_str().to_owned(), channel_name(*c).to_owned()))
        .collect();
    html! {
        h3 { "Add an identity" }
        form.stack method="post" action={ "/console/contacts/" (id) "/identities" } {
            (hidden(s))
            (select("Channel", "channelType", &channels, ChannelType::MessagingAppA.as_str(), None))
            (input_hint("Id on that channel", "externalId", "text", "",
                "The phone without + (WhatsApp), the username (Instagram), or the address (Email)."))
            div { button type="submit" { "Add identity" } }
        }
    }
}

fn entry(kind: &TimelineKind) -> Markup {
    match kind {
        TimelineKind::Created { source } => html! { "Created (" (source.as_str()) ")" },
        TimelineKind::Stage { by, from, to, .. } => html! {
            "Stage " (from.as_deref().unwrap_or("none")) " → " (to.as_deref().unwrap_or("none")) " by " (by)
        },
        TimelineKind::Note { author, body } => html! { "Note by " (author) ": " (body) },
        TimelineKind::Campaign {
            campaign,
            status,
            failed_at,
            error_message,
            ..
        } => html! {
            "Campaign " a href={ "/console/campaigns/" (campaign.id) } { (campaign.name) } " " (badge(status.as_str()))
            @if failed_at.is_some() { " " (error_message.as_deref().unwrap_or("")) }
        },
        TimelineKind::Conversation { conversation } => html! {
            "Conversation on " (channel_name(conversation.channel_type)) " "
            a href={ "/console/inbox/" (conversation.id) } { (badge(conversation.status.as_str())) }
        },
        TimelineKind::Consent {
            by,
            opted_out,
            reason,
        } => html! {
            @if *opted_out { "Opted out" } @else { "Opted back in" } " (" (reason) ", " (by) ")"
        },
        TimelineKind::Phone { by, from, to } => html! {
            "Phone " (from.as_deref().unwrap_or("none")) " → " (to) " (" (by) ")"
        },
        _ => html! { "Other change" },
    }
}

/// `POST /console/contacts/{id}/notes`.
pub async fn add_note(s: Session, Path(id): Path<Uuid>, form: Fields) -> Response {
    let back = format!("/console/contacts/{id}");
    let Some(body) = form.text("body") else {
        return redirect(&s, &back, problem("Write the note first."));
    };
    let sent: Result<Note, _> = s
        .api
        .send(
            Method::POST,
            &format!("/contacts/{id}/notes"),
            &CreateNote { body },
            form.idempotency().as_deref(),
        )
        .await;
    match sent {
        Ok(_) => redirect(&s, &back, done("Note added.")),
        Err(f) => redirect(&s, &back, failed(&f)),
    }
}

/// `POST /console/contacts/{id}/identities`.
pub async fn add_identity(s: Session, Path(id): Path<Uuid>, form: Fields) -> Response {
    let back = format!("/console/contacts/{id}");
    let (Some(channel_type), Some(external_id)) = (
        ChannelType::parse(form.raw("channelType")),
        form.text("externalId"),
    ) else {
        return redirect(
            &s,
            &back,
            problem("Choose a channel and write the id on it."),
        );
    };
    let sent: Result<Identity, _> = s
        .api
        .send(
            Method::POST,
            &format!("/contacts/{id}/identities"),
            &CreateIdentity {
                channel_type,
                external_id,
            },
            form.idempotency().as_deref(),
        )
        .await;
    match sent {
        Ok(i) => redirect(
            &s,
            &back,
            done(format!("Identity {} added.", i.external_id)),
        ),
        Err(f) => redirect(&s, &back, failed(&f)),
    }
}

/// `POST /console/contacts/{id}/delete`: the API refuses a contact with history (409), which
/// the contact's page then says.
pub async fn delete(s: Session, Path(id): Path<Uuid>, form: Fields) -> Response {
    let back = format!("/console/contacts/{id}");
    let api = format!("/contacts/{id}");
    delete_confirmed(&s, &form, "contact", &api, (&back, "/console/contacts")).await
}
