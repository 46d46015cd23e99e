//! The scale benchmark's inbox stage: one contact in ten writes in (the operator's
//! `inbound`, sixteen at a time), a few of their conversations are assigned or resolved,
//! then the conversation list (tabs, summary, filters, search, a deep page) and a contact's
//! timeline are timed.

use std::time::Instant;

use futures::{StreamExt, TryStreamExt};
use reqwest::Method;
use serde_json::json;

use super::harness::{ADMIN, call};
use super::measure::timed_lines;

/// What the stage measured.
pub struct InboxTimes {
    pub conversations: usize,
    pub per_s: f64,
    /// Report lines of the timed reads.
    pub reads: Vec<String>,
}

/// Runs the stage on the organisation `org` of `n` contacts (phones `+52155{i:08}`), whose
/// user is `user`.
pub async fn inbox(
    http: &reqwest::Client,
    base: &str,
    org: &str,
    user: &str,
    key: &str,
    n: usize,
) -> anyhow::Result<InboxTimes> {
    let admin = format!("{base}/admin/organizations/{org}");
    let count = n / 10;
    let t = Instant::now();
    let ids: Vec<String> = futures::stream::iter(0..count)
        .map(|k| {
            let i = k * 10;
            let url = format!("{admin}/inbound");
            async move {
                let (status, r) = call(
                    http,
                    Method::POST,
                    url,
                    ADMIN,
                    Some(json!({"channelType": "MESSAGING_APP_A",
                                "externalId": format!("52155{i:08}")})),
                )
                .await;
                anyhow::ensure!(status == 200, "inbound: {status} {r}");
                Ok(r["conversationId"].as_str().unwrap_or_default().to_owned())
            }
        })
        .buffered(16)
        .try_collect()
        .await?;
    let per_s = count as f64 / t.elapsed().as_secs_f64();
    println!(
        "{count} conversations in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    // One in a hundred assigned to the user, one in a hundred resolved.
    futures::stream::iter(ids.iter().enumerate().filter(|(k, _)| k % 50 < 2))
        .map(|(k, id)| {
            let body = if k % 50 == 0 {
                json!({"assignedToUserId": user})
            } else {
                json!({"status": "RESOLVED"})
            };
            let url = format!("{admin}/conversations/{id}");
            async move {
                let (status, r) = call(http, Method::PATCH, url, ADMIN, Some(body)).await;
                anyhow::ensure!(status == 200, "conversation: {status} {r}");
                Ok(())
            }
        })
        .buffered(16)
        .try_collect::<Vec<()>>()
        .await?;
    let deep = (count / 20 / 2).clamp(1, 10_000);
    let contact = {
        let (_, c) = call(
            http,
            Method::GET,
            format!("{base}/conversations?pageSize=1"),
            key,
            None,
        )
        .await;
        c["data"][0]["contactId"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let reads: Vec<(String, String)> = [
        ("conversations", "/conversations".to_owned()),
        (
            "conversations filter=unassigned",
            "/conversations?filter=unassigned".to_owned(),
        ),
        (
            "conversations filter=mine",
            "/conversations?filter=mine".to_owned(),
        ),
        (
            "conversations status=RESOLVED",
            "/conversations?status=RESOLVED".to_owned(),
        ),
        (
            "conversations q=lópez",
            "/conversations?q=l%C3%B3pez".to_owned(),
        ),
        (
            "conversations page {deep}",
            format!("/conversations?page={deep}"),
        ),
        ("contact timeline", format!("/contacts/{contact}/timeline")),
    ]
    .into_iter()
    .map(|(name, path)| (name.replace("{deep}", &deep.to_string()), path))
    .collect();
    Ok(InboxTimes {
        conversations: count,
        per_s,
        reads: timed_lines(http, key, base, &reads).await?,
    })
}
