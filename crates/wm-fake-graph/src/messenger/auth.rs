//! Page tokens: which Page a token belongs to, and which object a path names.
//!
//! Graph checks the token before the object: a missing, unknown or expired token is 190
//! whatever the path; a valid Page token used on another object answers 100/33, as an
//! object the token cannot see (the same answer the WhatsApp side gives).

use super::errors;
use super::model::PageSpec;
use super::store::Store;
use crate::errors::GraphError;

/// The Page whose token this is.
pub(crate) fn page_for_token(store: &Store, token: Option<&str>) -> Result<PageSpec, GraphError> {
    let token = match token {
        None | Some("") => return Err(errors::token_missing()),
        Some(t) => t,
    };
    let Some(page) = store.tokens.get(token).and_then(|id| store.pages.get(id)) else {
        return Err(errors::token_invalid());
    };
    if let Some(at) = page.token_expired_at {
        return Err(errors::token_expired(at));
    }
    Ok(page.spec.clone())
}

/// The Page a `/{id}/…` edge call names: `me` (the token's Page) or the Page's own id.
pub(crate) fn page_for_path(
    store: &Store,
    token: Option<&str>,
    id: &str,
    method: &str,
) -> Result<PageSpec, GraphError> {
    let page = page_for_token(store, token)?;
    if id == "me" || id == page.page_id {
        Ok(page)
    } else {
        Err(GraphError::unknown_object(method, id))
    }
}
