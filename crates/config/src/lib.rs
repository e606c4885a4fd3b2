//! infx-config: master configs (`configs/{nvidia,amd}-master.yaml`) and `configs/runners.yaml`
//! as typed models, and every rule of the config schema (docs/config.md, "Diagnostic codes") as `config/<RULE>`
//! diagnostics.
//!
//! Loading ([`load_tree`], [`load_files`]) reads and parses each file once; checking
//! ([`check`], [`validate`]) is a pure function of the loaded documents (plus, for SR3/SR4, the
//! recipe files the references name). The loaded [`infx_yaml::Document`]s stay available so the
//! matrix crate generates rows from the same parse.
//!
//! Codes: the spec's rule IDs (`config/L1` … `config/SR5`) plus field-level codes that the spec
//! leaves unnamed: `config/unknown-key`, `config/missing-field`, `config/type`, `config/value`,
//! `config/scenarios`, `config/component-version`, `config/require-power`, `config/runners`,
//! `config/runners-inventory`.

pub mod codes;
mod entry;
mod golden;
pub mod layout;
mod model;
mod recipes;
mod runners;
mod scenario;
mod schema;
mod view;

pub use golden::{CaseResult, GoldenReport, Verdict, run_validation_goldens};
pub use layout::{
    Launcher, RecipeDir, Role, checkout_recipe_path, gpu_of_runner, is_multinode, recipes_root,
    role, single_node_launchers, truthy,
};
pub use model::*;
pub use scenario::ScenarioType;
pub use view::{
    EntryView, LegacyRef, RecipeSetting, SETTINGS_SCOPES, ScenarioRow, SrtReference, entries_in,
    entries_of, is_agentic_scenario, is_selector, legacy_recipe_path, legacy_recipe_ref,
    recipe_setting,
};

use infx_report::{Diagnostic, Span};
use infx_yaml::{Document, Node};
use schema::Ctx;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Which generation of the rules applies (docs/config.md, "Dialects").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// August 2026 layout: no `worker`, no recipe references.
    Aug,
    /// October, generation 2: free-string `srt-recipe`, R0 incl. `SRT_RECIPE`.
    Oct,
    /// October newest (generation 3): `srt-recipe-dir` + `<file>[:<selector>]`, on-disk checks.
    OctNewest,
}

/// One top-level entry of a master file, in file order then key order.
#[derive(Debug, Clone)]
pub struct Entry {
    pub key: String,
    /// Index into [`LoadedConfigs::masters`].
    pub file: usize,
    pub key_span: Span,
}

/// Everything loaded for one check run.
#[derive(Debug, Clone)]
pub struct LoadedConfigs {
    /// Parent of the directory holding the config files; recipe paths are relative to it.
    pub project_root: PathBuf,
    /// Master files in argument order (`nvidia-master.yaml`, then `amd-master.yaml` for a tree).
    pub masters: Vec<Document>,
    pub runners: Option<Document>,
    /// Entries of every master file (string keys only), file order then key order: the entries
    /// of [`Self::views`], owned, for lookups by key or position.
    pub entries: Vec<Entry>,
    /// Detected from the data ([`detect_dialect`]); callers may override it before checking.
    pub dialect: Dialect,
    /// Whether the masters state KV metadata in the form upstream #2096 introduced
    /// (`kv-p2p-transfer`, `kv-offload-backend: {name, version}`): only then is
    /// `kv-p2p-transfer` required of a disaggregated entry (M3) and the backend a mapping. A
    /// tree from before that PR (July 2026) names the backend as a string and has no
    /// `kv-p2p-transfer` anywhere (docs/config.md, "Rules carry their day").
    pub kv_metadata: bool,
    /// Findings of loading itself (missing files, YAML errors, L1, L7); [`check`] repeats them.
    pub load_errors: Vec<Diagnostic>,
}

impl LoadedConfigs {
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }
    /// The entry's value node inside its document (keys are unique within a file, so the key
    /// finds it; the tree is not copied).
    pub fn node(&self, e: &Entry) -> Option<&Node> {
        self.masters.get(e.file)?.root.get(&e.key)
    }
    /// Every entry as written, file order then key order.
    pub fn views(&self) -> impl Iterator<Item = EntryView<'_>> {
        self.masters.iter().flat_map(entries_in)
    }
    pub fn master_path(&self, e: &Entry) -> &Path {
        self.masters
            .get(e.file)
            .map(|d| d.path.as_path())
            .unwrap_or(Path::new(""))
    }
}

/// The result of [`validate`]: diagnostics plus the typed models of what passed.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    pub diagnostics: Vec<Diagnostic>,
    /// Entries that passed every rule, in file order then key order.
    pub entries: Vec<MasterEntry>,
    /// The runner inventory (also when some runner records had errors, for label lookups).
    pub runners: Option<RunnerInventory>,
}

/// Loads `<root>/configs/{nvidia-master,amd-master,runners}.yaml` (the layout of both the
/// bundled `inferencex-e2e/` tree and the August corpus root). Never fails: problems are in
/// `load_errors`.
pub fn load_tree(root: &Path) -> LoadedConfigs {
    let masters = layout::MASTER_CONFIGS.map(|m| root.join(m));
    let runners = root.join(layout::RUNNERS);
    match load_files(&masters, &runners, root) {
        Ok(l) => l,
        Err(errors) => {
            // Keep what did load so that the remaining checks can still run.
            let mut docs = Vec::new();
            for m in &masters {
                if let Ok(d) = infx_yaml::load_file(m) {
                    docs.push(d);
                }
            }
            let rdoc = infx_yaml::load_file(&runners).ok();
            let mut l = from_documents(docs, rdoc, root.to_path_buf());
            l.load_errors = errors;
            l
        }
    }
}

/// Loads master files (in order) and the runner file. Errors (L1, YAML, L7) are returned together.
pub fn load_files(
    master: &[PathBuf],
    runners: &Path,
    project_root: &Path,
) -> Result<LoadedConfigs, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    // Files are independent: parse them on parallel threads (the largest dominates).
    let (results, runner_result) = std::thread::scope(|s| {
        let handles: Vec<_> = master
            .iter()
            .map(|p| s.spawn(move || load_one(p, "Input file")))
            .collect();
        let runner_result = load_one(runners, "Runner config file");
        let results: Vec<Result<Document, Diagnostic>> = handles
            .into_iter()
            .zip(master)
            .map(|(h, p)| {
                h.join().unwrap_or_else(|_| {
                    Err(Diagnostic::error(
                        codes::L1,
                        format!("loading '{}' failed unexpectedly", p.display()),
                    )
                    .with_path(p))
                })
            })
            .collect();
        (results, runner_result)
    });
    let mut docs = Vec::new();
    for r in results {
        match r {
            Ok(d) => docs.push(d),
            Err(d) => errors.push(d),
        }
    }
    let rdoc = match runner_result {
        Ok(d) => Some(d),
        Err(d) => {
            errors.push(d);
            None
        }
    };
    // L7: one project root for all config files.
    let roots: Vec<PathBuf> = master.iter().map(|p| project_root_of(p)).collect();
    if let Some(first) = roots.first()
        && let Some((i, other)) = roots.iter().enumerate().find(|(_, r)| *r != first)
    {
        errors.push(
            Diagnostic::error(
                codes::L7,
                format!(
                    "all config files must share one project root: {} is under {}, {} under {}",
                    master[0].display(),
                    first.display(),
                    master[i].display(),
                    other.display()
                ),
            )
            .with_path(&master[i])
            .with_help("pass master files from one configs/ directory"),
        );
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(from_documents(docs, rdoc, project_root.to_path_buf()))
}

fn project_root_of(p: &Path) -> PathBuf {
    let abs = infx_fs::canonical(p).unwrap_or_else(|_| p.to_path_buf());
    abs.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn load_one(p: &Path, what: &str) -> Result<Document, Diagnostic> {
    if !p.exists() {
        return Err(Diagnostic::error(
            codes::L1,
            format!("{what} '{}' does not exist.", p.display()),
        )
        .with_path(p)
        .with_help("check the path (the tree layout is <root>/configs/*.yaml)"));
    }
    infx_yaml::load_file(p)
}

/// Builds the loaded set from already-parsed documents (e.g. mutated in memory by a test).
pub fn from_documents(
    masters: Vec<Document>,
    runners: Option<Document>,
    project_root: PathBuf,
) -> LoadedConfigs {
    // The index of [`LoadedConfigs::views`], so both list the same entries in the same order.
    let entries = masters
        .iter()
        .enumerate()
        .flat_map(|(file, doc)| {
            entries_in(doc).map(move |v| Entry {
                key: v.key.to_string(),
                file,
                key_span: v.key_node.span,
            })
        })
        .collect();
    // One walk of the trees for both answers: a walk of the largest master is a millisecond.
    let found = markers(&masters);
    let dialect = dialect_of(&found, runners.as_ref());
    let kv_metadata = found.kv_metadata;
    LoadedConfigs {
        project_root,
        masters,
        runners,
        entries,
        dialect,
        kv_metadata,
        load_errors: Vec::new(),
    }
}

/// Generation 3 is the target: a tree whose runner file has the [Oct] `clusters` shape is checked
/// with the newest rules unless its master files still carry generation-1/2 markers (full-path
/// `srt-recipe`, `CONFIG_FILE=` settings) and no `srt-recipe-dir`. Anything else is [Aug].
pub fn detect_dialect(masters: &[Document], runners: Option<&Document>) -> Dialect {
    dialect_of(&markers(masters), runners)
}

/// [`detect_dialect`] from the masters' markers.
fn dialect_of(found: &Markers, runners: Option<&Document>) -> Dialect {
    let oct_runners = runners.is_some_and(|r| r.root.get("clusters").is_some());
    let aug_runners = runners.is_some() && !oct_runners;
    if found.recipe_dir && !aug_runners {
        return Dialect::OctNewest;
    }
    match (oct_runners, found.legacy) {
        (true, false) => Dialect::OctNewest,
        (true, true) => Dialect::Oct,
        // An [Aug]-shaped runners.yaml is tree-wide evidence: an October-only key in one
        // master entry does not switch the tree; the [Aug] schema reports it at its line
        // (docs/config.md, "Dialect"). Only a tree without a runner file goes by the keys.
        (false, _) if found.oct_keys && runners.is_none() => Dialect::Oct,
        _ => Dialect::Aug,
    }
}

/// Whether any master states KV metadata in #2096's form (see [`LoadedConfigs::kv_metadata`]).
pub fn uses_kv_metadata(masters: &[Document]) -> bool {
    markers(masters).kv_metadata
}

/// The markers of every master's tree.
fn markers(masters: &[Document]) -> Markers {
    let mut found = Markers::default();
    for d in masters {
        scan(&d.root, &mut found);
    }
    found
}

#[derive(Default)]
struct Markers {
    /// `kv-p2p-transfer`, or a `kv-offload-backend` mapping, anywhere.
    kv_metadata: bool,
    recipe_dir: bool,
    /// Generation-1/2 recipe binding: full-path `srt-recipe` or `CONFIG_FILE=` settings.
    legacy: bool,
    /// Keys that only exist from [Oct] on.
    oct_keys: bool,
}

/// Every node of the tree, with an explicit stack: a hostile file nested a million levels
/// deep must not overflow the call stack (docs/security.md).
fn scan(root: &Node, found: &mut Markers) {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match &n.value {
            infx_yaml::Value::Map(m) => {
                for (k, _, v) in m.iter() {
                    match k {
                        "srt-recipe-dir" => found.recipe_dir = true,
                        "srt-recipe" | "eval-srt-recipe" => {
                            found.oct_keys = true;
                            if v.as_str().is_some_and(layout::is_recipe_path_reference) {
                                found.legacy = true;
                            }
                        }
                        "worker" | "num-nodes" | "require-power" => found.oct_keys = true,
                        "kv-p2p-transfer" => found.kv_metadata = true,
                        "kv-offload-backend" if v.as_map().is_some() => found.kv_metadata = true,
                        _ => {}
                    }
                    stack.push(v);
                }
            }
            infx_yaml::Value::Seq(items) => {
                for it in items {
                    if it.as_str().and_then(view::recipe_setting).is_some() {
                        found.legacy = true;
                    }
                    stack.push(it);
                }
            }
            _ => {}
        }
    }
}

/// Every diagnostic of the loaded set (load errors first, then file rules, runners, entries).
pub fn check(loaded: &LoadedConfigs) -> Vec<Diagnostic> {
    validate(loaded).diagnostics
}

/// [`check`], reading the recipe files SR4 opens from `parsed` when this run parsed them.
pub fn check_in(loaded: &LoadedConfigs, parsed: &infx_yaml::DocIndex<'_>) -> Vec<Diagnostic> {
    validate_in(loaded, parsed).diagnostics
}

/// Checks everything and returns the typed models of what passed.
pub fn validate(loaded: &LoadedConfigs) -> Checked {
    validate_in(loaded, &infx_yaml::DocIndex::default())
}

/// [`validate`], reading the recipe files SR4 opens from `parsed` when this run parsed them.
pub fn validate_in(loaded: &LoadedConfigs, parsed: &infx_yaml::DocIndex<'_>) -> Checked {
    rules_before_recipes(loaded).finish_in(loaded, parsed)
}

/// Every rule but the two that open recipe files (SR3, SR4), so a caller can run them before it
/// knows which recipes it parses: validate runs them while it is still working out the change
/// (docs/performance.md). [`RulesBeforeRecipes::finish_in`] adds SR3/SR4 and gives exactly
/// what [`validate_in`] gives, findings in the same order.
pub fn rules_before_recipes(loaded: &LoadedConfigs) -> RulesBeforeRecipes {
    let mut diags = loaded.load_errors.clone();
    let dialect = loaded.dialect;

    file_rules(loaded, &mut diags);

    // Runners.
    let mut inventory = None;
    if let Some(rdoc) = &loaded.runners {
        let mut ctx = Ctx {
            path: &rdoc.path,
            key: "",
            dialect,
            kv_metadata: loaded.kv_metadata,
            diags: &mut diags,
        };
        inventory = runners::check_runners(&mut ctx, &rdoc.root);
    }

    // Entries: each is checked on its own, so a long list is split between two threads (a
    // master config of 200 entries takes milliseconds; docs/performance.md), findings merged
    // back in entry order.
    let check_entries = |range: std::ops::Range<usize>| {
        let mut diags = Vec::new();
        let mut entries = Vec::new();
        for index in range {
            let Some(e) = loaded.entries.get(index) else {
                continue;
            };
            let Some(doc) = loaded.masters.get(e.file) else {
                continue;
            };
            let mut ctx = Ctx {
                path: &doc.path,
                key: &e.key,
                dialect,
                kv_metadata: loaded.kv_metadata,
                diags: &mut diags,
            };
            let key_node = Node::new(infx_yaml::Value::Str(e.key.clone()), e.key_span);
            let Some(node) = loaded.node(e) else { continue };
            let res = entry::check_entry(&mut ctx, e.file, &key_node, node);
            // X5: the runner label must exist in runners.yaml (upstream never checks it
            // directly).
            let mut ok = res.typed.is_some();
            if let (Some((runner, span)), Some(inv)) = (&res.runner, &inventory)
                && !inv.has_label(runner)
            {
                ok = false;
                unknown_runner(&mut ctx, runner, *span, inv, loaded);
            }
            entries.push(EntryChecked {
                index,
                findings_end: diags.len(),
                refs: res.refs,
                typed: res.typed.filter(|_| ok),
            });
        }
        (diags, entries)
    };
    let count = loaded.entries.len();
    let parts = if count >= ENTRIES_ON_TWO_THREADS {
        let half = count / 2;
        std::thread::scope(|scope| {
            let second = scope.spawn(|| check_entries(half..count));
            let first = check_entries(0..half);
            match second.join() {
                Ok(second) => [first, second],
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
        .into_iter()
        .collect()
    } else {
        vec![check_entries(0..count)]
    };
    let mut entries = Vec::with_capacity(count);
    for (part_diags, part_entries) in parts {
        let offset = diags.len();
        diags.extend(part_diags);
        entries.extend(part_entries.into_iter().map(|mut e| {
            e.findings_end += offset;
            e
        }));
    }
    RulesBeforeRecipes {
        diagnostics: diags,
        entries,
        runners: inventory,
    }
}

/// Entries from which [`rules_before_recipes`] checks them on two threads.
const ENTRIES_ON_TWO_THREADS: usize = 64;

/// What [`rules_before_recipes`] found; [`Self::finish_in`] completes the check.
#[derive(Debug)]
pub struct RulesBeforeRecipes {
    diagnostics: Vec<Diagnostic>,
    entries: Vec<EntryChecked>,
    runners: Option<RunnerInventory>,
}

/// One entry after the rules that read only the loaded files.
#[derive(Debug)]
struct EntryChecked {
    /// Its place in [`LoadedConfigs::entries`].
    index: usize,
    /// Where its findings end in [`RulesBeforeRecipes::diagnostics`]: its SR3/SR4 findings go
    /// there, as [`validate_in`] has always ordered them.
    findings_end: usize,
    /// [Oct-newest] resolved references to check on disk (SR3/SR4).
    refs: Vec<RecipeRef>,
    /// The typed entry when every rule so far passed.
    typed: Option<MasterEntry>,
}

impl RulesBeforeRecipes {
    /// Whether [`Self::finish_in`] has recipe files to open (any entry references one); else
    /// it only hands the findings over.
    pub fn opens_recipe_files(&self) -> bool {
        self.entries.iter().any(|e| !e.refs.is_empty())
    }

    /// Adds SR3/SR4 (each reference's recipe file, read from `parsed` when this run parsed
    /// it): [`validate_in`]'s result.
    pub fn finish_in(self, loaded: &LoadedConfigs, parsed: &infx_yaml::DocIndex<'_>) -> Checked {
        let mut cache = recipes::RecipeCache::new(parsed);
        let mut diags = Vec::with_capacity(self.diagnostics.len());
        let mut earlier = self.diagnostics.into_iter();
        let mut moved = 0;
        let mut typed = Vec::new();
        for e in self.entries {
            diags.extend(earlier.by_ref().take(e.findings_end - moved));
            moved = e.findings_end;
            let Some(entry) = loaded.entries.get(e.index) else {
                continue;
            };
            let mut ok = e.typed.is_some();
            let Some(doc) = loaded.masters.get(entry.file) else {
                continue;
            };
            let mut ctx = Ctx {
                path: &doc.path,
                key: &entry.key,
                dialect: loaded.dialect,
                kv_metadata: loaded.kv_metadata,
                diags: &mut diags,
            };
            for r in &e.refs {
                let before = ctx.diags.len();
                recipes::check_ref(&mut ctx, &loaded.project_root, r, &mut cache);
                ok &= ctx.diags.len() == before;
            }
            if ok && let Some(t) = e.typed {
                typed.push(t);
            }
        }
        diags.extend(earlier);
        Checked {
            diagnostics: diags,
            entries: typed,
            runners: self.runners,
        }
    }
}

/// The file-level rules: L1 (the root is a mapping), L2 (string keys), L3 (no `*` in a key), L4
/// (a key in one master file only).
fn file_rules(loaded: &LoadedConfigs, diags: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (fi, doc) in loaded.masters.iter().enumerate() {
        let Some(m) = doc.root.as_map() else {
            diags.push(
                Diagnostic::error(
                    codes::L1,
                    format!(
                        "Config file '{}' must contain a dictionary (found {})",
                        doc.path.display(),
                        doc.root.value.type_name()
                    ),
                )
                .at(&doc.path, doc.root.span)
                .with_help("the top level must map config keys to entries"),
            );
            continue;
        };
        for (k, _) in m.iter_nodes() {
            let Some(key) = k.as_str() else {
                diags.push(
                    Diagnostic::error(
                        codes::L2,
                        format!("top-level key {} is not a string", schema::describe(k)),
                    )
                    .at(&doc.path, k.span)
                    .with_help("quote the key"),
                );
                continue;
            };
            if key.contains('*') {
                diags.push(
                    Diagnostic::error(
                        codes::L3,
                        format!("Wildcard '*' is not allowed in master config keys: '{key}'"),
                    )
                    .at(&doc.path, k.span)
                    .with_help(
                        "'*' is reserved for changelog config-keys patterns; rename the key",
                    ),
                );
            }
            match seen.get(key) {
                Some(&prev) if prev != fi => diags.push(
                    Diagnostic::error(
                        codes::L4,
                        format!(
                            "Duplicate configuration keys found in '{}': {key} (already defined in '{}')",
                            doc.path.display(),
                            loaded.masters[prev].path.display()
                        ),
                    )
                    .at(&doc.path, k.span)
                    .with_help("config keys must be unique across all master files; rename or remove one"),
                ),
                Some(_) => {}
                None => {
                    seen.insert(key, fi);
                }
            }
        }
    }
}

/// X5: the entry's runner is not a label of runners.yaml (upstream never checks it directly);
/// the help names labels of the same family, else the cluster labels.
fn unknown_runner(
    ctx: &mut Ctx<'_>,
    runner: &str,
    span: Span,
    inv: &RunnerInventory,
    loaded: &LoadedConfigs,
) {
    let mut close: Vec<&str> = inv
        .labels
        .iter()
        .map(|(l, _)| l.as_str())
        .filter(|l| l.starts_with(runner.split('-').next().unwrap_or(runner)))
        .take(6)
        .collect();
    if close.is_empty() {
        close = inv
            .labels
            .iter()
            .map(|(l, _)| l.as_str())
            .filter(|l| l.starts_with("cluster:"))
            .take(6)
            .collect();
    }
    let rpath = loaded
        .runners
        .as_ref()
        .map(|d| d.path.display().to_string())
        .unwrap_or_default();
    ctx.error_help(
        codes::X5,
        span,
        "runner",
        format!("runner '{runner}' is not a label in {rpath}"),
        format!(
            "use a label defined under 'labels:' (e.g. {}) or add it there",
            close.join(", ")
        ),
    );
}

#[cfg(test)]
mod tests;
