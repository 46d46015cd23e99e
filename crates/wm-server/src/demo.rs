//! `serve --demo`: a demo organisation with stages, two users, 50 varied contacts, a sender
//! number, templates with and without variables, a funded wallet and an all-scopes API key,
//! so a newcomer can curl at once. Running it again reuses the organisation and issues a
//! fresh key (only key hashes are stored).

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use uuid::Uuid;
use wm_types::admin::{CreateApiKey, CreateOrganization};
use wm_types::contacts::{Consent, CreateContact};
use wm_types::enums::{ConsentHow, ContactSource, Scope};

use crate::db::{self, entities::organization};
use crate::keys::AuthContext;
use crate::services::{catalog, contacts, organizations};
use crate::state::AppState;

/// Name of the demo organisation.
pub const DEMO_ORG: &str = "wm demo";

/// What the seed made.
#[derive(Debug, Clone)]
pub struct Demo {
    /// The organisation.
    pub org_id: Uuid,
    /// A key with every scope.
    pub api_key: String,
}

impl Demo {
    /// Prints the key and a first curl.
    pub fn print(&self, base: &str, admin_token: &str) {
        println!("Demo organisation {DEMO_ORG:?} ({}) is ready.", self.org_id);
        println!("WM_DEMO_API_KEY={}", self.api_key);
        println!("WM_ADMIN_TOKEN={admin_token}");
        let console = base.trim_end_matches("/api/v1");
        println!("Console: {console}/console (sign in with WM_DEMO_API_KEY)");
        println!("Try:");
        println!("  export WM_KEY={}", self.api_key);
        println!("  curl -s '{base}/contacts?pageSize=5' -H \"Authorization: Bearer $WM_KEY\"");
    }
}

const FIRST: [&str; 10] = [
    "Ana", "Bruno", "Carla", "Diego", "Elena", "Fabio", "Gabriela", "Hugo", "Isabel", "Javier",
];
const LAST: [&str; 5] = ["García", "López", "Martínez", "Silva", "Moreau"];
const COMPANIES: [&str; 4] = ["Acme", "Globex", "Initech", "Umbrella"];
const TAGS: [&str; 4] = ["vip", "newsletter", "wholesale", "event-2026"];
const COUNTRIES: [(&str, &str); 5] = [
    ("MX", "+52155"),
    ("US", "+1415"),
    ("ES", "+3461"),
    ("BR", "+55119"),
    ("CO", "+57300"),
];

/// Seeds (or reuses) the demo organisation and issues an all-scopes key.
pub async fn seed(state: &AppState) -> anyhow::Result<Demo> {
    let now = state.now_ms();
    let existing = organization::Entity::find()
        .filter(organization::Column::Name.eq(DEMO_ORG))
        .one(&state.db.conn)
        .await?;
    let (org_id, owner_id) = match existing {
        Some(org) => {
            let owner = db::lookups::users(&state.db.conn, org.id)
                .await?
                .into_iter()
                .next()
                .ok_or_else(|| anyhow::anyhow!("demo organisation has no user"))?;
            (org.id, owner.id)
        }
        None => seed_org(state, now).await?,
    };
    let txn = state.db.write().await?;
    let (_, api_key) = organizations::add_api_key(
        &*txn,
        org_id,
        CreateApiKey {
            name: "demo (all scopes)".into(),
            user_id: owner_id,
            scopes: Scope::ALL.to_vec(),
            expires_at: None,
        },
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(Demo { org_id, api_key })
}

async fn seed_org(state: &AppState, now: i64) -> anyhow::Result<(Uuid, Uuid)> {
    let txn = state.db.write().await?;
    let org = organizations::create(
        &*txn,
        CreateOrganization {
            name: DEMO_ORG.into(),
            currency: Some("USD".into()),
            timezone: Some("America/Mexico_City".into()),
            included_utility_messages: Some(100),
        },
        now,
    )
    .await?;
    let owner = organizations::add_user(
        &*txn,
        org.id,
        "Olivia Owner",
        "olivia@demo.example.com",
        now,
    )
    .await?;
    let agent = organizations::add_user(
        &*txn,
        org.id,
        "Andrés Agent",
        "andres@demo.example.com",
        now,
    )
    .await?;
    txn.commit().await?;
    seed_campaign_kit(state, org.id).await?;
    let stages = db::lookups::stages(&state.db.conn, org.id).await?;
    let auth = AuthContext {
        key_id: Uuid::nil(),
        org_id: org.id,
        user_id: owner.id,
        user_name: owner.full_name.clone(),
        scopes: Scope::ALL.to_vec(),
        expires_at: None,
    };
    for i in 0..50usize {
        let (country, prefix) = COUNTRIES[i % COUNTRIES.len()];
        let first = FIRST[i % FIRST.len()];
        let last = LAST[(i / 2) % LAST.len()];
        let body = CreateContact {
            full_name: Some(format!("{first} {last}")),
            primary_phone: Some(format!("{prefix}{:07}", 1_000_000 + i * 37)),
            primary_email: Some(format!("{}.{i}@demo.example.com", first.to_lowercase())),
            company: Some(COMPANIES[i % COMPANIES.len()].into()),
            country: Some(country.into()),
            source: Some(
                [
                    ContactSource::Manual,
                    ContactSource::Import,
                    ContactSource::WebsiteForm,
                ][i % 3],
            ),
            lifecycle_stage_id: (i % 5 != 4).then(|| stages[i % stages.len()].id),
            owner_id: match i % 3 {
                0 => Some(owner.id),
                1 => Some(agent.id),
                _ => None,
            },
            opted_out: Some(i % 17 == 16),
            consent: Some(Consent {
                given: i % 4 != 3,
                at: None,
                how: (i % 4 != 3).then_some(ConsentHow::WebsiteForm),
            }),
            tags: Some(
                TAGS.iter()
                    .enumerate()
                    .filter(|(t, _)| (i + t) % 3 == 0)
                    .map(|(_, t)| (*t).to_owned())
                    .collect(),
            ),
            note: (i % 10 == 0).then(|| format!("Met {first} at the spring fair.")),
        };
        contacts::create(state, &auth, body)
            .await
            .map_err(|e| anyhow::anyhow!("seeding contact {i}: {e}"))?;
    }
    seed_conversations(state, org.id, now).await?;
    Ok((org.id, owner.id))
}

/// Two customers who wrote: one an hour ago (the 24-hour window is open: a reply goes as
/// text) and one two days ago (closed: only a template can be sent).
async fn seed_conversations(state: &AppState, org: Uuid, now: i64) -> anyhow::Result<()> {
    use wm_types::campaigns::Inbound;
    use wm_types::enums::ChannelType;
    const HOUR: i64 = 60 * 60 * 1000;
    for (name, number, text, ago) in [
        (
            "Tomás Torres",
            "5215512340002",
            "Hola, ¿puedo cambiar la dirección de mi pedido?",
            HOUR,
        ),
        (
            "Renata Ríos",
            "5215512340001",
            "¿Siguen abiertos el domingo?",
            48 * HOUR,
        ),
    ] {
        let body = Inbound {
            channel_type: ChannelType::MessagingAppA,
            external_id: number.into(),
            full_name: Some(name.into()),
            text: Some(text.into()),
        };
        crate::services::inbound::inbound_at(state, org, body, now - ago)
            .await
            .map_err(|e| anyhow::anyhow!("seeding {name}'s conversation: {e}"))?;
    }
    Ok(())
}

/// A sender number, three templates and 25.00 in the wallet.
async fn seed_campaign_kit(state: &AppState, org: Uuid) -> anyhow::Result<()> {
    use wm_types::Money;
    use wm_types::campaigns::{CreatePhoneNumber, CreateTemplate, TemplateCategory, TopUp};
    let err = |e: crate::error::ApiError| anyhow::anyhow!("{e}");
    crate::services::phone_numbers::create(
        state,
        org,
        CreatePhoneNumber {
            number_e164: "+525550000001".into(),
            display_name: "wm demo".into(),
            ..Default::default()
        },
    )
    .await
    .map_err(err)?;
    for (name, category, body) in [
        (
            "spring_sale",
            TemplateCategory::Marketing,
            "Our spring sale starts today: 20% off everything.",
        ),
        (
            "order_update",
            TemplateCategory::Utility,
            "Hi {{1}}, your order {{2}} is on its way.",
        ),
        (
            "welcome",
            TemplateCategory::Marketing,
            "Welcome to {{1}}, {{2}}!",
        ),
    ] {
        catalog::add_template(
            state,
            org,
            CreateTemplate {
                name: name.into(),
                category,
                language: "en".into(),
                body_text: body.into(),
                status: None,
            },
        )
        .await
        .map_err(err)?;
    }
    catalog::top_up(
        state,
        org,
        TopUp {
            amount: Money(25_000_000),
        },
    )
    .await
    .map_err(err)?;
    Ok(())
}
