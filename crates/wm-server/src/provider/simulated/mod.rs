//! The simulated messaging platform: accepts every message except to numbers ending in
//! 0000 ("Recipient is not a messaging account"); accepted ones get a DELIVERED receipt
//! carrying the message's correlation id. It keeps one row per send in the database and
//! does not de-duplicate, exactly like a real platform without idempotency keys, so the
//! pipeline's at-most-once guarantee is what keeps a message from being sent twice. A
//! receipt is handed over until the worker acknowledges it as applied, so none is lost to a
//! crash between the two.

use std::sync::Arc;

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use wm_core::provider::{
    Accepted, MediaUpload, MessagingProvider, OutboundMessage, PlatformAccount, SendError,
    StatusUpdate,
};
use wm_core::time::Clock;
use wm_types::enums::RecipientStatus;

use crate::db::Db;
use crate::db::entities::simulated_send;
use crate::provider::registry::Provider;
use wm_core::platform::Descriptor;

/// Why the simulated platform refuses a number.
pub const NOT_A_MESSAGING_ACCOUNT: &str = "Recipient is not a messaging account";

/// The simulated platform's channel: WhatsApp's (MESSAGING_APP_A, its window and media)
/// under its own name, so a demo or a test sends as a business would, without Meta.
pub const SIMULATED: Descriptor = Descriptor {
    provider: "simulated",
    ..wm_core::platform::descriptor::WHATSAPP
};

/// The simulated platform as a provider (it sends; nothing calls wm back).
pub fn provider(db: Db, clock: Arc<dyn Clock>) -> Provider {
    Provider::sender(&SIMULATED, Arc::new(SimulatedProvider::new(db, clock)))
}

/// The simulated platform.
pub struct SimulatedProvider {
    db: Db,
    clock: Arc<dyn Clock>,
}

impl SimulatedProvider {
    /// A platform logging to `db`, stamping its log with `clock` (the server's, so tests
    /// that move time see the platform's log move with it).
    pub fn new(db: Db, clock: Arc<dyn Clock>) -> Self {
        SimulatedProvider { db, clock }
    }
}

fn unavailable(e: impl std::fmt::Display) -> SendError {
    SendError::RetryLater(e.to_string())
}

#[async_trait::async_trait]
impl MessagingProvider for SimulatedProvider {
    fn name(&self) -> &'static str {
        "simulated"
    }

    async fn send(&self, m: &OutboundMessage) -> Result<Accepted, SendError> {
        let accepted = !m.to.stored().ends_with("0000");
        let id = format!("sim.{}", uuid::Uuid::now_v7().simple());
        let txn = self.db.write().await.map_err(unavailable)?;
        simulated_send::Entity::insert(simulated_send::ActiveModel {
            provider_message_id: Set(id.clone()),
            correlation_id: Set(m.correlation_id.clone()),
            sender: Set(m.from.clone()),
            recipient: Set(m.to.stored().to_owned()),
            body: Set(m.body.clone()),
            accepted: Set(accepted),
            receipt_sent: Set(false),
            created_at: Set(self.clock.now().timestamp_millis()),
        })
        .exec_without_returning(&*txn)
        .await
        .map_err(unavailable)?;
        txn.commit().await.map_err(unavailable)?;
        if accepted {
            Ok(Accepted::id(id))
        } else {
            Err(SendError::Rejected {
                reason: NOT_A_MESSAGING_ACCOUNT.to_owned(),
                opt_out: false,
            })
        }
    }

    /// The simulated platform takes any file and names it, so replies with media follow the
    /// same path as on a real platform.
    async fn upload_media(
        &self,
        _account: Option<&PlatformAccount>,
        file: &MediaUpload,
    ) -> Result<String, SendError> {
        Ok(format!(
            "sim-media.{}.{}",
            file.bytes.len(),
            uuid::Uuid::now_v7().simple()
        ))
    }

    async fn receipts(&self) -> Result<Vec<StatusUpdate>, SendError> {
        // Only read: they are marked handed over once applied (`acknowledge`).
        let rows: Vec<(String, String)> = simulated_send::Entity::find()
            .select_only()
            .column(simulated_send::Column::ProviderMessageId)
            .column(simulated_send::Column::CorrelationId)
            .filter(simulated_send::Column::Accepted.eq(true))
            .filter(simulated_send::Column::ReceiptSent.eq(false))
            .limit(5000)
            .into_tuple()
            .all(&self.db.conn)
            .await
            .map_err(unavailable)?;
        Ok(rows
            .into_iter()
            .map(|(id, correlation)| StatusUpdate {
                provider_message_id: id,
                correlation_id: Some(correlation),
                status: RecipientStatus::Delivered,
                at_ms: None,
                error: None,
                opt_out: false,
                recipient: None,
                recipient_user_id: None,
            })
            .collect())
    }

    async fn acknowledge(&self, receipts: &[StatusUpdate]) -> Result<(), SendError> {
        if receipts.is_empty() {
            return Ok(());
        }
        let ids: Vec<String> = receipts
            .iter()
            .map(|r| r.provider_message_id.clone())
            .collect();
        let txn = self.db.write().await.map_err(unavailable)?;
        for chunk in ids.chunks(500) {
            simulated_send::Entity::update_many()
                .col_expr(simulated_send::Column::ReceiptSent, Expr::val(true))
                .filter(simulated_send::Column::ProviderMessageId.is_in(chunk.to_vec()))
                .exec(&*txn)
                .await
                .map_err(unavailable)?;
        }
        txn.commit().await.map_err(unavailable)?;
        Ok(())
    }
}
