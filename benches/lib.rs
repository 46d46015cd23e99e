//! Criterion micro-benchmarks for wm; the benchmarks themselves are in `webhook.rs`.
//!
//! Run: `cargo bench -p wm-benches --bench webhook` (add `-- --quick` for a short run).
//! This library only holds what the benchmarks share.

/// A JSON object body of exactly `len` bytes (at least 64), shaped like a webhook delivery,
/// so the benchmarks hash the same kind of bytes the server sends.
pub fn json_body(len: usize) -> Vec<u8> {
    const HEAD: &[u8] = br#"{"id":"evt_7c1","event":"contact.created","data":{"pad":""#;
    const TAIL: &[u8] = br#""}}"#;
    assert!(len >= 64, "json_body needs at least 64 bytes, got {len}");
    let mut body = HEAD.to_vec();
    let pad = len - HEAD.len() - TAIL.len();
    body.extend((0..pad).map(|i| b"abcdefghijklmnopqrstuvwxyz"[i % 26]));
    body.extend_from_slice(TAIL);
    body
}

#[cfg(test)]
mod tests {
    use super::json_body;

    #[test]
    fn bodies_have_the_exact_length_and_are_json_shaped() {
        for len in [64, 256, 1024, 16 * 1024] {
            let b = json_body(len);
            assert_eq!(b.len(), len);
            assert!(b.starts_with(b"{\"id\"") && b.ends_with(b"\"}}"));
        }
    }
}
