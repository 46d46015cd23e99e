//! Campaign benchmark: build a 20,000-contact audience and send it `now` through the
//! simulated platform with pacing off, until COMPLETED. SQLite file by default;
//! `WM_BENCH_DATABASE_URL=postgres://…/db` for PostgreSQL (the database is created).
//!
//! `cargo bench -p wm-benches --bench campaign` (env `CONTACTS`, default 20000).
//!
//! `PROVIDER=whatsapp` sends through the WhatsApp provider to the fake Graph API instead
//! (`wm-fake-graph`, status webhooks off), split over `NUMBERS` sender numbers (default 13),
//! one campaign each, paced at `MPS` per number (default 0: unpaced); it prints messages/s
//! and the busiest second the fake saw per number.

use std::sync::Arc;
use std::time::Instant;

use sea_orm::{ActiveValue::Set, ConnectionTrait, Database, EntityTrait};
use uuid::Uuid;
use wm_server::db::Db;
use wm_server::db::entities::contact;
use wm_server::services::{campaigns, catalog, organizations};
use wm_server::state::{AppState, Settings};
use wm_server::worker::campaigns::CampaignWorker;
use wm_types::Money;
use wm_types::campaigns::{
    Audience, CreateCampaign, CreatePhoneNumber, CreateTemplate, SendCampaign, TemplateCategory,
    TopUp,
};

fn err(e: wm_server::error::ApiError) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

async fn database() -> anyhow::Result<(Db, String)> {
    match std::env::var("WM_BENCH_DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => {
            let admin = Database::connect(&url).await?;
            let name = format!("wm_bench_{}", Uuid::now_v7().simple());
            admin
                .execute_unprepared(&format!("CREATE DATABASE {name}"))
                .await?;
            let (server, _) = url
                .rsplit_once('/')
                .ok_or_else(|| anyhow::anyhow!("url without a database"))?;
            Ok((
                Db::connect(&format!("{server}/{name}")).await?,
                "PostgreSQL".into(),
            ))
        }
        _ => {
            let path =
                std::env::temp_dir().join(format!("wm-bench-{}.db", Uuid::now_v7().simple()));
            Ok((
                Db::connect(&format!("sqlite://{}?mode=rwc", path.display())).await?,
                "SQLite".into(),
            ))
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let n: usize = std::env::var("CONTACTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let env_num = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let whatsapp = std::env::var("PROVIDER").as_deref() == Ok("whatsapp");
    let numbers = if whatsapp {
        env_num("NUMBERS", 13).max(1)
    } else {
        1
    };
    let (db, backend) = database().await?;
    db.migrate().await?;
    let mut settings = Settings::new("bench");
    settings.provider_mps = u32::try_from(env_num("MPS", 0)).unwrap_or(0);
    let fake = if whatsapp {
        let fake = wm_fake_graph::FakeGraph::start(Default::default()).await?;
        for i in 0..numbers {
            fake.register_number(wm_fake_graph::NumberSpec {
                phone_number_id: format!("1090{i:04}"),
                waba_id: "2090".into(),
                display_phone_number: format!("52550000{i:04}"),
                access_token: "bench-token".into(),
            });
        }
        fake.register_template(wm_fake_graph::TemplateSpec {
            waba_id: "2090".into(),
            name: "promo".into(),
            language: "en".into(),
            category: "MARKETING".into(),
            status: wm_fake_graph::TemplateStatus::Approved,
            body_text: "Hello {{1}}".into(),
        });
        settings.providers.whatsapp.graph_url = fake.url();
        settings.providers.messaging = "whatsapp".into();
        Some(fake)
    } else {
        None
    };
    let state = match &fake {
        Some(_) => {
            let clock: Arc<dyn wm_core::time::Clock> = Arc::new(wm_core::time::SystemClock);
            let registry = wm_server::provider::registry(&settings.providers, &db, clock.clone())
                .map_err(|e| anyhow::anyhow!(e))?;
            AppState::with_registry(
                db,
                clock,
                settings.clone(),
                registry,
                Some(wm_server::secrets::SecretKey::generate()),
            )
        }
        None => AppState::new(db, Arc::new(wm_core::time::SystemClock), settings),
    };
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let org = organizations::create(
        &*txn,
        wm_types::admin::CreateOrganization {
            name: "bench".into(),
            currency: None,
            timezone: None,
            included_utility_messages: None,
        },
        now,
    )
    .await
    .map_err(err)?;
    txn.commit().await?;
    // 20,000 consenting contacts across markets, written directly (seeding is not measured).
    let prefixes = [
        "+52155", "+1415", "+3461", "+55119", "+57300", "+4477", "+9199",
    ];
    let rows: Vec<contact::ActiveModel> = (0..n)
        .map(|i| contact::ActiveModel {
            id: Set(Uuid::now_v7()),
            organization_id: Set(org.id),
            full_name: Set(Some(format!("Contact {i}"))),
            primary_phone: Set(Some(format!(
                "{}{:07}",
                prefixes[i % prefixes.len()],
                i + 1
            ))),
            primary_email: Set(None),
            company: Set(None),
            country: Set(None),
            source: Set(wm_types::enums::ContactSource::Import),
            lifecycle_stage_id: Set(None),
            owner_id: Set(None),
            opted_out: Set(false),
            consent_given: Set(true),
            consent_at: Set(None),
            consent_how: Set(None),
            tags: Set("[]".into()),
            identities: Set("[]".into()),
            open_deals: Set(0),
            search_text: Set(String::new()),
            stage_changed_at: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        })
        .collect();
    let ids: Vec<Uuid> = rows.iter().filter_map(|r| r.id.clone().take()).collect();
    let txn = state.db.write().await?;
    for chunk in rows.chunks(1000) {
        contact::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(&*txn)
            .await?;
    }
    txn.commit().await?;
    let mut senders = Vec::with_capacity(numbers);
    for i in 0..numbers {
        let number = wm_server::services::phone_numbers::create(
            &state,
            org.id,
            CreatePhoneNumber {
                number_e164: format!("+52550000{i:04}"),
                display_name: "Bench".into(),
                platform_phone_number_id: whatsapp.then(|| format!("1090{i:04}")),
                waba_id: whatsapp.then(|| "2090".into()),
                access_token: whatsapp.then(|| "bench-token".into()),
                ..Default::default()
            },
        )
        .await
        .map_err(err)?;
        senders.push(number);
    }
    let template = catalog::add_template(
        &state,
        org.id,
        CreateTemplate {
            name: "promo".into(),
            category: TemplateCategory::Marketing,
            language: "en".into(),
            body_text: "Hello {{1}}".into(),
            status: None,
        },
    )
    .await
    .map_err(err)?;
    catalog::top_up(
        &state,
        org.id,
        TopUp {
            amount: Money(100_000_000_000),
        },
    )
    .await
    .map_err(err)?;
    let mut vars = serde_json::Map::new();
    vars.insert(
        "1".into(),
        serde_json::Value::String("{{firstName}}".into()),
    );
    let per = ids.len().div_ceil(numbers);
    let mut created = Vec::with_capacity(numbers);
    let t = Instant::now();
    for (number, slice) in senders.iter().zip(ids.chunks(per.max(1))) {
        let c = campaigns::create(
            &state,
            org.id,
            CreateCampaign {
                name: "Bench".into(),
                phone_number_id: number.id,
                template_id: template.id,
                scheduled_at: None,
                variables: Some(vars.clone()),
            },
        )
        .await
        .map_err(err)?;
        campaigns::add_audience(
            &state,
            org.id,
            c.id,
            Audience {
                contact_ids: Some(slice.to_vec()),
                ..Default::default()
            },
        )
        .await
        .map_err(err)?;
        created.push(c);
    }
    let audience = t.elapsed();
    println!(
        "{backend}: audience of {} contacts (contactIds, {} campaigns) in {:.0} ms",
        n,
        created.len(),
        audience.as_secs_f64() * 1000.0,
    );

    let t = Instant::now();
    for c in &created {
        campaigns::send(&state, org.id, c.id, SendCampaign::default())
            .await
            .map_err(err)?;
    }
    let charged = t.elapsed();
    let worker = CampaignWorker::new(state.clone());
    let mut sent = 0;
    let mut completed = 0;
    loop {
        let out = worker.run_once().await?;
        sent += out.sent + out.rejected;
        completed += out.completed;
        if completed >= created.len()
            || (out.sent == 0 && out.rejected == 0 && out.receipts == 0 && out.retried == 0)
        {
            break;
        }
    }
    let total = t.elapsed();
    let detail = campaigns::get(&state, org.id, created[0].id)
        .await
        .map_err(err)?;
    println!(
        "{backend}, {}: send now of {sent} messages from {numbers} number(s): charged in {:.0} ms, {completed} COMPLETED (first: {:?}) in {:.2} s = {:.0} messages/s",
        state.settings.providers.messaging,
        charged.as_secs_f64() * 1000.0,
        detail.status,
        total.as_secs_f64(),
        sent as f64 / total.as_secs_f64()
    );
    if let Some(fake) = &fake {
        let busiest = (0..numbers)
            .map(|i| fake.max_mps(&format!("1090{i:04}")))
            .max()
            .unwrap_or(0);
        println!(
            "the fake accepted {} messages; busiest second of any number: {busiest}",
            fake.accepted_count()
        );
    }
    Ok(())
}
