//! Lookups an integrator needs to fill ids in: lifecycle stages and users (scope
//! `contacts:read`), templates, sender phone numbers and the wallet (scope
//! `campaigns:read`). The lists are unpaginated; the `{data}` envelope is removed.

use wm_types::campaigns::{PhoneNumber, Template, Wallet};
use wm_types::lookups::{LifecycleStage, List, User};

use crate::http::Request;
use crate::{Client, Error};

impl Client {
    /// The lookups: stages, users, templates, phone numbers, wallet.
    pub fn lookups(&self) -> Lookups<'_> {
        Lookups { client: self }
    }
}

/// The lookups: `client.lookups()`.
#[derive(Debug, Clone, Copy)]
pub struct Lookups<'c> {
    client: &'c Client,
}

impl Lookups<'_> {
    async fn list<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<Vec<T>, Error> {
        let list: List<T> = self.client.send(Request::get(path)).await?;
        Ok(list.data)
    }

    /// `GET /lifecycle-stages`, in funnel order.
    pub async fn stages(&self) -> Result<Vec<LifecycleStage>, Error> {
        self.list("/lifecycle-stages").await
    }

    /// `GET /users`.
    pub async fn users(&self) -> Result<Vec<User>, Error> {
        self.list("/users").await
    }

    /// `GET /templates`.
    pub async fn templates(&self) -> Result<Vec<Template>, Error> {
        self.list("/templates").await
    }

    /// `GET /phone-numbers`: the sender numbers.
    pub async fn phone_numbers(&self) -> Result<Vec<PhoneNumber>, Error> {
        self.list("/phone-numbers").await
    }

    /// `GET /wallet`: balance, allowance and the latest ledger entries.
    pub async fn wallet(&self) -> Result<Wallet, Error> {
        self.client.send(Request::get("/wallet")).await
    }
}
