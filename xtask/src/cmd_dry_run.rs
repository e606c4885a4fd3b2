//! `cargo xtask dry-run FILE[:SELECTOR]…` / `--config-key KEY`: expand srt-slurm recipe variants
//! like `srtctl dry-run`, validate each (schema 1 or 2), and print their launch commands.
//!
//! A recipe that master entries reference is dry-run the way the launcher runs it
//! (docs/recipe.md, "Dry-run"): the entry's points are generated and bound to their variants by
//! the matrix step's own binder, and each bound variant gets the point's lane, model, image,
//! precision and benchmark environment.

use crate::codes;
use crate::output::{self, Format};
use infx_matrix::{Object, RowOrigin, SweepRow};
use infx_recipe::{
    Lane, RecipeFile, RecipeKind, RecipeRef, Variant, VariantReport, bind_model, check_fragment,
    compose_lane, dry_run, load_recipe, load_recipe_file,
};
use infx_report::{Diagnostic, SourceMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DryFormat {
    /// Diagnostics (rustc-like) and one block of launch commands per variant.
    #[default]
    Text,
    /// One JSON document: every variant with its diagnostics and rendered commands.
    Json,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneArg {
    FixedSequenceSingle,
    FixedSequenceMulti,
    AgenticSingle,
    AgenticMulti,
}

impl From<LaneArg> for Lane {
    fn from(l: LaneArg) -> Lane {
        match l {
            LaneArg::FixedSequenceSingle => Lane::FixedSeqSingle,
            LaneArg::FixedSequenceMulti => Lane::FixedSeqMulti,
            LaneArg::AgenticSingle => Lane::AgenticSingle,
            LaneArg::AgenticMulti => Lane::AgenticMulti,
        }
    }
}

#[derive(clap::Args, Debug)]
#[command(
    override_usage = "cargo xtask dry-run <FILE[:SELECTOR]>... [OPTIONS]\n       cargo xtask dry-run --config-key <KEY> [--conc <N>...] [--point <VARIANT|KEY=VALUE,…>...] [OPTIONS]"
)]
pub struct Args {
    /// Recipe file(s), each optionally with a selector (`file.yaml:override_x`,
    /// `file.yaml:zip_override_g[2]`, `file.yaml:base`, `file.yaml:'*mtp*'`). Without a
    /// selector every variant of a bundle (base excluded, as srtctl does), in file order. A
    /// file that master entries reference is bound from the first of them (named in the
    /// output) unless --lane or --model is given.
    #[arg(required_unless_present = "config_key", conflicts_with = "config_key")]
    pub target: Vec<String>,
    /// Dry-run the points of this master config entry: each point bound to its recipe variant
    /// with the entry's lane, model, image and precision, as the launcher runs it.
    #[arg(long, value_name = "KEY", conflicts_with_all = ["lane", "model"])]
    pub config_key: Option<String>,
    /// Only the points with these concurrencies (with --config-key, or a file bound from an
    /// entry).
    #[arg(long, value_name = "N", num_args = 1.., action = clap::ArgAction::Set)]
    pub conc: Option<Vec<i64>>,
    /// Only the points that bind to this variant (`override_dp4_c192`) or whose matrix row has
    /// these values (`tp=4,ep=4` — keys as in the row: tp, ep, dp-attn, conc, kv-offloading,
    /// isl, osl, spec-decoding); repeatable, a point matching any is kept.
    #[arg(long, value_name = "VARIANT|KEY=VALUE,…")]
    pub point: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DryFormat::Text)]
    pub format: DryFormat,
    /// Treat the file as an InferenceX fragment of this lane: check the fragment rules and merge
    /// the lane's shared block (`configs/srt-recipes/<lane>.yaml` of --tree) under its base.
    #[arg(long, value_enum)]
    pub lane: Option<LaneArg>,
    /// The benchmark tree holding `configs/srt-recipes/`. Default: `inferencex-e2e/` of the git
    /// work tree enclosing the current directory, or that work tree itself when it has none.
    #[arg(long, default_value_os_t = crate::paths::default_tree(), hide_default_value = true)]
    pub tree: PathBuf,
    /// Bind a model into every variant like the launcher does (`model.path: hf:<MODEL>`).
    #[arg(long, requires_all = ["image", "precision"])]
    pub model: Option<String>,
    /// Image to bind (`model.container`), with --model.
    #[arg(long)]
    pub image: Option<String>,
    /// Precision to bind (`model.precision`), with --model.
    #[arg(long)]
    pub precision: Option<String>,
    /// Validate only: print diagnostics and the summary, not the launch commands.
    #[arg(long)]
    pub quiet: bool,
    /// Also print each resolved variant: the recipe srtctl would submit after the selector,
    /// the merge and its YAML round trip (JSON: a `resolved` object per variant).
    #[arg(long)]
    pub resolved: bool,
}

struct FileRun {
    target: String,
    error: Option<Diagnostic>,
    findings: Vec<Diagnostic>,
    variants: Vec<VariantReport>,
    sources: Vec<(PathBuf, String)>,
    /// Lines printed before the variants (which entry the points were bound from).
    intro: Vec<String>,
    /// Per variant, the matrix point it was bound for (`tp 4, ep 4, …`); empty when unbound.
    points: Vec<String>,
    /// Per variant, the matrix row of that point (bound runs only).
    rows: Vec<Object>,
}

impl FileRun {
    fn new(target: &str) -> FileRun {
        FileRun {
            target: target.to_string(),
            error: None,
            findings: vec![],
            variants: vec![],
            sources: vec![],
            intro: vec![],
            points: vec![],
            rows: vec![],
        }
    }
    fn failed(target: &str, d: Diagnostic) -> FileRun {
        FileRun {
            error: Some(d),
            ..FileRun::new(target)
        }
    }
}

fn run_one(args: &Args, target: &str) -> FileRun {
    let mut out = FileRun::new(target);
    let reference = match RecipeRef::parse_srtctl(target) {
        Ok(r) => r,
        Err(mut d) => {
            // Point at the file the selector was meant for (the text before the last ':').
            if d.path.is_none()
                && let Some((file, _)) = target.rsplit_once(':')
                && !file.is_empty()
            {
                d = d.at(file, infx_report::Span::line(1));
            }
            out.error = Some(d);
            return out;
        }
    };
    let file = match load_recipe_file(Path::new(&reference.path)) {
        Ok(f) => f,
        Err(d) => {
            out.error = Some(d);
            return out;
        }
    };
    let in_tree = tree_relative(&args.tree, Path::new(&reference.path));
    // Flags that bind by hand win; otherwise a recipe the master configs use is bound from them.
    if args.lane.is_none()
        && args.model.is_none()
        && let Some(rel) = &in_tree
        && let Some(bound) = bound_from_masters(args, target, &reference, &file, rel, &mut out)
    {
        return bound;
    }
    let file: RecipeFile = match args.lane {
        None => file,
        Some(l) => {
            let lane = Lane::from(l);
            out.findings.extend(check_fragment(&file, lane));
            match load_recipe(&args.tree, lane.block_path()) {
                Ok(block) => compose_lane(&file, lane, &block),
                Err(mut d) => {
                    d.path = Some(args.tree.join(lane.block_path()));
                    out.error = Some(d);
                    return out;
                }
            }
        }
    };
    for s in file.sources.iter() {
        out.sources.push((s.path.clone(), s.text.to_string()));
    }
    if reference.selector.is_some() && file.kind() != RecipeKind::Bundle {
        let sel = reference
            .selector
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default();
        out.findings.push(
            Diagnostic::warning(
                infx_recipe::codes::SELECTOR_IGNORED,
                format!("Selector ':{sel}' ignored — config is not an override file"),
            )
            .at(file.path(), file.root.span)
            .with_help("drop the selector; a plain recipe has exactly one variant"),
        );
    }
    let selector = if file.kind() == RecipeKind::Bundle {
        reference.selector.as_ref()
    } else {
        None
    };
    match dry_run(&file, selector) {
        Ok(mut vs) => {
            if let (Some(m), Some(i), Some(p)) = (&args.model, &args.image, &args.precision) {
                for r in &mut vs {
                    bind_model(&mut r.variant, m, i, p);
                    r.diagnostics = infx_recipe::validate(&r.variant);
                    r.rendered = infx_recipe::render(&r.variant);
                }
            }
            in_file_order(&mut vs, &file);
            out.variants = vs;
        }
        Err(d) => out.error = Some(d),
    }
    if args.conc.is_some() || !args.point.is_empty() {
        out.findings.push(
            Diagnostic::warning(
                codes::POINTS_UNBOUND,
                "--conc and --point select matrix points, but no master entry binds this file: every variant is shown",
            )
            .with_path(file.path())
            .with_help("use --config-key <KEY>, or a recipe a master entry uses"),
        );
    }
    let invalid = out
        .variants
        .iter()
        .any(|v| v.diagnostics.iter().any(Diagnostic::is_error));
    if invalid && args.lane.is_none() && args.model.is_none() && in_tree.is_some() {
        out.findings.push(
            Diagnostic::note(
                codes::UNBOUND_FRAGMENT,
                "no master entry uses this recipe, so nothing bound its lane, model, image or precision",
            )
            .with_path(file.path())
            .with_help(
                "dry-run it as a fragment with --lane <LANE> --model <MODEL> --image <IMAGE> \
                 --precision <PRECISION>, or add the entry and use --config-key <KEY>",
            ),
        );
    }
    out
}

/// A recipe in the tree that the master configs use, bound from the first entry using it
/// (flags that bind by hand win: the caller asks only without them). `None` when no entry uses
/// it, or when the configs do not generate (a warning in `out` says so): then the file is
/// dry-run on its own.
fn bound_from_masters(
    args: &Args,
    target: &str,
    reference: &RecipeRef,
    file: &RecipeFile,
    rel: &str,
    out: &mut FileRun,
) -> Option<FileRun> {
    match tree_points(&args.tree, all_configs(), args.conc.as_deref()) {
        Ok(points) => {
            let (keys, mine) = points_using(points, rel);
            if let Some(first) = keys.first() {
                let mut bound = bind_points_of(&args.tree, target, first, mine);
                apply_point_filters(&mut bound, args);
                bound.intro.insert(
                    0,
                    format!(
                        "dry-run: {}: bound from master entry {first}",
                        reference.path
                    ),
                );
                if keys.len() > 1 {
                    bound.intro.insert(
                        1,
                        format!(
                            "note: also used by {}; pass --config-key to choose",
                            keys[1..].join(", ")
                        ),
                    );
                }
                if let Some(sel) = &reference.selector {
                    keep_selected(&mut bound, file, sel);
                }
                return Some(bound);
            }
        }
        // Configs that do not generate: the file is still dry-run on its own, with why.
        Err(d) => out.findings.push(
            Diagnostic::warning(
                codes::ENTRY_UNBOUND,
                format!(
                    "the master configs do not generate, so {rel} is not bound from them: {}",
                    d.message
                ),
            )
            .with_help("run `cargo xtask validate` for the config findings"),
        ),
    }
    None
}

/// Variants in the order their blocks appear in the file (srtctl lists them sorted).
fn in_file_order(variants: &mut [VariantReport], file: &RecipeFile) {
    let Some(root) = file.root.as_map() else {
        return;
    };
    let keys: Vec<&str> = root.keys().collect();
    let position = |v: &VariantReport| {
        let selector = v.variant.selector_text();
        let block = selector.split('[').next().unwrap_or_default().to_string();
        keys.iter().position(|k| *k == block).unwrap_or(usize::MAX)
    };
    variants.sort_by_key(position);
}

/// Keeps the bound variants `selector` picks from `file` (a `FILE:SELECTOR` bound from entries).
fn keep_selected(run: &mut FileRun, file: &RecipeFile, selector: &infx_recipe::Selector) {
    let picked: Vec<String> = match file.expand(Some(selector)) {
        Ok(vs) => vs.into_iter().map(|v| v.label).collect(),
        Err(d) => {
            run.error = Some(d);
            return;
        }
    };
    keep_points(run, |v, _| picked.contains(&v.variant.label));
}

/// Keeps the bound variants (with their point and row) for which `keep` holds.
fn keep_points(run: &mut FileRun, keep: impl Fn(&VariantReport, &Object) -> bool) {
    let variants = std::mem::take(&mut run.variants);
    let points = std::mem::take(&mut run.points);
    let rows = std::mem::take(&mut run.rows);
    for ((v, p), r) in variants.into_iter().zip(points).zip(rows) {
        if keep(&v, &r) {
            run.variants.push(v);
            run.points.push(p);
            run.rows.push(r);
        }
    }
}

/// Does a bound point match a `--point` value: its variant's label, or every `key=value` of
/// a comma-separated list against its matrix row.
fn point_matches(spec: &str, v: &VariantReport, row: &Object) -> bool {
    if !spec.contains('=') {
        return label_of(&v.variant) == spec;
    }
    spec.split(',').all(|pair| match pair.split_once('=') {
        Some((k, want)) => row
            .get(k.trim())
            .is_some_and(|j| json_text(j) == want.trim()),
        None => false,
    })
}

/// Applies `--point` (and drops the unused-variant warnings a subset of the points implies).
fn apply_point_filters(run: &mut FileRun, args: &Args) {
    if args.conc.is_some() || !args.point.is_empty() {
        // Variants the dropped points select are not unused.
        run.findings
            .retain(|d| d.code != infx_matrix::codes::UNUSED_VARIANT);
    }
    if args.point.is_empty() {
        return;
    }
    let before = run.variants.len();
    keep_points(run, |v, row| {
        args.point.iter().any(|p| point_matches(p, v, row))
    });
    if before > 0 && run.variants.is_empty() {
        run.error.get_or_insert_with(|| {
            Diagnostic::error(
                codes::NO_POINTS,
                format!(
                    "no bound point matches --point {}",
                    args.point.join(" --point ")
                ),
            )
            .with_help("name a variant (`override_…`) or row values such as `tp=4,conc=192`")
        });
    }
}

/// `path` relative to the benchmark tree, when it lies inside it.
fn tree_relative(tree: &Path, path: &Path) -> Option<String> {
    let tree = std::fs::canonicalize(tree).ok()?;
    let file = std::fs::canonicalize(path).ok()?;
    let rel = file.strip_prefix(&tree).ok()?;
    Some(rel.to_string_lossy().replace('\\', "/"))
}

fn all_configs() -> infx_matrix::Selection {
    infx_matrix::Selection::FullSweep(infx_matrix::FullSweep::default())
}

/// The throughput points of the tree's master configs (as validate's matrix step generates
/// them), restricted to `conc` when given. Configs with blocking errors are refused.
fn tree_points(
    tree: &Path,
    selection: infx_matrix::Selection,
    conc: Option<&[i64]>,
) -> Result<Vec<(Object, RowOrigin)>, Diagnostic> {
    let loaded = infx_config::load_tree(tree);
    let runner_path = loaded.runners.as_ref().map(|r| r.path.clone());
    if let Some(d) = crate::cmd_matrix::blocking_config_error(
        &infx_config::check(&loaded),
        runner_path.as_deref(),
    ) {
        return Err(d);
    }
    let configs = infx_matrix::MasterConfigs::from_loaded(&loaded)?;
    let runners = loaded
        .runners
        .as_ref()
        .map_or_else(infx_matrix::Runners::default, |r| {
            infx_matrix::Runners::from_node(&r.root).with_tree_root(tree)
        });
    let opts = infx_matrix::Options {
        selection,
        evals: infx_matrix::EvalMode::None,
        runner_node_filter: None,
        scenario_types: None,
    };
    let mut points = infx_matrix::expand_with_origins(&configs, &runners, &opts)?;
    if let Some(conc) = conc {
        // A multinode row carries its concurrency list: kept when any of it was asked for.
        points.retain(|(row, _)| match row.get("conc") {
            Some(infx_matrix::Json::List(l)) => l
                .iter()
                .any(|c| c.as_i64().is_some_and(|c| conc.contains(&c))),
            Some(c) => c.as_i64().is_some_and(|c| conc.contains(&c)),
            None => false,
        });
    }
    Ok(points)
}

/// The tree-relative recipe file a point runs (`srt-recipe` or `CONFIG_FILE=`).
fn recipe_of(row: &Object) -> Option<String> {
    Some(infx_matrix::row_recipe(row)?.ok()?.path)
}

/// The config keys (in config order) whose points run `rel`, and those points.
fn points_using(
    points: Vec<(Object, RowOrigin)>,
    rel: &str,
) -> (Vec<String>, Vec<(Object, RowOrigin)>) {
    let mine: Vec<(Object, RowOrigin)> = points
        .into_iter()
        .filter(|(row, _)| recipe_of(row).as_deref() == Some(rel))
        .collect();
    let mut keys: Vec<String> = Vec::new();
    for (_, o) in &mine {
        if !keys.contains(&o.key) {
            keys.push(o.key.clone());
        }
    }
    let first = keys.first().cloned();
    let mine = mine
        .into_iter()
        .filter(|(_, o)| Some(&o.key) == first.as_ref())
        .collect();
    (keys, mine)
}

/// `--config-key KEY`: every point of the entry, bound and rendered.
fn run_config_key(args: &Args, key: &str) -> FileRun {
    let selection = infx_matrix::Selection::TestConfig(infx_matrix::TestConfig {
        config_keys: vec![key.to_string()],
        ..Default::default()
    });
    let points = match tree_points(&args.tree, selection, args.conc.as_deref()) {
        Ok(p) => p,
        Err(d) => {
            return FileRun::failed(key, d);
        }
    };
    if points.is_empty() {
        let why = if args.conc.is_some() {
            "no point of this entry has the concurrency given with --conc"
        } else {
            "no master config entry generates points under this key"
        };
        return FileRun::failed(
            key,
            Diagnostic::error(codes::NO_POINTS, format!("{key}: {why}")).with_help(
                "list the keys with `cargo xtask matrix full-sweep --no-evals` or check --tree",
            ),
        );
    }
    let mut run = bind_points_of(&args.tree, key, key, points);
    apply_point_filters(&mut run, args);
    run.intro.insert(0, format!("dry-run: master entry {key}"));
    run
}

/// Why `--config-key` rendered no point (docs/recipe.md, "Dry-run"): an empty dry-run must not
/// read as a pass.
#[derive(Debug, Default)]
struct Tally {
    /// Throughput points of the key.
    points: usize,
    /// Points whose row names no srt-slurm recipe (no `srt-recipe`, no `CONFIG_FILE=`; an
    /// llm-d recipe counts here).
    no_reference: usize,
    /// Points whose `CONFIG_FILE` recipe is not in the tree (the srt-slurm checkout's file).
    outside: usize,
    /// Points that bind to no single variant (the binder's findings say why).
    unbound: usize,
}

impl Tally {
    fn nothing_rendered(&self, key: &str) -> Diagnostic {
        let mut why = Vec::new();
        if self.no_reference > 0 {
            why.push(format!(
                "{} name no srt-slurm recipe (no srt-recipe, no CONFIG_FILE= in additional-settings)",
                self.no_reference
            ));
        }
        if self.outside > 0 {
            why.push(format!(
                "{} run a CONFIG_FILE recipe that is not in this tree (the launcher's srt-slurm checkout)",
                self.outside
            ));
        }
        if self.unbound > 0 {
            why.push(format!(
                "{} bind to no single variant (see the findings)",
                self.unbound
            ));
        }
        Diagnostic::error(
            codes::NOTHING_RENDERED,
            format!(
                "{key}: 0 of {} point(s) rendered: {}",
                self.points,
                why.join("; ")
            ),
        )
        .with_help("bind the rows to recipes in the tree (srt-recipe, or CONFIG_FILE=recipes/…)")
    }
}

/// Binds `points` (all of config `key`) with the matrix step's binder, then renders each bound
/// variant as the launcher runs it.
fn bind_points_of(
    tree: &Path,
    target: &str,
    key: &str,
    points: Vec<(Object, RowOrigin)>,
) -> FileRun {
    let mut out = FileRun::new(target);
    let recipes = infx_matrix::load_recipes(points.iter().map(|(r, _)| r), tree);
    let report = infx_matrix::bind(&points, &recipes);
    out.findings = report.diagnostics;
    let bound: std::collections::HashMap<usize, &str> = report
        .bindings
        .iter()
        .map(|(i, l)| (*i, l.as_str()))
        .collect();
    // (file, lane — none for a standalone recipe —, selector) → its variants.
    type Expanded = Result<Vec<Variant>, Diagnostic>;
    let mut composed: std::collections::HashMap<(String, Option<Lane>, String), Expanded> =
        std::collections::HashMap::new();
    let mut tally = Tally::default();
    for (i, (row, origin)) in points.iter().enumerate() {
        if origin.key != key || row.is_eval_only() {
            continue;
        }
        tally.points += 1;
        let reference = match infx_matrix::row_recipe(row) {
            Some(Ok(r)) => r,
            // A reference that does not parse is the binder's finding.
            Some(Err(_)) => {
                tally.unbound += 1;
                continue;
            }
            None => {
                tally.no_reference += 1;
                continue;
            }
        };
        let rel = reference.path.clone();
        if recipes.is_outside(&rel) {
            tally.outside += 1;
            continue;
        }
        let lane = row.lane();
        let selector = reference
            .selector
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default();
        // A standalone (CONFIG_FILE) recipe is run as written: no lane block.
        let lane_key = (!reference.standalone).then_some(lane);
        let variants = composed
            .entry((rel.clone(), lane_key, selector))
            .or_insert_with(|| compose_variants(tree, &reference, lane_key));
        let variants = match variants {
            Ok(v) => v,
            Err(d) => {
                out.error.get_or_insert_with(|| d.clone());
                continue;
            }
        };
        // Single-node: the variant the binder chose; multinode: the one the selector names.
        let chosen = if lane.is_single_node() {
            bound
                .get(&i)
                .and_then(|l| variants.iter().find(|v| label_of(v) == *l))
        } else if let [only] = variants.as_slice() {
            Some(only)
        } else {
            None
        };
        let Some(chosen) = chosen else {
            // The binder's finding (in out.findings) says why.
            tally.unbound += 1;
            continue;
        };
        let mut variant = chosen.clone();
        for s in variant.sources.iter() {
            if !out.sources.iter().any(|(p, _)| *p == s.path) {
                out.sources.push((s.path.clone(), s.text.to_string()));
            }
        }
        let text = |k: &str| row.get(k).map(json_text).unwrap_or_default();
        // The launcher hands a CONFIG_FILE recipe to `srtctl apply -f` as written: it binds
        // nothing into it (docs/recipe.md, "Dry-run").
        let env_bound = if reference.standalone {
            None
        } else {
            bind_model(
                &mut variant,
                &text("model"),
                &text("image"),
                &text("precision"),
            );
            Some(bind_point_env(&mut variant, row, lane))
        };
        let diagnostics = infx_recipe::validate(&variant);
        let rendered = infx_recipe::render(&variant);
        out.points
            .push(describe_point(row, env_bound.as_deref(), reference.field));
        out.rows.push(row.clone());
        out.variants.push(VariantReport {
            variant,
            diagnostics,
            rendered,
        });
    }
    if tally.unbound > 0 {
        out.intro.push(format!(
            "{} point(s) of {key} bind to no single variant (see the findings); they are not rendered",
            tally.unbound
        ));
    }
    if tally.outside > 0 {
        out.intro.push(format!(
            "{} point(s) of {key} run a CONFIG_FILE recipe that is not in this tree (the launcher's srt-slurm checkout); they are not rendered",
            tally.outside
        ));
    }
    if out.variants.is_empty() && out.error.is_none() {
        out.error = Some(tally.nothing_rendered(key));
    }
    for (_, origin) in points.iter().take(1) {
        if let Ok(text) = infx_fs::read_to_string(&tree.join(&origin.path)) {
            out.sources.push((origin.path.clone(), text));
        }
    }
    out
}

/// The variants of a row's recipe composed in `lane` (none: a standalone recipe, as written),
/// expanded as the binder expands them.
fn compose_variants(
    tree: &Path,
    recipe: &infx_matrix::RowRecipe<'_>,
    lane: Option<Lane>,
) -> Result<Vec<Variant>, Diagnostic> {
    let file = infx_recipe::load_recipe(tree, &recipe.path)?;
    let options = recipe.expand_options();
    match lane {
        None => file.expand_with(recipe.selector.as_ref(), options),
        Some(lane) => {
            let block = infx_recipe::load_recipe(tree, lane.block_path())?;
            compose_lane(&file, lane, &block).expand_with(recipe.selector.as_ref(), options)
        }
    }
}

/// The binder's name for a variant (its label; a plain recipe's name).
fn label_of(v: &Variant) -> &str {
    if v.label.is_empty() {
        v.name.as_deref().unwrap_or("base")
    } else {
        &v.label
    }
}

fn json_text(j: &infx_matrix::Json) -> String {
    use infx_matrix::Json;
    match j {
        Json::Str(s) => s.clone(),
        Json::Int(i) => i.to_string(),
        Json::Float(f) => f.to_string(),
        Json::Bool(b) => b.to_string(),
        Json::Null => String::new(),
        Json::List(l) => l.iter().map(json_text).collect::<Vec<_>>().join(" "),
        Json::Object(_) => String::new(),
    }
}

/// Writes the point's `benchmark.env` values the launcher binds (docs/matrix.md, "Binding";
/// docs/recipe.md, "Dry-run as the launcher runs it"): for a single-node point MODEL and CONC,
/// then KV_OFFLOADING (and TOTAL_CPU_DRAM_GB with `dram`) for an agentic one, ISL/OSL for a
/// fixed-sequence one.
/// Multinode points get none (their launch-time binding is not modelled; the output says so).
/// Returns the names written, in that order.
fn bind_point_env(v: &mut Variant, row: &Object, lane: Lane) -> Vec<&'static str> {
    use infx_yaml::{Mapping, Node, Value};
    if !lane.is_single_node() {
        return Vec::new();
    }
    let mut values: Vec<(&'static str, String)> = Vec::new();
    let text = |k: &str| row.get(k).map(json_text).filter(|t| !t.is_empty());
    values.extend(text("model").map(|m| ("MODEL", m)));
    values.extend(row.conc().map(|c| ("CONC", c.to_string())));
    if lane.is_agentic() {
        if let Some(kv) = text("kv-offloading") {
            if kv == "dram" {
                values.extend(text("total-cpu-dram-gb").map(|g| ("TOTAL_CPU_DRAM_GB", g)));
            }
            values.push(("KV_OFFLOADING", kv));
        }
    } else {
        values.extend(text("isl").map(|t| ("ISL", t)));
        values.extend(text("osl").map(|t| ("OSL", t)));
    }
    let span = v.tree.span;
    let s = |x: &str| Node::new(Value::Str(x.to_string()), span);
    let Some(root) = std::sync::Arc::make_mut(&mut v.tree).as_map_mut() else {
        return Vec::new();
    };
    if root.get("benchmark").and_then(Node::as_map).is_none() {
        root.insert(s("benchmark"), Node::new(Value::Map(Mapping::new()), span));
    }
    let Some(benchmark) = root.get_mut("benchmark").and_then(Node::as_map_mut) else {
        return Vec::new();
    };
    if benchmark.get("env").and_then(Node::as_map).is_none() {
        benchmark.insert(s("env"), Node::new(Value::Map(Mapping::new()), span));
    }
    let Some(env) = benchmark.get_mut("env").and_then(Node::as_map_mut) else {
        return Vec::new();
    };
    for (k, val) in &values {
        env.insert(s(k), s(val));
    }
    let binder = infx_recipe::Origin {
        source: 0,
        block: std::sync::Arc::from("binder"),
    };
    for (k, _) in &values {
        v.origins.set(&format!("benchmark.env.{k}"), binder.clone());
    }
    values.into_iter().map(|(k, _)| k).collect()
}

/// `tp 4, ep 4, dp-attn true, conc 192` and what the launcher bound (`None`: a standalone
/// recipe, run as written by its `field`).
fn describe_point(row: &Object, env: Option<&[&str]>, field: &str) -> String {
    let mut parts = Vec::new();
    for k in ["tp", "ep", "dp-attn", "conc", "kv-offloading", "isl", "osl"] {
        if let Some(v) = row.get(k) {
            parts.push(format!("{k} {}", json_text(v)));
        }
    }
    let Some(env) = env else {
        return format!(
            "point {}; run as written ({field}: srtctl apply -f binds nothing)",
            parts.join(", ")
        );
    };
    let mut bound = vec!["model", "image", "precision"];
    bound.extend(env.iter().copied());
    let multinode = if row.is_multinode() {
        " (multinode: benchmark env not bound)"
    } else {
        ""
    };
    format!(
        "point {}; bound: {}{multinode}",
        parts.join(", "),
        bound.join(", ")
    )
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut runs: Vec<FileRun> = match &args.config_key {
        Some(key) => vec![run_config_key(&args, key)],
        None => args.target.iter().map(|t| run_one(&args, t)).collect(),
    };
    let mut sources = SourceMap::new();
    for r in &runs {
        for (p, t) in &r.sources {
            sources.insert(p, t.clone());
        }
    }
    // Paths as validate prints them (the binder names master configs by absolute path).
    if args.config_key.is_some() || runs.iter().any(|r| !r.points.is_empty()) {
        for r in &mut runs {
            let error = r.error.take();
            let has_error = error.is_some();
            let mut diags: Vec<Diagnostic> = std::mem::take(&mut r.findings);
            diags.extend(error);
            output::repository_relative(&args.tree, &mut diags, &mut sources);
            if has_error {
                r.error = diags.pop();
            }
            r.findings = diags;
            for v in &mut r.variants {
                output::repository_relative(&args.tree, &mut v.diagnostics, &mut sources);
            }
        }
    }
    let mut failed = false;
    let mut n_variants = 0;
    let mut n_bad = 0;
    let mut json_out = Vec::new();
    for r in &runs {
        let mut file_diags: Vec<Diagnostic> = r.findings.clone();
        if let Some(e) = &r.error {
            file_diags.push(e.clone());
        }
        failed |= file_diags.iter().any(Diagnostic::is_error);
        if args.format == DryFormat::Text {
            for line in &r.intro {
                println!("{}", crate::hygiene::escape_line(line));
            }
            if !file_diags.is_empty() {
                print!("{}", output::render(&file_diags, &sources, Format::Human));
            }
        }
        let total = r.variants.len();
        let mut jv = Vec::new();
        for (i, v) in r.variants.iter().enumerate() {
            n_variants += 1;
            let bad = v.diagnostics.iter().any(Diagnostic::is_error);
            n_bad += bad as usize;
            failed |= bad;
            match args.format {
                DryFormat::Text => {
                    let label = if v.variant.label.is_empty() { "recipe".to_string() } else { v.variant.label.clone() };
                    let name = v.variant.name.clone().unwrap_or_else(|| "<no name>".into());
                    let head = format!("[{}/{total}] {label}: {name}{}", i + 1, if bad { "  (invalid)" } else { "" });
                    // Names and rendered values come from the recipe: no forged lines.
                    println!("{}", crate::hygiene::escape_line(&head));
                    if let Some(point) = r.points.get(i) {
                        println!("{}", crate::hygiene::escape_line(point));
                    }
                    if !v.diagnostics.is_empty() {
                        print!("{}", output::render(&v.diagnostics, &sources, Format::Human));
                    }
                    if args.resolved {
                        println!("--- resolved");
                        print!("{}", infx_recipe::to_yaml(&v.variant.tree));
                        println!("---");
                    }
                    if !args.quiet {
                        print!("{}", crate::hygiene::escape_lines(&one_line_fields(&v.rendered).to_text()));
                    }
                }
                DryFormat::Json => jv.push(serde_json::json!({
                    "label": v.variant.label,
                    "point": r.points.get(i),
                    "selector": v.variant.selector_text(),
                    "name": v.variant.name,
                    "ok": !bad,
                    "diagnostics": v.diagnostics,
                    "rendered": if args.quiet { serde_json::Value::Null } else { v.rendered.to_json() },
                    "resolved": if args.resolved { resolved_json(&v.variant.tree) } else { serde_json::Value::Null },
                })),
            }
        }
        if args.format == DryFormat::Json {
            json_out.push(serde_json::json!({
                "target": r.target,
                "notes": r.intro,
                "diagnostics": file_diags,
                "variants": jv,
            }));
        }
    }
    match args.format {
        DryFormat::Json => println!(
            "{}",
            infx_report::json_safe(serde_json::to_string_pretty(&json_out)?)
        ),
        DryFormat::Text if args.config_key.is_some() => {
            let key = args.config_key.as_deref().unwrap_or_default();
            println!(
                "dry-run: {}: {n_variants} point(s) rendered, {n_bad} invalid",
                crate::hygiene::escape_line(key)
            );
        }
        DryFormat::Text => {
            let files_bad = runs.iter().filter(|r| r.error.is_some()).count();
            println!(
                "dry-run: {} file(s), {n_variants} variant(s), {n_bad} invalid{}",
                runs.len(),
                if files_bad > 0 {
                    format!(", {files_bad} file(s) failed to expand")
                } else {
                    String::new()
                }
            );
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The resolved tree as JSON for `--format json --resolved` (dates stay their text).
fn resolved_json(n: &infx_yaml::Node) -> serde_json::Value {
    use infx_yaml::Value;
    use serde_json::Value as J;
    match &n.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(f.value)
            .map(J::Number)
            .unwrap_or_else(|| J::String(f.text.to_string())),
        Value::Str(s) | Value::Timestamp(s) => J::String(s.clone()),
        Value::Seq(items) => J::Array(items.iter().map(resolved_json).collect()),
        Value::Map(m) => J::Object(
            m.iter_nodes()
                .map(|(k, v)| (infx_recipe::py_str(k), resolved_json(v)))
                .collect(),
        ),
    }
}

/// `r` with every field from the recipe on one line (`crate::hygiene::escape_line`): a newline
/// in a recipe's `name`, an env value or an argument would otherwise start a line of its own
/// in the text (`# name` header, `env`, `$` lines); docs/security.md, "Output".
fn one_line_fields(r: &infx_recipe::Rendered) -> infx_recipe::Rendered {
    let one = |s: &String| crate::hygiene::escape_line(s).into_owned();
    let mut r = r.clone();
    for s in [&mut r.name, &mut r.selector, &mut r.engine, &mut r.frontend] {
        *s = one(s);
    }
    for p in &mut r.processes {
        p.kind = one(&p.kind);
        p.role = one(&p.role);
        p.argv = p.argv.iter().map(one).collect();
        p.env = p.env.iter().map(|(k, v)| (one(k), one(v))).collect();
    }
    r.notes = r.notes.iter().map(one).collect();
    r
}
