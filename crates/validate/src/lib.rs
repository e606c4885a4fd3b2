//! The validate pipeline: finds what changed, loads what the checks read (data only), runs every
//! check that applies and builds the report: diagnostics plus one summary line per check with
//! its time (docs/architecture.md, "The validate pipeline"). A front end (xtask's CLI) parses
//! its arguments into [`Options`] and renders the [`Report`].

use infx_report::Acknowledged;
use infx_report::{Diagnostic, Severity, SourceMap, sort_for_report};

mod baseline;
mod beside;
mod binding;
mod checks;
pub mod codes;
mod contribution;
pub mod history;
mod inputs;
mod pipeline;
mod pr;
mod steps;
#[cfg(test)]
mod test_git;
use inputs::Inputs;
// The review commands' load: validate's, over the whole tree or, for the cookbook comparison,
// the configs and their recipes (docs/architecture.md).
pub use baseline::Baseline;
pub use binding::{
    BindingRecord, NOT_IN_TREE, bind_and_record, human_table, markdown_tables, md_escape,
};
pub use inputs::{ConfigLoad, ReviewChange, ReviewLoad};
pub use pr::{PrEvent, event_path_from_env, read_event};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Which reviewer checklist the review rules follow (docs/review.md, "Rules carry their
/// checklist").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
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
    pub fn count(&self, sev: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == sev && !is_unchanged(d))
            .count()
    }
    /// `ok`, `ok, 1 warning`, `2 errors`, … of a check that ran.
    pub fn verdict(&self) -> String {
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

pub fn plural(n: usize) -> &'static str {
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
            codes::TRUNCATED,
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
pub fn is_unchanged(d: &Diagnostic) -> bool {
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
pub fn acknowledged_suffix(n: usize) -> String {
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
pub struct Allowed {
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
pub fn acknowledge_allowed<'a>(
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
    /// The registry check `online` asks for, supplied by the front end with its client and
    /// credentials; without one, `online` is an error finding, never a silent pass.
    pub online_check: Option<OnlineCheck>,
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
    /// From how many added recipe files a change's recipes that no config references are
    /// checked as each is parsed, without keeping its tree (docs/performance.md, "Memory per
    /// added file"). The findings are the same either way; tests set it to compare the two.
    pub check_added_recipes_from: usize,
}

/// [`Options::check_added_recipes_from`]'s default: below it a change's recipe trees weigh
/// little, and its recipes are parsed beside the master configs, as every other changed file.
const CHECK_ADDED_RECIPES_FROM: usize = 64;

/// Verifies image references against their registries (`--online`), for a run's options
/// (`hermetic`, `registry_overrides`).
pub type OnlineCheck = fn(&[infx_image::ImageSite], &Options) -> Vec<Diagnostic>;

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
            online_check: None,
            registry_overrides: Default::default(),
            hermetic: false,
            labels: None,
            pr: None,
            event: None,
            no_repository: false,
            display_root: None,
            scope: None,
            checklist: Checklist::Auto,
            check_added_recipes_from: CHECK_ADDED_RECIPES_FROM,
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
pub fn validate_keeping_inputs(opts: &Options) -> (Report, Inputs) {
    let started = Instant::now();
    let (mut inputs, config) = pipeline::load(opts);
    let mut checks = Vec::with_capacity(checks::CHECKS.len() + 1);
    let mut bindings = Vec::new();
    // The base's findings beside the checks when the load already shows the comparison will
    // be needed: the checks read no file, so the head's reads are known (docs/baseline.md).
    // The base's run, the longer of the two, keeps this thread and its warm heap; the checks
    // take the fresh one (docs/performance.md, "Threads cost pages").
    let (results, early) = if baseline::starts_early(&inputs, &config) {
        std::thread::scope(|s| {
            let checking = s.spawn(|| checks::run_all(&inputs, &config));
            // A panic in the base's run costs the comparison its head start, not the run: the
            // comparison works the base out again (as when the early run was discarded).
            let early =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| baseline::early(&inputs)));
            let results = match checking.join() {
                Ok(results) => results,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            (results, early.ok().flatten())
        })
    } else {
        (checks::run_all(&inputs, &config), None)
    };
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
    let mut shown_paths: foldhash::HashMap<PathBuf, PathBuf> = Default::default();
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
    let shown = if p.is_absolute() || abs.exists() {
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
    /// The git layer (below infx-config) names the bundled tree's folder itself.
    #[test]
    fn the_bundled_tree_has_one_name() {
        assert_eq!(infx_config::layout::BUNDLED_TREE, infx_git::NESTED_ROOT);
    }
}
