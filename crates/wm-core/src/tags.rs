//! Contact tags: trimmed, 1–60 characters, de-duplicated case-insensitively.

/// Longest tag, in characters (declared with the wire types).
pub use wm_types::contacts::MAX_TAG_LEN;

/// The key two spellings of one tag share (`VIP` and `vip`).
pub fn tag_key(tag: &str) -> String {
    tag.trim().to_lowercase()
}

/// Trims every tag, refuses empty or too long ones, and drops later case-insensitive
/// duplicates (the first spelling is kept). `field` names the field in messages.
pub fn normalize_tags<S: AsRef<str>>(field: &str, raw: &[S]) -> Result<Vec<String>, Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    let mut errors = Vec::new();
    for t in raw {
        let t = t.as_ref().trim();
        let len = t.chars().count();
        if len == 0 {
            push_once(
                &mut errors,
                format!("each value in {field} should not be empty"),
            );
        } else if len > MAX_TAG_LEN {
            push_once(
                &mut errors,
                format!(
                    "each value in {field} must be shorter than or equal to {MAX_TAG_LEN} characters"
                ),
            );
        } else if !out.iter().any(|o| tag_key(o) == tag_key(t)) {
            out.push(t.to_owned());
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Adds `extra` tags after `current`, keeping the first spelling of each.
pub fn merge_tags(current: &[String], extra: &[String]) -> Vec<String> {
    let mut out = current.to_vec();
    for t in extra {
        if !out.iter().any(|o| tag_key(o) == tag_key(t)) {
            out.push(t.clone());
        }
    }
    out
}

fn push_once(errors: &mut Vec<String>, e: String) {
    if !errors.contains(&e) {
        errors.push(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_and_deduplicates_case_insensitively() {
        let t = normalize_tags("tags", &[" VIP ", "vip", "Lead", "lead ", "x"]).unwrap();
        assert_eq!(t, vec!["VIP", "Lead", "x"]);
    }

    #[test]
    fn refuses_blank_and_long_tags() {
        let e = normalize_tags("tags", &["  ", &"a".repeat(61)]).unwrap_err();
        assert_eq!(e.len(), 2);
        assert!(normalize_tags("tags", &["a".repeat(60)]).is_ok());
    }

    #[test]
    fn merge_keeps_existing_spelling() {
        let m = merge_tags(&["VIP".into()], &["vip".into(), "new".into()]);
        assert_eq!(m, vec!["VIP", "new"]);
    }
}
