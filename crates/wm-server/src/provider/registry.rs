//! The providers a process runs, by name and by channel: each with its channel's
//! [`Descriptor`], its sender, and (when the platform has them) its webhook intake, media
//! source and template catalog. Several run side by side (the simulated one beside
//! WhatsApp's, a second channel beside both); a channel type sends through its default
//! provider unless an account names another.

use std::sync::Arc;

use wm_core::platform::{Descriptor, MediaSource, PlatformIntake, ProfileSource, TemplateCatalog};
use wm_core::provider::{MessagingProvider, PlatformAccount};
use wm_types::enums::ChannelType;

/// What a connected account (a WhatsApp number; a Page, an Instagram account, a website
/// chat) holds for its provider, its secret decrypted just for the call.
#[derive(Clone, Copy, Default)]
pub struct Credentials<'a> {
    /// The platform's id of the account (WhatsApp: the phone number id).
    pub account_id: Option<&'a str>,
    /// The platform's id of the business the account belongs to (WhatsApp: the WABA).
    pub business_id: Option<&'a str>,
    /// The account's token, decrypted.
    pub token: Option<&'a str>,
}

impl std::fmt::Debug for Credentials<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("account_id", &self.account_id)
            .field("business_id", &self.business_id)
            .field("token", &self.token.map(|_| "<redacted>"))
            .finish()
    }
}

/// How a provider makes the account a call goes through from what an account holds;
/// `None`: the account is not configured for it (the call is refused as such).
pub type AccountOf = fn(&Credentials<'_>) -> Option<PlatformAccount>;

/// A provider's account that needs nothing (a platform without accounts).
pub fn no_account(_: &Credentials<'_>) -> Option<PlatformAccount> {
    None
}

/// One provider, as a process runs it.
#[derive(Clone)]
pub struct Provider {
    /// Its channel, as data.
    pub descriptor: &'static Descriptor,
    /// Where its messages are sent.
    pub sender: Arc<dyn MessagingProvider>,
    /// Its webhooks, when the platform calls wm.
    pub intake: Option<Arc<dyn PlatformIntake>>,
    /// Where files people send are fetched from.
    pub media: Option<Arc<dyn MediaSource>>,
    /// Where its templates are listed, when it has templates.
    pub catalog: Option<Arc<dyn TemplateCatalog>>,
    /// Where people's profiles are read, when the platform shares them after they write.
    pub profiles: Option<Arc<dyn ProfileSource>>,
    /// How it makes an account from what one holds.
    pub account: AccountOf,
}

impl Provider {
    /// A provider that only sends.
    pub fn sender(descriptor: &'static Descriptor, sender: Arc<dyn MessagingProvider>) -> Self {
        Provider {
            descriptor,
            sender,
            intake: None,
            media: None,
            catalog: None,
            profiles: None,
            account: no_account,
        }
    }

    /// Its name (its descriptor's).
    pub fn name(&self) -> &'static str {
        self.descriptor.provider
    }
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("name", &self.name())
            .field("channel_type", &self.descriptor.channel_type)
            .finish()
    }
}

/// The providers of a process.
#[derive(Clone, Default, Debug)]
pub struct Registry {
    providers: Vec<Arc<Provider>>,
    defaults: Vec<(ChannelType, &'static str)>,
}

impl Registry {
    /// Adds `p`; the first provider of a channel type is its default until
    /// [`set_default`](Self::set_default) names another. A provider of the same name is
    /// replaced.
    pub fn register(&mut self, p: Provider) -> &mut Self {
        let channel = p.descriptor.channel_type;
        let name = p.name();
        self.providers.retain(|q| q.name() != name);
        self.providers.push(Arc::new(p));
        if !self.defaults.iter().any(|(c, _)| *c == channel) {
            self.defaults.push((channel, name));
        }
        self
    }

    /// Makes the provider `name` its channel type's default (nothing when no such
    /// provider runs).
    pub fn set_default(&mut self, name: &str) -> &mut Self {
        if let Some(p) = self.named(name).cloned() {
            let channel = p.descriptor.channel_type;
            self.defaults.retain(|(c, _)| *c != channel);
            self.defaults.push((channel, p.name()));
        }
        self
    }

    /// Replaces the sender of `channel`'s default provider (a test's platform that hangs,
    /// another client of the same platform), keeping everything else of it.
    pub fn replace_sender(
        &mut self,
        channel: ChannelType,
        sender: Arc<dyn MessagingProvider>,
    ) -> &mut Self {
        if let Some(p) = self.for_channel(channel) {
            let replaced = Provider {
                sender,
                ..(**p).clone()
            };
            self.register(replaced);
        }
        self
    }

    /// The provider named `name`.
    pub fn named(&self, name: &str) -> Option<&Arc<Provider>> {
        self.providers.iter().find(|p| p.name() == name)
    }

    /// The default provider of a channel type.
    pub fn for_channel(&self, channel: ChannelType) -> Option<&Arc<Provider>> {
        let (_, name) = self.defaults.iter().find(|(c, _)| *c == channel)?;
        self.named(name)
    }

    /// The provider an account sends through: the one it names, else its channel's.
    pub fn for_account(&self, channel: ChannelType, named: Option<&str>) -> Option<&Arc<Provider>> {
        named
            .and_then(|n| self.named(n))
            .or_else(|| self.for_channel(channel))
    }

    /// Every provider, in registration order.
    pub fn all(&self) -> impl Iterator<Item = &Arc<Provider>> {
        self.providers.iter()
    }

    /// The webhook intake of the provider named `name`.
    pub fn intake(&self, name: &str) -> Option<Arc<dyn PlatformIntake>> {
        self.named(name)?.intake.clone()
    }

    /// Where the provider named `name` keeps the files people send.
    pub fn media_source(&self, name: &str) -> Option<Arc<dyn MediaSource>> {
        self.named(name)?.media.clone()
    }

    /// The template catalog of a channel type's providers (the first that has one).
    pub fn catalog(&self, channel: ChannelType) -> Option<Arc<dyn TemplateCatalog>> {
        self.providers
            .iter()
            .filter(|p| p.descriptor.channel_type == channel)
            .find_map(|p| p.catalog.clone())
    }

    /// Whether any provider takes files of `mime` (an upload is checked against the
    /// conversation's channel again when it is sent).
    pub fn takes_media(&self, mime: &str) -> Option<(wm_types::messages::MessageType, u64)> {
        self.providers
            .iter()
            .filter_map(|p| p.descriptor.media_limit(mime))
            .max_by_key(|(_, max)| *max)
    }
}
