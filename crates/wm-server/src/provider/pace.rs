//! The pace of every sender number, held across replicas.
//!
//! A number may send `mps` messages per second in total, whichever processes send for it.
//! Its send slots lie on one timeline, `1/mps` apart, kept in the database
//! (`sender_paces.next_at_us`, the first slot nobody has taken): a process takes a block of
//! slots with one atomic upsert, then hands them to its own sends in order, each waiting
//! for its slot. Blocks are a quarter of a second's worth, so two processes sending for one
//! number interleave their blocks and neither holds slots it will not use for long. A slot
//! more than one interval in the past is never used (it would bunch with slots others now
//! hold); unused slots are simply lost, which can only slow a number down, never speed it
//! up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sea_orm::sea_query::{Alias, CaseStatement, Expr, OnConflict, Query};
use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;

use crate::db::Db;

/// Messages per second per sender number, as the platform allows: the server's default
/// (`WM_PROVIDER_MPS`) or the number's own (`mps`, for numbers the platform upgraded).
#[derive(Clone)]
pub struct Pacer {
    db: Db,
    default_mps: u32,
    senders: Arc<Mutex<HashMap<Uuid, Arc<tokio::sync::Mutex<Slots>>>>>,
}

/// The slots this process holds for one sender: `next`, `next + interval`, … before `end`
/// (µs since the epoch).
#[derive(Debug, Default)]
struct Slots {
    mps: u32,
    next: i64,
    end: i64,
}

/// Wall time in µs. Pacing is the one clock read that does not go through the injected
/// clock on purpose: it bounds the real rate at which the platform is called, and a test
/// clock standing still would stall every send.
fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

impl Pacer {
    /// `mps` messages per second per sender by default (0 turns pacing off, for benchmarks).
    pub fn new(db: Db, mps: u32) -> Pacer {
        Pacer {
            db,
            default_mps: mps,
            senders: Arc::default(),
        }
    }

    /// Waits for the sender's next slot; `own_mps` is the number's own pace, if it has one.
    pub async fn wait(&self, sender: Uuid, own_mps: Option<u32>) -> Result<(), DbErr> {
        let mps = own_mps.unwrap_or(self.default_mps);
        if mps == 0 {
            return Ok(());
        }
        let interval = (1_000_000 / i64::from(mps)).max(1);
        let cell = {
            let mut map = self.senders.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(sender).or_default().clone()
        };
        loop {
            let slot = self.take(&cell, sender, mps, interval).await?;
            let wait = slot - now_us();
            if wait > 0 {
                tokio::time::sleep(Duration::from_micros(wait.unsigned_abs())).await;
            }
            // Woken more than an interval late (a busy runtime): sending now would bunch
            // with the slots after it, so this one is given up and another taken.
            if now_us() <= slot + interval {
                return Ok(());
            }
        }
    }

    /// The next slot this process holds for the sender, taking a block when none is left.
    async fn take(
        &self,
        cell: &tokio::sync::Mutex<Slots>,
        sender: Uuid,
        mps: u32,
        interval: i64,
    ) -> Result<i64, DbErr> {
        let mut s = cell.lock().await;
        if s.mps != mps {
            *s = Slots {
                mps,
                ..Slots::default()
            };
        }
        let now = now_us();
        if s.next + interval < now {
            // Late slots are dropped, not bunched.
            s.next += (now - s.next) / interval * interval;
        }
        if s.next >= s.end {
            let block = i64::from(mps / 4).max(1);
            let end = self.reserve(sender, now, block * interval).await?;
            s.next = end - block * interval;
            s.end = end;
        }
        let slot = s.next;
        s.next += interval;
        Ok(slot)
    }

    /// Takes `span_us` of the sender's timeline from its first free slot (or from now, if
    /// that is later); returns where the taken span ends.
    async fn reserve(&self, sender: Uuid, now: i64, span_us: i64) -> Result<i64, DbErr> {
        let table = Alias::new("sender_paces");
        let id = Alias::new("phone_number_id");
        let next = Alias::new("next_at_us");
        use sea_orm::sea_query::ExprTrait;
        // The first free slot, or now when the number has been idle.
        let current = Expr::col((table.clone(), next.clone()));
        let start: Expr = CaseStatement::new()
            .case(current.clone().gt(now), current)
            .finally(now)
            .into();
        let q = Query::insert()
            .into_table(table)
            .columns([id.clone(), next.clone()])
            .values_panic([sender.into(), (now + span_us).into()])
            .on_conflict(
                OnConflict::column(id)
                    .value(next.clone(), start.add(span_us))
                    .to_owned(),
            )
            .returning_col(next)
            .to_owned();
        let txn = self.db.write().await?;
        let row = txn
            .query_one(&q)
            .await?
            .ok_or_else(|| DbErr::RecordNotFound("the pace upsert returned no row".into()))?;
        let end: i64 = row.try_get("", "next_at_us")?;
        txn.commit().await?;
        Ok(end)
    }
}
