//! `cargo xtask review …`: the reviewer checks a machine can decide (owner: review).

use crate::output::{Format, render};
use crate::validate::{ReviewChange, ReviewLoad};
use anyhow::{Context, bail};
use infx_report::{Diagnostic, SourceMap, sort_for_report};
use infx_review::{
    Change, ChangedPath, GoldenMode, OCT_CORE_TEAM, Signer, check_signer, cookbook,
    find_codeowners, load_codeowners, owners_of_change, pareto, pareto_plot, required_owners,
    review_tree_of,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Subcommand, Debug)]
pub enum ReviewCommand {
    /// Run every repository-decidable review check over a tree.
    Check(CheckArgs),
    /// List the changed paths with their CODEOWNERS; with --signer, say whether that login owns
    /// every specifically owned path (Check 0).
    Owners(OwnersArgs),
    /// Pareto coverage of benchmark results (Check 14, advisory): frontier counts per curve.
    Pareto(ParetoArgs),
    /// Diff every point's rendered launch command and environment against the published
    /// cookbook commands of its config (Check 3; infx/cookbook/<config-key>.yaml).
    Cookbook(CookbookArgs),
    /// Print the repository-decidable facts of a sign-off's additional-detail section as
    /// markdown (what it cannot decide is listed as "to fill in").
    Signoff(SignoffArgs),
}

#[derive(clap::Args, Debug)]
pub struct SignoffArgs {
    /// The benchmark tree (default: the bundled inferencex-e2e/).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Base revision: the change is base → working tree. Default: the last commit that changed
    /// the tree's perf-changelog.yaml stands in (as in validate on a clean clone).
    #[arg(long)]
    pub base: Option<String>,
    /// A directory of benchmark result JSON files (agg_bmk.json, bmk_agentic_*.json) for the
    /// Pareto counts (Check 14).
    #[arg(long, value_name = "DIR")]
    pub run_artifacts: Option<PathBuf>,
    /// Only these configs (default: the config keys of the appended changelog entries).
    #[arg(long = "config-key")]
    pub config_keys: Vec<String>,
    /// The sign-off author (`@login`), for Check 0.
    #[arg(long)]
    pub signer: Option<String>,
    /// Teams the signer belongs to (not readable offline).
    #[arg(long = "member-of")]
    pub member_of: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct CookbookArgs {
    /// The benchmark tree (default: the bundled inferencex-e2e/).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Only this config (default: every config with a cookbook file).
    #[arg(long = "config-key")]
    pub config_keys: Vec<String>,
    /// Output format for diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoldenModeArg {
    /// Recipes pin the simulated AL; it must equal the golden cell ([Aug], the verifier).
    Pinned,
    /// The launcher injects the golden AL; recipes must not hard-code it ([Oct] AGENTS.md).
    Injected,
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// The benchmark tree. Default: `inferencex-e2e/` of the git work tree enclosing the current
    /// directory, or that work tree itself when it has none.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Base revision of the change for the change-based checks (engine patches, CODEOWNERS,
    /// engine-first ordering, append-only notice). Default: as validate finds it, the
    /// merge-base of HEAD with the upstream branch; outside a git repository they are skipped.
    #[arg(long)]
    pub base: Option<String>,
    /// The PR number (for docs/waiver/<PR>.md).
    #[arg(long)]
    pub pr: Option<u64>,
    /// Sign-off author for Check 0.
    #[arg(long)]
    pub signer: Option<String>,
    /// Teams the signer belongs to (not readable offline), e.g. @InferenceX/core.
    #[arg(long = "member-of")]
    pub member_of: Vec<String>,
    /// Golden acceptance-length mode (default: injected for the Oct layout with configs/srt-recipes/,
    /// pinned otherwise).
    #[arg(long, value_enum)]
    pub golden_mode: Option<GoldenModeArg>,
    /// Output format for diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// The reviewer checklist the rules follow (`auto`: the tree's layout's; `oct` runs the
    /// October-only rules on an [Aug] tree too; docs/review.md, "Rules carry their checklist").
    #[arg(long, value_enum, default_value_t = crate::validate::Checklist::Auto)]
    pub checklist: crate::validate::Checklist,
}

#[derive(clap::Args, Debug)]
pub struct OwnersArgs {
    /// The tree or repository whose CODEOWNERS applies. Default: the git work tree enclosing
    /// the current directory.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Base revision (default: the merge-base of HEAD with the upstream branch).
    #[arg(long)]
    pub base: Option<String>,
    /// Changed paths to resolve instead of the git diff.
    #[arg(long = "path")]
    pub paths: Vec<String>,
    /// The sign-off author (`@login`).
    #[arg(long)]
    pub signer: Option<String>,
    /// Teams the signer belongs to (not readable offline).
    #[arg(long = "member-of")]
    pub member_of: Vec<String>,
    /// Output format (human: one row per path; json; github annotations; sarif).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(clap::Args, Debug)]
pub struct ParetoArgs {
    /// agg_bmk.json, bmk_agentic_*.json, or the reference tool's curve list.
    #[arg(required = true)]
    pub artifacts: Vec<PathBuf>,
    /// Also draw every curve (points, frontier, dominated points labelled) into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Output format (human: the frontier per curve; json; github annotations; sarif).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub fn run(cmd: ReviewCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ReviewCommand::Check(a) => run_check(a),
        ReviewCommand::Owners(a) => run_owners(a),
        ReviewCommand::Pareto(a) => run_pareto(a),
        ReviewCommand::Cookbook(a) => run_cookbook(a),
        ReviewCommand::Signoff(a) => {
            print!("{}", signoff_markdown(&a)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The change from the merge-base of `base` and HEAD to the working tree (paths relative to the
/// repository root, untracked files included), the repository root and the base commit.
fn load_change(
    dir: &Path,
    base: Option<&str>,
) -> anyhow::Result<(Change, PathBuf, Option<String>)> {
    let c = load_diff(dir, base)?;
    let top = c.set.root.clone();
    let commit = c.set.base.commit.clone();
    Ok((Change::from_diff(&c, None), top, commit))
}

/// The change as infx-diff loads it (paths and both texts).
fn load_diff(dir: &Path, base: Option<&str>) -> anyhow::Result<infx_diff::Change> {
    let opts = infx_diff::ChangeOptions {
        base: base.map(str::to_string),
        ..Default::default()
    };
    infx_diff::load_change(dir, &opts).map_err(|d| anyhow::anyhow!("{d}"))
}

fn signer(login: Option<String>, teams: Vec<String>) -> Option<Signer> {
    login.map(|login| Signer { login, teams })
}

fn print(diags: &mut [Diagnostic], sources: &SourceMap, format: Format) {
    sort_for_report(diags);
    let out = render(diags, sources, format);
    if !out.is_empty() {
        print!("{out}");
        if !out.ends_with('\n') {
            println!();
        }
    }
}

fn run_check(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let root = a.root.clone().unwrap_or_else(crate::paths::default_tree);
    if !root.join(infx_config::layout::CONFIGS_DIR).is_dir() {
        bail!(
            "{}: no configs/ directory (pass --root <benchmark tree>)",
            root.display()
        );
    }
    let t0 = std::time::Instant::now();
    // Validate's load (one change load, one parse per file); the change as validate finds it.
    let opts = crate::validate::Options {
        base: a.base.clone(),
        pr: a.pr,
        checklist: a.checklist,
        ..crate::validate::Options::new(&root)
    };
    let mut load = ReviewLoad::load(&opts, ReviewChange::AsValidate);
    let load_time = t0.elapsed();
    load.review.golden_mode = match a.golden_mode {
        Some(GoldenModeArg::Pinned) => GoldenMode::Pinned,
        Some(GoldenModeArg::Injected) => GoldenMode::Injected,
        None => GoldenMode::Auto,
    };
    load.review.signer = signer(a.signer.clone(), a.member_of.clone());
    // An explicit --base must resolve; without one, a tree outside git (or without an upstream
    // to compare with) skips the change-based checks.
    let change_error = match &load.change.loaded {
        Some(Err(d)) => Some(d),
        _ => load.change.diagnostics.first(),
    };
    if let Some(e) = change_error {
        if a.base.is_some() {
            bail!("{e}");
        }
        eprintln!(
            "note: change-based checks skipped: {}",
            crate::hygiene::escape_line(&e.to_string())
        );
    }
    if load.review.change.is_none() && load.review.signer.is_some() {
        bail!(
            "--signer needs a change (the changed paths come from the diff): run inside the clone or pass --base"
        );
    }
    let mut diags: Vec<Diagnostic> = load.reviewed_yaml_findings().cloned().collect();
    diags.extend(load.review_load_findings.iter().cloned());
    diags.extend(load.sparse_findings());
    let t1 = std::time::Instant::now();
    diags.extend(review_tree_of(&load.review, &load.configs.masters));
    let check_time = t1.elapsed();
    // Paths as validate prints them: relative to the repository, whether a finding came from
    // the tree or from the diff (repository-relative already).
    let paths = crate::output::RepositoryPaths::new(&load.root);
    let mut sources = SourceMap::new();
    for d in load
        .configs
        .masters
        .iter()
        .chain(&load.review.recipes)
        .chain(&load.review.lanes)
    {
        sources.insert(paths.shown(&d.path), d.text.clone());
    }
    crate::output::repository_relative(&load.root, &mut diags, &mut sources);
    // The allow comments of the files review reads, applied as validate applies them.
    let allowed =
        crate::validate::acknowledge_allowed(std::iter::once(&mut diags), &sources, &["review"]);
    diags.extend(allowed.problems);
    print(&mut diags, &sources, a.format);
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let warnings = diags
        .iter()
        .filter(|d| d.severity == infx_report::Severity::Warning)
        .count();
    eprintln!(
        "review: {} recipes, {} master configs, {} golden curves: {errors} errors, {warnings} warnings{} (load {:.1} ms, checks {:.1} ms)",
        load.review.recipes.len(),
        load.configs.masters.len(),
        load.review.golden.len(),
        crate::validate::acknowledged_suffix(allowed.acknowledged.len()),
        load_time.as_secs_f64() * 1e3,
        check_time.as_secs_f64() * 1e3,
    );
    // The process ends right after printing: the OS reclaims the parsed tree at once
    // (docs/performance.md, "Whole tree and one-config change").
    std::mem::forget(load);
    Ok(if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn run_owners(a: OwnersArgs) -> anyhow::Result<ExitCode> {
    let root = a.root.clone().unwrap_or_else(crate::paths::checkout_root);
    let mut diags = Vec::new();
    let Some(co) = load_codeowners(&root, &mut diags) else {
        bail!(
            "no CODEOWNERS under {} (.github/, root or docs/)",
            root.display()
        );
    };
    let changed: Vec<ChangedPath> = if a.paths.is_empty() {
        load_change(&root, a.base.as_deref())?.0.changed_paths()
    } else {
        a.paths
            .iter()
            .map(|p| ChangedPath {
                path: p.clone(),
                old_path: None,
            })
            .collect()
    };
    let owners = owners_of_change(&co, &changed);
    if a.format == Format::Human {
        for po in &owners {
            let (line, kind) = match &po.rule {
                Some(r) if po.is_specific() => (format!("line {}", r.line), "specific"),
                Some(r) => (format!("line {}", r.line), "catch-all"),
                None => ("-".to_string(), "unowned"),
            };
            // Paths are the PR's file names: a newline in one must not forge a line.
            let row = format!("{}\t{}\t{kind} ({line})", po.path, po.owners().join(" "));
            println!("{}", crate::hygiene::escape_line(&row));
        }
        let specific = owners.iter().filter(|p| p.is_specific()).count();
        println!(
            "{} changed paths, {specific} with specific owners",
            owners.len()
        );
        let required = required_owners(&owners);
        if required.is_empty() {
            println!(
                "[Oct] sign-off scope: N/A (only {} owns the change)",
                OCT_CORE_TEAM
            );
        } else {
            println!(
                "[Oct] sign-off scope: {} (admins with admin role are exempt upstream; not decidable offline)",
                required.join(" ")
            );
        }
    } else {
        for po in &owners {
            let row = serde_json::json!({
                "path": po.path,
                "owners": po.owners(),
                "specific": po.is_specific(),
                "line": po.rule.as_ref().map(|r| r.line),
            });
            println!("{row}");
        }
    }
    if let Some(s) = signer(a.signer.clone(), a.member_of.clone()) {
        diags.extend(check_signer(&co, &changed, &s));
        let ok = !diags.iter().any(|d| d.is_error());
        let mut sources = SourceMap::new();
        if let Some((abs, shown)) = find_codeowners(&root) {
            sources.insert(shown, infx_fs::read_to_string(&abs).unwrap_or_default());
        }
        print(&mut diags, &sources, a.format);
        if a.format == Format::Human {
            println!(
                "{}: {}",
                s.login,
                if ok {
                    "may sign off (owns every specifically owned path)"
                } else {
                    "may NOT sign off"
                }
            );
        }
        return Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    print(&mut diags, &SourceMap::new(), a.format);
    Ok(if diags.iter().any(|d| d.is_error()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn run_pareto(a: ParetoArgs) -> anyhow::Result<ExitCode> {
    let mut curves = Vec::new();
    let mut diags = Vec::new();
    for p in &a.artifacts {
        let text = infx_fs::read_unconfined_to_string(p)
            .with_context(|| format!("reading {}", p.display()))?;
        let json: serde_json::Value = match serde_json::from_str(&text) {
            Ok(j) => j,
            Err(e) => {
                diags.push(
                    Diagnostic::error(pareto::CODE_INPUT, format!("not JSON: {e}")).with_path(p),
                );
                continue;
            }
        };
        if let Err(d) = pareto::curves_from_artifact(&json, p, &mut curves) {
            diags.push(d);
        }
    }
    let source = a.artifacts.first().cloned().unwrap_or_default();
    match a.format {
        Format::Human => {
            for c in &curves {
                let r = pareto::assess(c);
                let dominated: Vec<&str> = r
                    .dominated_points(c)
                    .iter()
                    .map(|p| pareto_plot::short_label(&p.label))
                    .collect();
                let dominated = if dominated.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", dominated.join(", "))
                };
                println!(
                    "{}\t{}: {}/{} frontier, {} measured, {} dominated{dominated}, {} invalid{}",
                    if r.pass() { "PASS" } else { "WARN" },
                    r.key,
                    r.frontier.len(),
                    pareto::RECOMMENDED_POINTS,
                    r.measured,
                    r.dominated(),
                    r.invalid,
                    if r.canonical_restriction {
                        " (canonical restriction)"
                    } else {
                        ""
                    }
                );
            }
        }
        // One object per curve with the reference tool's field names.
        Format::Json => {
            for c in &curves {
                let r = pareto::assess(c);
                let row = serde_json::json!({
                    "key": r.key,
                    "status": if r.pass() { "PASS" } else { "WARN" },
                    "measuredPoints": r.measured,
                    "invalidPoints": r.invalid,
                    "frontierPoints": r.frontier.len(),
                    "recommendedPoints": pareto::RECOMMENDED_POINTS,
                    "canonicalRestriction": r.canonical_restriction,
                    "frontier": r.frontier.iter().map(|p| serde_json::json!({"x": p.x, "y": p.y, "label": p.label})).collect::<Vec<_>>(),
                });
                println!("{row}");
            }
        }
        Format::Github | Format::Sarif => diags.extend(pareto::check(&curves, &source)),
    }
    if let Some(out) = &a.plot {
        let svg = pareto_plot::plot_svg(&curves).map_err(|e| anyhow::anyhow!("{e}"))?;
        std::fs::write(out, svg).with_context(|| format!("writing {}", out.display()))?;
        let drawable = curves
            .iter()
            .flat_map(|c| &c.points)
            .any(|p| p.x.zip(p.y).is_some_and(|(x, y)| x > 0.0 && y > 0.0));
        eprintln!(
            "review pareto: wrote {} ({} curves{})",
            out.display(),
            curves.len(),
            if drawable {
                String::new()
            } else {
                format!("; {}", pareto_plot::NO_POINTS)
            }
        );
    }
    let input_errors = diags.iter().any(|d| d.is_error());
    print(&mut diags, &SourceMap::new(), a.format);
    Ok(if input_errors {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The sign-off section (`review signoff`). The change is `--base` → working tree, else the
/// last commit that changed the tree's perf-changelog.yaml; none outside git.
pub(crate) fn signoff_markdown(a: &SignoffArgs) -> anyhow::Result<String> {
    let root = a.root.clone().unwrap_or_else(crate::paths::default_tree);
    if !root.join(infx_config::layout::CONFIGS_DIR).is_dir() {
        bail!(
            "{}: no configs/ directory (pass --root <benchmark tree>)",
            root.display()
        );
    }
    let opts = crate::validate::Options {
        base: a.base.clone(),
        ..crate::validate::Options::new(&root)
    };
    let which = match a.base {
        Some(_) => ReviewChange::AsValidate,
        None => ReviewChange::LastChangelogCommit,
    };
    let mut load = ReviewLoad::load(&opts, which);
    if let Some(d) = load.change.diagnostics.first() {
        bail!("{d}");
    }
    let change = match &load.change.loaded {
        Some(Err(d)) => bail!("{d}"),
        Some(Ok(c)) => Some((
            signoff_change_description(&load, a.base.as_deref()),
            c.set.files.len(),
        )),
        None => None,
    };
    let added_entries: Vec<infx_review::signoff::AddedEntry> = load
        .changelog
        .scope
        .appended
        .iter()
        .map(|(e, line, _)| infx_review::signoff::AddedEntry {
            config_keys: e.config_keys.clone(),
            append_only: e.append_only,
            line: *line,
        })
        .collect();
    // The sign-off reads the master configs through the review inputs (no copy: moved).
    load.review.masters = std::mem::take(&mut load.configs.masters);
    let keys = infx_review::signoff::covered_keys(&a.config_keys, &added_entries);
    let mut recipes = infx_review::signoff::review_recipes(&load.review, &keys);
    // The allow comments of the recipes, applied as validate applies them.
    let mut sources = SourceMap::new();
    for d in &load.review.recipes {
        sources.insert(&d.path, d.text.clone());
    }
    let allowed = crate::validate::acknowledge_allowed(
        recipes.iter_mut().map(|r| &mut r.findings),
        &sources,
        &["review"],
    );
    let parsed = infx_yaml::DocIndex::new(load.documents());
    let opts = infx_review::signoff::Options {
        tree: &load.root,
        review: &load.review,
        parsed: &parsed,
        runners: load.configs.runners.as_ref(),
        change,
        added_entries,
        config_keys: a.config_keys.clone(),
        recipes: &recipes,
        acknowledged: &allowed.acknowledged,
        run_artifacts: a.run_artifacts.as_deref(),
        signer: signer(a.signer.clone(), a.member_of.clone()),
    };
    infx_review::signoff::generate(&opts).map_err(|d| anyhow::anyhow!("{d}"))
}

/// One line: which change a sign-off describes and how it was chosen.
fn signoff_change_description(load: &ReviewLoad, base: Option<&str>) -> String {
    let short = |c: Option<&str>| c.unwrap_or("?").chars().take(12).collect::<String>();
    if let Some(base) = base {
        return format!(
            "`{base}` ({}) → working tree",
            short(load.change.base.as_deref())
        );
    }
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let top = load
        .change
        .repo_root
        .as_deref()
        .map(canonical)
        .unwrap_or_default();
    let rel = load
        .root
        .strip_prefix(&top)
        .unwrap_or(Path::new(""))
        .join(infx_config::layout::CHANGELOG);
    format!(
        "commit `{}`, the last that changed `{}`, stands in (no --base); documents are read from the working tree",
        short(load.change.head_rev.as_deref()),
        rel.display()
    )
}

/// Config keys with a cookbook file in the tree, sorted.
fn cookbook_keys(root: &Path) -> Vec<String> {
    let dir = root.join(cookbook::COOKBOOK_DIR);
    let mut keys: Vec<String> = infx_yaml::yaml_files(&dir)
        .unwrap_or_default()
        .iter()
        .filter(|p| p.parent() == Some(dir.as_path()))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    keys.sort();
    keys
}

/// One cookbook comparison per config. The binder and the cookbook reader take the files
/// `load` parsed (each parsed once per run, docs/architecture.md "Parse once"); the cookbook
/// files themselves are parsed when looked up.
fn cookbook_reports(
    root: &Path,
    load: &crate::validate::ConfigLoad,
    keys: &[String],
) -> anyhow::Result<Vec<(cookbook::Cookbook, cookbook::Report)>> {
    let Some(runners) = load.configs.runners.as_ref() else {
        bail!(
            "cannot read {}",
            root.join(infx_config::layout::RUNNERS).display()
        );
    };
    let parsed = infx_yaml::DocIndex::new(load.documents());
    let mut out = Vec::new();
    for key in keys {
        let cb = match cookbook::load_cookbook_in(&load.root, key, &parsed) {
            None => bail!(
                "{key}: no cookbook file {}",
                cookbook::cookbook_path(root, key).display()
            ),
            Some(Err(d)) => {
                let mut d = d;
                print(&mut d, &SourceMap::new(), Format::Human);
                bail!("{key}: the cookbook file is malformed");
            }
            Some(Ok(c)) => c,
        };
        let (points, mut bind_diags) = cookbook::load_points(
            &load.root,
            &load.configs.masters,
            &runners.root,
            &parsed,
            key,
        );
        let mut report = cookbook::compare(&cb, &points);
        // Binding failures leave points uncompared: say so instead of passing silently.
        report.unmatched.append(&mut bind_diags);
        out.push((cb, report));
    }
    Ok(out)
}

fn run_cookbook(a: CookbookArgs) -> anyhow::Result<ExitCode> {
    let root = a.root.clone().unwrap_or_else(crate::paths::default_tree);
    let keys = if a.config_keys.is_empty() {
        cookbook_keys(&root)
    } else {
        a.config_keys.clone()
    };
    if keys.is_empty() {
        bail!(
            "no cookbook files under {} (see docs/review.md, Check 3)",
            root.join(cookbook::COOKBOOK_DIR).display()
        );
    }
    let t0 = std::time::Instant::now();
    // The configs and runners.yaml through review's parse, then the recipes of these keys.
    let load = crate::validate::ConfigLoad::load(&crate::validate::Options::new(&root), &keys);
    let reports = cookbook_reports(&root, &load, &keys)?;
    let elapsed = t0.elapsed();
    // A file that does not parse drops out of the comparison: say why, as review check does.
    let mut diags: Vec<Diagnostic> = load.yaml_findings.clone();
    for (cb, report) in &reports {
        for p in &report.points {
            match a.format {
                Format::Json => {
                    let row = serde_json::json!({
                        "config-key": cb.config_key,
                        "deployment": p.deployment,
                        "conc": p.conc,
                        "variant": p.label,
                        "differences": p.differences.len(),
                        "excluded": p.excluded.iter().map(|(s, why)| serde_json::json!({"setting": s, "reason": why})).collect::<Vec<_>>(),
                        "rendered": p.rendered.to_json(),
                    });
                    println!("{row}");
                }
                // Workflow commands (or one SARIF document) only: the findings are the output.
                Format::Github | Format::Sarif => {}
                Format::Human => {
                    println!(
                        "{} {} C{} <- {}: {} difference{}",
                        cb.config_key,
                        p.deployment,
                        p.conc,
                        p.label,
                        p.differences.len(),
                        if p.differences.len() == 1 { "" } else { "s" }
                    );
                    for proc in p
                        .rendered
                        .processes
                        .iter()
                        .filter(|x| x.kind != "benchmark")
                    {
                        for (k, v) in &proc.env {
                            println!("  {} env {k}={}", proc.kind, infx_recipe::shell_quote(v));
                        }
                        let argv: Vec<String> = proc
                            .argv
                            .iter()
                            .map(|x| infx_recipe::shell_quote(x))
                            .collect();
                        println!("  {} $ {}", proc.kind, argv.join(" "));
                    }
                    println!("  excluded (InferenceX-only):");
                    for (s, why) in &p.excluded {
                        println!("    {s}: {why}");
                    }
                }
            }
        }
        diags.extend(report.diagnostics());
    }
    // Paths and snippets as review check shows them: relative to the repository, from the
    // parsed texts (a file no document holds, the cookbook file, is read for its snippet).
    let paths = crate::output::RepositoryPaths::new(&load.root);
    let mut sources = SourceMap::new();
    for d in load.documents() {
        sources.insert(paths.shown(&d.path), d.text.clone());
    }
    crate::output::repository_relative(&load.root, &mut diags, &mut sources);
    // The allow comments of those files, applied as review check applies them. Only Check 3 of
    // the review step runs here, so no check counts as run: an allow for another review
    // finding is not reported unused.
    let allowed = crate::validate::acknowledge_allowed(std::iter::once(&mut diags), &sources, &[]);
    let failed = !diags.is_empty() || allowed.problems.iter().any(Diagnostic::is_error);
    diags.extend(allowed.problems);
    print(&mut diags, &sources, a.format);
    for (cb, report) in &reports {
        let source = cb
            .source
            .iter()
            .find(|(k, _)| k == "page")
            .map(|(_, v)| v.as_str())
            .unwrap_or("(no page recorded)");
        eprintln!(
            "cookbook {}: {} points compared, {} differences (source: {source})",
            cb.config_key,
            report.points.len(),
            report.difference_count()
        );
    }
    eprintln!(
        "review cookbook: {} config(s) loaded, bound, rendered and compared in {:.1} ms{}",
        reports.len(),
        elapsed.as_secs_f64() * 1e3,
        crate::validate::acknowledged_suffix(allowed.acknowledged.len()),
    );
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use std::process::ExitCode;

    fn run(args: &[&str]) -> ExitCode {
        crate::main_with_args(std::iter::once("cargo xtask").chain(args.iter().copied()))
    }

    #[test]
    fn pareto_is_advisory_and_rejects_bad_input() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let good = dir.path().join("curves.json");
        std::fs::write(
            &good,
            r#"[{"key": "a", "points": [{"x": 1, "y": 1}, {"x": 2, "y": 2}]}]"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // A WARN curve is advice, not a failure.
        assert_eq!(
            run(&[
                "review",
                "pareto",
                "--format",
                "json",
                good.to_str().unwrap_or("")
            ]),
            ExitCode::SUCCESS
        );
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "[]").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            run(&["review", "pareto", bad.to_str().unwrap_or("")]),
            ExitCode::from(1)
        );
    }

    #[test]
    fn pareto_plot_writes_an_svg() {
        let fixture = crate::paths::workspace_root()
            .join("crates/review/tests/fixtures/pareto_seed_shape.json");
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let svg = dir.path().join("p.svg");
        assert_eq!(
            run(&[
                "review",
                "pareto",
                fixture.to_str().unwrap_or(""),
                "--plot",
                svg.to_str().unwrap_or("")
            ]),
            ExitCode::SUCCESS
        );
        let text = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{e}"));
        assert!(text.contains("TP2 C1 (dominated)") && text.contains("</svg>"));
    }

    #[test]
    fn owners_signer_verdicts() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join(".github")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.path().join(".github/CODEOWNERS"),
            "* @org/core\nconfigs/nvidia-master.yaml @ankur-singh @org/core\nconfigs/amd-master.yaml @seungrokj\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().to_str().unwrap_or("");
        let base = [
            "review",
            "owners",
            "--root",
            root,
            "--path",
            "configs/nvidia-master.yaml",
        ];
        assert_eq!(
            run(&[&base[..], &["--signer", "@seungrokj"]].concat()),
            ExitCode::from(1)
        );
        assert_eq!(
            run(&[&base[..], &["--signer", "@Ankur-Singh"]].concat()),
            ExitCode::SUCCESS
        );
        assert_eq!(
            run(&[&base[..], &["--signer", "@x", "--member-of", "@org/core"]].concat()),
            ExitCode::SUCCESS
        );
    }

    fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
        for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{e}")) {
            let entry = entry.unwrap_or_else(|e| panic!("{e}"));
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                std::fs::create_dir_all(&target).unwrap_or_else(|e| panic!("{e}"));
                copy_tree(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }

    #[test]
    fn cookbook_diff_gates_review_and_validate() {
        let bundled = crate::paths::default_tree();
        if !bundled.join("infx/cookbook").is_dir() {
            eprintln!("SKIP: cookbook_diff_gates_review_and_validate: no bundled cookbook");
            return;
        }
        assert_eq!(run(&["review", "cookbook"]), ExitCode::SUCCESS);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        copy_tree(&bundled, dir.path());
        let root = dir.path().to_str().unwrap_or("");
        // Outside git the whole tree is in scope, so validate runs Check 3 too.
        assert_eq!(
            run(&["validate", "--root", root, "--format", "json"]),
            ExitCode::SUCCESS
        );
        let recipe = dir.path().join(
            "benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml",
        );
        let text = std::fs::read_to_string(&recipe).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            &recipe,
            text.replace("tokenizer-worker-num: 8", "tokenizer-worker-num: 4"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            run(&["review", "cookbook", "--root", root, "--format", "json"]),
            ExitCode::from(1)
        );
        // validate judges the published-command difference at merge time (docs/review.md,
        // "Check 3: the cookbook diff"): a warning before the PR, an error on its CI event.
        assert_eq!(
            run(&["validate", "--root", root, "--format", "json"]),
            ExitCode::SUCCESS
        );
        let events = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let event = events.path().join("event.json");
        std::fs::write(
            &event,
            r#"{"pull_request":{"number":7,"labels":[{"name":"full-sweep-fail-fast"}]}}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let event = event.to_str().unwrap_or("");
        assert_eq!(
            run(&[
                "validate", "--root", root, "--format", "json", "--event", event
            ]),
            ExitCode::from(1)
        );
    }

    /// The sign-off section of the bundled refresh commit (the last commit that changed the
    /// bundled perf-changelog.yaml) with the seed-shaped result fixtures.
    #[test]
    fn signoff_of_the_bundled_refresh_commit() {
        let tree = crate::paths::default_tree();
        let fixtures = crate::paths::workspace_root().join("crates/review/tests/fixtures");
        match infx_git::Repo::discover(&tree) {
            Ok(r) if !r.is_shallow() => {}
            _ => {
                eprintln!("SKIP: signoff_of_the_bundled_refresh_commit: no full git history");
                return;
            }
        }
        let args = super::SignoffArgs {
            root: None,
            base: None,
            run_artifacts: Some(fixtures),
            config_keys: Vec::new(),
            signer: Some("@ankur-singh".into()),
            member_of: Vec::new(),
        };
        let text = super::signoff_markdown(&args).unwrap_or_else(|e| panic!("{e:#}"));
        for section in [
            "**Append-only (Check 12).**",
            "**CODEOWNERS (Check 0).**",
            "**Engine patches (Check 10).**",
            "- **Image (Check 6).**",
            "- **Cookbook (Check 3).** 9 points compared",
            "**0 differences**",
            "→ **3.51**",
            "- **Draft precision (Check 13).**",
            "- **Architecture hacks, event publication (Check 8).**",
            "7 of 9 points on the frontier (PASS); dominated: TP4 C1, TP2 C1",
            "### To fill in",
        ] {
            assert!(text.contains(section), "{section} missing:\n{text}");
        }
        // The tree's allow comment answers the DP4 C192 cuda-graph lint: shown with its
        // reason, not asked for again.
        assert!(
            text.contains("- **Acknowledged in the tree (`# infx: allow`).**")
                && text.contains("; reason: per-rank decode batch never exceeded 44")
                && !text.contains("the answer to each lint above"),
            "{text}"
        );
        insta::assert_snapshot!("signoff_bundled_refresh_commit", text);
    }

    #[test]
    fn check_runs_over_the_bundled_tree() {
        if !crate::paths::default_tree().join("configs").is_dir() {
            eprintln!("SKIP: check_runs_over_the_bundled_tree: inferencex-e2e/configs not found");
            return;
        }
        // The bundled tree has warnings (the DP4 C192 cuda-graph lint) and no errors.
        assert_eq!(
            run(&["review", "check", "--format", "json"]),
            ExitCode::SUCCESS
        );
    }
}
