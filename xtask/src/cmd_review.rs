//! `cargo xtask review …`: the reviewer checks a machine can decide (owner: review).

use crate::output::{Format, render};
use anyhow::{Context, bail};
use infx_report::{Diagnostic, SourceMap, sort_for_report};
use infx_review::{Change, GoldenMode, Signer, codeowners, load, pareto, review_tree};
use std::collections::BTreeSet;
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
    /// The benchmark tree (default: the bundled inferencex-e2e/).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Base revision of the change (enables the change-based checks: engine patches, CODEOWNERS,
    /// engine-first ordering, append-only notice).
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
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(clap::Args, Debug)]
pub struct OwnersArgs {
    /// The tree or repository whose CODEOWNERS applies (default: the workspace).
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
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(clap::Args, Debug)]
pub struct ParetoArgs {
    /// agg_bmk.json, bmk_agentic_*.json, or the reference tool's curve list.
    #[arg(required = true)]
    pub artifacts: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub fn run(cmd: ReviewCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ReviewCommand::Check(a) => run_check(a),
        ReviewCommand::Owners(a) => run_owners(a),
        ReviewCommand::Pareto(a) => run_pareto(a),
    }
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let mut full = vec!["-C".to_string(), dir.display().to_string()];
    full.extend(args.iter().map(|s| s.to_string()));
    duct::cmd("git", full)
        .stderr_capture()
        .read()
        .with_context(|| format!("git {}", args.join(" ")))
}

/// The change from the merge-base of `base` and HEAD to the working tree (paths relative to the
/// repository root, untracked files included), the repository root and the base commit.
fn load_change(
    dir: &Path,
    base: Option<&str>,
) -> anyhow::Result<(Change, PathBuf, Option<String>)> {
    let opts = infx_diff::ChangeOptions {
        base: base.map(str::to_string),
        ..Default::default()
    };
    let c = infx_diff::load_change(dir, &opts).map_err(|d| anyhow::anyhow!("{d}"))?;
    let top = c.set.root.clone();
    let commit = c.set.base.commit.clone();
    Ok((Change::from_diff(&c, None), top, commit))
}

/// Check 12 through `infx-changelog`'s plan of `base..HEAD` (committed history only): `Err` with
/// upstream's message when the append-only rules fail; `None` when it cannot be decided here
/// (another stage failed: the changelog check reports that).
pub(crate) fn append_only_verdict(top: &Path, base: &str) -> Option<Result<(), String>> {
    let r = infx_git::Repo::open(top).ok()?;
    let (b, h) = (r.resolve_commit(base).ok()?, r.resolve_commit("HEAD").ok()?);
    let opts = infx_changelog::plan::PlanOptions::default();
    match infx_changelog::matrix_gen::plan_between(&r, b, h, base, "HEAD", opts, Default::default())
    {
        Ok(_) => Some(Ok(())),
        Err(e) if e.stage == "append-only" => Some(Err(e.message)),
        Err(_) => None,
    }
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
    if !root.join("configs").is_dir() {
        bail!(
            "{}: no configs/ directory (pass --root <benchmark tree>)",
            root.display()
        );
    }
    let t0 = std::time::Instant::now();
    let (mut inputs, mut diags) = load::load_tree(&root);
    let load_time = t0.elapsed();
    inputs.golden_mode = match a.golden_mode {
        Some(GoldenModeArg::Pinned) => GoldenMode::Pinned,
        Some(GoldenModeArg::Injected) => GoldenMode::Injected,
        None => GoldenMode::Auto,
    };
    inputs.signer = signer(a.signer.clone(), a.member_of.clone());
    if let Some(base) = &a.base {
        let (mut change, top, mb) = load_change(&root, Some(base))?;
        change.pr = a.pr;
        let abs_root = root.canonicalize().unwrap_or(root.clone());
        let prefix = abs_root
            .strip_prefix(top.canonicalize().unwrap_or(top.clone()))
            .unwrap_or(Path::new(""));
        let mut keys = BTreeSet::new();
        for m in inputs.masters.iter().filter(|_| mb.is_some()) {
            let spec = format!(
                "{}:{}",
                mb.as_deref().unwrap_or_default(),
                prefix.join(&m.path).display()
            );
            // A master config absent at base makes every entry "added".
            if let Ok(text) = git(&top, &["show", &spec])
                && let Ok(node) = infx_yaml::parse_str(&m.path, &text)
            {
                keys.extend(
                    node.as_map()
                        .into_iter()
                        .flat_map(|m| m.keys().map(str::to_string)),
                );
            }
        }
        inputs.base_master_keys = Some(keys);
        inputs.append_only_entry = change.files.iter().any(|f| {
            f.path.ends_with("perf-changelog.yaml")
                && f.added_lines
                    .iter()
                    .any(|(_, l)| l.trim_start().starts_with("append-only: true"))
        });
        if inputs.append_only_entry
            && let Some(b) = &mb
        {
            inputs.append_only_verdict = append_only_verdict(&top, b);
        }
        inputs.change = Some(change);
    } else if inputs.signer.is_some() {
        bail!("--signer needs --base (the changed paths come from the diff)");
    }
    let t1 = std::time::Instant::now();
    diags.extend(review_tree(&inputs));
    let check_time = t1.elapsed();
    let mut sources = SourceMap::new();
    for d in inputs
        .masters
        .iter()
        .chain(&inputs.recipes)
        .chain(&inputs.lanes)
    {
        sources.insert(&d.path, d.text.to_string());
    }
    print(&mut diags, &sources, a.format);
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let warnings = diags
        .iter()
        .filter(|d| d.severity == infx_report::Severity::Warning)
        .count();
    eprintln!(
        "review: {} recipes, {} master configs, {} golden curves: {errors} errors, {warnings} warnings (load {:.1} ms, checks {:.1} ms)",
        inputs.recipes.len(),
        inputs.masters.len(),
        inputs.golden.len(),
        load_time.as_secs_f64() * 1e3,
        check_time.as_secs_f64() * 1e3,
    );
    Ok(if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn run_owners(a: OwnersArgs) -> anyhow::Result<ExitCode> {
    let root = a.root.clone().unwrap_or_else(crate::paths::workspace_root);
    let mut diags = Vec::new();
    let Some(co) = load::load_codeowners(&root, &mut diags) else {
        bail!(
            "no CODEOWNERS under {} (.github/, root or docs/)",
            root.display()
        );
    };
    let changed: Vec<codeowners::ChangedPath> = if a.paths.is_empty() {
        load_change(&root, a.base.as_deref())?.0.changed_paths()
    } else {
        a.paths
            .iter()
            .map(|p| codeowners::ChangedPath {
                path: p.clone(),
                old_path: None,
            })
            .collect()
    };
    let owners = codeowners::owners_of_change(&co, &changed);
    if a.format == Format::Human {
        for po in &owners {
            let (line, kind) = match &po.rule {
                Some(r) if po.is_specific() => (format!("line {}", r.line), "specific"),
                Some(r) => (format!("line {}", r.line), "catch-all"),
                None => ("-".to_string(), "unowned"),
            };
            println!("{}\t{}\t{kind} ({line})", po.path, po.owners().join(" "));
        }
        let specific = owners.iter().filter(|p| p.is_specific()).count();
        println!(
            "{} changed paths, {specific} with specific owners",
            owners.len()
        );
        let required = codeowners::required_owners(&owners);
        if required.is_empty() {
            println!(
                "[Oct] sign-off scope: N/A (only {} owns the change)",
                codeowners::OCT_CORE_TEAM
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
        diags.extend(codeowners::check_signer(&co, &changed, &s));
        let ok = !diags.iter().any(|d| d.is_error());
        let mut sources = SourceMap::new();
        if let Some((abs, shown)) = load::find_codeowners(&root) {
            sources.insert(shown, std::fs::read_to_string(abs).unwrap_or_default());
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
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
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
                println!(
                    "{}\t{}: {}/{} frontier, {} measured, {} dominated, {} invalid{}",
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
    let input_errors = diags.iter().any(|d| d.is_error());
    print(&mut diags, &SourceMap::new(), a.format);
    Ok(if input_errors {
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
