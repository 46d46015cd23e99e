//! Campaign benchmark: build a 20,000-contact audience and send it `now` through the
//! simulated platform with pacing off, until COMPLETED. SQLite file by default;
//! `WM_BENCH_DATABASE_URL=postgres://…/db` for PostgreSQL (the database is created).
//!
//! `cargo bench -p wm-benches --bench campaign` (env `CONTACTS`, default 20000).

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
    let (db, backend) = database().await?;
    db.migrate().await?;
    let mut settings = Settings::new("bench");
    settings.provider_mps = 0;
    let state = AppState::new(db, Arc::new(wm_core::time::SystemClock), settings);
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
            source: Set("IMPORT".into()),
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
    let number = wm_server::services::phone_numbers::create(
        &state,
        org.id,
        CreatePhoneNumber {
            number_e164: "+525500000001".into(),
            display_name: "Bench".into(),
            ..Default::default()
        },
    )
    .await
    .map_err(err)?;
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
    let c = campaigns::create(
        &state,
        org.id,
        CreateCampaign {
            name: "Bench".into(),
            phone_number_id: number.id,
            template_id: template.id,
            scheduled_at: None,
            variables: Some(vars),
        },
    )
    .await
    .map_err(err)?;

    let t = Instant::now();
    let added = campaigns::add_audience(
        &state,
        org.id,
        c.id,
        Audience {
            contact_ids: Some(ids),
            ..Default::default()
        },
    )
    .await
    .map_err(err)?;
    let audience = t.elapsed();
    println!(
        "{backend}: audience of {} contacts (contactIds) in {:.0} ms ({} added)",
        n,
        audience.as_secs_f64() * 1000.0,
        added.added
    );

    let t = Instant::now();
    campaigns::send(&state, org.id, c.id, SendCampaign::default())
        .await
        .map_err(err)?;
    let charged = t.elapsed();
    let worker = CampaignWorker::new(state.clone());
    let mut sent = 0;
    loop {
        let out = worker.run_once().await?;
        sent += out.sent + out.rejected;
        if out.completed > 0 || (out.sent == 0 && out.rejected == 0 && out.receipts == 0) {
            break;
        }
    }
    let total = t.elapsed();
    let detail = campaigns::get(&state, org.id, c.id).await.map_err(err)?;
    println!(
        "{backend}: send now of {sent} messages: charged in {:.0} ms, COMPLETED ({:?}) in {:.2} s = {:.0} messages/s",
        charged.as_secs_f64() * 1000.0,
        detail.status,
        total.as_secs_f64(),
        sent as f64 / total.as_secs_f64()
    );
    Ok(())
}
