//! Lookups an integrator needs to fill ids in: lifecycle stages and users.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::Timestamp;
use crate::enums::StageCategory;

/// A lifecycle stage of the organisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleStage {
    /// Stage id.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// Position in the funnel.
    pub order: i32,
    /// Category, which the contact tabs use.
    pub category: StageCategory,
    /// Creation time.
    pub created_at: Timestamp,
}

/// A user of the organisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// User id.
    pub id: Uuid,
    /// Display name.
    pub full_name: String,
    /// E-mail address.
    pub email: String,
    /// Creation time.
    pub created_at: Timestamp,
}

/// An unpaginated list `{data}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "{T}List")]
pub struct List<T> {
    /// The items.
    pub data: Vec<T>,
}
