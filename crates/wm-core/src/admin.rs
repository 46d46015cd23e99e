//! Validation schemas of the operator API bodies.

use wm_types::admin::{
    CreateApiKey, CreateChannel, CreateDeal, CreateLifecycleStage, CreateOrganization, CreateUser,
    UpdateDeal,
};

use wm_types::channels::{ConnectInstagram, ConnectPage, CreateWebchat, UpdateChannel};

use wm_types::webchat::{Identify, LeaveEmail, TapButton, VisitorText};

use crate::validate::validated;

validated!(
    CreateOrganization,
    CreateUser,
    CreateApiKey,
    CreateLifecycleStage,
    CreateChannel,
    CreateDeal,
    UpdateDeal,
    ConnectPage,
    ConnectInstagram,
    CreateWebchat,
    UpdateChannel,
    VisitorText,
    TapButton,
    Identify,
    LeaveEmail,
);
