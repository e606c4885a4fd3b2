//! Binding every generated point to exactly one srt-recipe variant, at matrix time instead of
//! when a GPU job launches (docs/matrix.md, "Binding" and "Lanes and fragments").
//!
//! [`load_recipes`] reads every recipe file and lane block the rows name (I/O);
//! [`bind_points`] is a pure function of the rows and those files. A single-node point must
//! match exactly one variant of its reference after the engine rules; a multinode reference
//! must select exactly one variant. Variants of a selector-less bundle that no point matched
//! are reported as warnings.

use crate::codes;
use crate::generate::RowOrigin;
use crate::json::{Json, Object};
use crate::sweep_row::{ScenarioType, SweepRow};
use infx_recipe::{ExpandOptions, Lane, RecipeFile, RecipeRef, Selector, Variant};
use infx_report::Diagnostic;
use infx_yaml::{DocIndex, Node, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// The recipe files and lane blocks the rows reference, loaded once.
#[derive(Debug, Default)]
pub struct RecipeSet {
    /// Keyed by project-relative path.
    files: HashMap<String, Result<RecipeFile, Diagnostic>>,
    lanes: HashMap<Lane, Result<RecipeFile, Diagnostic>>,
    /// `CONFIG_FILE` recipes that are not in the tree: upstream's launcher runs them from the
    /// srt-slurm checkout it clones (docs/matrix.md, "Binding"), so they are not bound here.
    outside: BTreeSet<String>,
    /// `CONFIG_FILE` recipes this run already parsed as plain recipes and only multinode points
    /// use: each is its own one variant, so it is not loaded again (the recipe step loads and
    /// checks it).
    plain: BTreeSet<String>,
}

impl RecipeSet {
    /// The recipe file at project-relative `rel`, if a row referenced it.
    pub fn file(&self, rel: &str) -> Option<&Result<RecipeFile, Diagnostic>> {
        self.files.get(rel)
    }
    /// The lane block of `lane`, if a row ran in it.
    pub fn lane(&self, lane: Lane) -> Option<&Result<RecipeFile, Diagnostic>> {
        self.lanes.get(&lane)
    }
    /// Whether `rel` is a `CONFIG_FILE` recipe that is not in the tree.
    pub fn is_outside(&self, rel: &str) -> bool {
        self.outside.contains(rel)
    }
    /// Whether `rel` is a plain `CONFIG_FILE` recipe bound without loading it (see `plain`).
    pub fn is_plain_standalone(&self, rel: &str) -> bool {
        self.plain.contains(rel) && !self.files.contains_key(rel)
    }
    /// The `CONFIG_FILE` recipes that are not in the tree, sorted.
    pub fn outside(&self) -> impl Iterator<Item = &str> {
        self.outside.iter().map(String::as_str)
    }
}

/// Project-relative recipe path of a row reference (`recipes/…` is a multinode recipe).
pub fn recipe_path(reference_path: &str) -> String {
    infx_config::checkout_recipe_path(reference_path).unwrap_or_else(|| reference_path.to_string())
}

/// The recipe a generated row runs, however the row names it (docs/matrix.md, "Binding"):
/// `srt-recipe` (a fragment composed over its lane's block) or a `CONFIG_FILE=` setting
/// (upstream's layout: a complete srt-slurm recipe the launcher hands to `srtctl apply -f` as it
/// is, so no lane block, no fragment rules and no model binding apply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowRecipe<'r> {
    /// The reference as written (the `srt-recipe` value, or the setting's value).
    pub reference: &'r str,
    /// `srt-recipe`, `CONFIG_FILE` or `EVAL_CONFIG_FILE`: what messages name.
    pub field: &'static str,
    /// Project-relative path of the file.
    pub path: String,
    pub selector: Option<Selector>,
    /// A complete recipe run as it is (`CONFIG_FILE`).
    pub standalone: bool,
}

impl RowRecipe<'_> {
    /// How the recipe's variants are expanded: InferenceX's binder for a fragment, srtctl's own
    /// rules for a file srtctl runs as it is.
    pub fn expand_options(&self) -> ExpandOptions {
        if self.standalone {
            ExpandOptions::srtctl()
        } else {
            ExpandOptions::inferencex()
        }
    }
}

/// The recipe `row` runs: its `srt-recipe`, else the last `CONFIG_FILE=` of its
/// `additional-settings` (row, prefill, decode: the launcher exports them in that order, so the
/// last wins; an eval-only row runs `EVAL_CONFIG_FILE=` when it has one). `None` when the row
/// names no srt-slurm recipe (an llm-d recipe is run by llm-d's launcher, not srtctl); `Err`
/// for a reference that does not parse.
pub fn row_recipe(row: &Object) -> Option<Result<RowRecipe<'_>, Diagnostic>> {
    if let Some(reference) = row.srt_recipe() {
        return Some(RecipeRef::parse_inferencex(reference).map(|r| RowRecipe {
            reference,
            field: "srt-recipe",
            path: recipe_path(&r.path),
            selector: r.selector,
            standalone: false,
        }));
    }
    let mut run = None;
    let mut eval = None;
    for scope in infx_config::SETTINGS_SCOPES {
        let holder = match scope {
            None => Some(row),
            Some(side) => match row.get(side) {
                Some(Json::Object(o)) => Some(o),
                _ => None,
            },
        };
        let Some(Json::List(items)) = holder.and_then(|h| h.get("additional-settings")) else {
            continue;
        };
        for item in items {
            let Json::Str(text) = item else { continue };
            match infx_config::recipe_setting(text) {
                Some(s) if s.eval => eval = Some(s),
                Some(s) => run = Some(s),
                None => {}
            }
        }
    }
    let setting = if row.is_eval_only() {
        eval.or(run)
    } else {
        run
    }?;
    let legacy = infx_config::legacy_recipe_ref(setting.value);
    if legacy.is_llmd() {
        return None;
    }
    let selector = match legacy.selector.map(Selector::parse_srtctl).transpose() {
        Ok(s) => s,
        Err(d) => return Some(Err(d)),
    };
    Some(Ok(RowRecipe {
        reference: setting.value,
        field: setting.name(),
        path: legacy.path,
        selector,
        standalone: true,
    }))
}

/// Loads every recipe file and lane block that `rows` reference (relative to `root`, the
/// benchmark tree). Failures are kept and reported by `bind_points`.
pub fn load_recipes<'r>(rows: impl IntoIterator<Item = &'r Object>, root: &Path) -> RecipeSet {
    load_recipes_in(rows, root, &DocIndex::default())
}

/// [`load_recipes`], using the documents of `parsed` for files this run already parsed.
pub fn load_recipes_in<'r>(
    rows: impl IntoIterator<Item = &'r Object>,
    root: &Path,
    parsed: &DocIndex<'_>,
) -> RecipeSet {
    let mut set = RecipeSet::default();
    for row in rows {
        let Some(Ok(r)) = row_recipe(row) else {
            continue;
        };
        let path = r.path;
        if r.standalone {
            if set.outside.contains(&path) || set.files.contains_key(&path) {
                continue;
            }
            let full = root.join(&path);
            let doc = parsed.get(&full);
            // Not in the tree: a file of the srt-slurm checkout (RecipeSet::outside).
            if doc.is_none() && !full.is_file() {
                set.outside.insert(path);
                continue;
            }
            // A plain recipe this run parsed binds a multinode point as it is: loading it
            // would copy the whole document for nothing (docs/performance.md).
            if !row.lane().is_single_node()
                && doc.is_some_and(|d| {
                    infx_recipe::RecipeKind::of(&d.root) == infx_recipe::RecipeKind::Plain
                })
            {
                set.plain.insert(path);
                continue;
            }
            // A complete recipe: no lane block to compose.
            let loaded = infx_recipe::load_recipe_in(root, &path, parsed);
            set.files.insert(path, loaded);
            continue;
        }
        set.files
            .entry(path.clone())
            .or_insert_with(|| infx_recipe::load_recipe_in(root, &path, parsed));
        let lane = row.lane();
        set.lanes
            .entry(lane)
            .or_insert_with(|| infx_recipe::load_recipe_in(root, lane.block_path(), parsed));
    }
    set
}

/// One point of a row, as the binder sees it.
struct Point<'a> {
    row: &'a Object,
    origin: &'a RowOrigin,
    conc: Vec<i64>,
}

impl Point<'_> {
    fn describe(&self) -> String {
        let r = self.row;
        let mut s = format!("point '{}' of {}", py(r.get("exp-name")), self.origin.key);
        // The point's settings as the master config spells them (`dp-attn: false`).
        if let Some(tp) = r.get("tp") {
            s.push_str(&format!(
                " (tp: {}, ep: {}, dp-attn: {}",
                yaml_text(Some(tp)),
                yaml_text(r.get("ep")),
                yaml_text(r.get("dp-attn"))
            ));
            if let Some(kv) = r.get("kv-offloading") {
                s.push_str(&format!(", kv-offloading: {}", yaml_text(Some(kv))));
            }
            s.push_str(&format!(", conc: {})", self.conc_text()));
        } else {
            s.push_str(&format!(" (conc: {})", self.conc_text()));
        }
        s
    }
    /// The point's first concurrency as [`Point::describe`] shows it after `, conc: ` (its
    /// leading digits), when the description has that part (a row with `tp`).
    fn described_conc(&self) -> Option<String> {
        self.row.get("tp")?;
        Some(
            self.conc_text()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect(),
        )
    }
    fn conc_text(&self) -> String {
        self.conc
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A scalar as YAML writes it (`false`, `null`), for messages about config values.
fn yaml_text(v: Option<&Json>) -> String {
    match v {
        None | Some(Json::Null) => "null".into(),
        Some(Json::Bool(b)) => b.to_string(),
        Some(other) => crate::generate::py_str(other),
    }
}

fn py(v: Option<&Json>) -> String {
    v.map_or_else(|| "None".into(), crate::generate::py_str)
}

/// The outcome of [`bind`]: findings plus, per bound single-node point, the index of its row in
/// the input and the label of the one variant it selects.
#[derive(Debug, Default)]
pub struct BindReport {
    pub diagnostics: Vec<Diagnostic>,
    pub bindings: Vec<(usize, String)>,
    /// The `binding-none` findings whose cause is a value the lane block sets (validate folds
    /// them into one finding at that value; docs/matrix.md, "Binding").
    pub lane_faults: Vec<LaneFault>,
    /// Per `binding-none` and `binding-ambiguous` finding, the point and how each candidate
    /// variant fared: what the root-cause explanations read, never the message text.
    pub point_faults: Vec<PointFault>,
    /// Per `unused-variant` warning, the variant it is about.
    pub unused: Vec<UnusedVariant>,
}

/// Why a variant does not fit a point: the field the check compared, when it names one (a YAML
/// path of the variant such as `benchmark.command`, or a setting such as `CONC`), and what it
/// found. Shown as `field: reason`, or the reason alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misfit {
    pub field: Option<String>,
    pub reason: String,
}

impl Misfit {
    fn on(field: &str, reason: String) -> Misfit {
        Misfit {
            field: Some(field.to_string()),
            reason,
        }
    }
    fn plain(reason: String) -> Misfit {
        Misfit {
            field: None,
            reason,
        }
    }
}

impl std::fmt::Display for Misfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{field}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

/// A single-node point that matches no variant, or more than one, of its recipe.
#[derive(Debug, Clone)]
pub struct PointFault {
    /// The finding, an index into [`BindReport::diagnostics`].
    pub diagnostic: usize,
    /// The recipe reference as the row writes it.
    pub recipe: String,
    /// The point's first concurrency as its description shows it after `, conc: `; `None` when
    /// the description has no parallelism (a row without `tp`).
    pub conc: Option<String>,
    /// Every candidate variant (its label) and why it does not fit, in recipe order.
    pub variants: Vec<(String, Result<(), Misfit>)>,
}

impl PointFault {
    /// The labels of the variants the point matched.
    pub fn matched(&self) -> impl Iterator<Item = &str> {
        self.variants
            .iter()
            .filter(|(_, fit)| fit.is_ok())
            .map(|(l, _)| l.as_str())
    }
}

/// An `unused-variant` warning's variant: its recipe file and label.
#[derive(Debug, Clone)]
pub struct UnusedVariant {
    /// The warning, an index into [`BindReport::diagnostics`].
    pub diagnostic: usize,
    pub recipe: String,
    pub label: String,
}

/// A point that matches no variant because of its lane block: the variants written for it fail
/// on one field whose value they have from the lane block (see `lane_fault`).
#[derive(Debug, Clone)]
pub struct LaneFault {
    /// The point's `binding-none` finding, an index into [`BindReport::diagnostics`].
    pub diagnostic: usize,
    /// The lane block's file, as the variants' sources name it.
    pub block: std::path::PathBuf,
    /// The value's YAML path (`benchmark.command`) and its span in the lane block.
    pub field: String,
    pub span: infx_report::Span,
    /// Why the first candidate failed, without the field (`recipe '…' is not an agentic …`).
    pub reason: String,
    /// The recipe file (project-relative) and the labels of the variants that failed on it.
    pub recipe: String,
    pub candidates: Vec<String>,
}

/// Binds every throughput point (rows with `srt-recipe` or a `CONFIG_FILE=` setting; eval-only
/// rows are skipped) and returns the findings only (the `validate` step).
pub(crate) fn bind_points(points: &[(Object, RowOrigin)], recipes: &RecipeSet) -> Vec<Diagnostic> {
    bind(points, recipes).diagnostics
}

/// `bind_points` with the bindings themselves.
pub fn bind(points: &[(Object, RowOrigin)], recipes: &RecipeSet) -> BindReport {
    let mut out = BindState::default();
    let mut cache = VariantCache::default();
    for (index, (row, origin)) in points.iter().enumerate() {
        if row.is_eval_only() {
            continue;
        }
        let Some(recipe) = row_recipe(row) else {
            continue;
        };
        let point = Point {
            row,
            origin,
            conc: match row.get("conc") {
                Some(Json::Int(c)) => vec![*c],
                Some(Json::List(l)) => l.iter().filter_map(Json::as_i64).collect(),
                _ => Vec::new(),
            },
        };
        let recipe = match recipe {
            Ok(r) => r,
            Err(d) => {
                let d = d.with_note(format!("in config '{}'", origin.key));
                out.diags.push(d.at(&origin.path, origin.span));
                continue;
            }
        };
        let reference = recipe.reference;
        // A plain standalone recipe is its own one variant under srtctl's rules (a selector on
        // it is ignored): a multinode point binds to it without expanding a copy of it.
        if recipe.standalone
            && !row.lane().is_single_node()
            && !point.conc.is_empty()
            && (recipes.plain.contains(&recipe.path)
                || recipes.files.get(&recipe.path).is_some_and(|f| {
                    f.as_ref()
                        .is_ok_and(|f| f.kind() == infx_recipe::RecipeKind::Plain)
                }))
        {
            continue;
        }
        let Some(found) = cache.variants_of(&point, &recipe, recipes, &mut out) else {
            continue;
        };
        if found.lane.is_single_node() {
            out.bind_single_node(index, &point, reference, &found);
        } else {
            out.check_multinode(&point, &recipe, found.variants);
        }
    }
    out.warn_unused_variants(recipes);
    BindReport {
        diagnostics: out.diags,
        bindings: out.bindings,
        lane_faults: out.lane_faults,
        point_faults: out.point_faults,
        unused: out.unused,
    }
}

/// What [`bind`] accumulates over the points.
#[derive(Default)]
struct BindState {
    diags: Vec<Diagnostic>,
    bindings: Vec<(usize, String)>,
    /// (recipe path) → per variant label: how many points matched, for unused-variant warnings.
    usage: BTreeMap<String, (Vec<String>, HashMap<String, usize>)>,
    /// Unreadable files and lane blocks already reported, so each is reported once.
    reported: std::collections::HashSet<String>,
    lane_faults: Vec<LaneFault>,
    point_faults: Vec<PointFault>,
    unused: Vec<UnusedVariant>,
}

/// Composed files and expanded variants, kept across points.
#[derive(Default)]
struct VariantCache {
    composed: HashMap<(String, Lane), Result<RecipeFile, ()>>,
    // Expansion copies the lane content into every variant: once per (file, lane, selector),
    // not once per point, so a huge lane block costs linear time (docs/security.md). A
    // standalone file is expanded once per selector (`None` for the lane).
    expanded: HashMap<ExpansionKey, Result<Vec<Variant>, Diagnostic>>,
}

/// (file, lane — `None` for a standalone recipe —, selector).
type ExpansionKey = (String, Option<Lane>, String);

/// The variants one point's reference selects.
struct FoundVariants<'c> {
    path: String,
    lane: Lane,
    has_selector: bool,
    variants: &'c [Variant],
}

impl VariantCache {
    /// Parses the point's reference, finds its file and lane block, checks the fragment,
    /// composes it over the block and expands the variants; `None` when a finding was reported
    /// instead.
    fn variants_of(
        &mut self,
        point: &Point<'_>,
        recipe: &RowRecipe<'_>,
        recipes: &RecipeSet,
        out: &mut BindState,
    ) -> Option<FoundVariants<'_>> {
        let origin = point.origin;
        let reference = recipe.reference;
        let path = recipe.path.clone();
        let lane = point.row.lane();
        let file = out.recipe_file(recipes, &path, point, recipe)?;
        let selector_key = format!("{:?}", recipe.selector);
        let expanded = if recipe.standalone {
            self.expanded
                .entry((path.clone(), None, selector_key))
                .or_insert_with(|| {
                    file.expand_with(recipe.selector.as_ref(), recipe.expand_options())
                })
        } else {
            let block = out.lane_block(recipes, lane)?;
            // Fragment check, then composition over the lane block, once per (file, lane).
            let composed_file = self
                .composed
                .entry((path.clone(), lane))
                .or_insert_with(|| {
                    let findings = infx_recipe::check_fragment(file, lane);
                    let failed = findings.iter().any(Diagnostic::is_error);
                    out.diags.extend(findings);
                    if failed {
                        Err(())
                    } else {
                        Ok(infx_recipe::compose_lane(file, lane, block))
                    }
                })
                .as_ref()
                .ok()?;
            // Variant expansion for the selector.
            self.expanded
                .entry((path.clone(), Some(lane), selector_key))
                .or_insert_with(|| {
                    composed_file.expand_with(recipe.selector.as_ref(), recipe.expand_options())
                })
        };
        match expanded {
            Ok(variants) => Some(FoundVariants {
                path,
                lane,
                has_selector: recipe.selector.is_some(),
                variants,
            }),
            Err(d) => {
                out.diags.push(
                    Diagnostic::error(
                        codes::RECIPE_VARIANTS,
                        format!("{}: {reference}: {}", origin.key, d.message),
                    )
                    .with_help("fix the selector or the recipe's variant blocks")
                    .at(&origin.path, origin.span),
                );
                None
            }
        }
    }
}

impl BindState {
    /// The loaded recipe file at `path`; an unreadable one is reported once.
    fn recipe_file<'r>(
        &mut self,
        recipes: &'r RecipeSet,
        path: &str,
        point: &Point<'_>,
        recipe: &RowRecipe<'_>,
    ) -> Option<&'r RecipeFile> {
        match recipes.files.get(path)? {
            Ok(f) => Some(f),
            Err(d) => {
                if self.reported.insert(format!("file:{path}")) {
                    let origin = point.origin;
                    self.diags.push(
                        Diagnostic::error(
                            codes::RECIPE_MISSING,
                            format!("{}: {}: {}", origin.key, recipe.reference, d.message),
                        )
                        .with_help(format!(
                            "fix the {} reference or add the recipe file",
                            recipe.field
                        ))
                        .at(&origin.path, origin.span),
                    );
                }
                None
            }
        }
    }

    /// The loaded block of `lane`; an unreadable one is reported once.
    fn lane_block<'r>(&mut self, recipes: &'r RecipeSet, lane: Lane) -> Option<&'r RecipeFile> {
        match recipes.lanes.get(&lane)? {
            Ok(b) => Some(b),
            Err(d) => {
                if self.reported.insert(format!("lane:{}", lane.name())) {
                    self.diags.push(
                        Diagnostic::error(
                            codes::LANE_BLOCK_MISSING,
                            format!(
                                "the {} lane block {} cannot be read: {}",
                                lane.name(),
                                lane.block_path(),
                                d.message
                            ),
                        )
                        .with_help("every lane's shared block must exist to compose its recipes"),
                    );
                }
                None
            }
        }
    }

    /// Single-node selection: a single-node point binds to exactly one of the variants.
    fn bind_single_node(
        &mut self,
        index: usize,
        point: &Point<'_>,
        reference: &str,
        found: &FoundVariants<'_>,
    ) {
        let entry = self
            .usage
            .entry(found.path.clone())
            .or_insert_with(|| (Vec::new(), HashMap::new()));
        for v in found.variants {
            if !found.has_selector {
                if !entry.0.contains(&v.label) {
                    entry.0.push(v.label.clone());
                }
            } else {
                // A variant a point names explicitly is selected, whether or not it then
                // matches the point: it is never "unused" (a failed match is its own finding).
                entry.1.entry(v.label.clone()).or_default();
            }
        }
        let outcomes: Vec<(&Variant, Result<(), Misfit>)> = found
            .variants
            .iter()
            .map(|v| (v, check_single_node(v, point, found.lane)))
            .collect();
        let matched: Vec<&Variant> = outcomes
            .iter()
            .filter(|(_, o)| o.is_ok())
            .map(|(v, _)| *v)
            .collect();
        if let [only] = matched.as_slice() {
            *entry.1.entry(only.label.clone()).or_default() += 1;
            self.bindings.push((index, label(only)));
            return;
        }
        let mut d = if matched.is_empty() {
            Diagnostic::error(
                codes::BINDING_NONE,
                format!(
                    "{} matches no variant of {reference}: expected exactly one matching single-node SRT recipe",
                    point.describe()
                ),
            )
            .with_help("add or fix the override for this point, or drop the point from the config")
        } else {
            Diagnostic::error(
                codes::BINDING_AMBIGUOUS,
                format!(
                    "{} matches {} variants of {reference} ({}): expected exactly one",
                    point.describe(),
                    matched.len(),
                    matched.iter().map(|v| label(v)).collect::<Vec<_>>().join(", ")
                ),
            )
            .with_help("pin the point in one variant (benchmark.env.CONC / KV_OFFLOADING) or use a selector")
        };
        for (v, o) in &outcomes {
            d = d.with_note(match o {
                Ok(()) => format!("{}: matches", label(v)),
                Err(why) => format!("{}: {why}", label(v)),
            });
        }
        if matched.is_empty()
            && let Some(mut fault) = lane_fault(&outcomes, found.lane)
        {
            fault.diagnostic = self.diags.len();
            fault.recipe = found.path.clone();
            self.lane_faults.push(fault);
        }
        self.point_faults.push(PointFault {
            diagnostic: self.diags.len(),
            recipe: reference.to_string(),
            conc: point.described_conc(),
            variants: outcomes
                .iter()
                .map(|(v, o)| (label(v), o.clone()))
                .collect(),
        });
        self.diags.push(d.at(&point.origin.path, point.origin.span));
    }

    /// Multinode binding: the reference itself must name exactly one variant, and the point
    /// needs a concurrency.
    fn check_multinode(&mut self, point: &Point<'_>, recipe: &RowRecipe<'_>, variants: &[Variant]) {
        let d = if variants.len() != 1 {
            let mut d = Diagnostic::error(
                codes::BINDING_MULTINODE,
                format!(
                    "{}: {} selects {} variants, not one",
                    point.describe(),
                    recipe.reference,
                    variants.len()
                ),
            )
            .with_help(format!(
                "add a selector (base, override_<name> or zip_override_<name>[<i>]) to {}",
                recipe.field
            ));
            for v in variants {
                d = d.with_note(label(v));
            }
            d
        } else if point.conc.is_empty() {
            Diagnostic::error(
                codes::BINDING_MULTINODE,
                format!("{}: the concurrency list is empty", point.describe()),
            )
        } else {
            return;
        };
        self.diags.push(d.at(&point.origin.path, point.origin.span));
    }

    /// Warnings for the variants of selector-less bundles that no point selected.
    fn warn_unused_variants(&mut self, recipes: &RecipeSet) {
        for (path, (labels, used)) in std::mem::take(&mut self.usage) {
            for l in labels {
                if used.contains_key(&l) {
                    continue;
                }
                let mut d = Diagnostic::warning(
                    codes::UNUSED_VARIANT,
                    format!("{path}: variant {l} is not selected by any generated point"),
                )
                .with_path(&path)
                .with_help("remove the variant or add the point it was written for");
                let key_span = recipes
                    .files
                    .get(&path)
                    .and_then(|f| f.as_ref().ok())
                    .and_then(|f| f.root.as_map())
                    .and_then(|m| m.get_entry(&l))
                    .map(|(k, _)| k.span);
                if let Some(span) = key_span {
                    d = d.with_span(span);
                }
                self.unused.push(UnusedVariant {
                    diagnostic: self.diags.len(),
                    recipe: path.clone(),
                    label: l,
                });
                self.diags.push(d);
            }
        }
    }
}

/// The lane-block cause of a point no variant matches: some variants fail on a field (their
/// [`Misfit::field`]) whose value they have from `lane`'s block, all on the same one; the
/// others fail on what the fragment or the point sets (CONC, parallelism), checked first, so
/// they were written for other points.
fn lane_fault(outcomes: &[(&Variant, Result<(), Misfit>)], lane: Lane) -> Option<LaneFault> {
    let mut field: Option<&str> = None;
    let mut failed: Vec<(&Variant, &str)> = Vec::new();
    for (v, o) in outcomes {
        let why = o.as_ref().err()?;
        let Some(f) = why.field.as_deref() else {
            continue;
        };
        let from_block = v.origin_of(f).is_some() && v.file_of(f).ends_with(lane.block_path());
        if !from_block {
            continue;
        }
        if field.is_some_and(|g| g != f) {
            return None;
        }
        field = Some(f);
        failed.push((v, &why.reason));
    }
    let f = field?;
    let (first, reason) = failed.first()?;
    let node = first.tree.get_path(&f.split('.').collect::<Vec<_>>())?;
    Some(LaneFault {
        diagnostic: 0,
        block: first.file_of(f).to_path_buf(),
        field: f.to_string(),
        span: node.span,
        reason: reason.to_string(),
        recipe: String::new(),
        candidates: failed.iter().map(|(v, _)| label(v)).collect(),
    })
}

fn label(v: &Variant) -> String {
    if v.label.is_empty() {
        v.name.clone().unwrap_or_else(|| "base".into())
    } else {
        v.label.clone()
    }
}

/// Python `str()` of a recipe value (strings as is).
fn text(n: &Node) -> String {
    match &n.value {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        Value::Float(f) => crate::json::py_float_repr(f.value),
        Value::Timestamp(t) => t.clone(),
        _ => "<collection>".into(),
    }
}

fn int_of(n: Option<&Node>) -> Option<i64> {
    let n = n?;
    match &n.value {
        Value::Int(i) => Some(*i),
        Value::Str(s) => s.trim().parse().ok(),
        Value::Float(f) if f.value.fract() == 0.0 => Some(f.value as i64),
        _ => None,
    }
}

fn bool_of(n: Option<&Node>) -> Option<bool> {
    let n = n?;
    match &n.value {
        Value::Bool(b) => Some(*b),
        Value::Str(s) => match s.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Some(true),
            "false" | "0" | "no" | "off" | "" => Some(false),
            _ => None,
        },
        Value::Int(i) => Some(*i != 0),
        Value::Null => Some(false),
        _ => None,
    }
}

fn row_int(row: &Object, k: &str, default: i64) -> i64 {
    row.get_i64(k).unwrap_or(default)
}

/// `recipe <actual> != matrix <wanted>` for a named value.
fn mismatch(what: &str, actual: impl std::fmt::Display, wanted: impl std::fmt::Display) -> Misfit {
    Misfit::on(what, format!("recipe {actual} != matrix {wanted}"))
}

/// The speculation label of a variant: `mtp` for a supported speculative method, else
/// `benchmark.env.SPEC_DECODING` or `none`.
fn spec_label(args: Option<&Node>, env: Option<&Node>) -> Result<String, Misfit> {
    const METHODS: [&str; 6] = ["eagle", "eagle3", "nextn", "mtp", "dspark", "draft_model"];
    let method: Option<String> = args.and_then(|a| {
        if let Some(m) = a
            .get("speculative-algorithm")
            .or_else(|| a.get("speculative_algorithm"))
        {
            return Some(text(m));
        }
        if let Some(c) = a
            .get("speculative-config")
            .or_else(|| a.get("speculative_config"))
        {
            return match &c.value {
                Value::Map(_) => c.get("method").or_else(|| c.get("decoding_type")).map(text),
                Value::Str(s) => serde_json::from_str::<serde_json::Value>(s)
                    .ok()
                    .and_then(|j| j.get("method").and_then(|m| m.as_str()).map(str::to_string)),
                _ => None,
            };
        }
        None
    });
    match method {
        Some(m) if m != "None" => {
            let lower = m.to_ascii_lowercase();
            if METHODS.contains(&lower.as_str()) {
                Ok("mtp".into())
            } else {
                Err(Misfit::plain(format!(
                    "speculative method {m} is not one of eagle, eagle3, nextn, mtp, dspark"
                )))
            }
        }
        _ => Ok(env
            .and_then(|e| e.get("SPEC_DECODING"))
            .map_or_else(|| "none".to_string(), text)),
    }
}

/// Single-node selection for one variant: bind the point, then validate it against the engine
/// rules.
fn check_single_node(v: &Variant, p: &Point<'_>, lane: Lane) -> Result<(), Misfit> {
    let tree = &v.tree;
    let row = p.row;
    let env = tree.get_path(&["benchmark", "env"]);
    check_point_env(env, p, lane)?;
    let want_engine = single_node_engine(row.get_str("framework").unwrap_or_default())?;
    let engine = tree.get("engine").map(|e| match e.get("type") {
        Some(t) => text(t),
        None => text(e),
    });
    if engine.as_deref() != Some(want_engine) {
        return Err(mismatch(
            "engine",
            engine.unwrap_or_else(|| "None".into()),
            want_engine,
        ));
    }
    let agg = tree.get_path(&["roles", "agg"]);
    let args = agg.and_then(|a| a.get("args"));
    let label = spec_label(args, env)?;
    let mut want_spec = py(row.get("spec-decoding"));
    if want_spec == "draft_model" {
        want_spec = "mtp".into();
    }
    if label != want_spec {
        return Err(mismatch("spec-decoding", label, want_spec));
    }
    let par = PointParallelism {
        tp: row_int(row, "tp", 0),
        ep: row_int(row, "ep", 1),
        dp_attn: row.get("dp-attn").is_some_and(Json::truthy),
        recipe_gpus: int_of(agg.and_then(|a| a.get("gpus"))),
    };
    let (pp, pcp, dcp) = (
        row_int(row, "pp", 1),
        row_int(row, "pcp-size", 1),
        row_int(row, "dcp-size", 1),
    );
    let gpus = par.tp.saturating_mul(pp).saturating_mul(pcp);
    if par.recipe_gpus != Some(gpus) {
        return Err(mismatch("roles.agg.gpus", opt(par.recipe_gpus), gpus));
    }
    check_agg_shape(tree, agg, lane)?;
    if pp != 1 {
        return Err(mismatch("PP_SIZE", 1, pp));
    }
    if pcp != 1 {
        return Err(mismatch("PCP_SIZE", 1, pcp));
    }
    let arg = |k: &str| args.and_then(|a| a.get(k));
    let recipe_dcp = if matches!(want_engine, "vllm" | "atom") {
        int_of(arg("decode-context-parallel-size")).unwrap_or(1)
    } else {
        1
    };
    if recipe_dcp != dcp {
        return Err(mismatch("DCP_SIZE", recipe_dcp, dcp));
    }
    match want_engine {
        "sglang" => sglang_parallelism(args, &par),
        "trtllm" => trtllm_parallelism(args, &par),
        "vllm" => vllm_parallelism(args, &par),
        _ => atom_parallelism(args, &par),
    }
}

/// The point's `CONC` and (agentic) `KV_OFFLOADING` against the recipe's `benchmark.env`.
fn check_point_env(env: Option<&Node>, p: &Point<'_>, lane: Lane) -> Result<(), Misfit> {
    let conc = p.conc.first().copied().unwrap_or(0);
    if conc <= 0 {
        return Err(Misfit::plain(format!(
            "CONC must be a positive integer, not {conc}"
        )));
    }
    if let Some(c) = env.and_then(|e| e.get("CONC"))
        && text(c) != conc.to_string()
    {
        return Err(Misfit::on(
            "CONC",
            format!("recipe {} != point {conc}", text(c)),
        ));
    }
    if lane.is_agentic()
        && let Some(k) = env.and_then(|e| e.get("KV_OFFLOADING"))
    {
        let want = py(p.row.get("kv-offloading"));
        if text(k) != want {
            return Err(Misfit::on(
                "KV_OFFLOADING",
                format!("recipe {} != point {want}", text(k)),
            ));
        }
    }
    Ok(())
}

/// The single-node SRT engine a config `framework` runs on.
fn single_node_engine(framework: &str) -> Result<&'static str, Misfit> {
    match framework {
        "sglang" => Ok("sglang"),
        "trt" => Ok("trtllm"),
        "atom" => Ok("atom"),
        "vllm" => Ok("vllm"),
        other => Err(Misfit::plain(format!(
            "framework {other} has no single-node SRT engine (sglang, trt, atom, vllm)"
        ))),
    }
}

/// One aggregated role on one node with one worker, running the custom benchmark whose
/// client matches the lane.
fn check_agg_shape(tree: &Node, agg: Option<&Node>, lane: Lane) -> Result<(), Misfit> {
    let roles: Vec<&str> = tree
        .get("roles")
        .and_then(Node::as_map)
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    if roles != ["agg"] {
        return Err(mismatch(
            "roles",
            format!("{{{}}}", roles.join(", ")),
            "{agg}",
        ));
    }
    for k in ["nodes", "workers"] {
        let n = int_of(agg.and_then(|a| a.get(k)));
        if n != Some(1) {
            return Err(mismatch(&format!("roles.agg.{k}"), opt(n), 1));
        }
    }
    let btype = tree.get_path(&["benchmark", "type"]).map(text);
    if btype.as_deref() != Some("custom") {
        return Err(mismatch(
            "benchmark.type",
            btype.unwrap_or_else(|| "None".into()),
            "custom",
        ));
    }
    let command = tree
        .get_path(&["benchmark", "command"])
        .map(text)
        .unwrap_or_default();
    if command.trim_end().ends_with("srt_agentic.sh") != lane.is_agentic() {
        return Err(Misfit::on(
            "benchmark.command",
            format!(
                "recipe '{command}' {} an agentic client but the point is {}",
                if lane.is_agentic() { "is not" } else { "is" },
                if lane.is_agentic() {
                    "agentic"
                } else {
                    ScenarioType::FixedSeqLen.as_str()
                }
            ),
        ));
    }
    Ok(())
}

/// The point's parallelism the engine rules compare with the recipe's arguments.
struct PointParallelism {
    tp: i64,
    ep: i64,
    dp_attn: bool,
    recipe_gpus: Option<i64>,
}

fn arg_int(args: Option<&Node>, k: &str) -> Option<i64> {
    int_of(args.and_then(|a| a.get(k)))
}

fn arg_flag(args: Option<&Node>, k: &str) -> bool {
    bool_of(args.and_then(|a| a.get(k))).unwrap_or(false)
}

/// `flag` in the recipe's arguments must equal `want`.
fn flag_is(args: Option<&Node>, flag: &str, want: bool) -> Result<(), Misfit> {
    let have = arg_flag(args, flag);
    if have != want {
        return Err(mismatch(flag, have, want));
    }
    Ok(())
}

fn sglang_parallelism(args: Option<&Node>, p: &PointParallelism) -> Result<(), Misfit> {
    let rtp = arg_int(args, "tensor-parallel-size");
    if rtp != Some(p.tp) {
        return Err(mismatch("tensor-parallel-size", opt(rtp), p.tp));
    }
    let dp = arg_int(args, "data-parallel-size").unwrap_or(1);
    let want_dp = if p.dp_attn { p.tp } else { 1 };
    if dp != want_dp {
        return Err(mismatch("data-parallel-size", dp, want_dp));
    }
    let rep = arg_int(args, "expert-parallel-size")
        .or_else(|| arg_int(args, "ep-size"))
        .unwrap_or(1);
    if rep != p.ep {
        return Err(mismatch("expert-parallel-size", rep, p.ep));
    }
    flag_is(args, "enable-dp-attention", p.dp_attn)
}

fn trtllm_parallelism(args: Option<&Node>, p: &PointParallelism) -> Result<(), Misfit> {
    let rtp = arg_int(args, "tensor_parallel_size");
    if rtp != Some(p.tp) {
        return Err(mismatch("tensor_parallel_size", opt(rtp), p.tp));
    }
    let rep = arg_int(args, "moe_expert_parallel_size");
    if rep != Some(p.ep) {
        return Err(mismatch("moe_expert_parallel_size", opt(rep), p.ep));
    }
    let pipeline = arg_int(args, "pipeline_parallel_size").unwrap_or(1);
    if pipeline != 1 {
        return Err(mismatch("pipeline_parallel_size", pipeline, 1));
    }
    flag_is(args, "enable_attention_dp", p.dp_attn)
}

fn vllm_parallelism(args: Option<&Node>, p: &PointParallelism) -> Result<(), Misfit> {
    let dp = arg_int(args, "data-parallel-size").unwrap_or(1);
    let product = arg_int(args, "tensor-parallel-size")
        .unwrap_or(1)
        .saturating_mul(dp);
    if product != p.tp {
        return Err(mismatch(
            "tensor-parallel-size × data-parallel-size",
            product,
            p.tp,
        ));
    }
    if (dp > 1) != p.dp_attn {
        return Err(mismatch("data-parallel-size > 1", dp > 1, p.dp_attn));
    }
    flag_is(args, "enable-expert-parallel", p.ep > 1)
}

fn atom_parallelism(args: Option<&Node>, p: &PointParallelism) -> Result<(), Misfit> {
    if p.ep != 1 && p.ep != p.tp {
        return Err(Misfit::plain(format!(
            "ep {} must be 1 or tp ({}) for atom",
            p.ep, p.tp
        )));
    }
    flag_is(args, "enable-expert-parallel", p.ep > 1)?;
    flag_is(args, "enable-dp-attention", p.dp_attn)?;
    if p.recipe_gpus != Some(p.tp) {
        return Err(mismatch("roles.agg.gpus", opt(p.recipe_gpus), p.tp));
    }
    Ok(())
}

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "None".into(), |i| i.to_string())
}

/// The `validate` step in one call: expands the given config keys (every key when `None`)
/// without eval marking, loads the recipes they reference from `root` (the benchmark tree) and
/// binds every point. A generation failure is returned as the finding.
pub fn bind_configs(
    configs: &crate::MasterConfigs<'_>,
    runners: &crate::Runners<'_>,
    keys: Option<&[String]>,
    root: &Path,
) -> Vec<Diagnostic> {
    let opts = crate::Options::for_binding(keys);
    match crate::expand_with_origins(configs, runners, &opts) {
        Ok(points) => {
            let recipes = load_recipes(points.iter().map(|(r, _)| r), root);
            bind_points(&points, &recipes)
        }
        Err(d) => vec![d],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use infx_report::Span;
    use std::path::PathBuf;

    fn origin() -> RowOrigin {
        RowOrigin {
            key: "k".into(),
            path: PathBuf::from("configs/x.yaml"),
            span: Span::default(),
        }
    }

    fn row(framework: &str, tp: i64, ep: i64, dp_attn: bool, conc: i64, agentic: bool) -> Object {
        let mut r = Object::new();
        r.put("framework", Json::str(framework));
        r.put("tp", Json::Int(tp));
        r.put("pp", Json::Int(1));
        r.put("dcp-size", Json::Int(1));
        r.put("pcp-size", Json::Int(1));
        r.put("ep", Json::Int(ep));
        r.put("dp-attn", Json::Bool(dp_attn));
        r.put("spec-decoding", Json::str("none"));
        r.put("conc", Json::Int(conc));
        if agentic {
            r.put("kv-offloading", Json::str("none"));
            r.put("scenario-type", Json::str("agentic-coding"));
        }
        r.put("exp-name", Json::str("x"));
        r
    }

    /// The only variant of a plain recipe with the given engine, gpus and args.
    fn variant(engine: &str, gpus: i64, args: &str, agentic: bool) -> Variant {
        let command = if agentic {
            "bash srt_agentic.sh"
        } else {
            "bash bench.sh"
        };
        let text = format!(
            "schema: 2\nname: t\nengine: {engine}\nroles:\n  agg:\n    nodes: 1\n    workers: 1\n    gpus: {gpus}\n    args: {args}\nbenchmark:\n  type: custom\n  command: {command}\n"
        );
        let file = RecipeFile::parse(Path::new("r.yaml"), text).map_err(|d| d.message);
        let variants = file.and_then(|f| {
            f.expand_with(None, ExpandOptions::inferencex())
                .map_err(|d| d.message)
        });
        match variants {
            Ok(mut v) if v.len() == 1 => v.remove(0),
            other => panic!("{other:?}"),
        }
    }

    fn check(v: &Variant, r: &Object, agentic: bool) -> Result<(), String> {
        let o = origin();
        let point = Point {
            row: r,
            origin: &o,
            conc: vec![r.conc().unwrap_or(0)],
        };
        check_single_node(v, &point, Lane::of(agentic, false)).map_err(|m| m.to_string())
    }

    #[test]
    fn sglang_dp_attention_needs_dp_equal_to_tp() {
        let v = variant(
            "sglang",
            8,
            "{tensor-parallel-size: 8, data-parallel-size: 8, expert-parallel-size: 8, enable-dp-attention: true}",
            false,
        );
        assert_eq!(
            check(&v, &row("sglang", 8, 8, true, 64, false), false),
            Ok(())
        );
        assert_eq!(
            check(&v, &row("sglang", 8, 8, false, 64, false), false),
            Err("data-parallel-size: recipe 8 != matrix 1".into())
        );
        assert_eq!(
            check(&v, &row("sglang", 8, 1, true, 64, false), false),
            Err("expert-parallel-size: recipe 8 != matrix 1".into())
        );
    }

    #[test]
    fn vllm_tp_is_tensor_times_data_parallel() {
        let v = variant(
            "vllm",
            8,
            "{tensor-parallel-size: 4, data-parallel-size: 2, enable-expert-parallel: true}",
            false,
        );
        assert_eq!(
            check(&v, &row("vllm", 8, 8, true, 16, false), false),
            Ok(())
        );
        assert_eq!(
            check(&v, &row("vllm", 8, 8, false, 16, false), false),
            Err("data-parallel-size > 1: recipe true != matrix false".into())
        );
        assert_eq!(
            check(&v, &row("vllm", 8, 1, true, 16, false), false),
            Err("enable-expert-parallel: recipe true != matrix false".into())
        );
    }

    #[test]
    fn trtllm_and_atom_rules() {
        let t = variant(
            "trtllm",
            4,
            "{tensor_parallel_size: 4, moe_expert_parallel_size: 4, enable_attention_dp: true}",
            false,
        );
        assert_eq!(check(&t, &row("trt", 4, 4, true, 32, false), false), Ok(()));
        assert_eq!(
            check(&t, &row("trt", 4, 2, true, 32, false), false),
            Err("moe_expert_parallel_size: recipe 4 != matrix 2".into())
        );
        let a = variant(
            "atom",
            8,
            "{enable-expert-parallel: true, enable-dp-attention: false}",
            false,
        );
        assert_eq!(
            check(&a, &row("atom", 8, 8, false, 32, false), false),
            Ok(())
        );
        assert_eq!(
            check(&a, &row("atom", 8, 4, false, 32, false), false),
            Err("ep 4 must be 1 or tp (8) for atom".into())
        );
        assert!(
            check(&a, &row("sglang", 8, 8, false, 32, false), false)
                .is_err_and(|e| e.starts_with("engine: recipe atom != matrix sglang"))
        );
    }

    #[test]
    fn speculation_client_and_gpus_are_checked() {
        let v = variant(
            "vllm",
            4,
            "{tensor-parallel-size: 4, speculative-config: '{\"method\": \"eagle3\", \"num_speculative_tokens\": 3}'}",
            true,
        );
        let mut r = row("vllm", 4, 1, false, 8, true);
        assert_eq!(
            check(&v, &r, true),
            Err("spec-decoding: recipe mtp != matrix none".into())
        );
        r.put("spec-decoding", Json::str("draft_model"));
        assert_eq!(check(&v, &r, true), Ok(()));
        // A fixed-seq-len point on an agentic client.
        let f = row("vllm", 4, 1, false, 8, false);
        assert!(
            check(&v, &f, false).is_err_and(
                |e| e.starts_with("spec-decoding") || e.starts_with("benchmark.command")
            )
        );
        let g = row("vllm", 2, 1, false, 8, true);
        assert_eq!(
            check(
                &variant("vllm", 4, "{tensor-parallel-size: 2}", true),
                &g,
                true
            ),
            Err("roles.agg.gpus: recipe 4 != matrix 2".into())
        );
    }

    /// A temporary tree with the agentic lane block and `r.yaml` holding `recipe`.
    fn agentic_tree(recipe: &str) -> tempfile::TempDir {
        let tmp = match tempfile::tempdir() {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        let root = tmp.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap_or(root)).map_err(|e| e.to_string())?;
            std::fs::write(p, text).map_err(|e| e.to_string())
        };
        let setup = write(
            "configs/srt-recipes/agentic-single.yaml",
            "benchmark:\n  type: custom\n  command: bash srt_agentic.sh\n",
        )
        .and_then(|()| write("r.yaml", recipe));
        assert_eq!(setup, Ok(()));
        tmp
    }

    #[test]
    fn ambiguous_and_unused_variants_are_reported() {
        let tmp = agentic_tree(
            "base:\n  schema: 2\n  name: t\n  engine: sglang\n  roles:\n    agg:\n      nodes: 1\n      workers: 1\n      gpus: 4\n      args: {tensor-parallel-size: 4}\n\
                 override_a:\n  roles: {agg: {args: {mem-fraction-static: 0.7}}}\n\
                 override_b:\n  roles: {agg: {args: {mem-fraction-static: 0.8}}}\n\
                 override_c:\n  roles: {agg: {gpus: 8, args: {tensor-parallel-size: 8}}}\n",
        );
        let root = tmp.path();
        let mut r = row("sglang", 4, 1, false, 4, true);
        r.put("srt-recipe", Json::str("r.yaml"));
        let points = vec![(r, origin())];
        let recipes = load_recipes(points.iter().map(|(r, _)| r), root);
        let report = bind(&points, &recipes);
        let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            [
                codes::BINDING_AMBIGUOUS,
                codes::UNUSED_VARIANT,
                codes::UNUSED_VARIANT,
                codes::UNUSED_VARIANT
            ],
            "{:#?}",
            report.diagnostics
        );
        let d = &report.diagnostics[0];
        assert!(
            d.message.contains("matches 2 variants")
                && d.message.contains("override_a, override_b"),
            "{}",
            d.message
        );
        assert!(
            d.notes
                .iter()
                .any(|n| n == "override_c: roles.agg.gpus: recipe 8 != matrix 4"),
            "{:?}",
            d.notes
        );
        // The same facts as data: the explanations read these, never the text above.
        let [fault] = report.point_faults.as_slice() else {
            panic!("{:#?}", report.point_faults)
        };
        assert_eq!((fault.diagnostic, fault.recipe.as_str()), (0, "r.yaml"));
        assert_eq!(
            fault.matched().collect::<Vec<_>>(),
            ["override_a", "override_b"]
        );
        let misfit = fault.variants.iter().find(|(l, _)| l == "override_c");
        assert_eq!(
            misfit.and_then(|(_, fit)| fit.as_ref().err()),
            Some(&Misfit {
                field: Some("roles.agg.gpus".into()),
                reason: "recipe 8 != matrix 4".into()
            })
        );
        let unused: Vec<(usize, &str)> = report
            .unused
            .iter()
            .map(|u| (u.diagnostic, u.label.as_str()))
            .collect();
        assert_eq!(
            unused,
            [(1, "override_a"), (2, "override_b"), (3, "override_c")]
        );
    }

    /// The explanations read the fault data, not the text: with every message and note of the
    /// binder's findings reworded, the same root causes are named.
    #[test]
    fn root_causes_survive_reworded_messages() {
        let tmp = agentic_tree(
            "base:\n  schema: 2\n  name: t\n  engine: sglang\n  roles:\n    agg:\n      nodes: 1\n      workers: 1\n      gpus: 4\n      args: {tensor-parallel-size: 4}\n\
                 override_tp4_c4:\n  benchmark: {env: {CONC: \"4\"}}\n\
                 override_tp4:\n  roles: {agg: {args: {mem-fraction-static: 0.8}}}\n",
        );
        let root = tmp.path();
        let mut r = row("sglang", 4, 1, false, 4, true);
        r.put("srt-recipe", Json::str("r.yaml"));
        let points = vec![(r, origin())];
        let recipes = load_recipes(points.iter().map(|(r, _)| r), root);
        let codes_of = |report: BindReport| {
            let file = |rel: &str| {
                infx_recipe::load_recipe(root, rel)
                    .ok()
                    .map(std::borrow::Cow::Owned)
            };
            let mut codes: Vec<&str> = crate::explain::explain(report, &file)
                .iter()
                .map(|d| d.code.as_str())
                .collect();
            codes.sort_unstable();
            codes
        };
        let want = codes_of(bind(&points, &recipes));
        assert!(want.contains(&"matrix/variant-without-conc"), "{want:?}");
        let mut reworded = bind(&points, &recipes);
        for d in &mut reworded.diagnostics {
            d.message = "reworded".into();
            d.notes = vec!["reworded: too".into()];
        }
        assert_eq!(codes_of(reworded), want);
    }

    /// A multinode row with `additional-settings` on its prefill and decode workers.
    fn settings_row(prefill: &[&str], decode: &[&str]) -> Object {
        let list = |items: &[&str]| Json::List(items.iter().map(|s| Json::str(*s)).collect());
        let side = |items: &[&str]| {
            let mut o = Object::new();
            o.put("tp", Json::Int(4));
            o.put("additional-settings", list(items));
            Json::Object(o)
        };
        let mut r = Object::new();
        r.put("prefill", side(prefill));
        r.put("decode", side(decode));
        r
    }

    #[test]
    fn config_file_settings_name_the_row_recipe() {
        let path = |r: &Object| row_recipe(r).map(|x| x.map(|x| (x.path, x.field, x.standalone)));
        let root = "benchmarks/multi_node/srt-slurm-recipes";
        // Exported prefill then decode: the later CONFIG_FILE wins.
        let r = settings_row(
            &["CONFIG_FILE=recipes/a.yaml", "X=1"],
            &["CONFIG_FILE=recipes/b.yaml"],
        );
        assert_eq!(
            path(&r).and_then(Result::ok),
            Some((format!("{root}/b.yaml"), "CONFIG_FILE", true))
        );
        // An eval-only row runs EVAL_CONFIG_FILE; a throughput row never does.
        let mut r = settings_row(
            &[
                "CONFIG_FILE=recipes/a.yaml",
                "EVAL_CONFIG_FILE=recipes/e.yaml",
            ],
            &[],
        );
        assert_eq!(
            path(&r).and_then(Result::ok).map(|p| p.0),
            Some(format!("{root}/a.yaml"))
        );
        r.put("eval-only", Json::Bool(true));
        assert_eq!(
            path(&r).and_then(Result::ok).map(|p| (p.0, p.1)),
            Some((format!("{root}/e.yaml"), "EVAL_CONFIG_FILE"))
        );
        // The selector is read with srtctl's grammar; an llm-d recipe is not srtctl's.
        let r = settings_row(&["CONFIG_FILE=recipes/a.yaml:zip_override_g[2]"], &[]);
        let got = row_recipe(&r).and_then(Result::ok).and_then(|x| x.selector);
        assert_eq!(
            got.map(|s| s.to_string()).as_deref(),
            Some("zip_override_g[2]")
        );
        assert!(row_recipe(&settings_row(&["CONFIG_FILE=llmd.yaml"], &[])).is_none());
        assert!(row_recipe(&settings_row(&["X=1"], &["Y=2"])).is_none());
        // `srt-recipe` wins over a setting on the same row.
        let mut r = settings_row(&["CONFIG_FILE=recipes/a.yaml"], &[]);
        r.put("srt-recipe", Json::str("recipes/s.yaml:override_x"));
        assert_eq!(
            path(&r).and_then(Result::ok),
            Some((format!("{root}/s.yaml"), "srt-recipe", false))
        );
    }

    #[test]
    fn a_config_file_recipe_binds_without_a_lane_block() {
        let tmp = match tempfile::tempdir() {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        let root = tmp.path();
        let dir = root.join("benchmarks/multi_node/srt-slurm-recipes");
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| {
                std::fs::write(
                    dir.join("plain.yaml"),
                    "name: p\nmodel: {path: /m, container: c, precision: fp4}\n",
                )
            })
            .and_then(|()| {
                std::fs::write(
                    dir.join("bundle.yaml"),
                    "base: {name: b}\noverride_x: {name: x}\noverride_y: {name: y}\n",
                )
            });
        assert!(written.is_ok(), "{written:?}");
        let conc = |setting: &str| {
            let mut r = settings_row(&[setting], &[]);
            r.put("conc", Json::List(vec![Json::Int(4)]));
            (r, origin())
        };
        let points = vec![
            conc("CONFIG_FILE=recipes/plain.yaml"),
            conc("CONFIG_FILE=recipes/bundle.yaml:override_y"),
            conc("CONFIG_FILE=recipes/bundle.yaml"),
            conc("CONFIG_FILE=recipes/elsewhere.yaml"),
        ];
        let recipes = load_recipes(points.iter().map(|(r, _)| r), root);
        assert!(recipes.is_outside("benchmarks/multi_node/srt-slurm-recipes/elsewhere.yaml"));
        // No lane block exists in this tree, and none is needed.
        let report = bind(&points, &recipes);
        let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            [codes::BINDING_MULTINODE],
            "{:#?}",
            report.diagnostics
        );
        assert!(
            report.diagnostics[0].message.contains("selects 2 variants")
                && report.diagnostics[0]
                    .help
                    .as_deref()
                    .is_some_and(|h| h.ends_with("to CONFIG_FILE")),
            "{:?}",
            report.diagnostics[0]
        );
    }
}
