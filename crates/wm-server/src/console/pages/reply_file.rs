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
use wm_core::platform::Descriptor;
use wm_types::conversations::Conversation;
use wm_types::messages::{MessageType, SendMedia, SendMessage, SendType, UploadedMedia};

use super::compose::{back, post_message};
use crate::console::api::decode;
use crate::console::page::{failed, problem, redirect};
use crate::console::session::Session;
use crate::console::upload::{self, Upload};
use crate::console::view::hidden;

/// The form under the reply box (the window is open), offering the files `channel` takes.
pub fn form(s: &Session, id: Uuid, channel: &Descriptor) -> Markup {
    // What the file input offers: the types the channel takes (the API checks them again).
    let accept = channel
        .media
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
                span.hint id="reply-file-hint" { (kinds_hint(channel)) }
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

/// The kinds of file `channel` takes with their largest size, in words: "An image (5 MB),
/// a video (16 MB) or a document (100 MB)."
fn kinds_hint(channel: &Descriptor) -> String {
    let mut kinds: Vec<(MessageType, u64)> = Vec::new();
    for (_, kind, max) in channel.media {
        match kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, m)) => *m = (*m).max(*max),
            None => kinds.push((*kind, *max)),
        }
    }
    let words: Vec<String> = kinds
        .iter()
        .map(|(kind, max)| {
            let what = match kind {
                MessageType::Image => "an image",
                MessageType::Video => "a video",
                MessageType::Audio => "audio",
                MessageType::Sticker => "a sticker",
                _ => "a document",
            };
            format!("{what} ({})", size_words(*max))
        })
        .collect();
    let mut text = match words.split_last() {
        None => return "This channel takes no files.".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    };
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    text + "."
}

/// `bytes` as people say it: "5 MB", "500 KB".
fn size_words(bytes: u64) -> String {
    const MB: u64 = 1024 * 1024;
    if bytes >= MB {
        format!("{} MB", bytes / MB)
    } else {
        format!("{} KB", bytes / 1024)
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
    // The kind the conversation's channel takes the file as (a document when unknown: the
    // API refuses what the channel does not take, in its words).
    let conversation: Result<Conversation, _> = s.api.get(&format!("/conversations/{id}")).await;
    let message_type = conversation
        .ok()
        .and_then(|c| wm_core::platform::descriptor::of_channel(c.channel.channel_type))
        .and_then(|d| d.media_limit(&media.mime_type))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_names_each_kind_once_with_its_largest_size() {
        assert_eq!(
            kinds_hint(&wm_core::platform::descriptor::WHATSAPP),
            "An image (5 MB), a sticker (500 KB), a video (16 MB), audio (16 MB) or a document (100 MB)."
        );
    }
}
