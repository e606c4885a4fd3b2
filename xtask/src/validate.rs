//! `cargo xtask validate`: the main job. Finds what changed, runs every check that applies, and
//! reports diagnostics plus one summary line per check with its time.
//!
//! Loading (files, git) happens here; every check is a pure function in its library crate.

use crate::output::{self, Format};
use infx_report::{Diagnostic, Severity, SourceMap, sort_for_report};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The benchmark tree to validate (its `configs/` holds the master configs).
    #[arg(long, default_value_os_t = crate::paths::default_tree())]
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
    /// The summary line: `  config      ok        3 files          0.4 ms`.
    pub fn summary_line(&self) -> String {
        let verdict = match &self.status {
            Status::Skipped(why) => format!("skipped ({why})"),
            Status::Ran => {
                let (e, w) = (self.count(Severity::Error), self.count(Severity::Warning));
                match (e, w) {
                    (0, 0) => "ok".to_string(),
                    (0, w) => format!("ok, {w} warning{}", plural(w)),
                    (e, 0) => format!("{e} error{}", plural(e)),
                    (e, w) => format!("{e} error{}, {w} warning{}", plural(e), plural(w)),
                }
            }
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

fn plural(n: usize) -> &'static str {
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
    };
    let report = validate(&opts);
    let diags = report.diagnostics();
    let rendered = output::render(&diags, &report.sources.0, args.format);
    print!("{rendered}");
    let summary = summary_text(&report);
    match args.format {
        // Machine formats keep stdout parseable; the summary goes to stderr.
        Format::Json => eprint!("{summary}"),
        Format::Human | Format::Github => print!("{summary}"),
    }
    Ok(if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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
        "validate: {} ({errors} error{}, {warnings} warning{}) in {}\n",
        if errors == 0 { "passed" } else { "FAILED" },
        plural(errors),
        plural(warnings),
        format_duration(report.elapsed)
    ));
    s
}

/// Options of one run, independent of the command line (tests build these directly).
#[derive(Debug, Clone)]
pub struct Options {
    pub root: PathBuf,
    pub base: Option<String>,
    pub all: bool,
    pub online: bool,
    pub hermetic: bool,
}

/// Runs every check. Never panics on repository content; problems become diagnostics.
pub fn validate(opts: &Options) -> Report {
    let started = Instant::now();
    let mut sources = SourceMap::new();
    let mut checks = Vec::new();

    // yaml: every YAML file of the tree parses (PyYAML-compatible, duplicate keys rejected).
    let t = Instant::now();
    let files = yaml_files(&opts.root);
    let mut diags = Vec::new();
    for f in &files {
        match infx_yaml::load_file(f) {
            Ok(doc) => sources.insert(display_path(&opts.root, f), doc.text.to_string()),
            Err(mut d) => {
                if let Ok(text) = std::fs::read_to_string(f) {
                    sources.insert(display_path(&opts.root, f), text);
                }
                d.path = Some(display_path(&opts.root, f));
                diags.push(d);
            }
        }
    }
    checks.push(CheckResult {
        name: "yaml",
        status: Status::Ran,
        diagnostics: diags,
        elapsed: t.elapsed(),
        scope: format!("{} files", files.len()),
    });

    for name in [
        "config",
        "changelog",
        "matrix",
        "recipe",
        "image",
        "diff-check",
        "review",
    ] {
        checks.push(CheckResult {
            name,
            status: Status::Skipped("NOT IMPLEMENTED YET".into()),
            diagnostics: vec![Diagnostic::error(
                "validate/not-implemented",
                format!("the {name} check is not implemented yet: nothing was verified"),
            )],
            elapsed: Duration::ZERO,
            scope: String::new(),
        });
    }
    Report {
        checks,
        sources: SourceMapHolder(sources),
        elapsed: started.elapsed(),
    }
}

/// The path shown to the user: relative to the tree's parent when possible (so
/// `inferencex-e2e/configs/…`), else as given.
pub fn display_path(root: &Path, file: &Path) -> PathBuf {
    let base = root.parent().unwrap_or(root);
    file.strip_prefix(base)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| file.to_path_buf())
}

/// Every `*.yaml`/`*.yml` under `root`, sorted, skipping hidden directories.
pub fn yaml_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in rd.flatten() {
            let p = entry.path();
            let name = entry.file_name();
            let hidden = name.to_string_lossy().starts_with('.');
            match entry.file_type() {
                Ok(ft) if ft.is_dir() && !hidden => stack.push(p),
                Ok(ft) if ft.is_file() => {
                    if matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
                        out.push(p);
                    }
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}
