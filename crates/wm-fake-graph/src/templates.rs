//! `GET /{version}/{waba_id}/message_templates` with real cursor paging, and
//! template placeholder counting.
//!
//! Why cursors and not offsets: Graph pages with opaque `before`/`after`
//! cursors and gives `paging.next` only when a further page exists; callers
//! that loop on `next` must be tested against exactly that.

use std::collections::HashSet;

use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};

use crate::FakeGraph;
use crate::errors::GraphError;
use crate::model::TemplateInfo;
use crate::send::{AuthCheck, check_token, request_token};

/// Graph's default page size for edges.
const DEFAULT_LIMIT: usize = 25;

/// The fields a template node exposes here.
const TEMPLATE_FIELDS: &[&str] = &[
    "id",
    "name",
    "language",
    "status",
    "category",
    "components",
    "parameter_format",
];

/// Counts the distinct `{{...}}` placeholders of a template body.
pub fn count_placeholders(body: &str) -> usize {
    let mut seen = HashSet::new();
    let mut rest = body;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = after[..end].trim();
                if !name.is_empty() && !name.contains('{') {
                    seen.insert(name.to_owned());
                }
                rest = &after[end + 2..];
            }
            None => break,
        }
    }
    seen.len()
}

fn encode_cursor(id: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("tpl:{id}"))
}

fn decode_cursor(cursor: &str) -> Option<u64> {
    let raw = URL_SAFE_NO_PAD.decode(cursor.trim_end_matches('=')).ok()?;
    let s = String::from_utf8(raw).ok()?;
    s.strip_prefix("tpl:")?.parse().ok()
}

fn template_id(t: &TemplateInfo) -> u64 {
    t.id.parse().unwrap_or(0)
}

fn node(t: &TemplateInfo, fields: Option<&[String]>) -> Value {
    let all = json!({
        "name": t.spec.name,
        "parameter_format": "POSITIONAL",
        "components": [{ "type": "BODY", "text": t.spec.body_text }],
        "language": t.spec.language,
        "status": t.spec.status.as_str(),
        "category": t.spec.category,
        "id": t.id,
    });
    let Some(fields) = fields else { return all };
    let mut out = Map::new();
    if let Value::Object(map) = all {
        for f in fields
            .iter()
            .map(String::as_str)
            .chain(std::iter::once("id"))
        {
            if let Some(v) = map.get(f) {
                out.insert(f.to_owned(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// Rebuilds the query for a paging link: every original parameter except the
/// cursors, then `limit` and the new cursor.
fn paging_url(
    base: &str,
    version: &str,
    waba_id: &str,
    params: &[(String, String)],
    limit: usize,
    cursor: (&str, &str),
) -> String {
    let mut ser = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        if k != "after" && k != "before" && k != "limit" {
            ser.append_pair(k, v);
        }
    }
    ser.append_pair("limit", &limit.to_string());
    ser.append_pair(cursor.0, cursor.1);
    format!(
        "{base}/{version}/{waba_id}/message_templates?{}",
        ser.finish()
    )
}

/// The `message_templates` edge.
pub(crate) async fn list_templates(
    State(fake): State<FakeGraph>,
    Path((version, waba_id)): Path<(String, String)>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let params: Vec<(String, String)> =
        form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
    match build_page(&fake, &version, &waba_id, &headers, &params) {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

fn param<'a>(params: &'a [(String, String)], key: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn build_page(
    fake: &FakeGraph,
    version: &str,
    waba_id: &str,
    headers: &HeaderMap,
    params: &[(String, String)],
) -> Result<Value, GraphError> {
    let get = |key: &str| param(params, key);
    let token = request_token(headers, get("access_token"));
    let inner = fake.shared.lock();
    match check_token(&inner, token.as_deref()) {
        AuthCheck::Ok => {}
        AuthCheck::Fail(e) => return Err(e),
    }
    let Some(waba) = inner.wabas.get(waba_id) else {
        return Err(GraphError::unknown_object("get", waba_id));
    };
    if !token.as_ref().is_some_and(|t| waba.tokens.contains(t)) {
        return Err(GraphError::oauth(
            "Invalid OAuth access token - Cannot parse access token",
        ));
    }
    let limit = match get("limit") {
        None => DEFAULT_LIMIT,
        Some(s) => match s.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(GraphError::invalid_parameter(
                    "(#100) Param limit must be a positive integer",
                ));
            }
        },
    };
    let fields: Option<Vec<String>> = get("fields").map(|f| {
        f.split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    });
    if let Some(bad) = fields
        .iter()
        .flatten()
        .find(|f| !TEMPLATE_FIELDS.contains(&f.as_str()))
    {
        return Err(GraphError::invalid_parameter(&format!(
            "(#100) Tried accessing nonexisting field ({bad})"
        )));
    }
    let filtered: Vec<&TemplateInfo> = waba
        .templates
        .iter()
        .filter(|t| get("name").is_none_or(|n| t.spec.name.contains(n)))
        .filter(|t| get("status").is_none_or(|s| t.spec.status.as_str().eq_ignore_ascii_case(s)))
        .filter(|t| get("language").is_none_or(|l| t.spec.language == l))
        .filter(|t| get("category").is_none_or(|c| t.spec.category.eq_ignore_ascii_case(c)))
        .collect();
    let bad_cursor = || GraphError::invalid_parameter("(#100) Invalid cursor");
    let (start, end) = if let Some(after) = get("after") {
        let id = decode_cursor(after).ok_or_else(bad_cursor)?;
        let start = filtered
            .iter()
            .position(|t| template_id(t) > id)
            .unwrap_or(filtered.len());
        (start, (start + limit).min(filtered.len()))
    } else if let Some(before) = get("before") {
        let id = decode_cursor(before).ok_or_else(bad_cursor)?;
        let end = filtered
            .iter()
            .position(|t| template_id(t) >= id)
            .unwrap_or(filtered.len());
        (end.saturating_sub(limit), end)
    } else {
        (0, limit.min(filtered.len()))
    };
    let page = &filtered[start..end];
    let data: Vec<Value> = page.iter().map(|t| node(t, fields.as_deref())).collect();
    let (Some(first), Some(last)) = (page.first(), page.last()) else {
        return Ok(json!({ "data": [] }));
    };
    let (before, after) = (encode_cursor(&first.id), encode_cursor(&last.id));
    let base = fake.shared.base_url();
    let mut paging = json!({ "cursors": { "before": before, "after": after } });
    if end < filtered.len() {
        paging["next"] = json!(paging_url(
            &base,
            version,
            waba_id,
            params,
            limit,
            ("after", &after)
        ));
    }
    if start > 0 {
        paging["previous"] = json!(paging_url(
            &base,
            version,
            waba_id,
            params,
            limit,
            ("before", &before)
        ));
    }
    Ok(json!({ "data": data, "paging": paging }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_distinct_placeholders() {
        assert_eq!(count_placeholders("Hi {{1}}, order {{2}} ships {{1}}"), 2);
        assert_eq!(count_placeholders("no params"), 0);
        assert_eq!(count_placeholders("{{1}}{{2}}{{3}}"), 3);
        assert_eq!(count_placeholders("broken {{1"), 0);
    }

    #[test]
    fn cursor_round_trip() {
        assert_eq!(
            decode_cursor(&encode_cursor("1000000000000007")),
            Some(1_000_000_000_000_007)
        );
        assert_eq!(decode_cursor("garbage!"), None);
    }
}
