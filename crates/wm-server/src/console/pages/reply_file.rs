//! A file sent as a reply (an image, a video, audio, a sticker or a document): the file
//! streams from the browser through the console into the API's `POST /media`, and the
//! message goes out as the kind the platform takes that file as, with its caption.

use axum::body::{Body, Bytes};
use axum::extract::{Path, Request};
use axum::http::Method;
use axum::response::Response;
use futures::StreamExt;
use maud::{Markup, html};
use uuid::Uuid;
use wm_types::messages::{MessageType, SendMedia, SendMessage, SendType, UploadedMedia};

use super::thread::{back, post_message};
use crate::console::api::decode;
use crate::console::page::{failed, problem, redirect};
use crate::console::session::Session;
use crate::console::upload::{self, Upload};
use crate::console::view::hidden;

/// The form under the reply box (the window is open).
pub fn form(s: &Session, id: Uuid) -> Markup {
    // What the file input offers: the types the platform takes (the API checks them again).
    let accept = wm_core::whatsapp::MEDIA_TYPES
        .iter()
        .map(|(mime, _, _)| *mime)
        .collect::<Vec<_>>()
        .join(",");
    html! {
        h3 { "Send a file" }
        form.stack method="post" action={ "/console/inbox/" (id) "/file" } enctype="multipart/form-data" {
            (hidden(s))
            div.field {
                label for="reply-file" { "File" }
                span.hint id="reply-file-hint" {
                    "An image (JPEG, PNG; 5 MB), a video (MP4; 16 MB), audio (16 MB), a sticker (WebP; 500 KB) or a document (PDF, Office, text; 100 MB)."
                }
                input id="reply-file" type="file" name="file" required accept=(accept) aria-describedby="reply-file-hint";
            }
            div.field {
                label for="reply-caption" { "Caption" }
                span.hint id="reply-caption-hint" { "With an image, a video or a document." }
                input id="reply-caption" type="text" name="caption" maxlength="1024" aria-describedby="reply-caption-hint";
            }
            div { button type="submit" { "Send file" } }
        }
    }
}

/// How a reply sends a file the platform takes as `kind`.
fn send_type(kind: MessageType) -> SendType {
    match kind {
        MessageType::Image => SendType::Image,
        MessageType::Video => SendType::Video,
        MessageType::Audio => SendType::Audio,
        MessageType::Sticker => SendType::Sticker,
        _ => SendType::Document,
    }
}

/// `POST /console/inbox/{id}/file` (multipart: `_csrf`, `_idem`, then the parts of
/// [`form`]).
pub async fn send(s: Session, Path(id): Path<Uuid>, req: Request) -> Response {
    let back = back(id);
    let Upload {
        mut parts,
        idempotency,
    } = match upload::open(&s, req, &back).await {
        Ok(u) => u,
        Err(answer) => return answer,
    };
    // The page sends the file before the caption; a caption sent first is read too.
    let mut caption = None;
    let file = loop {
        match parts.next_field().await {
            Ok(Some(f)) if f.name() == Some("file") => break f,
            Ok(Some(f)) => {
                if f.name() == Some("caption") {
                    caption = f.text().await.ok();
                }
            }
            Ok(None) => return redirect(&s, &back, problem("Choose a file to send.")),
            Err(_) => {
                return redirect(
                    &s,
                    &back,
                    problem("The file did not arrive whole; send it again."),
                );
            }
        }
    };
    // A browser sends an empty file part with no name when none was chosen.
    let Some(name) = file
        .file_name()
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
    else {
        return redirect(&s, &back, problem("Choose a file to send."));
    };
    let kind = file.content_type().map_or_else(
        || "application/octet-stream".to_owned(),
        ToString::to_string,
    );
    let boundary = upload::boundary();
    let head = Bytes::from(upload::part_header(&boundary, "file", Some(&name), &kind));
    let tail = Bytes::from(upload::closing(&boundary));
    // The file streams on; a caption after it (a page other than ours) is read afterwards.
    let (file_done, file_rx) = tokio::sync::oneshot::channel::<()>();
    let stream = futures::stream::once(async move { Ok::<_, multer::Error>(head) })
        .chain(file)
        .chain(futures::stream::once(async move {
            let _ = file_done.send(());
            Ok(tail)
        }));
    let uploaded = s
        .api
        .call(
            Method::POST,
            "/media",
            Some(&upload::content_type(&boundary)),
            Body::from_stream(stream),
            idempotency
                .as_deref()
                .map(|k| format!("{k}-file"))
                .as_deref(),
        )
        .await
        .and_then(|b| decode::<UploadedMedia>(&b));
    let media = match uploaded {
        Ok(m) => m,
        Err(e) => return redirect(&s, &back, failed(&e)),
    };
    if file_rx.await.is_ok()
        && let Ok(Some(f)) = parts.next_field().await
        && f.name() == Some("caption")
    {
        caption = f.text().await.ok();
    }
    let message_type = wm_core::whatsapp::media_limit(&media.mime_type)
        .map_or(SendType::Document, |(kind, _)| send_type(kind));
    let body = SendMessage {
        message_type,
        text: None,
        media: Some(SendMedia {
            id: media.id,
            caption: caption
                .map(|c| c.trim().to_owned())
                .filter(|c| !c.is_empty()),
            filename: (message_type == SendType::Document).then_some(name),
        }),
        interactive: None,
        template: None,
        reply_to_message_id: None,
    };
    post_message(&s, id, body, idempotency.as_deref(), "File sent.").await
}
