//! Creating and editing a contact. A refused form comes back with what was typed and the
//! API's reason (a phone another contact holds, a bad e-mail).

use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use uuid::Uuid;
use wm_types::contacts::{Consent, Contact, CreateContact, UpdateContact};
use wm_types::enums::{ConsentHow, ContactSource};
use wm_types::lookups::{LifecycleStage, List, User};

use crate::console::api::Failure;
use crate::console::context::Console;
use crate::console::page::{PageResult, done, failed, flash_box, page, redirect};
use crate::console::session::{Flash, Session};
use crate::console::view::{Fields, checkbox, hidden, input, input_hint, select};

/// What the form shows: a contact's values, or what was typed.
#[derive(Default)]
struct Values {
    full_name: String,
    phone: String,
    email: String,
    company: String,
    country: String,
    stage: String,
    owner: String,
    tags: String,
    consent: bool,
    opted_out: bool,
}

impl Values {
    fn of(c: &Contact) -> Values {
        Values {
            full_name: c.full_name.clone().unwrap_or_default(),
            phone: c.primary_phone.clone().unwrap_or_default(),
            email: c.primary_email.clone().unwrap_or_default(),
            company: c.company.clone().unwrap_or_default(),
            country: c.country.clone().unwrap_or_default(),
            stage: c
                .lifecycle_stage_id
                .map(|i| i.to_string())
                .unwrap_or_default(),
            owner: c.owner_id.map(|i| i.to_string()).unwrap_or_default(),
            tags: c.tags.join(", "),
            consent: c.consent.given,
            opted_out: c.opted_out,
        }
    }

    fn typed(f: &Fields) -> Values {
        Values {
            full_name: f.raw("fullName").to_owned(),
            phone: f.raw("primaryPhone").to_owned(),
            email: f.raw("primaryEmail").to_owned(),
            company: f.raw("company").to_owned(),
            country: f.raw("country").to_owned(),
            stage: f.raw("lifecycleStageId").to_owned(),
            owner: f.raw("ownerId").to_owned(),
            tags: f.raw("tags").to_owned(),
            consent: f.on("consentGiven"),
            opted_out: f.on("optedOut"),
        }
    }
}

async fn choices(s: &Session) -> Result<(Vec<(String, String)>, Vec<(String, String)>), Failure> {
    let (stages, users) = tokio::try_join!(
        s.api.get::<List<LifecycleStage>>("/lifecycle-stages"),
        s.api.get::<List<User>>("/users"),
    )?;
    Ok((
        stages
            .data
            .into_iter()
            .map(|st| (st.id.to_string(), st.name))
            .collect(),
        users
            .data
            .into_iter()
            .map(|u| (u.id.to_string(), u.full_name))
            .collect(),
    ))
}

/// The form; `editing`: the contact's id when it exists.
async fn form(
    s: &Session,
    v: &Values,
    editing: Option<Uuid>,
    error: Option<Flash>,
) -> PageResult<Markup> {
    let (stages, users) = choices(s).await?;
    let action = match editing {
        Some(id) => format!("/console/contacts/{id}"),
        None => "/console/contacts".to_owned(),
    };
    Ok(html! {
        @if let Some(e) = &error { (flash_box(e)) }
        form.stack.card method="post" action=(action) {
            (hidden(s))
            (input("Full name", "fullName", "text", &v.full_name, false))
            (input_hint("Phone", "primaryPhone", "tel", &v.phone, "International format, e.g. +52 55 1234 5678"))
            (input("E-mail", "primaryEmail", "email", &v.email, false))
            (input("Company", "company", "text", &v.company, false))
            (input_hint("Country", "country", "text", &v.country, "Two letters, e.g. MX"))
            (select("Lifecycle stage", "lifecycleStageId", &stages, &v.stage, Some("No stage")))
            (select("Owner", "ownerId", &users, &v.owner, Some("Nobody")))
            (input_hint("Tags", "tags", "text", &v.tags, "Separated by commas"))
            (checkbox("Consent given", "consentGiven", "on", v.consent))
            @if editing.is_some() {
                (checkbox("Opted out of messages", "optedOut", "on", v.opted_out))
            } @else {
                div.field {
                    label for="f-note" { "First note" }
                    textarea id="f-note" name="note" maxlength="4000" {}
                }
            }
            div {
                button type="submit" {
                    @if editing.is_some() { "Save contact" } @else { "Create contact" }
                }
            }
        }
    })
}

/// `GET /console/contacts/new`.
pub async fn new(State(_): State<Console>, s: Session) -> PageResult<Response> {
    let body = form(&s, &Values::default(), None, None).await?;
    Ok(page(
        &s,
        "Contacts",
        "New contact",
        html! { h1 { "New contact" } (body) },
    )
    .into_response())
}

/// `GET /console/contacts/{id}/edit`.
pub async fn edit(
    State(_): State<Console>,
    s: Session,
    Path(id): Path<Uuid>,
) -> PageResult<Response> {
    let c: Contact = s.api.get(format!("/contacts/{id}")).await?;
    let body = form(&s, &Values::of(&c), Some(id), None).await?;
    let title = format!("Edit {}", c.full_name.as_deref().unwrap_or("contact"));
    Ok(page(&s, "Contacts", &title, html! { h1 { (title) } (body) }).into_response())
}

fn opt_uuid(f: &Fields, name: &str) -> Result<Option<Uuid>, Flash> {
    f.text(name)
        .map(|v| Uuid::parse_str(&v))
        .transpose()
        .map_err(|_| Flash {
            error: true,
            text: format!("{name} is not a valid choice."),
        })
}

fn tags(f: &Fields) -> Vec<String> {
    f.raw("tags")
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

fn consent(f: &Fields) -> Consent {
    let given = f.on("consentGiven");
    Consent {
        given,
        at: None,
        how: given.then_some(ConsentHow::Other),
    }
}

/// `POST /console/contacts`.
pub async fn create(State(_): State<Console>, s: Session, f: Fields) -> PageResult<Response> {
    let body = (|| -> Result<CreateContact, Flash> {
        Ok(CreateContact {
            full_name: f.text("fullName"),
            primary_phone: f.text("primaryPhone"),
            primary_email: f.text("primaryEmail"),
            company: f.text("company"),
            country: f.text("country"),
            lifecycle_stage_id: opt_uuid(&f, "lifecycleStageId")?,
            owner_id: opt_uuid(&f, "ownerId")?,
            source: Some(ContactSource::Manual),
            consent: Some(consent(&f)),
            tags: Some(tags(&f)),
            note: f.text("note"),
            ..Default::default()
        })
    })();
    let sent = match body {
        Ok(body) => s
            .api
            .send::<Contact>(Method::POST, "/contacts", &body, f.idempotency().as_deref())
            .await
            .map_err(|e| failed(&e)),
        Err(flash) => Err(flash),
    };
    match sent {
        Ok(c) => Ok(redirect(
            &s,
            &format!("/console/contacts/{}", c.id),
            done("Contact created."),
        )),
        Err(flash) => {
            let body = form(&s, &Values::typed(&f), None, Some(flash)).await?;
            Ok(page(
                &s,
                "Contacts",
                "New contact",
                html! { h1 { "New contact" } (body) },
            )
            .with_status(StatusCode::UNPROCESSABLE_ENTITY)
            .into_response())
        }
    }
}

/// `POST /console/contacts/{id}`: every field of the form is sent; a blank one is cleared.
pub async fn update(
    State(_): State<Console>,
    s: Session,
    Path(id): Path<Uuid>,
    f: Fields,
) -> PageResult<Response> {
    let body = (|| -> Result<UpdateContact, Flash> {
        Ok(UpdateContact {
            full_name: Some(f.text("fullName")),
            primary_phone: Some(f.text("primaryPhone")),
            primary_email: Some(f.text("primaryEmail")),
            company: Some(f.text("company")),
            country: Some(f.text("country")),
            lifecycle_stage_id: Some(opt_uuid(&f, "lifecycleStageId")?),
            owner_id: Some(opt_uuid(&f, "ownerId")?),
            opted_out: Some(f.on("optedOut")),
            consent: Some(consent(&f)),
            tags: Some(tags(&f)),
            ..Default::default()
        })
    })();
    let sent = match body {
        Ok(body) => s
            .api
            .send::<Contact>(Method::PATCH, &format!("/contacts/{id}"), &body, None)
            .await
            .map_err(|e| failed(&e)),
        Err(flash) => Err(flash),
    };
    match sent {
        Ok(_) => Ok(redirect(
            &s,
            &format!("/console/contacts/{id}"),
            done("Contact saved."),
        )),
        Err(flash) => {
            let body = form(&s, &Values::typed(&f), Some(id), Some(flash)).await?;
            Ok(page(
                &s,
                "Contacts",
                "Edit contact",
                html! { h1 { "Edit contact" } (body) },
            )
            .with_status(StatusCode::UNPROCESSABLE_ENTITY)
            .into_response())
        }
    }
}
