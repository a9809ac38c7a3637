//! The public API, listed from the crate's source and compared with the
//! committed list in `crates/shale/public-api.txt`.
//!
//! The test follows what `src/lib.rs` makes public (`pub mod`, `pub use`, and
//! public items), resolves each re-export to its definition through the
//! private modules, and prints one line per public item: its path, then its
//! signature (a function's signature, a struct's header and each public
//! field, an enum's variants, a trait's items, the traits implemented for a
//! public type, and the attributes that change what users may do:
//! `derive`, `non_exhaustive`, `repr`, `must_use`, `deprecated`). Bodies and
//! documentation are left out. An item added, removed or changed in
//! signature changes the list, and the test fails with the difference.
//!
//! After a deliberate change of the API, write the new list with
//!
//! ```text
//! SHALE_BLESS=1 cargo test -p shale --test public_api
//! ```
//!
//! and commit it with the change. The hidden `internals` module (a cargo
//! feature, not a supported API) is not listed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{
    Attribute, Fields, ImplItem, Item, ItemEnum, ItemImpl, ItemStruct, ItemTrait, TraitItem,
    UseTree, Visibility,
};

const CRATE: &str = "shale";

/// One source file: a module of the crate.
struct Module {
    /// Module path below the crate root (empty for lib.rs).
    path: Vec<String>,
    items: Vec<Item>,
}

/// A definition: the module that defines it and its name there.
#[derive(Clone, PartialEq, Eq, Debug)]
struct DefKey {
    module: Vec<String>,
    name: String,
}

struct Crate {
    modules: Vec<Module>,
}

impl Crate {
    fn load(src: &Path) -> Crate {
        let mut c = Crate {
            modules: Vec::new(),
        };
        c.load_module(Vec::new(), &src.join("lib.rs"), src.to_path_buf());
        c
    }

    fn load_module(&mut self, path: Vec<String>, file: &Path, dir: PathBuf) {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let parsed =
            syn::parse_file(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", file.display()));
        let children: Vec<String> = parsed
            .items
            .iter()
            .filter_map(|item| match item {
                Item::Mod(m) if m.content.is_none() && !is_test_only(&m.attrs) => {
                    Some(m.ident.to_string())
                }
                _ => None,
            })
            .collect();
        self.modules.push(Module {
            path: path.clone(),
            items: parsed.items,
        });
        for child in children {
            let mut child_path = path.clone();
            child_path.push(child.clone());
            let flat = dir.join(format!("{child}.rs"));
            let (file, child_dir) = if flat.exists() {
                (flat, dir.join(&child))
            } else {
                (dir.join(&child).join("mod.rs"), dir.join(&child))
            };
            self.load_module(child_path, &file, child_dir);
        }
    }

    fn module(&self, path: &[String]) -> Option<&Module> {
        self.modules.iter().find(|m| m.path == path)
    }

    /// Resolves `segments` as written in module `from` to a definition in
    /// this crate; `None` for a name from elsewhere.
    fn resolve(&self, from: &[String], segments: &[String]) -> Option<DefKey> {
        let (last, init) = segments.split_last()?;
        let module = self.resolve_module(from, init)?;
        self.resolve_name(&module, last)
    }

    /// Resolves a single name in module `module`: its definition there, or
    /// what a `use` of the module imports under that name (the first, when
    /// a module and a function share the name).
    fn resolve_name(&self, module: &[String], name: &str) -> Option<DefKey> {
        self.resolve_all(module, name).into_iter().next()
    }

    /// Every definition `name` stands for in module `module`: a name may be
    /// both a module or type and a function or constant.
    fn resolve_all(&self, module: &[String], name: &str) -> Vec<DefKey> {
        let Some(m) = self.module(module) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for item in &m.items {
            if is_test_only(item_attrs(item)) {
                continue;
            }
            if item_name(item).as_deref() == Some(name) {
                found.push(DefKey {
                    module: module.to_vec(),
                    name: name.to_string(),
                });
            }
            if let Item::Use(u) = item {
                for (segments, alias) in use_leaves(&u.tree) {
                    if alias == name {
                        let (last, init) = segments.split_last().expect("a use path");
                        if let Some(parent) = self.resolve_module(module, init) {
                            found.extend(self.resolve_all(&parent, last));
                        }
                    }
                }
            }
        }
        found
    }

    /// The module that `segments` (all of them module names) name from `from`.
    fn resolve_module(&self, from: &[String], segments: &[String]) -> Option<Vec<String>> {
        if segments.is_empty() {
            return Some(from.to_vec());
        }
        let mut module: Vec<String> = from.to_vec();
        for (i, seg) in segments.iter().enumerate() {
            match seg.as_str() {
                "crate" if i == 0 => module.clear(),
                "self" => {}
                "super" => {
                    module.pop();
                }
                name => {
                    let m = self.module(&module)?;
                    let is_child = m.items.iter().any(
                        |item| matches!(item, Item::Mod(md) if md.ident == name && !is_test_only(&md.attrs)),
                    );
                    if is_child {
                        module.push(name.to_string());
                    } else {
                        let key = self.resolve_name(&module, name)?;
                        module = key.module;
                        module.push(key.name);
                    }
                }
            }
        }
        self.module(&module).map(|_| module)
    }

    fn definition(&self, key: &DefKey) -> &Item {
        self.module(&key.module)
            .unwrap_or_else(|| panic!("no module {:?}", key.module))
            .items
            .iter()
            .find(|item| {
                !is_test_only(item_attrs(item)) && item_name(item).as_deref() == Some(&key.name)
            })
            .unwrap_or_else(|| panic!("no item {key:?}"))
    }

    /// The impl blocks, anywhere in the crate, whose self type is `key`.
    fn impls_of(&self, key: &DefKey) -> Vec<&ItemImpl> {
        let mut out = Vec::new();
        for m in &self.modules {
            for item in &m.items {
                let Item::Impl(imp) = item else { continue };
                if is_test_only(&imp.attrs) {
                    continue;
                }
                let syn::Type::Path(tp) = &*imp.self_ty else {
                    continue;
                };
                let segments: Vec<String> = tp
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                if segments.last() != Some(&key.name) {
                    continue;
                }
                if self.resolve(&m.path, &segments).as_ref() == Some(key) {
                    out.push(imp);
                }
            }
        }
        out
    }
}

/// The leaves of a `use` tree: (path segments, name imported as).
fn use_leaves(tree: &UseTree) -> Vec<(Vec<String>, String)> {
    fn walk(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            UseTree::Name(n) => {
                let name = n.ident.to_string();
                if name == "self" {
                    let alias = prefix.last().cloned().unwrap_or_default();
                    out.push((prefix.clone(), alias));
                } else {
                    let mut full = prefix.clone();
                    full.push(name.clone());
                    out.push((full, name));
                }
            }
            UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                out.push((full, r.rename.to_string()));
            }
            UseTree::Glob(_) => panic!("glob re-exports are not listed: name the items"),
            UseTree::Group(g) => {
                for t in &g.items {
                    walk(t, prefix, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn item_name(item: &Item) -> Option<String> {
    Some(match item {
        Item::Const(i) => i.ident.to_string(),
        Item::Enum(i) => i.ident.to_string(),
        Item::Fn(i) => i.sig.ident.to_string(),
        Item::Mod(i) => i.ident.to_string(),
        Item::Static(i) => i.ident.to_string(),
        Item::Struct(i) => i.ident.to_string(),
        Item::Trait(i) => i.ident.to_string(),
        Item::Type(i) => i.ident.to_string(),
        Item::Union(i) => i.ident.to_string(),
        _ => return None,
    })
}

fn attr_text(attr: &Attribute) -> String {
    attr.to_token_stream().to_string()
}

/// `#[cfg(test)]` or `#[cfg(feature = "internals")]`: not part of the API.
fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let t = attr_text(a);
            t.contains("test") || t.contains("internals")
        }
    })
}

fn is_hidden(attrs: &[Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("doc") && attr_text(a).contains("hidden"))
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// The attributes that change what users may do with an item.
fn api_attrs(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs
        .iter()
        .filter(|a| {
            ["derive", "non_exhaustive", "repr", "must_use", "deprecated"]
                .iter()
                .any(|n| a.path().is_ident(n))
        })
        .cloned()
        .collect()
}

/// Renders items as one line of Rust with bodies left out.
fn render(item: Item) -> String {
    let text = prettyplease::unparse(&syn::File {
        shebang: None,
        attrs: Vec::new(),
        items: vec![item],
    });
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let one_line = one_line.replace("( ", "(").replace(" )", ")");
    one_line
        .strip_suffix(" {}")
        .or_else(|| one_line.strip_suffix(';'))
        .unwrap_or(&one_line)
        .to_string()
}

fn empty_block() -> syn::Block {
    syn::parse_quote!({})
}

fn render_fn(vis: &Visibility, sig: &syn::Signature, attrs: &[Attribute]) -> String {
    render(Item::Fn(syn::ItemFn {
        attrs: api_attrs(attrs),
        vis: vis.clone(),
        sig: sig.clone(),
        block: Box::new(empty_block()),
    }))
}

struct Lister<'a> {
    krate: &'a Crate,
    lines: BTreeSet<String>,
}

impl Lister<'_> {
    fn emit(&mut self, path: &str, text: String) {
        self.lines.insert(format!("{path}: {text}"));
    }

    /// Lists the public items of module `module`, reachable as `public`.
    fn module(&mut self, module: &[String], public: &str) {
        let krate = self.krate;
        let m = krate.module(module).expect("a loaded module");
        for item in &m.items {
            let attrs = item_attrs(item);
            if is_test_only(attrs) || is_hidden(attrs) {
                continue;
            }
            match item {
                Item::Use(u) if is_pub(&u.vis) => {
                    for (segments, alias) in use_leaves(&u.tree) {
                        let (last, init) = segments.split_last().expect("a use path");
                        let keys = krate
                            .resolve_module(module, init)
                            .map(|parent| krate.resolve_all(&parent, last))
                            .unwrap_or_default()
                            .into_iter()
                            // A `pub use` re-exports each namespace's item
                            // only if that item is itself `pub`.
                            .filter(|key| item_is_pub(krate.definition(key)))
                            .collect::<Vec<_>>();
                        assert!(
                            !keys.is_empty(),
                            "{public}: cannot resolve `{}`",
                            segments.join("::")
                        );
                        for key in keys {
                            self.item(&key, &format!("{public}::{alias}"), &alias);
                        }
                    }
                }
                Item::Mod(md) if is_pub(&md.vis) => {
                    let mut child = module.to_vec();
                    child.push(md.ident.to_string());
                    let path = format!("{public}::{}", md.ident);
                    self.emit(&path, format!("pub mod {}", md.ident));
                    self.module(&child, &path);
                }
                Item::Use(_) | Item::Mod(_) | Item::Impl(_) | Item::Macro(_) => {}
                _ => {
                    if let Some(name) = item_name(item) {
                        if item_is_pub(item) {
                            let key = DefKey {
                                module: module.to_vec(),
                                name: name.clone(),
                            };
                            self.item(&key, &format!("{public}::{name}"), &name);
                        }
                    }
                }
            }
        }
    }

    /// Lists definition `key`, reachable as `path` under the name `alias`.
    fn item(&mut self, key: &DefKey, path: &str, alias: &str) {
        let krate = self.krate;
        let rename = |ident: &mut syn::Ident| *ident = syn::Ident::new(alias, ident.span());
        match krate.definition(key).clone() {
            Item::Struct(s) => {
                self.structure(s, path, alias);
                self.impls(key, path);
            }
            Item::Enum(e) => {
                self.enumeration(e, path, alias);
                self.impls(key, path);
            }
            Item::Trait(t) => self.trait_(t, path, alias),
            Item::Fn(mut f) => {
                rename(&mut f.sig.ident);
                self.emit(path, render_fn(&f.vis, &f.sig, &f.attrs));
            }
            Item::Mod(_) => {
                let mut module = key.module.clone();
                module.push(key.name.clone());
                self.emit(path, format!("pub mod {alias}"));
                self.module(&module, path);
            }
            mut other => {
                match &mut other {
                    Item::Const(c) => {
                        rename(&mut c.ident);
                        c.attrs = api_attrs(&c.attrs);
                    }
                    Item::Static(s) => {
                        rename(&mut s.ident);
                        s.attrs = api_attrs(&s.attrs);
                    }
                    Item::Type(t) => {
                        rename(&mut t.ident);
                        t.attrs = api_attrs(&t.attrs);
                    }
                    _ => panic!("{path}: an item of a kind this test does not list"),
                }
                self.emit(path, render(other));
            }
        }
    }

    fn structure(&mut self, mut s: ItemStruct, path: &str, alias: &str) {
        s.ident = syn::Ident::new(alias, s.ident.span());
        s.attrs = api_attrs(&s.attrs);
        let fields: Vec<(String, syn::Field)> = s
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let name = f.ident.as_ref().map_or(i.to_string(), |id| id.to_string());
                (name, f.clone())
            })
            .collect();
        let private = fields.iter().filter(|(_, f)| !is_pub(&f.vis)).count();
        s.fields = Fields::Unit;
        s.semi_token = Some(Default::default());
        let mut header = render(Item::Struct(s));
        if private > 0 {
            header.push_str(" /* private fields */");
        }
        self.emit(path, header);
        for (name, field) in fields {
            if is_pub(&field.vis) {
                let ty = prettyplease_type(&field.ty);
                self.emit(&format!("{path}::{name}"), format!("pub {name}: {ty}"));
            }
        }
    }

    fn enumeration(&mut self, mut e: ItemEnum, path: &str, alias: &str) {
        e.ident = syn::Ident::new(alias, e.ident.span());
        e.attrs = api_attrs(&e.attrs);
        let variants: Vec<syn::Variant> = e.variants.iter().cloned().collect();
        e.variants.clear();
        self.emit(path, render(Item::Enum(e.clone())));
        for mut v in variants {
            v.attrs = api_attrs(&v.attrs);
            for f in v.fields.iter_mut() {
                f.attrs.clear();
            }
            let name = v.ident.to_string();
            let mut one = e.clone();
            one.attrs.clear();
            one.variants.push(v);
            let text = render(Item::Enum(one));
            let inner = text
                .split_once('{')
                .and_then(|(_, rest)| rest.rsplit_once('}'))
                .map(|(inner, _)| inner.trim().trim_end_matches(',').to_string())
                .unwrap_or(text);
            self.emit(&format!("{path}::{name}"), inner);
        }
    }

    fn trait_(&mut self, mut t: ItemTrait, path: &str, alias: &str) {
        t.ident = syn::Ident::new(alias, t.ident.span());
        t.attrs = api_attrs(&t.attrs);
        let items = std::mem::take(&mut t.items);
        self.emit(path, render(Item::Trait(t)));
        for item in items {
            match item {
                TraitItem::Fn(f) => {
                    let provided = if f.default.is_some() {
                        " (provided)"
                    } else {
                        ""
                    };
                    let text = render_fn(&Visibility::Inherited, &f.sig, &f.attrs);
                    self.emit(
                        &format!("{path}::{}", f.sig.ident),
                        format!("{text}{provided}"),
                    );
                }
                TraitItem::Type(ty) => {
                    self.emit(
                        &format!("{path}::{}", ty.ident),
                        ty.to_token_stream().to_string(),
                    );
                }
                TraitItem::Const(c) => {
                    self.emit(
                        &format!("{path}::{}", c.ident),
                        c.to_token_stream().to_string(),
                    );
                }
                _ => {}
            }
        }
    }

    /// The public methods and the trait impls of the type `key`.
    fn impls(&mut self, key: &DefKey, path: &str) {
        for imp in self.krate.impls_of(key) {
            if imp.trait_.is_some() {
                let mut header = imp.clone();
                header.items.clear();
                header.attrs = api_attrs(&header.attrs);
                self.emit(path, render(Item::Impl(header)));
                continue;
            }
            for item in &imp.items {
                match item {
                    ImplItem::Fn(f) if is_pub(&f.vis) && !is_test_only(&f.attrs) => {
                        self.emit(
                            &format!("{path}::{}", f.sig.ident),
                            render_fn(&f.vis, &f.sig, &f.attrs),
                        );
                    }
                    ImplItem::Const(c) if is_pub(&c.vis) && !is_test_only(&c.attrs) => {
                        self.emit(
                            &format!("{path}::{}", c.ident),
                            c.to_token_stream().to_string(),
                        );
                    }
                    _ => {}
                }
            }
        }
    }
}

fn item_is_pub(item: &Item) -> bool {
    match item {
        Item::Mod(i) => is_pub(&i.vis),
        Item::Const(i) => is_pub(&i.vis),
        Item::Enum(i) => is_pub(&i.vis),
        Item::Fn(i) => is_pub(&i.vis),
        Item::Static(i) => is_pub(&i.vis),
        Item::Struct(i) => is_pub(&i.vis),
        Item::Trait(i) => is_pub(&i.vis),
        Item::Type(i) => is_pub(&i.vis),
        Item::Union(i) => is_pub(&i.vis),
        _ => false,
    }
}

/// A type as prettyplease prints it.
fn prettyplease_type(ty: &syn::Type) -> String {
    let text = render(syn::parse_quote!(type T = #ty;));
    text.strip_prefix("type T = ")
        .unwrap_or(&text)
        .trim_end_matches(';')
        .to_string()
}

fn public_api() -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let krate = Crate::load(&src);
    let mut lister = Lister {
        krate: &krate,
        lines: BTreeSet::new(),
    };
    lister.module(&[], CRATE);
    let mut out = String::new();
    for line in &lister.lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn public_api_matches_the_committed_list() {
    let listed = Path::new(env!("CARGO_MANIFEST_DIR")).join("public-api.txt");
    let now = public_api();
    if std::env::var_os("SHALE_BLESS").is_some() {
        std::fs::write(&listed, &now).expect("writing public-api.txt");
        return;
    }
    let committed = std::fs::read_to_string(&listed).unwrap_or_default();
    if committed != now {
        let old: BTreeSet<&str> = committed.lines().collect();
        let new: BTreeSet<&str> = now.lines().collect();
        let mut diff = String::new();
        for line in old.difference(&new) {
            diff.push_str(&format!("- {line}\n"));
        }
        for line in new.difference(&old) {
            diff.push_str(&format!("+ {line}\n"));
        }
        panic!(
            "the public API differs from {} (- committed, + now):\n{diff}\n\
             If the change is intended, bless it:\n  \
             SHALE_BLESS=1 cargo test -p shale --test public_api\n\
             and commit public-api.txt with it.",
            listed.display()
        );
    }
}

#[test]
fn the_lister_sees_the_core_items() {
    let api = public_api();
    for needle in [
        "shale::Db::open: pub fn open(",
        "shale::Error: #[derive(",
        "shale::env::FileSystem: pub trait FileSystem",
        "shale::Options::create_if_missing: pub create_if_missing: bool",
    ] {
        assert!(api.contains(needle), "{needle} missing from\n{api}");
    }
    assert!(!api.contains("internals"), "the hidden door is not API");
}
