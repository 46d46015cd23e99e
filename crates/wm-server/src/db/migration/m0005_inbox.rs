//! Conversations, automations and their runs.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::{fk, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("conversations")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("contact_id"))
                .col(uuid("channel_id"))
                .col(string("channel_type"))
                .col(string("external_conversation_id"))
                .col(string("status"))
                .col(string("initiated_by"))
                .col(uuid_null("assigned_to_user_id"))
                .col(big_integer_null("resolved_at"))
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .foreign_key(&mut fk("conversations", "organization_id", "organizations"))
                .foreign_key(&mut fk("conversations", "contact_id", "contacts"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_conversations_org_updated",
            "conversations",
            &["organization_id", "updated_at"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_conversations_contact",
            "conversations",
            &["contact_id", "updated_at"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("automations")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("created_by_user_id"))
                .col(string("name"))
                .col(string("status"))
                .col(string("trigger_type"))
                .col(text("trigger_config"))
                .col(text("steps"))
                .col(string_null("template_key"))
                .col(string_null("paused_reason"))
                .col(integer("failure_count"))
                .col(big_integer_null("last_run_at"))
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .foreign_key(&mut fk("automations", "organization_id", "organizations"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_automations_org",
            "automations",
            &["organization_id", "trigger_type"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("automation_runs")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("automation_id"))
                .col(uuid_null("contact_id"))
                .col(string("result"))
                .col(integer("next_step"))
                .col(big_integer_null("resume_at"))
                .col(big_integer_null("locked_until"))
                .col(text("steps_log"))
                .col(text_null("error"))
                .col(string_null("trigger_key"))
                .col(integer("templates_sent"))
                .col(big_integer("cost_micros"))
                .col(big_integer("started_at"))
                .col(big_integer_null("finished_at"))
                .foreign_key(&mut fk("automation_runs", "automation_id", "automations"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ux_runs_automation_trigger",
            "automation_runs",
            &["automation_id", "trigger_key"],
            true,
        ))
        .await?;
        m.create_index(index(
            "ix_runs_due",
            "automation_runs",
            &["result", "resume_at"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_runs_automation_started",
            "automation_runs",
            &["automation_id", "started_at"],
            false,
        ))
        .await?;
        Ok(())
    }
}
