//! `cargo xtask validate`: the main job. Finds what changed, runs every check that applies, and
//! reports diagnostics plus one summary line per check with its time.
//!
//! Loading (files, git) happens here; every check is a pure function in its library crate.

use crate::output::{self, Format};
use infx_report::Acknowledged;
use infx_report::{Diagnostic, Severity, SourceMap, sort_for_report};

pub mod baseline;
pub mod binding;
mod checks;
mod contribution;
mod inputs;
pub mod pr;
mod steps;
use inputs::Inputs;
// The review commands' load: validate's, over the whole tree or, for the cookbook comparison,
// the configs and their recipes (docs/architecture.md).
pub use inputs::{ConfigLoad, ReviewChange, ReviewLoad};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

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
    /// With --online: serve a registry name from another base URL, e.g.
    /// `docker.io=http://127.0.0.1:5000` (repeatable; validated as `pin` validates it).
    #[arg(
        long = "registry-override",
        value_name = "NAME=URL",
        requires = "online"
    )]
    pub registry_overrides: Vec<String>,
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
    /// Also list, one by one, the findings the base revision already had (by default they
    /// are counted in one summary line and do not fail the run; docs/baseline.md).
    #[arg(long)]
    pub show_baseline: bool,
    /// A `pull_request` event payload to read labels, PR number and head commit from (default
    /// inside GitHub Actions on a pull_request event: $GITHUB_EVENT_PATH).
    #[arg(long)]
    pub event: Option<PathBuf>,
    /// The reviewer checklist the review rules follow: `auto` that of the tree's own layout;
    /// `oct` also runs the October-only rules on an [Aug] tree (docs/review.md, "Rules carry
    /// their checklist").
    #[arg(long, value_enum, default_value_t = Checklist::Auto)]
    pub checklist: Checklist,
}

/// Which reviewer checklist the review rules follow (docs/review.md, "Rules carry their
/// checklist").
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Checklist {
    /// The checklist of the tree's own layout: [Aug] trees without the October-only rules.
    #[default]
    Auto,
    /// The August checklist, whatever the layout.
    Aug,
    /// The October checklist, whatever the layout.
    Oct,
}

impl Checklist {
    /// Whether the August checklist applies to a tree of `dialect`.
    pub fn is_aug(self, dialect: infx_config::Dialect) -> bool {
        match self {
            Checklist::Auto => dialect == infx_config::Dialect::Aug,
            Checklist::Aug => true,
            Checklist::Oct => false,
        }
    }
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
    /// Findings of `sev` that count: all of them, less those the base already had.
    fn count(&self, sev: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == sev && !is_unchanged(d))
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
    pub impact: infx_changelog::Impact,
    /// Every planned point of the configs in view → the recipe variant it selects.
    pub bindings: Vec<binding::BindingRecord>,
    /// Warnings an `# infx: allow(...)` comment acknowledged (counted, not shown).
    pub acknowledged: Vec<Acknowledged>,
    pub sources: SourceMapHolder,
    /// The comparison with the base (`None` without a change, or with no finding to compare).
    pub baseline: Option<baseline::Baseline>,
    pub elapsed: Duration,
}

/// The most findings of one code a report lists (docs/security.md, "Budgets and read paths,
/// with their tests"): 5,000, ten times the most one code has on a real tree (510
/// `image/tag-only` on the August tree with `--all`); 10^5 appended entries printed 25 MB.
pub const MAX_DIAGNOSTICS_PER_CODE: usize = 5_000;

/// Keeps the first [`MAX_DIAGNOSTICS_PER_CODE`] findings of each code (in report order) and
/// says, in one `validate/truncated` note per code at the first one left out, how many more
/// there are. Only the listing is cut: the verdict is the report's, over every finding.
pub fn cap_per_code(diags: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<infx_report::Code, usize> = HashMap::new();
    let mut first_dropped: Vec<(infx_report::Code, Diagnostic)> = Vec::new();
    diags.retain(|d| {
        let n = seen.entry(d.code).or_default();
        *n += 1;
        if *n == MAX_DIAGNOSTICS_PER_CODE + 1 {
            first_dropped.push((d.code, d.clone()));
        }
        *n <= MAX_DIAGNOSTICS_PER_CODE
    });
    for (code, first) in first_dropped {
        let more = seen.get(&code).copied().unwrap_or(0) - MAX_DIAGNOSTICS_PER_CODE;
        let mut note = Diagnostic::note(
            crate::codes::VALIDATE_TRUNCATED,
            format!(
                "{more} more `{code}` findings not listed (at most {MAX_DIAGNOSTICS_PER_CODE} per code); the verdict counts them all"
            ),
        );
        if let Some(p) = &first.path {
            note = match first.span {
                Some(s) => note.at(p, s),
                None => note.with_path(p),
            };
        }
        diags.push(note);
    }
}

/// A finding the base revision already had (docs/baseline.md).
pub(crate) fn is_unchanged(d: &Diagnostic) -> bool {
    d.baseline == Some(infx_report::BaselineState::Unchanged)
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
    /// Whether an error fails the run: any error, except those the base already had.
    pub fn has_errors(&self) -> bool {
        self.checks
            .iter()
            .any(|c| c.diagnostics.iter().any(Diagnostic::fails))
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
    let registry_overrides =
        match crate::registry_override::parse_overrides(&args.registry_overrides) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
        };
    let opts = Options {
        root: args.root.clone(),
        base: args.base.clone(),
        all: args.all,
        online: args.online,
        registry_overrides,
        hermetic,
        labels: args.labels.map(label_names),
        pr: args.pr,
        event: args.event.or_else(pr::event_path_from_env),
        no_repository: false,
        display_root: None,
        scope: None,
        checklist: args.checklist,
    };
    let (report, inputs) = validate_keeping_inputs(&opts);
    // The process ends right after printing: the OS reclaims the parsed tree at once, far
    // faster than dropping it node by node (docs/performance.md, "Whole tree and one-config change").
    std::mem::forget(inputs);
    let mut diags = report.diagnostics();
    // Annotations and the human report show what the change introduced; JSON and SARIF carry
    // every finding with its state (docs/baseline.md, "Formats").
    let listed = match args.format {
        Format::Human => !args.show_baseline,
        Format::Github => true,
        Format::Json | Format::Sarif => false,
    };
    if listed {
        diags.retain(|d| !is_unchanged(d));
    }
    cap_per_code(&mut diags);
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
        // The verdict is the report's last line, where eyes and scripts look (the binding
        // table comes before the step summary; docs/matrix.md, "Binding").
        Format::Human => {
            crate::hygiene::print_stdout(&crate::hygiene::escape_lines(&binding::human_table(
                &report.bindings,
            )));
            crate::hygiene::print_stdout(&summary);
        }
        Format::Github => {
            crate::hygiene::print_stdout(&summary);
            if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
                write_step_summary(Path::new(&path), &report);
            }
        }
    }
    let code = if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    // As for the inputs above: the report's source texts are freed by the exit.
    std::mem::forget(report);
    Ok(code)
}

/// The label names of `--labels a, b`: each trimmed (GitHub trims label names, and a space
/// after the comma is how people write lists), empty ones dropped.
fn label_names(labels: Vec<String>) -> Vec<String> {
    labels
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// One impacted config as a JSON record (README, `--format json`).
fn impact_json(k: &infx_changelog::Impacted) -> serde_json::Value {
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
        "line": d.span.map(|s| s.start.line()),
        "col": d.span.map(|s| s.start.col()),
        "message": d.message,
        "reason": a.reason,
        "allow_line": a.allow_span.start.line(),
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
    if let Some(line) = report
        .baseline
        .as_ref()
        .and_then(baseline::Baseline::summary_line)
    {
        s.push_str(&line);
        s.push('\n');
    }
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

/// One finding per fault (docs/architecture.md, "One finding per cause"): blank lines at the
/// end of the changelog are the diff check's `diff/blank-at-eof` and the changelog's
/// `changelog/trailing-blank`; whitespace added to a historical changelog line is the diff
/// check's `diff/trailing-whitespace` (or another whitespace rule) and the changelog's
/// `changelog/history-bytes` on that line. The changelog's, which says what the append
/// contract wants (restore the base bytes, which also removes the whitespace), is kept.
fn drop_repeated_faults(checks: &mut [CheckResult]) {
    use infx_diff::codes as diff;
    const WHITESPACE: [infx_report::Code; 4] = [
        diff::TRAILING_WHITESPACE,
        diff::SPACE_BEFORE_TAB,
        diff::INDENT_WITH_NON_TAB,
        diff::TAB_IN_INDENT,
    ];
    let at = |d: &Diagnostic| (d.path.clone(), d.span.map(|s| s.start.line()));
    let owned = |code| -> Vec<_> {
        checks
            .iter()
            .flat_map(|c| &c.diagnostics)
            .filter(|d| d.code == code)
            .map(at)
            .collect()
    };
    let trailing = owned(infx_changelog::codes::TRAILING_BLANK);
    let history = owned(infx_changelog::codes::HISTORY_BYTES);
    if trailing.is_empty() && history.is_empty() {
        return;
    }
    for c in checks.iter_mut() {
        c.diagnostics.retain(|d| {
            let repeats_blank = d.code == diff::BLANK_AT_EOF && trailing.contains(&at(d));
            let repeats_history = WHITESPACE.contains(&d.code) && history.contains(&at(d));
            !(repeats_blank || repeats_history)
        });
    }
}

/// `, 1 acknowledged` when allow comments acknowledged warnings, else nothing.
pub(crate) fn acknowledged_suffix(n: usize) -> String {
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
    let ran: Vec<&'static str> = checks
        .iter()
        .filter(|c| c.status == Status::Ran)
        .map(|c| c.name)
        .collect();
    let allowed = acknowledge_allowed(checks.iter_mut().map(|c| &mut c.diagnostics), sources, &ran);
    let n = allowed.acknowledged.len();
    let check = CheckResult {
        name: "allow",
        status: Status::Ran,
        diagnostics: allowed.problems,
        elapsed: t.elapsed(),
        scope: format!(
            "{} allow comment{}, {n} acknowledged",
            allowed.comments,
            plural(allowed.comments)
        ),
    };
    (check, allowed.acknowledged)
}

/// What the allow comments did to a set of findings.
pub(crate) struct Allowed {
    /// Malformed, misplaced and unused allows.
    pub problems: Vec<Diagnostic>,
    pub acknowledged: Vec<Acknowledged>,
    /// How many allow comments the sources hold.
    pub comments: usize,
}

/// Applies the allow comments of every YAML source in `sources` to `groups` (findings named
/// by the paths `sources` uses), removing the warnings they acknowledge. `ran` names the
/// checks of [`checks::CHECKS`] whose findings `groups` holds: an allow for a check that did
/// not run is not reported unused. Validate's allow step and the review commands use it.
pub(crate) fn acknowledge_allowed<'a>(
    groups: impl IntoIterator<Item = &'a mut Vec<Diagnostic>>,
    sources: &SourceMap,
    ran: &[&str],
) -> Allowed {
    let mut files: Vec<(&Path, &str)> = sources
        .iter()
        .filter(|(p, _)| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort_by(|a, b| a.0.cmp(b.0));
    let mut allows = Vec::new();
    let mut problems = Vec::new();
    for (path, text) in files {
        let (a, d) = infx_report::allows_in(path, text);
        allows.extend(a);
        problems.extend(d);
    }
    let known: Vec<&str> = checks::CHECKS.iter().map(|c| c.name).collect();
    // A code's check is its prefix (`diff/…` belongs to `diff-check`); a prefix no step is
    // named after (`pr/…`) counts as run, so its unused allows are still reported.
    let step_of = |prefix: &str, names: &[&str]| {
        names
            .iter()
            .any(|n| *n == prefix || n.strip_prefix(prefix).is_some_and(|r| r.starts_with('-')))
    };
    let outcome = infx_report::acknowledge(groups, &allows, |prefix| {
        step_of(prefix, ran) || !step_of(prefix, &known)
    });
    problems.extend(outcome.problems);
    Allowed {
        problems,
        acknowledged: outcome.acknowledged,
        comments: allows.len(),
    }
}

/// Options of one run, independent of the command line (tests build these directly).
#[derive(Debug, Clone)]
pub struct Options {
    pub root: PathBuf,
    pub base: Option<String>,
    pub all: bool,
    pub online: bool,
    /// `--registry-override` for the online image check (NAME → base URL, validated).
    pub registry_overrides: std::collections::BTreeMap<String, String>,
    pub hermetic: bool,
    /// The PR's labels (`--labels`); `None` = unknown (then the event's, if any).
    pub labels: Option<Vec<String>>,
    /// The PR number (`--pr`); `None` = the event's, if any.
    pub pr: Option<u64>,
    /// A `pull_request` event payload (GitHub Actions).
    pub event: Option<PathBuf>,
    /// Read the tree as files only: no enclosing repository is searched for, so there is no
    /// change and the whole tree is judged (the base's export, docs/baseline.md).
    pub no_repository: bool,
    /// The folder findings are named relative to, instead of the repository (or, outside git,
    /// the tree's parent): the base's export names its files as the repository does.
    pub display_root: Option<PathBuf>,
    /// Check exactly this scope instead of the one a change gives (the base's run checks what
    /// the head's run checked, docs/baseline.md, "Scope").
    pub scope: Option<RunScope>,
    /// The reviewer checklist the review rules follow.
    pub checklist: Checklist,
}

/// A run's scope, as the head's change gave it: the YAML files parsed and the configs in view.
#[derive(Debug, Clone, Default)]
pub struct RunScope {
    /// Tree-relative paths of the files parsed (a file missing from the tree is left out).
    pub files: Vec<PathBuf>,
    /// The configs the change touches; `None` = every config.
    pub touched: Option<Vec<String>>,
    /// Parses another run made of files with the same bytes (the head's, for the base's run).
    pub reuse: Option<std::sync::Arc<infx_yaml::Reuse>>,
    /// The checks to run (`None` = all): the base's run needs only those whose findings the
    /// head has, the others' findings would match nothing (docs/baseline.md, "Cost").
    pub checks: Option<Vec<&'static str>>,
}

impl Options {
    /// A run of `root` with the defaults (change-scoped, offline, no PR context).
    pub fn new(root: impl Into<PathBuf>) -> Options {
        Options {
            root: root.into(),
            base: None,
            all: false,
            online: false,
            registry_overrides: Default::default(),
            hermetic: false,
            labels: None,
            pr: None,
            event: None,
            no_repository: false,
            display_root: None,
            scope: None,
            checklist: Checklist::Auto,
        }
    }

    /// Whether every file and config is in view: `--all`, or no change (outside git, a clean
    /// clone's stand-in) unless an explicit scope says otherwise.
    pub(crate) fn whole_tree(&self, mode: &steps::ChangeMode) -> bool {
        self.all || (*mode != steps::ChangeMode::Change && self.scope.is_none())
    }
}

/// Runs every check: load once, run the table, then the report-wide steps (paths, allows).
/// Never panics on repository content; problems become diagnostics.
pub fn validate(opts: &Options) -> Report {
    validate_keeping_inputs(opts).0
}

/// [`validate`], also handing back the parsed inputs, so that a caller about to exit can skip
/// freeing them (docs/performance.md: freeing the August tree's documents is ~3 % of a run).
fn validate_keeping_inputs(opts: &Options) -> (Report, Inputs) {
    let started = Instant::now();
    let mut inputs = Inputs::load(opts);
    let mut checks = Vec::with_capacity(checks::CHECKS.len() + 1);
    let mut bindings = Vec::new();
    // The base's findings beside the checks when the load already shows the comparison will
    // be needed: the checks read no file, so the head's reads are known (docs/baseline.md).
    let (results, early) = std::thread::scope(|s| {
        let early = baseline::starts_early(&inputs).then(|| s.spawn(|| baseline::early(&inputs)));
        let results = checks::run_all(&inputs);
        (results, early.and_then(|h| h.join().ok().flatten()))
    });
    for checked in results {
        checks.push(checked.result);
        bindings.extend(checked.bindings);
    }
    let sources = show_repository_paths(&inputs, &mut checks);
    drop_repeated_faults(&mut checks);
    let (allow_check, acknowledged) = apply_allows(&mut checks, &sources);
    checks.push(allow_check);
    let baseline = baseline::compare(&inputs, &mut checks, &sources, early);
    let report = Report {
        checks,
        impact: std::mem::take(&mut inputs.impact),
        bindings,
        acknowledged,
        sources: SourceMapHolder(sources),
        baseline,
        elapsed: started.elapsed(),
    };
    (report, inputs)
}

/// Rewrites each finding's path relative to the repository (what GitHub annotations need) or,
/// outside git, to the tree's parent, and returns the source texts those paths name.
fn show_repository_paths(inputs: &Inputs, checks: &mut [CheckResult]) -> SourceMap {
    let root = &inputs.root;
    let display_base = inputs
        .opts
        .display_root
        .clone()
        .or_else(|| inputs.change.repo_root.clone())
        .unwrap_or_else(|| {
            root.parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| root.clone())
        });
    let mut sources = SourceMap::new();
    for doc in inputs.documents() {
        sources.insert(relative_to(&display_base, &doc.path), doc.text.clone());
    }
    for (p, text) in &inputs.raw_sources {
        sources.insert(relative_to(&display_base, p), text.clone());
    }
    // Messages name files by the absolute paths the checks were given; the report shows them
    // relative to the same base as the locations, so it never echoes the machine's layout
    // (docs/security.md) and reads the same from any checkout.
    // As given and resolved (libgit2 names a work tree with a trailing `/`; a tree reached
    // through a symlink is canonical in the checks' paths).
    let mut prefixes: Vec<String> = [Some(display_base.clone()), display_base.canonicalize().ok()]
        .into_iter()
        .flatten()
        .map(|p| p.join("").display().to_string())
        .filter(|p| p.len() > 1)
        .collect();
    prefixes.dedup();
    let unprefix = |text: &mut String| {
        for prefix in &prefixes {
            if text.contains(prefix.as_str()) {
                *text = text.replace(prefix.as_str(), "");
            }
        }
    };
    let mut shown_paths: HashMap<PathBuf, PathBuf> = HashMap::new();
    let mut show = |d: &mut Diagnostic| {
        unprefix(&mut d.message);
        if let Some(help) = &mut d.help {
            unprefix(help);
        }
        d.notes.iter_mut().for_each(&unprefix);
        d.labels.iter_mut().for_each(|l| unprefix(&mut l.message));
        if let Some(p) = &d.path {
            // Hundreds of findings name the same few files: each path is resolved (two
            // `stat`s) and its text read once.
            let shown = match shown_paths.get(p) {
                Some(shown) => shown.clone(),
                None => {
                    let shown = shown_path(root, &display_base, p, &mut sources);
                    shown_paths.insert(p.clone(), shown.clone());
                    shown
                }
            };
            d.path = Some(shown);
        }
    };
    for c in checks {
        for d in &mut c.diagnostics {
            show(d);
            // A folded consequence is shown at its location like any finding.
            d.consequences.iter_mut().for_each(&mut show);
        }
    }
    sources
}

/// How a finding's path is shown, and its text added to `sources` when the file is readable.
/// Relative paths are tree-relative (most checks) or repository-relative (diff-check):
/// whichever names a file, so its source lines are shown.
fn shown_path(root: &Path, display_base: &Path, p: &Path, sources: &mut SourceMap) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else if root.join(p).exists() {
        root.join(p)
    } else {
        display_base.join(p)
    };
    let shown = if abs.exists() || p.is_absolute() {
        relative_to(display_base, &abs)
    } else {
        p.to_path_buf()
    };
    if !sources.contains(&shown)
        && let Ok(text) = infx_fs::read_to_string(&abs)
    {
        sources.insert(&shown, text);
    }
    shown
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

/// `p` relative to `base` when it lies below it.
fn relative_to(base: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(base)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_trimmed_and_empty_ones_dropped() {
        // `--labels 'full-sweep-fail-fast, evals-only'` dropped evals-only (issue #43).
        let given = ["full-sweep-fail-fast", " evals-only", " ", ""];
        assert_eq!(
            label_names(given.iter().map(|s| s.to_string()).collect()),
            ["full-sweep-fail-fast", "evals-only"]
        );
    }
}
