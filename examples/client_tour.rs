//! A tour of `wm-client` against a running server: contacts (create, list with a filter, a
//! note, the timeline), then a campaign from the demo's sender number and `spring_sale`
//! template to everyone tagged `vip` (audience, cost per market, send now), polled until
//! COMPLETED, and finally the wallet's latest ledger entries.
//!
//! ```text
//! cargo run -p wm-server -- serve --demo          # prints WM_DEMO_API_KEY=wm_live_…
//! WM_KEY=wm_live_… cargo run -p wm-examples --example client_tour
//! ```
//!
//! `WM_BASE_URL` defaults to `http://127.0.0.1:8080/api/v1`. Each run creates one contact
//! and one campaign (about 1.00 of the demo wallet's 25.00). Exits non-zero on any failure.

use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use wm_client::types::Money;
use wm_client::types::campaigns::{Audience, CampaignStatus, CreateCampaign};
use wm_client::types::contacts::{
    Consent, Contact, CreateContact, CreateNote, TimelineEntry, TimelineKind,
};
use wm_client::types::enums::ConsentHow;
use wm_client::{Client, Error, ErrorCode};

const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8080/api/v1";
/// How long to wait for the campaign to complete.
const POLL_FOR: Duration = Duration::from_secs(30);

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("client_tour failed: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let base = std::env::var("WM_BASE_URL").unwrap_or_else(|_| DEFAULT_BASE_URL.to_owned());
    let key = std::env::var("WM_KEY").context(
        "WM_KEY is not set: export the WM_DEMO_API_KEY that `wm-server serve --demo` printed",
    )?;
    let client = Client::builder()
        .base_url(&base)
        .api_key(key)
        .timeout(Duration::from_secs(10))
        .build()?;
    println!("wm-client tour against {base}\n");

    let contact = contacts(&client).await?;
    campaign(&client, &contact).await?;
    wallet(&client).await?;
    println!("\nTour complete.");
    Ok(())
}

/// Create (or, on a rerun, find) a contact, list with a filter, add a note, read the
/// timeline.
async fn contacts(client: &Client) -> anyhow::Result<Contact> {
    println!("== Contacts");
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .context("system clock before 1970")?
        .as_millis();
    // A US number that the simulated platform accepts (it refuses those ending in 0000).
    let phone = format!("+1415555{:04}", 1000 + millis % 9000);
    let body = CreateContact {
        full_name: Some("Tour Guest".into()),
        primary_phone: Some(phone.clone()),
        primary_email: Some(format!("tour.{millis}@example.com")),
        company: Some("wm tour".into()),
        consent: Some(Consent {
            given: true,
            at: None,
            how: Some(ConsentHow::WebsiteForm),
        }),
        tags: Some(vec!["vip".into(), "tour".into()]),
        note: Some("Created by the client tour.".into()),
        ..Default::default()
    };
    let contact = match client.contacts().create(&body).await {
        Ok(c) => {
            println!(
                "created contact {} {:?} {}",
                c.id,
                c.full_name.as_deref().unwrap_or("-"),
                c.primary_phone.as_deref().unwrap_or("-")
            );
            c
        }
        // The typed error says which contact has the phone already: reuse it.
        Err(Error::Api {
            code: Some(ErrorCode::ContactPhoneExists),
            body,
            ..
        }) => {
            let id = body["contactId"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .context("409 CONTACT_PHONE_EXISTS without contactId")?;
            println!(
                "{phone} belongs to contact {id} already (409 CONTACT_PHONE_EXISTS): reusing it"
            );
            client.contacts().get(id).await?
        }
        Err(e) => return Err(e).context("creating the contact"),
    };
    for identity in &contact.identities {
        println!(
            "  identity {} {}",
            identity.channel_type, identity.external_id
        );
    }

    let vips = client
        .contacts()
        .list()
        .tag("vip")
        .page_size(5)
        .send()
        .await
        .context("listing contacts tagged vip")?;
    println!(
        "{} contacts tagged vip ({} with consent in the organisation); the newest {}:",
        vips.meta.total,
        vips.summary.with_consent,
        vips.data.len()
    );
    for c in &vips.data {
        println!(
            "  {:<24} {:<16} stage {}",
            c.full_name.as_deref().unwrap_or("-"),
            c.primary_phone.as_deref().unwrap_or("-"),
            c.lifecycle_stage
                .as_ref()
                .map(|s| s.name.as_str())
                .unwrap_or("-")
        );
    }

    let note = client
        .contacts()
        .add_note(
            contact.id,
            &CreateNote {
                body: "Sent the spring sale by the tour.".into(),
            },
        )
        .await
        .context("adding a note")?;
    println!("note by {}: {:?}", note.author.full_name, note.body);
    let timeline = client
        .contacts()
        .timeline(contact.id)
        .page_size(10)
        .send()
        .await
        .context("reading the timeline")?;
    println!("timeline ({} entries, newest first):", timeline.meta.total);
    for entry in &timeline.data {
        println!("  {}  {}", entry.at, describe(entry));
    }
    Ok(contact)
}

fn describe(entry: &TimelineEntry) -> String {
    match &entry.kind {
        TimelineKind::Created { source } => format!("created ({source})"),
        TimelineKind::Stage { by, from, to, .. } => format!(
            "stage {} -> {} by {by}",
            from.as_deref().unwrap_or("none"),
            to.as_deref().unwrap_or("none")
        ),
        TimelineKind::Note { author, body } => format!("note by {author}: {body:?}"),
        TimelineKind::Campaign {
            campaign, status, ..
        } => format!("campaign {:?}: {status}", campaign.name),
        TimelineKind::Conversation { conversation } => format!(
            "conversation on {}: {}",
            conversation.channel_type, conversation.status
        ),
        TimelineKind::Consent { opted_out, by, .. } => format!("opted out: {opted_out} by {by}"),
        TimelineKind::Phone { from, to, .. } => {
            format!("phone {} -> {to}", from.as_deref().unwrap_or("none"))
        }
        // Kinds a newer server adds.
        _ => "another kind".to_owned(),
    }
}

fn money(m: Money) -> String {
    format!("{:.4}", m.to_decimal())
}

/// Pick the demo's sender and `spring_sale`, create, add the vip audience, preview, send
/// now, then poll until COMPLETED.
async fn campaign(client: &Client, contact: &Contact) -> anyhow::Result<()> {
    println!("\n== Campaign");
    let numbers = client.lookups().phone_numbers().await?;
    let sender = numbers
        .iter()
        .find(|n| n.display_name == "wm demo")
        .or_else(|| numbers.first())
        .context("the organisation has no sender number (run `serve --demo`)")?;
    let templates = client.lookups().templates().await?;
    let template = templates
        .iter()
        .find(|t| t.name == "spring_sale")
        .context("no spring_sale template (run `serve --demo`)")?;
    println!(
        "sender {} ({}), template {} [{}]: {:?}",
        sender.number_e164,
        sender.display_name,
        template.name,
        template.category,
        template.body_text
    );

    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .context("system clock before 1970")?
        .as_secs();
    let draft = client
        .campaigns()
        .create(&CreateCampaign {
            name: format!("Client tour {stamp}"),
            phone_number_id: sender.id,
            template_id: template.id,
            scheduled_at: None,
            variables: None,
        })
        .await
        .context("creating the campaign")?;
    println!(
        "created campaign {} {:?}: {}",
        draft.id, draft.name, draft.status
    );

    let audience = client
        .campaigns()
        .add_recipients(
            draft.id,
            &Audience {
                tag: Some("vip".into()),
                ..Default::default()
            },
        )
        .await
        .context("adding the vip audience")?;
    println!(
        "audience tag vip: {} contacts, {} opted out or without consent, {} without phone, \
         {} unpriceable -> {} recipients",
        audience.total,
        audience.opted_out,
        audience.without_phone,
        audience.unpriceable,
        audience.total_recipients
    );
    if audience.total_recipients == 0 {
        bail!("the audience is empty");
    }

    let preview = client.campaigns().preview_cost(draft.id).await?;
    println!("cost preview ({}):", preview.currency);
    for m in &preview.by_market {
        println!(
            "  {:<14} {:<16} {:>3} x {} = {}",
            m.market,
            m.label,
            m.recipient_count,
            money(m.total_cost),
            money(m.subtotal)
        );
    }
    println!(
        "  total {} for {} recipients ({} unpriceable); wallet {} -> {} after the send",
        money(preview.estimated_total),
        preview.recipient_count,
        preview.unpriceable_count,
        money(preview.wallet.balance),
        money(preview.wallet.after_send)
    );
    if !preview.wallet.sufficient {
        bail!("the wallet cannot pay for this campaign; top it up first");
    }

    let sent = client
        .campaigns()
        .send_now(draft.id)
        .await
        .context("sending the campaign")?;
    println!("send now: {}", sent.status);

    let started = Instant::now();
    let mut last = None;
    let done = loop {
        let c = client.campaigns().get(draft.id).await?;
        let s = &c.stats;
        let line = format!(
            "{:<9} {:>5.1}%  total {} pending {} sent {} delivered {} read {} failed {}",
            c.status.to_string(),
            s.progress_pct,
            s.total,
            s.pending,
            s.sent,
            s.delivered,
            s.read,
            s.failed
        );
        if last.as_ref() != Some(&line) {
            println!("  [{:>4.1}s] {line}", started.elapsed().as_secs_f64());
            last = Some(line);
        }
        match c.status {
            CampaignStatus::Completed => break c,
            CampaignStatus::Paused => bail!(
                "the campaign was paused ({})",
                c.stop_reason.as_deref().unwrap_or("by a user")
            ),
            _ if started.elapsed() > POLL_FOR => {
                bail!("the campaign is still {} after {POLL_FOR:?}", c.status)
            }
            _ => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    };
    println!(
        "completed in {:.1}s: {} sent, {} failed, real cost {}",
        started.elapsed().as_secs_f64(),
        done.stats.sent,
        done.stats.failed,
        done.real_cost.map(money).unwrap_or_else(|| "-".into())
    );
    for e in done.errors_by_reason.iter().flatten() {
        println!("  failed: {} x {}", e.count, e.reason);
    }
    let mine = client
        .contacts()
        .timeline(contact.id)
        .kind(wm_client::types::contacts::TimelineFilter::Campaigns)
        .send()
        .await?;
    if let Some(entry) = mine.data.first() {
        println!("the tour's contact sees: {}", describe(entry));
    }
    Ok(())
}

/// The wallet's balance and latest ledger entries.
async fn wallet(client: &Client) -> anyhow::Result<()> {
    println!("\n== Wallet");
    let w = client.lookups().wallet().await?;
    println!(
        "balance {} {} ({} of {} included UTILITY messages left this month)",
        money(w.balance),
        w.currency,
        w.included_utility_remaining,
        w.included_utility_messages
    );
    println!("recent ledger entries:");
    for e in w.recent_entries.iter().take(5) {
        println!(
            "  {}  {:<6} {:>9}  balance {:>9}  {}",
            e.created_at,
            e.kind.to_string(),
            money(e.amount),
            money(e.balance_after),
            e.description
        );
    }
    Ok(())
}
