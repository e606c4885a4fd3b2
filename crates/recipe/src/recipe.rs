//! Loading a recipe file and expanding it into variants.

use crate::codes;
use crate::merge::{NullMode, drop_nulls, merge_into, srtctl_zip_reread};
use crate::pystr::py_str;
use crate::reference::Selector;
use crate::source::{Origin, Origins, Source, Sources, join_key};
use infx_report::{Diagnostic, Span};
use infx_yaml::{DocIndex, Mapping, Node, Value};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The most variants one recipe may expand into (docs/security.md, "Budgets and read paths,
/// with their tests"): 1,000, 35 times the most a real recipe has (28, an srt-slurm recipe in
/// the srtctl goldens; 19 in the October tree, 17 in August).
pub(crate) const MAX_VARIANTS_PER_RECIPE: usize = 1_000;

/// The shape of a recipe document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecipeKind {
    /// One job.
    Plain,
    /// A mapping with a `base` key plus `override_*` / `zip_override_*` blocks.
    Bundle,
    /// A file-level `sweep:` (not a bundle).
    Sweep,
}

impl RecipeKind {
    /// The shape of a recipe document's root (also of one read but not yet loaded as a
    /// [`RecipeFile`]).
    pub fn of(root: &Node) -> RecipeKind {
        if root.get("base").is_some() {
            RecipeKind::Bundle
        } else if root.get("sweep").is_some() {
            RecipeKind::Sweep
        } else {
            RecipeKind::Plain
        }
    }
}

/// A loaded recipe (possibly composed with a lane block), keeping where every value came from.
#[derive(Debug, Clone)]
pub struct RecipeFile {
    /// `sources[0]` is the recipe file itself; later entries are lane blocks merged in.
    pub sources: Sources,
    /// The document tree (after composition), shared with the run's parse of the file: the
    /// binder and the checks only read it, and a copy per reader was 4 % of a whole-tree run
    /// (docs/performance.md). A reader that changes it copies it.
    pub root: Arc<Node>,
    /// Origins of the document's values, keyed by YAML path from the document root
    /// (`base.roles.agg.gpus`).
    pub origins: Origins,
}

/// How null values in zip overrides behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZipNulls {
    /// What srtctl c88ef731 validates and submits: a `null` in a zip block does not delete the
    /// base value, a `null` in the base is deleted (its default returns), and strings are
    /// re-typed by the YAML round trip (`'yes'` → true, `'8:00:00'` → 28800; docs/recipe.md).
    /// The default.
    #[default]
    KeepBase,
    /// What InferenceX's own expander does (and srtctl documents): zip variants drop every
    /// null-valued key after the merge (docs/recipe.md, "Zip variants").
    Drop,
}

/// Options for [`RecipeFile::expand_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ExpandOptions {
    pub zip_nulls: ZipNulls,
    /// A selector on a plain recipe is an error (InferenceX) instead of being ignored (srtctl).
    pub selector_on_plain_is_error: bool,
}

impl ExpandOptions {
    /// srtctl c88ef731 behaviour.
    pub fn srtctl() -> Self {
        ExpandOptions {
            zip_nulls: ZipNulls::KeepBase,
            selector_on_plain_is_error: false,
        }
    }
    /// InferenceX binder behaviour (`infx.srt_slurm.variants`).
    pub fn inferencex() -> Self {
        ExpandOptions {
            zip_nulls: ZipNulls::Drop,
            selector_on_plain_is_error: true,
        }
    }
}

/// One expanded recipe.
#[derive(Debug, Clone)]
pub struct Variant {
    /// `name` of the resolved tree, as the expander set it (`None` when it has no string name).
    pub name: Option<String>,
    /// srtctl's label: `base`, `override_x`, or `override_<group>_<i>` for zip variants; empty
    /// for a plain recipe.
    pub label: String,
    /// The selector that picks exactly this variant (`None` for a plain recipe).
    pub selector: Option<Selector>,
    /// The resolved recipe.
    pub tree: Arc<Node>,
    /// Where each value of `tree` came from (paths relative to the variant root).
    pub origins: Origins,
    pub sources: Sources,
}

impl Variant {
    /// The selector as text (`override_x`, `zip_override_g[2]`, `base`; empty for plain).
    pub fn selector_text(&self) -> String {
        self.selector
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default()
    }
    /// The origin of the value at `path` (`roles.agg.args.tp-size`).
    pub fn origin_of(&self, path: &str) -> Option<&Origin> {
        self.origins.get(path)
    }
    /// The file that set the value at `path`.
    pub fn file_of(&self, path: &str) -> &Path {
        let idx = self.origins.get(path).map(|o| o.source).unwrap_or(0);
        self.sources
            .get(idx)
            .map(|s| s.path.as_path())
            .unwrap_or(Path::new(""))
    }
    /// Locates `d` at `span` in the file that set `path`.
    pub fn locate(&self, path: &str, span: Span, d: Diagnostic) -> Diagnostic {
        d.at(self.file_of(path), span)
    }
}

fn code_err(code: infx_report::Code, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(code, msg)
}

/// Loads `rel` below `root`, refusing paths that escape the root through `..`, an absolute
/// path, or a symlink (`recipe/root-escape`); a missing file is `recipe/missing-file`. The
/// diagnostics point at `rel` (callers with a referencing site may re-locate them).
pub fn load_recipe(root: &Path, rel: &str) -> Result<RecipeFile, Diagnostic> {
    load_recipe_in(root, rel, &DocIndex::default())
}

/// [`load_recipe`], taking the document from `parsed` when this run already parsed the file
/// (the same checks on the path first; the file is then not read again).
pub fn load_recipe_in(
    root: &Path,
    rel: &str,
    parsed: &DocIndex<'_>,
) -> Result<RecipeFile, Diagnostic> {
    let relp = Path::new(rel);
    let shown = PathBuf::from(rel);
    let escape = |why: String| {
        code_err(codes::ROOT_ESCAPE, format!("recipe path {rel} {why}"))
            .at(&shown, Span::line(1))
            .with_help("recipe references must stay inside the repository")
    };
    if relp.is_absolute() {
        return Err(escape("is absolute".into()));
    }
    let mut depth: i64 = 0;
    for c in relp.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            _ => return Err(escape("is not a plain relative path".into())),
        }
        if depth < 0 {
            return Err(escape("escapes the repository root through '..'".into()));
        }
    }
    let full = root.join(relp);
    // Resolved first, looked for only when that fails: one `stat` less per recipe a run
    // loads (docs/performance.md).
    let canon = match infx_fs::canonical(&full) {
        Ok(canon) => canon,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || !full.exists() => {
            return Err(missing(&shown, rel));
        }
        Err(e) => {
            return Err(code_err(codes::IO, format!("cannot resolve {rel}: {e}")).with_path(&shown));
        }
    };
    let canon_root = infx_fs::canonical(root).map_err(|e| {
        code_err(codes::IO, format!("cannot resolve {}: {e}", root.display())).with_path(root)
    })?;
    if !canon.starts_with(&canon_root) {
        return Err(escape(format!(
            "resolves outside the repository (to {})",
            canon.display()
        )));
    }
    let doc = parsed.load(&full).map_err(|mut d| {
        d.path = Some(shown.clone());
        d
    })?;
    let doc = doc.into_owned();
    RecipeFile::from_parsed(&shown, doc.text, doc.root)
}

fn missing(shown: &Path, rel: &str) -> Diagnostic {
    code_err(codes::MISSING_FILE, format!("Config not found: {rel}"))
        .at(shown, Span::line(1))
        .with_help("check the path; recipe references are relative to the repository root")
}

/// Loads a recipe file given on the command line (no root restriction).
pub fn load_recipe_file(path: &Path) -> Result<RecipeFile, Diagnostic> {
    // A directory or FIFO is not "missing": infx-fs names what it is.
    if !path.exists() {
        return Err(missing(path, &path.display().to_string()));
    }
    // infx-fs: regular files only, size-limited, confined when the command confines
    // (docs/security.md).
    let bytes = infx_fs::read(path).map_err(|e| {
        let code = match e.kind {
            infx_fs::FsErrorKind::Unreadable => codes::IO,
            _ => e.code(),
        };
        code_err(code, e.message.clone()).with_path(path)
    })?;
    let text = String::from_utf8(bytes).map_err(|_| {
        code_err(infx_yaml::codes::ENCODING, "file is not valid UTF-8").with_path(path)
    })?;
    RecipeFile::parse(path, text)
}

impl RecipeFile {
    /// Parses recipe text. Errors: YAML errors, empty document, non-mapping document.
    pub fn parse(path: &Path, text: String) -> Result<RecipeFile, Diagnostic> {
        let root = infx_yaml::parse_str(path, &text)?;
        RecipeFile::from_parsed(path, Arc::from(text), Arc::new(root))
    }

    /// A recipe from its already-parsed text (`root` parsed from `text`), named `path`: the
    /// checks of [`Self::parse`] without parsing again.
    pub fn from_parsed(
        path: &Path,
        text: Arc<str>,
        root: Arc<Node>,
    ) -> Result<RecipeFile, Diagnostic> {
        let at = |d: Diagnostic| d.at(path, root.span);
        match &root.value {
            Value::Null => {
                return Err(at(code_err(codes::EMPTY, "YAML file is empty"))
                    .with_help("a recipe is a mapping with name, model, resources, …"));
            }
            Value::Map(_) => {}
            _ => {
                return Err(at(code_err(
                    codes::NOT_MAPPING,
                    "top-level YAML must be a mapping",
                )));
            }
        }
        let sources = Arc::new(vec![Source {
            path: path.to_path_buf(),
            text,
        }]);
        Ok(RecipeFile {
            sources,
            root,
            origins: Origins::new(Origin {
                source: 0,
                block: Arc::from(""),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        self.sources
            .first()
            .map(|s| s.path.as_path())
            .unwrap_or(Path::new(""))
    }

    fn source_path(&self, idx: usize) -> &Path {
        self.sources
            .get(idx)
            .map(|s| s.path.as_path())
            .unwrap_or_else(|| self.path())
    }

    pub fn kind(&self) -> RecipeKind {
        RecipeKind::of(&self.root)
    }

    /// A plain recipe's one variant: the file itself, moved rather than copied (the expander
    /// copies it, as it keeps the file).
    pub fn into_plain_variant(self) -> Variant {
        let name = self
            .root
            .get("name")
            .and_then(|n| n.as_str())
            .map(str::to_string);
        Variant {
            name,
            label: String::new(),
            selector: None,
            tree: self.root,
            origins: self.origins,
            sources: self.sources,
        }
    }

    /// `override_*` keys, sorted.
    pub fn override_keys(&self) -> Vec<&str> {
        self.block_keys("override_")
    }
    /// `zip_override_*` keys, sorted.
    pub fn zip_keys(&self) -> Vec<&str> {
        self.block_keys("zip_override_")
    }
    fn block_keys(&self, prefix: &str) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .root
            .as_map()
            .map(|m| m.keys().filter(|k| k.starts_with(prefix)).collect())
            .unwrap_or_default();
        v.sort_unstable();
        v
    }

    fn key_span(&self, key: &str) -> Span {
        self.root
            .as_map()
            .and_then(|m| m.get_entry(key))
            .map(|(k, _)| k.span)
            .unwrap_or(self.root.span)
    }

    fn err_at_key(&self, key: &str, code: infx_report::Code, msg: String) -> Diagnostic {
        let path = join_key("", key);
        let src = self.origins.get(&path).map(|o| o.source).unwrap_or(0);
        code_err(code, msg).at(self.source_path(src), self.key_span(key))
    }

    /// Expands with srtctl's rules ([`ExpandOptions::srtctl`]).
    pub fn expand(&self, selector: Option<&Selector>) -> Result<Vec<Variant>, Diagnostic> {
        self.expand_with(selector, ExpandOptions::srtctl())
    }

    /// Expands into variants. No selector: a plain recipe is one variant; a bundle gives every
    /// `override_*` (sorted) then every `zip_override_*` (sorted, index order); `base` is
    /// excluded.
    pub fn expand_with(
        &self,
        selector: Option<&Selector>,
        opts: ExpandOptions,
    ) -> Result<Vec<Variant>, Diagnostic> {
        if self.kind() != RecipeKind::Bundle {
            if let Some(sel) = selector
                && opts.selector_on_plain_is_error
            {
                return Err(code_err(
                    codes::SELECTOR,
                    format!("selector ':{sel}' on a recipe that is not an override bundle (no 'base' key)"),
                )
                .at(self.path(), self.root.span)
                .with_help("drop the selector, or turn the recipe into a bundle with a 'base' block"));
            }
            return Ok(vec![self.clone().into_plain_variant()]);
        }
        let base = self.base()?;
        let overrides = self.override_keys();
        let zips = self.zip_keys();
        // Counted before any variant is built: 10^5 `override_*` blocks kept dry-run busy past
        // 120 s (docs/security.md, "Budgets and read paths, with their tests").
        let count = overrides.len()
            + zips
                .iter()
                .map(|z| self.zip_len(z))
                .fold(0usize, usize::saturating_add);
        if count > MAX_VARIANTS_PER_RECIPE {
            return Err(code_err(
                codes::TOO_MANY_VARIANTS,
                format!(
                    "the recipe has {count} variants ({} override_* blocks, the rest from zip_override_* lists); the limit is {MAX_VARIANTS_PER_RECIPE}",
                    overrides.len()
                ),
            )
            .at(self.path(), self.key_span("base"))
            .with_help("split the recipe into several files"));
        }
        let avail_all = || {
            let mut parts: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
            parts.extend(zips.iter().map(|z| format!("{z}[i]")));
            parts.join(", ")
        };
        let mut out = Vec::new();
        match selector {
            None => {
                for k in &overrides {
                    out.push(self.override_variant(&base, k)?);
                }
                for z in &zips {
                    out.extend(self.zip_variants(&base, z, None, opts)?);
                }
            }
            Some(Selector::Zip {
                key,
                index: Some(i),
            }) => {
                if !zips.contains(&key.as_str()) {
                    let avail: Vec<String> = zips.iter().map(|z| format!("{z}[i]")).collect();
                    let avail = if avail.is_empty() {
                        "(none)".to_string()
                    } else {
                        avail.join(", ")
                    };
                    return Err(self.no_variant(format!(
                        "'{key}' not found in config. Available zip groups: {avail}"
                    )));
                }
                out.extend(self.zip_variants(&base, key, Some(*i), opts)?);
            }
            Some(Selector::Base) => out.push(self.base_variant(&base)),
            Some(Selector::Glob(p)) => {
                let mut all: Vec<&str> = overrides.iter().chain(zips.iter()).copied().collect();
                all.sort_unstable();
                let hits: Vec<&str> = all.into_iter().filter(|k| infx_fs::fnmatch(k, p)).collect();
                if hits.is_empty() {
                    return Err(self.no_variant(format!(
                        "No variants match '{p}'. Available: {}",
                        avail_all()
                    )));
                }
                for k in hits {
                    if k.starts_with("zip_override_") {
                        out.extend(self.zip_variants(&base, k, None, opts)?);
                    } else {
                        out.push(self.override_variant(&base, k)?);
                    }
                }
            }
            Some(Selector::Zip { key, index: None }) => {
                if !zips.contains(&key.as_str()) {
                    return Err(self.no_variant(format!(
                        "'{key}' not found in config. Available: {}",
                        zips.join(", ")
                    )));
                }
                out.extend(self.zip_variants(&base, key, None, opts)?);
            }
            Some(Selector::Override(k)) => {
                if !overrides.contains(&k.as_str()) {
                    return Err(self.no_variant(format!(
                        "Override '{k}' not found in config. Available: {}",
                        avail_all()
                    )));
                }
                out.push(self.override_variant(&base, k)?);
            }
        }
        Ok(out)
    }

    fn no_variant(&self, msg: String) -> Diagnostic {
        code_err(codes::NO_VARIANT, msg)
            .at(self.path(), self.key_span("base"))
            .with_help("pick one of the listed variants (selectors name the block key)")
    }

    /// The base block with its origins, plus the top-level `schema` copied in.
    fn base(&self) -> Result<(Node, Origins), Diagnostic> {
        let Some(b) = self.root.get("base") else {
            return Err(
                code_err(codes::BUNDLE, "override bundle has no base").with_path(self.path())
            );
        };
        if b.as_map().is_none() {
            return Err(self
                .err_at_key("base", codes::BUNDLE, "'base' must be a mapping".into())
                .with_help("write the shared recipe under base:"));
        }
        let mut node = b.clone();
        let mut origins = self.origins.subtree("base");
        if let Some(o) = origins.get("").cloned()
            && o.block.is_empty()
        {
            origins.set_exact(
                "",
                Origin {
                    source: o.source,
                    block: Arc::from("base"),
                },
            );
        }
        // Schema 2: a top-level `schema:` beside `base` is copied into every variant.
        if let Some((sk, sv)) = self.root.as_map().and_then(|m| m.get_entry("schema"))
            && node.get("schema").is_none()
            && let Value::Map(m) = &mut node.value
        {
            let mut nm = Mapping::new();
            nm.insert(sk.clone(), sv.clone());
            for (k, v) in m.iter_nodes() {
                nm.insert(k.clone(), v.clone());
            }
            *m = nm;
            if let Some(o) = self.origins.get("schema") {
                origins.set("schema", o.clone());
            }
        }
        Ok((node, origins))
    }

    fn base_variant(&self, base: &(Node, Origins)) -> Variant {
        Variant {
            name: base
                .0
                .get("name")
                .and_then(|n| n.as_str())
                .map(str::to_string),
            label: "base".into(),
            selector: Some(Selector::Base),
            tree: Arc::new(base.0.clone()),
            origins: base.1.clone(),
            sources: self.sources.clone(),
        }
    }

    fn base_name(base: &Node) -> String {
        // srtctl: `base.get("name", "unnamed")`, so an explicit null or "" is used as written.
        match base.get("name") {
            Some(n) => py_str(n),
            None => "unnamed".into(),
        }
    }

    fn block_origin(&self, key: &str, label: String) -> Origin {
        let src = self.origins.get(key).map(|o| o.source).unwrap_or(0);
        Origin {
            source: src,
            block: Arc::from(label),
        }
    }

    fn override_variant(&self, base: &(Node, Origins), key: &str) -> Result<Variant, Diagnostic> {
        let section = self
            .root
            .get(key)
            .cloned()
            .unwrap_or(Node::new(Value::Null, self.root.span));
        if section.as_map().is_none() {
            return Err(self.err_at_key(
                key,
                codes::OVERRIDE_NOT_MAPPING,
                format!("'{key}' must be a mapping of settings to merge over base ('NoneType' object has no attribute 'items')"),
            )
            .with_help("write the settings this variant changes under the key, or delete the key"));
        }
        let suffix = &key["override_".len()..];
        let origin = self.block_origin(key, key.to_string());
        let (mut tree, mut origins) = base.clone();
        merge_into(
            &mut tree,
            &section,
            "",
            &mut origins,
            &origin,
            NullMode::Delete,
        );
        if section.get("name").is_none() {
            let name = format!("{}_{suffix}", Self::base_name(&base.0));
            set_name(&mut tree, name, self.key_span(key));
            origins.set("name", origin.clone());
        }
        Ok(Variant {
            name: tree
                .get("name")
                .and_then(|n| n.as_str())
                .map(str::to_string),
            label: key.to_string(),
            selector: Some(Selector::Override(key.to_string())),
            tree: Arc::new(tree),
            origins,
            sources: self.sources.clone(),
        })
    }

    /// The variants of one zip group (`only` = just that index).
    /// How many variants the zip group `key` yields: its longest list (1 when it has none;
    /// the lengths' agreement is checked when it is expanded).
    fn zip_len(&self, key: &str) -> usize {
        let Some(section) = self.root.get(key) else {
            return 0;
        };
        let mut lists = Vec::new();
        collect_lists(section, &mut lists);
        lists.iter().map(|(l, _)| *l).max().unwrap_or(1)
    }

    fn zip_variants(
        &self,
        base: &(Node, Origins),
        key: &str,
        only: Option<usize>,
        opts: ExpandOptions,
    ) -> Result<Vec<Variant>, Diagnostic> {
        let section = self
            .root
            .get(key)
            .cloned()
            .unwrap_or(Node::new(Value::Null, self.root.span));
        let src = self.origins.get(key).map(|o| o.source).unwrap_or(0);
        let file = self.source_path(src).to_path_buf();
        let mut lists = Vec::new();
        collect_lists(&section, &mut lists);
        if lists.is_empty() {
            return Err(code_err(
                codes::ZIP_NO_LIST,
                "zip_override section contains no list values — nothing to zip",
            )
            .at(&file, self.key_span(key))
            .with_help("give at least one setting a list of per-variant values"));
        }
        if let Some(empty) = lists.iter().find(|(len, _)| *len == 0) {
            return Err(code_err(
                codes::ZIP_EMPTY,
                "zip_override contains an empty list — cannot zip zero-length lists",
            )
            .at(&file, empty.1)
            .with_help("remove the empty list or give it one value per variant"));
        }
        let mut lens: Vec<usize> = lists.iter().map(|(l, _)| *l).filter(|&l| l != 1).collect();
        lens.sort_unstable();
        lens.dedup();
        if lens.len() > 1 {
            let first = lists
                .iter()
                .find(|(l, _)| *l != 1)
                .map(|(l, _)| *l)
                .unwrap_or(1);
            let culprit = lists
                .iter()
                .find(|(l, _)| *l != 1 && *l != first)
                .map(|(_, s)| *s)
                .unwrap_or(section.span);
            let shown: Vec<String> = lens.iter().map(|l| l.to_string()).collect();
            return Err(code_err(
                codes::ZIP_LENGTH,
                format!(
                    "Incompatible zip lengths [{}]. All lists must have the same length or length 1 (broadcast).",
                    shown.join(", ")
                ),
            )
            .at(&file, culprit)
            .with_help("give every list in the zip block the same length (or length 1 to broadcast)"));
        }
        let n = lens.first().copied().unwrap_or(1);
        if let Some(i) = only
            && i >= n
        {
            return Err(self.no_variant(format!(
                "Index [{i}] out of range for '{key}' (has {n} variants, valid: 0\u{2013}{})",
                n - 1
            )));
        }
        let group = &key["zip_override_".len()..];
        let name_is_list = matches!(section.get("name").map(|n| &n.value), Some(Value::Seq(_)));
        let mut out = Vec::new();
        for i in 0..n {
            if only.is_some_and(|o| o != i) {
                continue;
            }
            let slice = slice_at(&section, i);
            let label = format!("{key}[{i}]");
            let origin = Origin {
                source: src,
                block: Arc::from(label.as_str()),
            };
            let (mut tree, mut origins) = base.clone();
            let nulls = match opts.zip_nulls {
                ZipNulls::KeepBase => NullMode::KeepBase,
                ZipNulls::Drop => NullMode::Delete,
            };
            merge_into(&mut tree, &slice, "", &mut origins, &origin, nulls);
            match opts.zip_nulls {
                ZipNulls::Drop => drop_nulls(&mut tree, "", &mut origins),
                ZipNulls::KeepBase => {
                    srtctl_zip_reread(&mut tree, &base.0, Some(&slice), "", &mut origins)
                }
            }
            if !name_is_list {
                let name = format!("{}_{group}_{i}", Self::base_name(&base.0));
                set_name(&mut tree, name, self.key_span(key));
                origins.set("name", origin.clone());
            }
            out.push(Variant {
                name: tree
                    .get("name")
                    .and_then(|n| n.as_str())
                    .map(str::to_string),
                label: format!("override_{group}_{i}"),
                selector: Some(Selector::Zip {
                    key: key.to_string(),
                    index: Some(i),
                }),
                tree: Arc::new(tree),
                origins,
                sources: self.sources.clone(),
            });
        }
        Ok(out)
    }
}

/// A recipe's `frontend.type` as srtctl reads it: `dynamo` when unset.
pub(crate) fn frontend_type(tree: &Node) -> String {
    tree.get_path(&["frontend", "type"])
        .map(py_str)
        .unwrap_or_else(|| "dynamo".into())
}

/// Why srtctl's load of a plain recipe fails on its `lock:` section, if it does: it pops the
/// section and, when the value is truthy, reads it as a mapping (`lock_data.get("integrity")`),
/// so any other truthy value stops the load with Python's `AttributeError` text, returned here
/// with the value's node (docs/recipe.md, "srtctl's file-level steps").
pub(crate) fn lock_section_fault(tree: &Node) -> Option<(&Node, String)> {
    let lock = tree.get("lock")?;
    if !is_truthy(lock) || lock.as_map().is_some() {
        return None;
    }
    let python_type = crate::pystr::py_type_name(lock);
    Some((
        lock,
        format!("'{python_type}' object has no attribute 'get'"),
    ))
}

/// Python truthiness of a YAML value.
pub(crate) fn is_truthy(n: &Node) -> bool {
    match &n.value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Float(f) => f.value != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::Timestamp(_) => true,
        Value::Seq(s) => !s.is_empty(),
        Value::Map(m) => !m.is_empty(),
    }
}

fn set_name(tree: &mut Node, name: String, span: Span) {
    if let Value::Map(m) = &mut tree.value {
        m.insert(
            Node::new(Value::Str("name".into()), span),
            Node::new(Value::Str(name), span),
        );
    }
}

/// Lengths (and spans) of every list-valued leaf, mappings recursed.
fn collect_lists(n: &Node, out: &mut Vec<(usize, Span)>) {
    match &n.value {
        Value::Seq(items) => out.push((items.len(), n.span)),
        Value::Map(m) => {
            for (_, v) in m.iter_nodes() {
                collect_lists(v, out);
            }
        }
        _ => {}
    }
}

/// Slice `i` of a zip section: length-1 lists broadcast, other lists take element `i`.
fn slice_at(n: &Node, i: usize) -> Node {
    match &n.value {
        Value::Seq(items) => {
            let pick = if items.len() == 1 { 0 } else { i };
            items
                .get(pick)
                .cloned()
                .unwrap_or_else(|| Node::new(Value::Null, n.span))
        }
        Value::Map(m) => {
            let mut nm = Mapping::new();
            for (k, v) in m.iter_nodes() {
                nm.insert(k.clone(), slice_at(v, i));
            }
            Node {
                value: Value::Map(nm),
                span: n.span,
                style: n.style,
            }
        }
        _ => n.clone(),
    }
}
