//! `cargo xtask validate`: the main job. Finds what changed, runs every check that applies, and
//! reports diagnostics plus one summary line per check with its time.
//!
//! Loading (files, git) happens here; every check is a pure function in its library crate.

use crate::output::{self, Format};
use infx_report::allow::Acknowledged;
use infx_report::{Diagnostic, Severity, SourceMap, sort_for_report};
use infx_yaml::Document;

pub mod binding;
mod contribution;
pub mod pr;
mod steps;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use steps::{
    ChangeMode, check_changelog, check_diff, check_recipes, check_review, detect_change,
    recipe_paths, touched_keys,
};

#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The benchmark tree to validate (its `configs/` holds the master configs). Default:
    /// `inferencex-e2e/` of the git work tree enclosing the current directory, or that work
    /// tree itself when it has none.
    #[arg(long, default_value_os_t = crate::paths::default_tree(), hide_default_value = true)]
    pub root: PathBuf,
    /// Base revision of the change (default: merge-base of HEAD with the upstream branch).
    #[arg(long)]
    pub base: Option<String>,
    /// Check everything, not only what the change touches.
    #[arg(long)]
    pub all: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Also verify image pins against their registries (network).
    #[arg(long, conflicts_with = "hermetic")]
    pub online: bool,
    /// No network at all: any attempt is an error. Implied inside a Nix build sandbox.
    #[arg(long)]
    pub hermetic: bool,
    /// The PR's labels, comma-separated (`full-sweep-fail-fast,all-evals`; `""` = none). Checks
    /// the sweep labels and feeds `all-evals` / `evals-only` to the plan.
    #[arg(long, value_delimiter = ',', num_args = 0..=1)]
    pub labels: Option<Vec<String>>,
    /// The PR number (canonical pr-link in the entry skeleton; review's waiver lookup).
    #[arg(long)]
    pub pr: Option<u64>,
    /// A `pull_request` event payload to read labels, PR number and head commit from (default
    /// inside GitHub Actions on a pull_request event: $GITHUB_EVENT_PATH).
    #[arg(long)]
    pub event: Option<PathBuf>,
}

/// Whether a check ran, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Ran,
    Skipped(String),
}

/// One check's outcome.
#[derive(Debug)]
pub struct CheckResult {
    pub name: &'static str,
    pub status: Status,
    pub diagnostics: Vec<Diagnostic>,
    pub elapsed: Duration,
    /// What was covered, e.g. "14 files" (shown in the summary line).
    pub scope: String,
}

impl CheckResult {
    fn count(&self, sev: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == sev)
            .count()
    }
    /// `ok`, `ok, 1 warning`, `2 errors`, … of a check that ran.
    fn verdict(&self) -> String {
        let (e, w) = (self.count(Severity::Error), self.count(Severity::Warning));
        match (e, w) {
            (0, 0) => "ok".to_string(),
            (0, w) => format!("ok, {w} warning{}", plural(w)),
            (e, 0) => format!("{e} error{}", plural(e)),
            (e, w) => format!("{e} error{}, {w} warning{}", plural(e), plural(w)),
        }
    }
    /// The summary line: `  config      ok        3 files          0.4 ms`.
    pub fn summary_line(&self) -> String {
        let verdict = match &self.status {
            Status::Skipped(why) => format!("skipped ({why})"),
            Status::Ran => self.verdict(),
        };
        let scope = if self.scope.is_empty() {
            String::new()
        } else {
            format!("  [{}]", self.scope)
        };
        format!(
            "{:<11} {:<28} {:>9}{}",
            self.name,
            verdict,
            format_duration(self.elapsed),
            scope
        )
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

pub fn format_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// The full outcome of a validate run, for the CLI and for tests.
#[derive(Debug)]
pub struct Report {
    pub checks: Vec<CheckResult>,
    /// Configs whose benchmark the change can alter, with the causing lines.
    pub impact: infx_changelog::impact::Impact,
    /// Every planned point of the configs in view → the recipe variant it selects.
    pub bindings: Vec<binding::BindingRecord>,
    /// Warnings an `# infx: allow(...)` comment acknowledged (counted, not shown).
    pub acknowledged: Vec<Acknowledged>,
    pub sources: SourceMapHolder,
    pub elapsed: Duration,
}

/// Source texts for rendering (wrapped so `Report` can derive Debug).
#[derive(Default)]
pub struct SourceMapHolder(pub SourceMap);

impl std::fmt::Debug for SourceMapHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SourceMap")
    }
}

impl Report {
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut all: Vec<Diagnostic> = self
            .checks
            .iter()
            .flat_map(|c| c.diagnostics.iter().cloned())
            .collect();
        sort_for_report(&mut all);
        // Two checks may reach the same finding (e.g. binding and dry-run on one recipe value).
        all.dedup_by(|a, b| {
            a.code == b.code && a.path == b.path && a.span == b.span && a.message == b.message
        });
        all
    }
    pub fn has_errors(&self) -> bool {
        self.checks
            .iter()
            .any(|c| c.diagnostics.iter().any(Diagnostic::is_error))
    }
    pub fn check(&self, name: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.name == name)
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let hermetic = args.hermetic
        || std::env::var_os("NIX_BUILD_TOP").is_some()
        || std::env::var_os("INFX_HERMETIC").is_some();
    if hermetic && args.online {
        eprintln!(
            "error: --online needs the network, but this run is hermetic (--hermetic, INFX_HERMETIC or a Nix build sandbox)"
        );
        return Ok(ExitCode::from(2));
    }
    if !args.root.is_dir() {
        eprintln!("error: --root {}: not a directory", args.root.display());
        return Ok(ExitCode::from(2));
    }
    let opts = Options {
        root: args.root.clone(),
        base: args.base.clone(),
        all: args.all,
        online: args.online,
        hermetic,
        labels: args
            .labels
            .map(|l| l.into_iter().filter(|s| !s.trim().is_empty()).collect()),
        pr: args.pr,
        event: args.event.or_else(pr::event_path_from_env),
    };
    let report = validate(&opts);
    let diags = report.diagnostics();
    let rendered = match args.format {
        // SARIF carries the acknowledged warnings as suppressed results.
        Format::Sarif => infx_report::render_sarif_with_acknowledged(
            &diags,
            &report.acknowledged,
            env!("CARGO_PKG_VERSION"),
        ),
        _ => output::render(&diags, &report.sources.0, args.format),
    };
    // A reader that went away (`| head -1`) ends the output, not the verdict.
    crate::hygiene::print_stdout(&rendered);
    let summary = summary_text(&report);
    match args.format {
        // Machine formats keep stdout parseable; the summary goes to stderr.
        Format::Json => {
            for r in &report.impact.keys {
                crate::hygiene::print_stdout(&format!("{}\n", impact_json(r)));
            }
            for b in &report.bindings {
                crate::hygiene::print_stdout(&format!("{}\n", b.to_json()));
            }
            for a in &report.acknowledged {
                crate::hygiene::print_stdout(&format!("{}\n", acknowledged_json(a)));
            }
            eprint!("{summary}");
        }
        // SARIF is one document on stdout: the impact and binding records stay out of it.
        Format::Sarif => eprint!("{summary}"),
        Format::Human => {
            crate::hygiene::print_stdout(&summary);
            crate::hygiene::print_stdout(&crate::hygiene::escape_lines(&binding::human_table(
                &report.bindings,
            )));
        }
        Format::Github => {
            crate::hygiene::print_stdout(&summary);
            if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
                write_step_summary(Path::new(&path), &report);
            }
        }
    }
    Ok(if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One impacted config as a JSON record (README, `--format json`).
fn impact_json(k: &infx_changelog::impact::Impacted) -> serde_json::Value {
    serde_json::json!({
        "record": "impact",
        "config-key": k.key,
        "causes": k.causes.iter().map(|c| serde_json::json!({
            "path": c.path.to_string_lossy(),
            "line": c.line,
            "why": c.why,
        })).collect::<Vec<_>>(),
    })
}

/// One acknowledged warning as a JSON record (README, `--format json`).
fn acknowledged_json(a: &Acknowledged) -> serde_json::Value {
    let d = &a.diagnostic;
    serde_json::json!({
        "record": "acknowledged",
        "code": d.code,
        "path": d.path.as_ref().map(|p| p.display().to_string()),
        "line": d.span.map(|s| s.start.line),
        "col": d.span.map(|s| s.start.col),
        "message": d.message,
        "reason": a.reason,
        "allow_line": a.allow_span.start.line,
    })
}

/// Appends the job summary: the checks table and the planned rows per config (markdown).
/// A summary that cannot be written is reported on stderr; the verdict stands.
fn write_step_summary(path: &Path, report: &Report) {
    use std::io::Write;
    let mut md = String::from(
        "### cargo xtask validate\n\n| check | verdict | time | scope |\n| --- | --- | --- | --- |\n",
    );
    for c in &report.checks {
        let verdict = match &c.status {
            Status::Skipped(why) => format!("skipped ({why})"),
            Status::Ran => c.verdict(),
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.name,
            binding::md_escape(&verdict),
            format_duration(c.elapsed),
            binding::md_escape(&c.scope)
        ));
    }
    let errors: usize = report.checks.iter().map(|c| c.count(Severity::Error)).sum();
    md.push_str(&format!(
        "\n**validate: {}** ({errors} error{}{})\n",
        if errors == 0 { "passed" } else { "FAILED" },
        plural(errors),
        acknowledged_suffix(report.acknowledged.len())
    ));
    if !report.bindings.is_empty() {
        md.push_str("\n### Planned rows → recipe variants\n");
        md.push_str(&binding::markdown_tables(&report.bindings));
    }
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut f| f.write_all(md.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "warning: cannot write the job summary {}: {e}",
            path.display()
        );
    }
}

pub fn summary_text(report: &Report) -> String {
    let mut s = String::new();
    for c in &report.checks {
        s.push_str(&c.summary_line());
        s.push('\n');
    }
    let errors: usize = report.checks.iter().map(|c| c.count(Severity::Error)).sum();
    let warnings: usize = report
        .checks
        .iter()
        .map(|c| c.count(Severity::Warning))
        .sum();
    s.push_str(&format!(
        "validate: {} ({errors} error{}, {warnings} warning{}{}) in {}\n",
        if errors == 0 { "passed" } else { "FAILED" },
        plural(errors),
        plural(warnings),
        acknowledged_suffix(report.acknowledged.len()),
        format_duration(report.elapsed)
    ));
    s
}

/// One finding per fault: blank lines at the end of the changelog are the diff check's
/// `diff/blank-at-eof` and the changelog's `changelog/trailing-blank`; the changelog's
/// (which says what the append contract wants) is kept.
fn drop_repeated_faults(checks: &mut [CheckResult]) {
    let at = |d: &Diagnostic| (d.path.clone(), d.span.map(|s| s.start.line));
    let trailing: Vec<_> = checks
        .iter()
        .flat_map(|c| &c.diagnostics)
        .filter(|d| d.code == "changelog/trailing-blank")
        .map(at)
        .collect();
    if trailing.is_empty() {
        return;
    }
    for c in checks.iter_mut() {
        c.diagnostics
            .retain(|d| !(d.code == "diff/blank-at-eof" && trailing.contains(&at(d))));
    }
}

/// `, 1 acknowledged` when allow comments acknowledged warnings, else nothing.
fn acknowledged_suffix(n: usize) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(", {n} acknowledged")
    }
}

/// The `allow` step: reads the `# infx: allow(...)` comments of every YAML source in the
/// report, removes the warnings they acknowledge from their checks, and reports malformed,
/// misplaced and unused allows (README, "Acknowledging a warning").
fn apply_allows(
    checks: &mut [CheckResult],
    sources: &SourceMap,
) -> (CheckResult, Vec<Acknowledged>) {
    let t = Instant::now();
    let mut files: Vec<(&Path, &str)> = sources
        .iter()
        .filter(|(p, _)| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort_by(|a, b| a.0.cmp(b.0));
    let mut allows = Vec::new();
    let mut diagnostics = Vec::new();
    for (path, text) in files {
        let (a, d) = infx_report::allow::allows_in(path, text);
        allows.extend(a);
        diagnostics.extend(d);
    }
    let ran: Vec<&'static str> = checks
        .iter()
        .filter(|c| c.status == Status::Ran)
        .map(|c| c.name)
        .collect();
    let known: Vec<&'static str> = checks.iter().map(|c| c.name).collect();
    // A code's check is its prefix (`diff/…` belongs to `diff-check`); a prefix no step is
    // named after (`pr/…`) counts as run, so its unused allows are still reported.
    let step_of = |prefix: &str, names: &[&'static str]| {
        names
            .iter()
            .any(|n| *n == prefix || n.strip_prefix(prefix).is_some_and(|r| r.starts_with('-')))
    };
    let outcome = infx_report::allow::acknowledge(
        checks.iter_mut().map(|c| &mut c.diagnostics),
        &allows,
        |prefix| step_of(prefix, &ran) || !step_of(prefix, &known),
    );
    diagnostics.extend(outcome.problems);
    let n = outcome.acknowledged.len();
    let check = CheckResult {
        name: "allow",
        status: Status::Ran,
        diagnostics,
        elapsed: t.elapsed(),
        scope: format!(
            "{} allow comment{}, {n} acknowledged",
            allows.len(),
            plural(allows.len())
        ),
    };
    (check, outcome.acknowledged)
}

/// Options of one run, independent of the command line (tests build these directly).
#[derive(Debug, Clone)]
pub struct Options {
    pub root: PathBuf,
    pub base: Option<String>,
    pub all: bool,
    pub online: bool,
    pub hermetic: bool,
    /// The PR's labels (`--labels`); `None` = unknown (then the event's, if any).
    pub labels: Option<Vec<String>>,
    /// The PR number (`--pr`); `None` = the event's, if any.
    pub pr: Option<u64>,
    /// A `pull_request` event payload (GitHub Actions).
    pub event: Option<PathBuf>,
}

impl Options {
    /// A run of `root` with the defaults (change-scoped, offline, no PR context).
    pub fn new(root: impl Into<PathBuf>) -> Options {
        Options {
            root: root.into(),
            base: None,
            all: false,
            online: false,
            hermetic: false,
            labels: None,
            pr: None,
            event: None,
        }
    }
}

/// Runs every check. Never panics on repository content; problems become diagnostics.
pub fn validate(opts: &Options) -> Report {
    let started = Instant::now();
    let mut checks = Vec::new();
    let root = opts
        .root
        .canonicalize()
        .unwrap_or_else(|_| opts.root.clone());

    // change: what the contribution touches (git), or the fallback for a clean clone.
    let t = Instant::now();
    let change = detect_change(&root, opts);
    checks.push(CheckResult {
        name: "change",
        status: Status::Ran,
        diagnostics: change.diagnostics.clone(),
        elapsed: t.elapsed(),
        scope: change.describe(),
    });

    // The PR: --labels / --pr, else the pull_request event payload (GitHub Actions).
    let t = Instant::now();
    let mut event_diags = Vec::new();
    let event = match opts.event.as_deref().map(pr::read_event) {
        Some(Ok(e)) => e,
        Some(Err(d)) => {
            event_diags.push(d);
            None
        }
        None => None,
    };
    let pr_number = opts.pr.or(event.as_ref().and_then(|e| e.number));
    let pr_context = match (&opts.labels, &event) {
        (Some(labels), _) => Some(infx_changelog::labels::PrContext {
            labels: labels.clone(),
            ..Default::default()
        }),
        (None, Some(e)) => Some(infx_changelog::labels::PrContext {
            labels: e.labels.clone(),
            ci_event: true,
            ..Default::default()
        }),
        (None, None) => None,
    }
    .map(|mut p| {
        // Upstream reads the PR head's message (the checkout is GitHub's merge commit).
        p.skip_sweep = event
            .as_ref()
            .and_then(|e| e.head_sha.as_deref())
            .and_then(|sha| change.commit_message(sha))
            .is_some_and(|m| m.contains(infx_changelog::labels::SKIP_SWEEP));
        p
    });
    let event_elapsed = t.elapsed();

    // diff-check needs only the change: run it beside everything else.
    std::thread::scope(|scope| {
        let diff_thread = scope.spawn(|| {
            let t = Instant::now();
            let result = check_diff(&change);
            CheckResult {
                elapsed: t.elapsed(),
                ..result
            }
        });

        // yaml: every YAML file in scope parses, once; later checks reuse these documents. Scope:
        // the whole tree when the change is not known (clean clone, no git, --all); otherwise the
        // inputs every check needs plus every changed YAML file, and (below) the recipes of the
        // configs the change touches. perf-changelog.yaml is parsed by the changelog check.
        let t = Instant::now();
        let whole_tree = opts.all || change.mode != ChangeMode::Change;
        let mut walk_diags = Vec::new();
        let files = if whole_tree {
            let changelog = root.join("perf-changelog.yaml");
            yaml_files(&root, &mut walk_diags)
                .into_iter()
                .filter(|p| *p != changelog)
                .collect()
        } else {
            scoped_yaml_files(&root, &change, &mut walk_diags)
        };
        let (mut docs, mut yaml_diags, mut raw_sources) = parse_files(&files);
        yaml_diags.extend(walk_diags);
        let mut yaml_files_count = files.len();
        let mut yaml_elapsed = t.elapsed();

        // config: every master entry and runners.yaml against every rule.
        let t = Instant::now();
        let masters: Vec<Document> = ["configs/nvidia-master.yaml", "configs/amd-master.yaml"]
            .iter()
            .filter_map(|r| take_doc(&mut docs, &root.join(r)))
            .collect();
        let runners_doc = take_doc(&mut docs, &root.join("configs/runners.yaml"));
        let masters_missing = [
            "configs/nvidia-master.yaml",
            "configs/amd-master.yaml",
            "configs/runners.yaml",
        ]
        .iter()
        .any(|r| !root.join(r).is_file());
        let mut loaded = if masters_missing {
            infx_config::load_tree(&root)
        } else {
            infx_config::from_documents(masters, runners_doc, root.clone())
        };
        let config_diags = infx_config::check(&loaded);
        let config_failed = config_diags
            .iter()
            .any(|d| d.is_error() && d.code != "config/X5");
        let config_check = CheckResult {
            name: "config",
            status: Status::Ran,
            diagnostics: config_diags,
            elapsed: t.elapsed(),
            scope: format!("{} entries", loaded.entries.len()),
        };

        // changelog: append-only against the base; new entries valid; their keys resolve.
        let t = Instant::now();
        let modifiers = infx_changelog::labels::modifiers(
            pr_context.as_ref().map_or(&[][..], |p| &p.labels[..]),
        );
        let (changelog_result, changelog_scope) =
            check_changelog(&root, &change, &loaded, modifiers);
        let changelog_check = CheckResult {
            elapsed: t.elapsed(),
            ..changelog_result
        };

        // coverage: every config the change can benchmark differently has an appended entry
        // that plans a row for it; labels: the PR starts exactly one sweep.
        let t = Instant::now();
        let impact = if config_failed {
            Default::default()
        } else {
            contribution::change_impact(&root, &change, &loaded)
        };
        let coverage = if config_failed {
            skipped("coverage", "master configs have errors; fix those first")
        } else {
            contribution::check_coverage(
                &change,
                &mut loaded,
                &changelog_scope,
                &impact,
                modifiers,
                pr_number,
            )
        };
        let coverage_check = CheckResult {
            elapsed: t.elapsed(),
            ..coverage
        };
        let t = Instant::now();
        let mut labels = contribution::check_pr_labels(
            pr_context.as_ref(),
            !changelog_scope.appended.is_empty(),
            &impact,
        );
        labels.diagnostics.extend(event_diags.iter().cloned());
        let labels_check = CheckResult {
            elapsed: t.elapsed() + event_elapsed,
            ..labels
        };
        let touched = touched_keys(&root, &change, &loaded, &changelog_scope.keys, opts.all);
        if !whole_tree {
            // The recipes of the touched configs join the parsed set (for review and images).
            let t = Instant::now();
            let extra: Vec<PathBuf> = recipe_paths(&root, &loaded, touched.as_deref())
                .into_iter()
                .filter(|p| p.is_file() && !files.contains(p))
                .collect();
            let (more, d, raw) = parse_files(&extra);
            docs.extend(more);
            yaml_diags.extend(d);
            raw_sources.extend(raw);
            yaml_files_count += extra.len();
            yaml_elapsed += t.elapsed();
        }
        checks.push(CheckResult {
            name: "yaml",
            status: Status::Ran,
            diagnostics: yaml_diags,
            elapsed: yaml_elapsed,
            scope: format!(
                "{yaml_files_count} files{}",
                if whole_tree {
                    ""
                } else {
                    " in the change's scope"
                }
            ),
        });
        checks.push(config_check);
        checks.push(changelog_check);
        checks.push(coverage_check);
        checks.push(labels_check);

        // matrix: rows for the touched configs; every point binds exactly one recipe variant.
        // The bindings of the configs the change impacts or its entries name are shown.
        let t = Instant::now();
        let mut bindings = Vec::new();
        let mut shown: Vec<String> = impact.keys.iter().map(|k| k.key.clone()).collect();
        for k in &changelog_scope.keys {
            if !shown.contains(k) {
                shown.push(k.clone());
            }
        }
        let matrix = if config_failed {
            skipped("matrix", "master configs have errors; fix those first")
        } else {
            match (&touched, loaded.runners.as_ref()) {
                (_, None) => skipped("matrix", "no configs/runners.yaml"),
                (Some(keys), _) if keys.is_empty() => {
                    skipped("matrix", "no config touched by the change")
                }
                (keys, Some(rdoc)) => {
                    match infx_matrix::MasterConfigs::from_documents(&loaded.masters) {
                        Ok(configs) => {
                            let mut runners = infx_matrix::Runners::from_node(&rdoc.root);
                            runners.tree_root = Some(root.clone());
                            let (d, records) = bind_with_records(
                                &configs,
                                &runners,
                                keys.as_deref(),
                                &root,
                                &shown,
                            );
                            bindings = records;
                            ran(
                                "matrix",
                                d,
                                scope_of_keys(keys.as_deref(), loaded.entries.len()),
                            )
                        }
                        Err(d) => ran("matrix", vec![d], String::new()),
                    }
                }
            }
        };
        checks.push(CheckResult {
            elapsed: t.elapsed(),
            ..matrix
        });

        // recipe: every variant of every recipe the touched configs use passes the dry-run.
        let t = Instant::now();
        let recipe = check_recipes(&root, &loaded, touched.as_deref());
        checks.push(CheckResult {
            elapsed: t.elapsed(),
            ..recipe
        });

        // image: every image reference digest-pinned (offline); --online: the registry agrees.
        let t = Instant::now();
        let mut sites = Vec::new();
        let mut image_diags = Vec::new();
        for doc in loaded
            .masters
            .iter()
            .chain(docs.iter().filter(|d| is_image_bearing(&root, &d.path)))
        {
            let (s, d) = infx_image::sites_in(doc);
            sites.extend(s);
            image_diags.extend(d);
        }
        image_diags.extend(infx_image::check_offline(&sites));
        let image_scope = format!(
            "{} references{}",
            sites.len(),
            if opts.online { ", online" } else { ", offline" }
        );
        if opts.online {
            #[cfg(feature = "registry")]
            image_diags.extend(steps::check_images_online(&sites, opts.hermetic));
            // The CLI hands `--online` to the registry build (README, "What builds when"); a
            // caller that still asks this build gets a finding, never a silent pass.
            #[cfg(not(feature = "registry"))]
            image_diags.push(Diagnostic::error(
                "image/registry",
                "the online image check needs the registry client, which this build of xtask lacks",
            ).with_help("run `cargo xtask validate --online`, or build xtask with its default features"));
        }
        checks.push(CheckResult {
            name: "image",
            status: Status::Ran,
            diagnostics: image_diags,
            elapsed: t.elapsed(),
            scope: image_scope,
        });

        // diff-check (started on its own thread above).
        let diff = diff_thread.join().unwrap_or_else(|_| {
            let d = Diagnostic::error("diff/internal", "the diff check failed unexpectedly");
            ran("diff-check", vec![d], String::new())
        });
        checks.push(diff);

        // Show paths relative to the repository (what GitHub annotations need) or the tree's parent.
        let display_base = change.repo_root.clone().unwrap_or_else(|| {
            root.parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| root.clone())
        });
        let mut sources = SourceMap::new();
        for doc in docs
            .iter()
            .chain(&loaded.masters)
            .chain(loaded.runners.as_ref())
        {
            sources.insert(relative_to(&display_base, &doc.path), doc.text.to_string());
        }

        // review: the repository-decidable reviewer checks (last: it takes the documents).
        let t = Instant::now();
        // Check 3 (docs/review.md): touched configs that have a cookbook file.
        let cookbook = infx_review::cookbook::check_configs(
            &root,
            &loaded.masters,
            loaded.runners.as_ref(),
            touched.as_deref(),
        );
        let mut review = check_review(
            &root,
            pr_number,
            std::mem::take(&mut loaded.masters),
            docs,
            changelog_scope.append_only,
            &change,
        );
        review.diagnostics.extend(cookbook);
        checks.push(CheckResult {
            elapsed: t.elapsed(),
            ..review
        });

        for (p, text) in raw_sources {
            sources.insert(relative_to(&display_base, &p), text);
        }
        for c in &mut checks {
            for d in &mut c.diagnostics {
                if let Some(p) = &d.path {
                    // Relative paths are tree-relative (most checks) or repository-relative
                    // (diff-check): whichever names a file, so its source lines are shown.
                    let abs = if p.is_absolute() {
                        p.clone()
                    } else if root.join(p).exists() {
                        root.join(p)
                    } else {
                        display_base.join(p)
                    };
                    let shown = if abs.exists() || p.is_absolute() {
                        relative_to(&display_base, &abs)
                    } else {
                        p.clone()
                    };
                    if !sources.contains(&shown)
                        && let Ok(text) = infx_fs::read_to_string(&abs)
                    {
                        sources.insert(&shown, text);
                    }
                    d.path = Some(shown);
                }
            }
        }
        drop_repeated_faults(&mut checks);
        let (allow_check, acknowledged) = apply_allows(&mut checks, &sources);
        checks.push(allow_check);
        Report {
            checks,
            impact,
            bindings,
            acknowledged,
            sources: SourceMapHolder(sources),
            elapsed: started.elapsed(),
        }
    })
}

/// The matrix step's binding (as `infx_matrix::bind::bind_configs`) plus the records of the
/// points whose config is in `shown`.
fn bind_with_records(
    configs: &infx_matrix::MasterConfigs<'_>,
    runners: &infx_matrix::Runners<'_>,
    keys: Option<&[String]>,
    root: &Path,
    shown: &[String],
) -> (Vec<Diagnostic>, Vec<binding::BindingRecord>) {
    let selection = match keys {
        Some(k) => infx_matrix::Selection::TestConfig(infx_matrix::TestConfig {
            config_keys: k.to_vec(),
            ..Default::default()
        }),
        None => infx_matrix::Selection::FullSweep(infx_matrix::FullSweep::default()),
    };
    let opts = infx_matrix::Options {
        selection,
        evals: infx_matrix::EvalMode::None,
        runner_node_filter: None,
        scenario_types: None,
    };
    match infx_matrix::expand_with_origins(configs, runners, &opts) {
        Ok(points) => binding::bind_and_record(&points, root, shown),
        Err(d) => (vec![d], Vec::new()),
    }
}

fn ran(name: &'static str, diagnostics: Vec<Diagnostic>, scope: String) -> CheckResult {
    CheckResult {
        name,
        status: Status::Ran,
        diagnostics,
        elapsed: Duration::ZERO,
        scope,
    }
}

fn skipped(name: &'static str, why: &str) -> CheckResult {
    CheckResult {
        name,
        status: Status::Skipped(why.to_string()),
        diagnostics: Vec::new(),
        elapsed: Duration::ZERO,
        scope: String::new(),
    }
}

fn scope_of_keys(keys: Option<&[String]>, total: usize) -> String {
    match keys {
        None => format!("all {total} configs"),
        Some(k) if k.len() <= 3 => k.join(", "),
        Some(k) => format!("{} configs", k.len()),
    }
}

/// Parses `files`; returns the documents, the errors, and the raw text of files that failed
/// (so their diagnostics can still show the source line).
#[allow(clippy::type_complexity)]
fn parse_files(files: &[PathBuf]) -> (Vec<Document>, Vec<Diagnostic>, Vec<(PathBuf, String)>) {
    let mut docs = Vec::with_capacity(files.len());
    let mut diags = Vec::new();
    let mut raw = Vec::new();
    for (f, loaded) in files.iter().zip(parse_all(files)) {
        match loaded {
            Ok(doc) => docs.push(doc),
            Err(d) => {
                if let Ok(text) = infx_fs::read_to_string(f) {
                    raw.push((f.clone(), text));
                }
                diags.push(d);
            }
        }
    }
    (docs, diags, raw)
}

/// Removes and returns the document parsed from `path`.
fn take_doc(docs: &mut Vec<Document>, path: &Path) -> Option<Document> {
    let i = docs.iter().position(|d| d.path == path)?;
    Some(docs.remove(i))
}

/// The YAML a change-scoped run parses: the master configs, runners.yaml, the lane blocks, and
/// every changed YAML file that still exists.
fn scoped_yaml_files(
    root: &Path,
    change: &steps::ChangeInfo,
    diags: &mut Vec<Diagnostic>,
) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [
        "configs/nvidia-master.yaml",
        "configs/amd-master.yaml",
        "configs/runners.yaml",
    ]
    .iter()
    .map(|r| root.join(r))
    .filter(|p| p.is_file())
    .collect();
    files.extend(yaml_files(&root.join("configs/srt-recipes"), diags));
    // A set, not `files.contains`: a tree-wide change lists tens of thousands of paths.
    let mut listed: HashSet<PathBuf> = files.iter().cloned().collect();
    for rel in change.paths_under(root) {
        let p = root.join(&rel);
        let is_yaml = matches!(
            rel.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        if is_yaml && rel != Path::new("perf-changelog.yaml") && !listed.contains(&p) && p.is_file()
        {
            listed.insert(p.clone());
            files.push(p);
        }
    }
    files
}

/// Parses files on every core (they are independent); results in input order.
fn parse_all(files: &[PathBuf]) -> Vec<Result<Document, Diagnostic>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads < 2 || files.len() < 8 {
        return files.iter().map(|f| infx_yaml::load_file(f)).collect();
    }
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|f| infx_yaml::load_file(f))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(files.chunks(chunk))
            .flat_map(|(h, part)| {
                // A panicking parser thread is a bug; report it per file instead of aborting.
                h.join().unwrap_or_else(|_| {
                    part.iter()
                        .map(|f| {
                            Err(Diagnostic::error(
                                "yaml/internal",
                                "the YAML loader failed on this file",
                            )
                            .with_path(f))
                        })
                        .collect()
                })
            })
            .collect()
    })
}

/// `p` relative to `base` when it lies below it.
fn relative_to(base: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(base)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| p.to_path_buf())
}

/// Master configs and recipe files carry image references.
fn is_image_bearing(root: &Path, p: &Path) -> bool {
    let rel = relative_to(root, p);
    let s = rel.to_string_lossy();
    s.ends_with("-master.yaml") || s.starts_with("benchmarks/")
}
/// Every YAML file under `dir`; a folder that cannot be listed, a symlink out of the
/// repository or into its own ancestry, a FIFO: each is an error finding naming that path (its
/// files would otherwise silently drop out of the check; docs/security.md).
fn yaml_files(dir: &Path, diags: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let walk = infx_yaml::walk_yaml(dir);
    diags.extend(walk.problems.iter().map(infx_fs::FsError::to_diagnostic));
    walk.files
}
