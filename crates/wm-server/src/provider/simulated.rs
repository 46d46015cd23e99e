//! The simulated messaging platform: accepts every message except to numbers ending in
//! 0000 ("Recipient is not a messaging account"); accepted ones are SENT, then a DELIVERED
//! receipt follows. Its message log lives in the database, keyed by the idempotency key, so
//! a message re-sent after a crash is not sent twice, even across restarts.

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use wm_core::provider::{MessagingProvider, OutboundMessage, SendError, StatusUpdate};
use wm_types::enums::RecipientStatus;

use crate::db::Db;
use crate::db::entities::simulated_message;

/// Why the simulated platform refuses a number.
pub const NOT_A_MESSAGING_ACCOUNT: &str = "Recipient is not a messaging account";

/// The simulated platform.
pub struct SimulatedProvider {
    db: Db,
}

impl SimulatedProvider {
    /// A platform logging to `db`.
    pub fn new(db: Db) -> Self {
        SimulatedProvider { db }
    }
}

fn unavailable(e: impl std::fmt::Display) -> SendError {
    SendError::Unavailable(e.to_string())
}

#[async_trait::async_trait]
impl MessagingProvider for SimulatedProvider {
    fn name(&self) -> &'static str {
        "simulated"
    }

    async fn send(&self, m: &OutboundMessage) -> Result<String, SendError> {
        let accepted = !m.to.ends_with("0000");
        let now = chrono::Utc::now().timestamp_millis();
        let txn = self.db.write().await.map_err(unavailable)?;
        simulated_message::Entity::insert(simulated_message::ActiveModel {
            idempotency_key: Set(m.idempotency_key.clone()),
            provider_message_id: Set(format!("sim.{}", uuid::Uuid::now_v7().simple())),
            sender: Set(m.from.clone()),
            recipient: Set(m.to.clone()),
            body: Set(m.body.clone()),
            accepted: Set(accepted),
            receipt_sent: Set(false),
            created_at: Set(now),
        })
        .on_conflict_do_nothing_on([simulated_message::Column::IdempotencyKey])
        .exec(&*txn)
        .await
        .map_err(unavailable)?;
        let row = simulated_message::Entity::find_by_id(m.idempotency_key.clone())
            .one(&*txn)
            .await
            .map_err(unavailable)?
            .ok_or_else(|| unavailable("message log row missing"))?;
        txn.commit().await.map_err(unavailable)?;
        if row.accepted {
            Ok(row.provider_message_id)
        } else {
            Err(SendError::Rejected(NOT_A_MESSAGING_ACCOUNT.to_owned()))
        }
    }

    async fn receipts(&self) -> Result<Vec<StatusUpdate>, SendError> {
        let txn = self.db.write().await.map_err(unavailable)?;
        let rows: Vec<String> = simulated_message::Entity::find()
            .select_only()
            .column(simulated_message::Column::ProviderMessageId)
            .filter(simulated_message::Column::Accepted.eq(true))
            .filter(simulated_message::Column::ReceiptSent.eq(false))
            .limit(5000)
            .into_tuple()
            .all(&*txn)
            .await
            .map_err(unavailable)?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        simulated_message::Entity::update_many()
            .col_expr(simulated_message::Column::ReceiptSent, Expr::val(true))
            .filter(simulated_message::Column::ProviderMessageId.is_in(rows.clone()))
            .exec(&*txn)
            .await
            .map_err(unavailable)?;
        txn.commit().await.map_err(unavailable)?;
        Ok(rows
            .into_iter()
            .map(|id| StatusUpdate {
                provider_message_id: id,
                status: RecipientStatus::Delivered,
                error: None,
            })
            .collect())
    }
}
