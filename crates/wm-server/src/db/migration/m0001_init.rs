//! Organisations, users, keys, stages, channels, contacts and what hangs off them, and the
//! event outbox.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::{fk, fk_set_null, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("organizations")
                .col(pk_uuid("id"))
                .col(string("name"))
                .col(string("currency"))
                .col(string("timezone"))
                .col(big_integer("included_utility_messages"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("users")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string("full_name"))
                .col(string("email"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk("users", "organization_id", "organizations"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ux_users_org_email",
            "users",
            &["organization_id", "email"],
            true,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("api_keys")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("user_id"))
                .col(string("name"))
                .col(string_uniq("key_hash"))
                .col(string("prefix"))
                .col(string("scopes"))
                .col(big_integer_null("expires_at"))
                .col(big_integer_null("revoked_at"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk("api_keys", "organization_id", "organizations"))
                .foreign_key(&mut fk("api_keys", "user_id", "users"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("lifecycle_stages")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string("name"))
                .col(integer("position"))
                .col(string("category"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk(
                    "lifecycle_stages",
                    "organization_id",
                    "organizations",
                ))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_stages_org",
            "lifecycle_stages",
            &["organization_id", "position"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("channels")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string("channel_type"))
                .col(boolean("active"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk("channels", "organization_id", "organizations"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_channels_org",
            "channels",
            &["organization_id", "channel_type"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("contacts")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string_null("full_name"))
                .col(string_null("primary_phone"))
                .col(string_null("primary_email"))
                .col(string_null("company"))
                .col(string_null("country"))
                .col(string("source"))
                .col(uuid_null("lifecycle_stage_id"))
                .col(uuid_null("owner_id"))
                .col(boolean("opted_out"))
                .col(boolean("consent_given"))
                .col(big_integer_null("consent_at"))
                .col(string_null("consent_how"))
                .col(text("tags"))
                .col(text("identities"))
                .col(integer("open_deals"))
                .col(text("search_text"))
                .col(big_integer_null("stage_changed_at"))
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .foreign_key(&mut fk("contacts", "organization_id", "organizations"))
                .foreign_key(&mut fk_set_null(
                    "contacts",
                    "lifecycle_stage_id",
                    "lifecycle_stages",
                ))
                .foreign_key(&mut fk_set_null("contacts", "owner_id", "users"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ux_contacts_org_phone",
            "contacts",
            &["organization_id", "primary_phone"],
            true,
        ))
        .await?;
        m.create_index(index(
            "ix_contacts_org_created",
            "contacts",
            &["organization_id", "created_at"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_contacts_org_stage",
            "contacts",
            &["organization_id", "lifecycle_stage_id"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("contact_tags")
                .col(uuid("contact_id"))
                .col(string("tag_key"))
                .col(uuid("organization_id"))
                .col(string("tag"))
                .primary_key(Index::create().col("contact_id").col("tag_key"))
                .foreign_key(&mut fk("contact_tags", "contact_id", "contacts"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_contact_tags_org_key",
            "contact_tags",
            &["organization_id", "tag_key"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("contact_identities")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("contact_id"))
                .col(uuid("channel_id"))
                .col(string("channel_type"))
                .col(string("external_id"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk("contact_identities", "contact_id", "contacts"))
                .foreign_key(&mut fk("contact_identities", "channel_id", "channels"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ux_identities_org_type_ext",
            "contact_identities",
            &["organization_id", "channel_type", "external_id"],
            true,
        ))
        .await?;
        m.create_index(index(
            "ix_identities_contact",
            "contact_identities",
            &["contact_id"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("contact_notes")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("contact_id"))
                .col(uuid("author_id"))
                .col(text("body"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk("contact_notes", "contact_id", "contacts"))
                .foreign_key(&mut fk("contact_notes", "author_id", "users"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_notes_contact",
            "contact_notes",
            &["contact_id", "created_at"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("deals")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("contact_id"))
                .col(string("title"))
                .col(big_integer("value_micros"))
                .col(string("status"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk("deals", "contact_id", "contacts"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_deals_contact",
            "deals",
            &["contact_id", "status"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("timeline_entries")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("contact_id"))
                .col(string("entry_type"))
                .col(big_integer("at"))
                .col(text("data"))
                .foreign_key(&mut fk("timeline_entries", "contact_id", "contacts"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_timeline_contact_at",
            "timeline_entries",
            &["contact_id", "at"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("outbox_events")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string("event_type"))
                .col(text("payload"))
                .col(big_integer("created_at"))
                .col(big_integer_null("processed_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_outbox_pending",
            "outbox_events",
            &["processed_at", "created_at"],
            false,
        ))
        .await?;
        Ok(())
    }
}
