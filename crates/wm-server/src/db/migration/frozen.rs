//! Landed migrations are frozen: a database migrated by a migration's text never runs it
//! again, so an edited migration leaves real databases unlike new ones. `CHECKSUMS` (beside
//! this file) holds the SHA-256 of every migration file on main; this test fails when one
//! changes, or when a migration file is not listed. A schema change is a new migration
//! (`mNNNN_what.rs`, added to [`super::Migrator`]) whose line is added to `CHECKSUMS`:
//! `WM_FREEZE_MIGRATIONS=1 cargo test -p wm-server --lib frozen` appends the lines of new
//! files and never rewrites a listed one.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src/db/migration"))
}

/// Every `mNNNN_*.rs` file with the SHA-256 of its bytes.
fn on_disk() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir()).unwrap_or_else(|e| panic!("{e}")) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let numbered = name.len() > 6
            && name.starts_with('m')
            && name[1..5].bytes().all(|b| b.is_ascii_digit())
            && name.ends_with(".rs");
        if numbered {
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
            out.insert(name, hex::encode(Sha256::digest(&bytes)));
        }
    }
    out
}

fn recorded() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir().join("CHECKSUMS")).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(f, h)| (f.to_owned(), h.trim().to_owned()))
        .collect()
}

#[test]
fn landed_migrations_are_never_edited() {
    let disk = on_disk();
    let mut known = recorded();
    assert!(
        disk.len() >= 15,
        "migrations not found in {}",
        dir().display()
    );
    for (file, hash) in &known {
        assert_eq!(
            disk.get(file),
            Some(hash),
            "{file} changed (or went) after it landed: restore it and add a new migration"
        );
    }
    let new: Vec<(&String, &String)> = disk
        .iter()
        .filter(|(f, _)| !known.contains_key(*f))
        .collect();
    if std::env::var_os("WM_FREEZE_MIGRATIONS").is_some() {
        for (f, h) in new {
            known.insert(f.clone(), h.clone());
        }
        let text: String = known.iter().map(|(f, h)| format!("{f} {h}\n")).collect();
        std::fs::write(dir().join("CHECKSUMS"), text).unwrap_or_else(|e| panic!("{e}"));
        return;
    }
    assert!(
        new.is_empty(),
        "{new:?} not in CHECKSUMS: run WM_FREEZE_MIGRATIONS=1 cargo test -p wm-server --lib frozen"
    );
}
