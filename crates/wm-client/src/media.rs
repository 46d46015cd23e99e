//! `/media`: files to send in replies (`POST /media`, scope `conversations:write`).
//!
//! ```no_run
//! use wm_client::types::messages::{SendMedia, SendMessage, SendType};
//! # async fn run(client: wm_client::Client, conversation: uuid::Uuid) -> Result<(), wm_client::Error> {
//! let file = client.media().upload(std::fs::read("catalogue.pdf").unwrap_or_default(),
//!     "application/pdf", Some("catalogue.pdf")).await?;
//! let reply = SendMessage {
//!     message_type: SendType::Document,
//!     text: None,
//!     media: Some(SendMedia { id: file.id, caption: Some("Our catalogue".into()), filename: None }),
//!     interactive: None,
//!     template: None,
//!     reply_to_message_id: None,
//! };
//! client.conversations().reply(conversation, &reply).await?;
//! # Ok(()) }
//! ```

use wm_types::messages::UploadedMedia;

use crate::http::{FormPart, Request, form};
use crate::{Client, Error};

impl Client {
    /// The media resource.
    pub fn media(&self) -> Media<'_> {
        Media { client: self }
    }
}

/// The media resource: `client.media()`.
#[derive(Debug, Clone, Copy)]
pub struct Media<'c> {
    client: &'c Client,
}

impl Media<'_> {
    /// `POST /media`: the file (its MIME type one the platform takes: JPEG/PNG images, WebP
    /// stickers, MP4/3GPP video, AAC/AMR/MPEG/MP4/OGG audio, text, PDF and Office documents,
    /// within the platform's sizes), kept to be sent in replies.
    pub async fn upload(
        &self,
        bytes: Vec<u8>,
        mime_type: &str,
        filename: Option<&str>,
    ) -> Result<UploadedMedia, Error> {
        let (body, content_type) = form(&[FormPart {
            name: "file",
            filename,
            content_type: mime_type,
            bytes: &bytes,
        }]);
        self.client
            .send(Request::post("/media").raw(body, content_type))
            .await
    }
}
