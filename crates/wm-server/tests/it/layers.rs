//! The house stays layered: in wm-server, wm-core and wm-types no file imports a file that
//! imports it back (directly or round a loop), and inside every folder the files and
//! sub-folders stand in an order where each uses only those below it. A new channel is a
//! folder under `provider/`, and nothing channel-neutral above it may reach back down into
//! one channel's folder except the one place providers are registered.
//!
//! The `use` graph is read with `syn` from the sources: every `crate::…`, `super::…`,
//! `self::…` and child-module path (in `use` items and in code) names the file of the
//! longest module it spells. Doc comments are not code and do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module path inside a crate (`["services", "outbound", "send"]`).
type ModPath = Vec<String>;

/// The files of one crate and what each imports.
struct Crate {
    /// Every module and its file, relative to `src/`.
    files: BTreeMap<ModPath, PathBuf>,
    /// For each module, the modules it names.
    edges: BTreeMap<ModPath, BTreeSet<ModPath>>,
    /// For each arrow, a path that draws it (to say why).
    why: BTreeMap<(ModPath, ModPath), String>,
}

fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    match last.as_str() {
        "lib.rs" | "main.rs" | "mod.rs" => {}
        other => parts.push(other.trim_end_matches(".rs").to_owned()),
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Collects the paths a file names, each with how deep in inline modules it stands (a
/// `super::` there first leaves those).
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
    depth: usize,
}

impl Paths {
    fn push(&mut self, mut path: Vec<String>) {
        for _ in 0..self.depth {
            match path.first().map(String::as_str) {
                Some("super") => {
                    path.remove(0);
                    if path.is_empty() {
                        return;
                    }
                    path.insert(0, "self".to_owned());
                }
                // Inside an inline module a bare name is its own; the file does not
                // import it.
                Some("crate") => break,
                _ => return,
            }
        }
        self.found.push(path);
    }
}

impl Paths {
    fn tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                if n.ident != "self" {
                    full.push(n.ident.to_string());
                }
                self.push(full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                self.push(full);
            }
            syn::UseTree::Glob(_) => self.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }

    /// `pub(super)` says who may see an item; it imports nothing.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // An inline `mod tests { … }` is the file's own tests, not its imports.
        let is_test = m.attrs.iter().any(|a| {
            a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
        });
        if !is_test {
            self.depth += 1;
            syn::visit::visit_item_mod(self, m);
            self.depth -= 1;
        }
    }
}

/// The module a path names from `here`: the longest prefix that is a module of the crate.
fn resolve(files: &BTreeMap<ModPath, PathBuf>, here: &ModPath, path: &[String]) -> Option<ModPath> {
    let (mut base, rest): (ModPath, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (here.clone(), &path[1..]),
        Some("super") => {
            let mut base = here.clone();
            let mut i = 0;
            while path.get(i).map(String::as_str) == Some("super") {
                base.pop();
                i += 1;
            }
            (base, &path[i..])
        }
        Some(first) => {
            // A child module named directly (`batch::create` after `mod batch;`).
            let mut child = here.clone();
            child.push(first.to_owned());
            if !files.contains_key(&child) {
                return None;
            }
            (here.clone(), path)
        }
        None => return None,
    };
    let mut found = None;
    if files.contains_key(&base) {
        found = Some(base.clone());
    }
    for seg in rest {
        base.push(seg.clone());
        if files.contains_key(&base) {
            found = Some(base.clone());
        } else {
            break;
        }
    }
    found
}

fn read_crate(src: &Path) -> Crate {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    let mut files = BTreeMap::new();
    for p in &paths {
        let rel = p.strip_prefix(src).unwrap_or(p).to_path_buf();
        // A module's own tests (`#[cfg(test)] mod tests;` in `tests.rs`) are not the house.
        if rel.file_name().is_some_and(|f| f == "tests.rs") || rel.starts_with("bin") {
            continue;
        }
        files.insert(module_of(&rel), rel);
    }
    let mut edges = BTreeMap::new();
    let mut why = BTreeMap::new();
    for (module, rel) in &files {
        let text = std::fs::read_to_string(src.join(rel)).unwrap_or_default();
        let Ok(ast) = syn::parse_file(&text) else {
            panic!("{} does not parse", rel.display());
        };
        let mut named = Paths::default();
        named.visit_file(&ast);
        let mut targets = BTreeSet::new();
        for p in &named.found {
            if let Some(t) = resolve(&files, module, p).filter(|t| t != module) {
                why.entry((module.clone(), t.clone()))
                    .or_insert_with(|| p.join("::"));
                targets.insert(t);
            }
        }
        edges.insert(module.clone(), targets);
    }
    Crate { files, edges, why }
}

/// The strongly connected groups of more than one node (Tarjan's algorithm).
fn loops<N: Ord + Clone>(nodes: &BTreeSet<N>, edges: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct State<N> {
        index: BTreeMap<N, usize>,
        low: BTreeMap<N, usize>,
        stack: Vec<N>,
        on: BTreeSet<N>,
        next: usize,
        out: Vec<Vec<N>>,
    }
    fn visit<N: Ord + Clone>(n: &N, edges: &BTreeMap<N, BTreeSet<N>>, s: &mut State<N>) {
        s.index.insert(n.clone(), s.next);
        s.low.insert(n.clone(), s.next);
        s.next += 1;
        s.stack.push(n.clone());
        s.on.insert(n.clone());
        for m in edges.get(n).into_iter().flatten() {
            if !s.index.contains_key(m) {
                visit(m, edges, s);
                let low = s.low[n].min(s.low[m]);
                s.low.insert(n.clone(), low);
            } else if s.on.contains(m) {
                let low = s.low[n].min(s.index[m]);
                s.low.insert(n.clone(), low);
            }
        }
        if s.low[n] == s.index[n] {
            let mut group = Vec::new();
            while let Some(m) = s.stack.pop() {
                s.on.remove(&m);
                let done = &m == n;
                group.push(m);
                if done {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for n in nodes {
        if !s.index.contains_key(n) {
            visit(n, edges, &mut s);
        }
    }
    s.out
}

/// Every loop in the crate: among its files, and among the rooms of each folder (a file or
/// a sub-folder, the folder's own `mod.rs` a room of its own).
fn problems(krate: &Crate, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let all: BTreeSet<ModPath> = krate.files.keys().cloned().collect();
    for group in loops(&all, &krate.edges) {
        let mut arrows = Vec::new();
        for a in &group {
            for b in krate.edges[a].iter().filter(|b| group.contains(b)) {
                arrows.push(format!(
                    "{} -> {} ({})",
                    krate.files[a].display(),
                    krate.files[b].display(),
                    krate.why[&(a.clone(), b.clone())]
                ));
            }
        }
        out.push(format!(
            "{name}: files import each other round a loop:\n  {}",
            arrows.join("\n  ")
        ));
    }
    // Each folder: its rooms are its direct children; `mod.rs` (or lib.rs) is the room "".
    let folders: BTreeSet<ModPath> = krate
        .files
        .iter()
        .filter(|(_, f)| {
            f.file_name()
                .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs")
                || krate
                    .files
                    .keys()
                    .any(|k| k.len() > 1 && k[..k.len() - 1] == module_of(f)[..])
        })
        .map(|(m, _)| m.clone())
        .collect();
    for folder in folders {
        let room = |m: &ModPath| -> Option<String> {
            if m == &folder {
                return Some(String::new());
            }
            (m.len() > folder.len() && m[..folder.len()] == folder[..])
                .then(|| m[folder.len()].clone())
        };
        let mut rooms = BTreeSet::new();
        let mut arrows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut drawn_by: BTreeMap<(String, String), String> = BTreeMap::new();
        for (from, targets) in &krate.edges {
            let Some(a) = room(from) else { continue };
            rooms.insert(a.clone());
            for t in targets {
                // A room naming what lies inside itself is not an arrow between rooms.
                if let Some(b) = room(t).filter(|b| *b != a) {
                    arrows.entry(a.clone()).or_default().insert(b.clone());
                    drawn_by.entry((a.clone(), b)).or_insert_with(|| {
                        format!(
                            "{} names {}",
                            krate.files[from].display(),
                            krate.why[&(from.clone(), t.clone())]
                        )
                    });
                }
            }
        }
        for group in loops(&rooms, &arrows) {
            let shown: Vec<String> = group
                .iter()
                .map(|r| {
                    if r.is_empty() {
                        "(its mod.rs)".into()
                    } else {
                        r.clone()
                    }
                })
                .collect();
            let why: Vec<&String> = drawn_by
                .iter()
                .filter(|((a, b), _)| group.contains(a) && group.contains(b))
                .map(|(_, w)| w)
                .collect();
            out.push(format!(
                "{name}: in src/{}, these import each other (one of them runs back up): {shown:?}\n  {}",
                folder.join("/"),
                why.iter().map(|w| w.as_str()).collect::<Vec<_>>().join("\n  ")
            ));
        }
    }
    out
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

#[test]
fn no_module_imports_one_above_it_and_no_files_import_each_other() {
    let mut found = Vec::new();
    for name in ["wm-types", "wm-core", "wm-server"] {
        let krate = read_crate(&crate_src(name));
        assert!(
            krate.files.len() > 10,
            "{name}: too few files read ({}); is the path right?",
            krate.files.len()
        );
        found.extend(problems(&krate, name));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn above_the_providers_nothing_names_one_channel() {
    // Only the registration line (`provider/mod.rs`) and the settings read at start-up
    // (`config.rs`, `lib.rs`) may name a channel's folder; everything else goes through the
    // registry and the channel's descriptor.
    let krate = read_crate(&crate_src("wm-server"));
    let allowed = |m: &ModPath| {
        m.first().is_some_and(|f| f == "provider") || m == &["config".to_owned()] || m.is_empty()
    };
    let mut found = Vec::new();
    for (from, targets) in &krate.edges {
        if allowed(from) {
            continue;
        }
        for t in targets {
            if t.len() >= 2 && t[0] == "provider" && !["registry", "pace"].contains(&t[1].as_str())
            {
                found.push(format!(
                    "{} names {}",
                    krate.files[from].display(),
                    t.join("::")
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The checker itself: a loop it is shown is a loop it reports.
#[test]
fn a_loop_is_found_and_a_chain_is_not() {
    let a = vec!["a".to_owned()];
    let b = vec!["b".to_owned()];
    let c = vec!["c".to_owned()];
    let nodes: BTreeSet<ModPath> = [a.clone(), b.clone(), c.clone()].into();
    let chain: BTreeMap<ModPath, BTreeSet<ModPath>> = [
        (a.clone(), [b.clone()].into()),
        (b.clone(), [c.clone()].into()),
    ]
    .into();
    assert!(loops(&nodes, &chain).is_empty());
    let mut round = chain.clone();
    round.insert(c.clone(), [a.clone()].into());
    assert_eq!(loops(&nodes, &round), vec![vec![a, b, c]]);
}
