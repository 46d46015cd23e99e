//! Templates, sender numbers and ledger entries (`wm_types::catalog`): rows that hold all
//! they show.

use wm_types::catalog::{LedgerEntry, PhoneNumber, Template};
use wm_types::{Money, Timestamp};

use crate::db::entities::{ledger_entry, phone_number, template};

impl From<template::Model> for Template {
    fn from(t: template::Model) -> Self {
        Template {
            id: t.id,
            variables: wm_core::templates::positions(&t.body_text),
            name: t.name,
            category: t.category,
            language: t.language,
            body_text: t.body_text,
            status: t.status,
            created_at: Timestamp::from_millis(t.created_at),
        }
    }
}

/// The token only as "set or not".
impl From<phone_number::Model> for PhoneNumber {
    fn from(p: phone_number::Model) -> Self {
        PhoneNumber {
            id: p.id,
            number_e164: p.number_e164,
            display_name: p.display_name,
            quality_rating: p.quality_rating,
            platform_phone_number_id: p.platform_phone_number_id,
            waba_id: p.waba_id,
            access_token_set: p.access_token_enc.is_some(),
            mps: p.mps.and_then(|n| u32::try_from(n).ok()),
            created_at: Timestamp::from_millis(p.created_at),
        }
    }
}

impl From<ledger_entry::Model> for LedgerEntry {
    fn from(e: ledger_entry::Model) -> Self {
        LedgerEntry {
            id: e.id,
            kind: e.kind,
            amount: Money(e.amount_micros),
            balance_after: Money(e.balance_after_micros),
            campaign_id: e.campaign_id,
            description: e.description,
            created_at: Timestamp::from_millis(e.created_at),
        }
    }
}
