//! The engine's modules form layers that point one way.
//!
//! The test reads every source file of the crate (following `mod`
//! declarations from `src/lib.rs`), collects the `crate::`, `super::` and
//! `self::` paths it names (in `use` declarations and anywhere in code), and
//! builds two graphs:
//!
//! - between top-level modules (`db`, `version`, `keys`, ...): an edge must go
//!   down the order declared in [`LAYERS`], to a strictly lower layer;
//!   modules of one layer do not use each other;
//! - within a folder, between its files: the graph must have no cycle.
//!
//! It fails naming the offending edge, with a file that makes it.
//!
//! Exempt: unit tests (`#[cfg(test)]` items and files such as `tests.rs` and
//! `testutil.rs`, which may reach anything to build their fixtures), the
//! crate root `lib.rs` (it declares the modules and re-exports the public
//! API), a folder's `mod.rs` re-exporting its own files (`pub use self::x`),
//! and doc comments (intra-doc links are not dependencies).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Attribute, Item, UseTree, Visibility};

/// The allowed layering of the top-level modules, lowest first. A module may
/// use only modules of lower layers.
const LAYERS: &[&[&str]] = &[
    // Foundations: errors, encodings and checksums, the file system.
    &["error"],
    &["util"],
    &["env", "comparator", "filter_policy"],
    // File names of a database directory; internal keys.
    &["filename", "keys"],
    // The iterator contract and the iterators that combine iterators;
    // write batches.
    &["iter", "batch"],
    // The stores of entries: log, memtable, table files (with the block
    // cache), blob files (separated values).
    &["log", "memtable", "sstable", "blob"],
    // Options: what a database is opened with (names the block cache).
    &["options"],
    // Open tables by file number.
    &["table_cache"],
    // The set of live files per level and the MANIFEST.
    &["version"],
    // Picking compactions and running them.
    &["compaction"],
    // The database: write path, read path, recovery, background work; and
    // the decoders of single files for tools, beside it (they read the
    // formats, not a database).
    &["db", "inspect"],
    // Read-only opening (a `Db` over a copy-on-write file system), and the
    // fuzz target bodies (feature `internals`), which drive the whole engine.
    &["read_only", "fuzzing"],
];

/// Edges that go against the layering today and are to be removed; each is
/// (from, to) as printed by a failure. The test fails when one of them
/// disappears, so that the list only shrinks.
const KNOWN: &[(&str, &str)] = &[];

/// Modules excluded from the graph: the crate root and test helpers.
const EXEMPT_MODULES: &[&str] = &["testutil"];

struct Module {
    /// Path below the crate root: `["db", "core"]`, `["iter"]` for
    /// `iter/mod.rs`.
    path: Vec<String>,
    file: PathBuf,
    /// True for a folder's `mod.rs`.
    is_folder: bool,
    items: Vec<Item>,
}

fn is_cfg_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let t = a.meta.to_token_stream().to_string();
            // `cfg(test)`, `cfg(any(test, ...))`; not `cfg(feature = "...")`.
            t.split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == "test")
        }
    })
}

fn load(src: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    load_module(
        &mut out,
        Vec::new(),
        &src.join("lib.rs"),
        src.to_path_buf(),
        false,
    );
    out
}

fn load_module(
    out: &mut Vec<Module>,
    path: Vec<String>,
    file: &Path,
    dir: PathBuf,
    is_folder: bool,
) {
    let text =
        std::fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    let parsed =
        syn::parse_file(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", file.display()));
    let mut children = Vec::new();
    let mut items = Vec::new();
    for item in parsed.items {
        if let Item::Mod(m) = &item {
            if m.content.is_none() {
                if !is_cfg_test(&m.attrs) {
                    children.push(m.ident.to_string());
                }
                continue;
            }
        }
        if !is_cfg_test(item_attrs(&item)) {
            items.push(item);
        }
    }
    out.push(Module {
        path: path.clone(),
        file: file.to_path_buf(),
        is_folder,
        items,
    });
    for child in children {
        let mut p = path.clone();
        p.push(child.clone());
        let flat = dir.join(format!("{child}.rs"));
        if flat.exists() {
            // `child.rs`'s own children live in `child/`.
            load_module(out, p, &flat, dir.join(&child), false);
        } else {
            let sub = dir.join(&child);
            load_module(out, p, &sub.join("mod.rs"), sub, true);
        }
    }
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// A path named in a module, relative to the crate root, as written.
struct Named {
    segments: Vec<String>,
    /// A `pub use` in a folder's `mod.rs` of one of its own files.
    reexport: bool,
}

/// The absolute form of a path starting with `crate`, `super` or `self`.
fn absolute(module: &Module, first: &str, rest: &[String]) -> Option<Vec<String>> {
    let base: Vec<String> = match first {
        "crate" => Vec::new(),
        // `self` and `super` are relative to the file's module; a folder's
        // `mod.rs` is the folder itself.
        "self" => module.path.clone(),
        "super" => {
            let mut p = module.path.clone();
            p.pop()?;
            p
        }
        _ => return None,
    };
    Some(base.into_iter().chain(rest.iter().cloned()).collect())
}

fn use_paths(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let mut p = prefix.clone();
            if n.ident != "self" {
                p.push(n.ident.to_string());
            }
            out.push(p);
        }
        UseTree::Rename(r) => {
            let mut p = prefix.clone();
            p.push(r.ident.to_string());
            out.push(p);
        }
        UseTree::Glob(_) => out.push(prefix.clone()),
        UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

/// Paths `crate::a::b`, `super::a`, `self::a` in tokens (outside string
/// literals, so doc comments do not count).
fn token_paths(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tts.len() {
        if let TokenTree::Group(g) = &tts[i] {
            token_paths(g.stream(), out);
            i += 1;
            continue;
        }
        let is_root = matches!(&tts[i], TokenTree::Ident(id) if id == "crate" || id == "super" || id == "self");
        // `foo::self` or `x.self` are not roots: look at the token before.
        let preceded_by_colons =
            i > 0 && matches!(&tts[i - 1], TokenTree::Punct(p) if p.as_char() == ':');
        if is_root && !preceded_by_colons {
            let mut segs = vec![tts[i].to_string()];
            let mut j = i + 1;
            while j + 2 < tts.len() {
                match (&tts[j], &tts[j + 1], &tts[j + 2]) {
                    (TokenTree::Punct(a), TokenTree::Punct(b), TokenTree::Ident(id))
                        if a.as_char() == ':' && b.as_char() == ':' =>
                    {
                        let s = id.to_string();
                        segs.push(s.clone());
                        j += 3;
                        if s == "super" {
                            continue;
                        }
                    }
                    _ => break,
                }
            }
            if segs.len() > 1 {
                out.push(segs);
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
}

fn named_paths(module: &Module) -> Vec<Named> {
    let mut named = Vec::new();
    for item in &module.items {
        let mut raw = Vec::new();
        let mut reexport = false;
        if let Item::Use(u) = item {
            use_paths(&u.tree, &mut Vec::new(), &mut raw);
            reexport = module.is_folder && !matches!(u.vis, Visibility::Inherited);
        } else {
            // Doc comments are string literals to the scan: not counted.
            token_paths(item.to_token_stream(), &mut raw);
        }
        for segs in raw {
            let Some((first, rest)) = segs.split_first() else {
                continue;
            };
            // `super::super::x`: resolve step by step.
            let mut base = module.path.clone();
            let mut rest = rest.to_vec();
            let mut first = first.clone();
            while first == "super" && rest.first().is_some_and(|s| s == "super") {
                base.pop();
                first = rest.remove(0);
            }
            let m = Module {
                path: base,
                file: PathBuf::new(),
                is_folder: false,
                items: Vec::new(),
            };
            if let Some(abs) = absolute(&m, &first, &rest) {
                named.push(Named {
                    segments: abs,
                    reexport,
                });
            }
        }
    }
    named
}

#[test]
fn modules_form_layers_that_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = load(&src);
    let known: BTreeSet<Vec<String>> = modules.iter().map(|m| m.path.clone()).collect();
    let folders: BTreeSet<String> = modules
        .iter()
        .filter(|m| m.is_folder)
        .map(|m| m.path[0].clone())
        .collect();
    // The module a path lands in: a top-level module, or a file of a folder.
    let resolve = |segs: &[String]| -> Option<Vec<String>> {
        if segs.len() >= 2 && known.contains(&segs[..2]) {
            Some(segs[..2].to_vec())
        } else if !segs.is_empty() && known.contains(&segs[..1]) {
            Some(segs[..1].to_vec())
        } else {
            None
        }
    };
    let layer_of = |name: &str| -> Option<usize> { LAYERS.iter().position(|l| l.contains(&name)) };

    let rel = |p: &Path| p.strip_prefix(&src).unwrap_or(p).display().to_string();
    // (from, to) -> a file that makes the edge.
    let mut top: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut inner: BTreeMap<String, BTreeMap<(String, String), String>> = BTreeMap::new();
    let file_of = |path: &[String]| -> String {
        match path.len() {
            1 if folders.contains(&path[0]) => "mod".to_string(),
            1 => path[0].clone(),
            _ => path[1].clone(),
        }
    };
    let mut problems = Vec::new();
    for m in &modules {
        let Some(from_top) = m.path.first() else {
            continue; // lib.rs
        };
        if EXEMPT_MODULES.contains(&from_top.as_str()) {
            continue;
        }
        if layer_of(from_top).is_none() {
            problems.push(format!(
                "module `{from_top}` ({}) is in no layer: add it to LAYERS",
                rel(&m.file)
            ));
        }
        for named in named_paths(m) {
            let Some(target) = resolve(&named.segments) else {
                continue;
            };
            let to_top = &target[0];
            if EXEMPT_MODULES.contains(&to_top.as_str()) {
                continue;
            }
            if to_top != from_top {
                top.entry((from_top.clone(), to_top.clone()))
                    .or_insert_with(|| rel(&m.file));
            } else if folders.contains(from_top) && !named.reexport {
                let (a, b) = (file_of(&m.path), file_of(&target));
                if a != b {
                    inner
                        .entry(from_top.clone())
                        .or_default()
                        .entry((a, b))
                        .or_insert_with(|| rel(&m.file));
                }
            }
        }
    }

    let mut seen_known = BTreeSet::new();
    for ((from, to), file) in &top {
        let edge = format!("{from} -> {to}");
        if KNOWN.contains(&(from.as_str(), to.as_str())) {
            seen_known.insert(edge);
            continue;
        }
        match (layer_of(from), layer_of(to)) {
            (Some(a), Some(b)) if b < a => {}
            (Some(_), Some(_)) => problems.push(format!(
                "`{edge}` goes against the layering (used in {file}): `{to}` must be in a lower layer than `{from}`"
            )),
            _ => {}
        }
    }
    for (folder, edges) in &inner {
        let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (a, b) in edges.keys() {
            if KNOWN.contains(&(
                format!("{folder}/{a}").as_str(),
                format!("{folder}/{b}").as_str(),
            )) {
                seen_known.insert(format!("{folder}/{a} -> {folder}/{b}"));
                continue;
            }
            graph.entry(a).or_default().push(b);
        }
        if let Some(cycle) = find_cycle(&graph) {
            let names: Vec<String> = cycle.iter().map(|f| format!("{folder}/{f}")).collect();
            let (a, b) = (cycle[0].to_string(), cycle[1].to_string());
            let file = &edges[&(a, b)];
            problems.push(format!(
                "the files of `{folder}/` form a cycle: {} (the edge `{}` is made in {file})",
                names.join(" -> "),
                names[..2].join(" -> "),
            ));
        }
    }
    for (from, to) in KNOWN {
        let edge = format!("{from} -> {to}");
        if !seen_known.contains(&edge) {
            problems.push(format!("`{edge}` is gone: remove it from KNOWN"));
        }
    }
    if std::env::var_os("SHALE_PRINT_LAYERS").is_some() {
        for ((from, to), file) in &top {
            println!("{from} -> {to}  ({file})");
        }
        for (folder, edges) in &inner {
            for ((a, b), file) in edges {
                println!("{folder}/{a} -> {folder}/{b}  ({file})");
            }
        }
    }
    assert!(problems.is_empty(), "layering:\n{}", problems.join("\n"));
}

/// A cycle of `graph`, as its nodes in order with the first repeated last.
fn find_cycle<'a>(graph: &BTreeMap<&'a str, Vec<&'a str>>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        n: &'a str,
        graph: &BTreeMap<&'a str, Vec<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        state.insert(n, 1);
        stack.push(n);
        for &m in graph.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|&s| s == m).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(m);
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(m, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n, 2);
        None
    }
    let mut state = BTreeMap::new();
    for &n in graph.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}
