//! `cargo xtask pin [--only REF|KEY…] [--refresh] [--check] [PATHS…]`: pin image references to
//! their multi-arch index digests, or verify existing pins.
//!
//! Which references a run pins (docs/image.md, "Commands"): those named by `--only`; else those not
//! pinned yet or changed since the base (the change validate checks), plus, with `--refresh`,
//! every pinned reference whose tag moved. A reference that cannot be pinned is reported and
//! the others are still written, all files of the run as one set (docs/security.md, "Pinning").

use crate::output::{self, Format};
use infx_image::VerifyOptions;
use infx_image::pin::{self, Plan};
use infx_image::{Client, ClientConfig, Credential, Platform};
use infx_report::{Diagnostic, Severity, SourceMap, sort_for_report};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files or directories to pin (default: the tree's master configs and recipes).
    pub paths: Vec<PathBuf>,
    /// The benchmark tree searched when no PATHS are given. Default: `inferencex-e2e/` of the
    /// git work tree enclosing the current directory, or that work tree itself when it has none.
    #[arg(long, default_value_os_t = crate::paths::default_tree(), hide_default_value = true)]
    pub root: PathBuf,
    /// Verify existing pins instead (HEAD requests only: no pull counted): tells "tag moved",
    /// "digest gone" and "digest is a platform manifest" apart.
    #[arg(long)]
    pub check: bool,
    /// With --check: also GET each index (one pull each) to verify its bytes and platform list.
    #[arg(long, requires = "check")]
    pub deep: bool,
    /// Show what would change, write nothing.
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,
    /// Pin only these references (as written, with or without their digest, e.g.
    /// `lmsysorg/sglang:v0.5.9`) or the images of these master config keys (repeatable).
    #[arg(long, value_name = "REF|KEY", conflicts_with = "check")]
    pub only: Vec<String>,
    /// Also re-pin references outside the change whose tag moved (listed before writing).
    /// Without it, pinned references the change does not touch are left as they are.
    #[arg(long, conflicts_with_all = ["check", "only"])]
    pub refresh: bool,
    /// The revision the change is compared with, to find the references it touches (as
    /// validate's --base; default: the merge-base with the upstream branch).
    #[arg(long, value_name = "REV", conflicts_with = "check")]
    pub base: Option<String>,
    /// A platform the index must cover (repeatable). Default: linux/amd64 and linux/arm64.
    #[arg(long = "platform", value_name = "OS/ARCH[/VARIANT]")]
    pub platforms: Vec<String>,
    /// Serve a registry name from another base URL, e.g. `docker.io=http://127.0.0.1:5000`
    /// (repeatable). The only way to use plain HTTP.
    #[arg(long = "registry-override", value_name = "NAME=URL")]
    pub overrides: Vec<String>,
    /// No network at all: any registry request is an error. Implied inside a Nix build.
    #[arg(long)]
    pub hermetic: bool,
    /// Parallel registry requests.
    #[arg(long, short = 'j', default_value_t = 8)]
    pub jobs: usize,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Output format for diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

use crate::registry_override::parse_overrides;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let required = match parse_platforms(&args.platforms) {
        Ok(p) => p,
        Err(e) => return Ok(usage(&e)),
    };
    let overrides = match parse_overrides(&args.overrides) {
        Ok(o) => o,
        Err(e) => return Ok(usage(&e)),
    };
    let files = match collect_files(&args.root, &args.paths) {
        Ok(f) => f,
        Err(Refused::Usage(e)) => return Ok(usage(&e)),
        // An unreadable folder or a refused file is a failure of the tree, not of the command
        // line: exit 1, not the usage code 2.
        Err(Refused::Tree(e)) => {
            eprintln!("error: {}", crate::hygiene::escape_line(&e));
            return Ok(ExitCode::from(1));
        }
    };
    let client = registry_client(
        args.hermetic,
        overrides,
        Duration::from_secs(args.timeout.max(1)),
    );
    // Shown (and opened) relative to the working directory when below it.
    let cwd = std::env::current_dir().unwrap_or_default();
    let files: Vec<PathBuf> = files
        .into_iter()
        .map(|f| f.strip_prefix(&cwd).map(Path::to_path_buf).unwrap_or(f))
        .collect();
    let journal = journal_path(&args.root);
    let read_only = args.check || args.dry_run;
    // One pin at a time per checkout (docs/security.md, "Pinning"): two runs lost each
    // other's edits, and the second took the first's live journal for an interrupted one.
    let _lock = match pin::PinLock::acquire(&journal, !read_only, &|path| {
        eprintln!(
            "pin: another pin is running on this checkout; waiting for it (lock {})",
            crate::hygiene::escape_line(&path.display().to_string())
        );
    }) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "error: {}",
                crate::hygiene::escape_line(&format!(
                    "cannot take the pin lock {}: {e}",
                    pin::PinLock::path(&journal).display()
                ))
            );
            return Ok(ExitCode::from(1));
        }
    };
    if !settle_journal(&journal, read_only) {
        return Ok(ExitCode::from(1));
    }
    if !read_only {
        // Every writing run, even one with nothing to write, clears what a run killed before
        // its journal left.
        for f in &files {
            pin::remove_stale_temps(f);
        }
    }
    let loaded = pin::load(&files);
    let mut sources = SourceMap::new();
    for d in &loaded.docs {
        sources.insert(&d.path, d.text.to_string());
    }
    if loaded
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        emit(loaded.diagnostics, &sources, args.format);
        eprintln!("pin: the files above do not load; nothing was checked or written");
        return Ok(ExitCode::from(1));
    }
    let run = Run {
        args: &args,
        client: &client,
        required,
        loaded: &loaded,
        sources: &sources,
        journal: &journal,
    };
    if args.check { run.check() } else { run.pin() }
}

/// A journal left by an interrupted pin: completed before anything is read as current when
/// this run writes (docs/security.md, "Pinning"), only warned about when it reads (`read_only`).
/// `false` when it could not be completed (reported).
fn settle_journal(journal: &Path, read_only: bool) -> bool {
    if read_only {
        if journal.exists() {
            eprintln!(
                "warning: an interrupted pin left its journal ({}); run `cargo xtask pin` to complete it",
                crate::hygiene::escape_line(&journal.display().to_string())
            );
        }
        return true;
    }
    match pin::recover(journal) {
        Ok(None) => true,
        Ok(Some(r)) => {
            report_recovery(&r);
            true
        }
        Err(e) => {
            eprintln!(
                "error: {}",
                crate::hygiene::escape_line(&format!("completing an interrupted pin: {e}"))
            );
            false
        }
    }
}

/// One `pin` run over loaded files.
struct Run<'a> {
    args: &'a Args,
    client: &'a Client,
    required: Vec<Platform>,
    loaded: &'a pin::Loaded,
    sources: &'a SourceMap,
    journal: &'a Path,
}

impl Run<'_> {
    fn jobs(&self) -> usize {
        self.args.jobs.max(1)
    }

    /// `pin --check`: verify the pins, write nothing.
    fn check(self) -> anyhow::Result<ExitCode> {
        let sites = &self.loaded.sites;
        let progress = Progress::new("verifying");
        let mut diags = self.loaded.diagnostics.clone();
        diags.extend(infx_image::check_offline(sites));
        let jobs = self.jobs();
        let opts = VerifyOptions {
            deep: self.args.deep,
            required: self.required,
        };
        diags.extend(infx_image::check_online(
            self.client,
            sites,
            &opts,
            jobs,
            &|n, t| progress.tick(n, t),
        ));
        progress.finish();
        let errors = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let pinned = sites.iter().filter(|s| s.written.contains('@')).count();
        let unreachable = diags.iter().any(|d| d.code == infx_image::codes::REGISTRY);
        emit(diags, self.sources, self.args.format);
        eprintln!(
            "pin --check: {} references in {} files ({pinned} pinned), {errors} error(s)",
            sites.len(),
            self.loaded.docs.len()
        );
        if unreachable {
            // Offline, every reference fails the same way: say what to do once, at the end.
            eprintln!(
                "help: --check asks the registries; without network access check the connection \
                 (and proxy), serve a registry from a mirror with --registry-override NAME=URL, \
                 or run `cargo xtask validate` for the checks that need no network"
            );
        }
        Ok(ExitCode::from(u8::from(errors > 0)))
    }

    /// Which sites the change touches; `None` when an explicit `--base` does not resolve
    /// (reported).
    fn changed(&self) -> Option<Vec<bool>> {
        let (args, sites) = (self.args, &self.loaded.sites);
        match sites_in_change(&args.root, args.base.as_deref(), sites) {
            Ok(c) => Some(c),
            // An explicit --base must resolve; the default one may not exist (no upstream, a
            // shallow clone): then only unpinned references are selected, and the run says so.
            Err(d) if args.base.is_none() => {
                eprintln!(
                    "warning: the change could not be found ({}); pinning unpinned references only",
                    crate::hygiene::escape_line(&d.message)
                );
                Some(vec![false; sites.len()])
            }
            Err(d) => {
                emit(vec![d], self.sources, args.format);
                None
            }
        }
    }

    /// `pin` (and `pin --dry-run`): resolve the selected references and write their pins.
    fn pin(self) -> anyhow::Result<ExitCode> {
        let args = self.args;
        let Some(changed) = self.changed() else {
            return Ok(ExitCode::from(1));
        };
        let selection = select_sites(&self.loaded.sites, &args.only, &changed, args.refresh);
        let mut diags = self.loaded.diagnostics.clone();
        diags.extend(selection.unmatched_only.iter().map(|name| {
            Diagnostic::error(
                infx_image::codes::ONLY_UNMATCHED,
                format!(
                    "--only `{}` names no reference and no master config key in the files pinned",
                    infx_report::escape_control(name)
                ),
            )
            .with_help("give a reference as written in the file (`repo:tag`) or a config key")
        }));
        let chosen: Vec<infx_image::ImageSite> =
            selection.sites.iter().map(|(s, _)| s.clone()).collect();
        let progress = Progress::new("resolving");
        let resolved = pin::resolve_sites(
            self.client,
            &chosen,
            &self.required,
            self.jobs(),
            &|n, t| progress.tick(n, t),
        );
        progress.finish();
        let plan: Plan = pin::plan(&self.loaded.docs, &chosen, &resolved);
        diags.extend(plan.diagnostics.iter().cloned());
        let failed = plan.has_errors() || !selection.unmatched_only.is_empty();
        emit(diags, self.sources, args.format);
        list_refreshed(&plan, &selection);
        // Written first, reported after: a `before -> after` line is only printed for a pin
        // that is on disk (or, with --dry-run, one that would be). The references that failed
        // are reported above; they never hold back the others.
        if !args.dry_run {
            let hook = stop_hook(self.journal);
            pin::write_all(&plan.files, self.journal, &hook)
                .map_err(|e| anyhow::anyhow!("writing pins: {e}"))?;
        }
        let mut out = std::io::stdout().lock();
        for c in &plan.changes {
            writeln!(out, "{}", change_line(c))?;
        }
        self.summarize(&plan, &selection, resolved.len());
        Ok(ExitCode::from(u8::from(failed)))
    }

    /// The closing `pin: pinned N of M …` line (and the `--refresh` hint).
    fn summarize(&self, plan: &Plan, selection: &Selection, tags_resolved: usize) {
        let args = self.args;
        let verb = if args.dry_run { "would pin" } else { "pinned" };
        let failures = plan
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let in_files = self.loaded.sites.len();
        eprintln!(
            "pin: {verb} {} of {} selected references ({in_files} in the files: {}) in {} file(s); {tags_resolved} distinct tags resolved{}",
            plan.changes.len(),
            selection.sites.len(),
            selection.describe(),
            plan.files.len(),
            if failures > 0 {
                format!("; {failures} could not be pinned (above)")
            } else {
                String::new()
            }
        );
        if in_files > selection.sites.len() && args.only.is_empty() && !args.refresh {
            eprintln!(
                "help: pinned references the change does not touch were left as they are; `--refresh` re-pins those whose tag moved"
            );
        }
    }
}

/// Moved tags of references the change does not touch: listed before they are written.
fn list_refreshed(plan: &Plan, selection: &Selection) {
    let refreshed: Vec<&pin::Change> = plan
        .changes
        .iter()
        .filter(|c| {
            selection
                .sites
                .iter()
                .any(|(s, why)| *why == Why::Refresh && s.path == c.path && s.span == c.span)
        })
        .collect();
    if refreshed.is_empty() {
        return;
    }
    eprintln!(
        "pin --refresh: {} pinned reference(s) outside the change moved; re-pinning:",
        refreshed.len()
    );
    for c in &refreshed {
        eprintln!("  {}", change_line(c));
    }
}

/// `file:line:col: before -> after`, terminal-safe (file names and references come from the
/// tree: one line each, no forged commands).
fn change_line(c: &pin::Change) -> String {
    let line = format!(
        "{}:{}:{}: {} -> {}",
        infx_report::escape_control(&c.path.display().to_string()),
        c.span.start.line(),
        c.span.start.col(),
        c.before,
        c.after
    );
    crate::hygiene::escape_line(&line).into_owned()
}

/// Why a reference is pinned by this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    Only,
    Unpinned,
    Changed,
    Refresh,
}

struct Selection {
    sites: Vec<(infx_image::ImageSite, Why)>,
    /// `--only` values that matched nothing.
    unmatched_only: Vec<String>,
}

impl Selection {
    /// `3 unpinned, 1 in the change` for the summary.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (why, name) in [
            (Why::Only, "named by --only"),
            (Why::Unpinned, "unpinned"),
            (Why::Changed, "in the change"),
            (Why::Refresh, "--refresh"),
        ] {
            let n = self.sites.iter().filter(|(_, w)| *w == why).count();
            if n > 0 {
                parts.push(format!("{n} {name}"));
            }
        }
        if parts.is_empty() {
            "none selected".into()
        } else {
            parts.join(", ")
        }
    }
}

/// Does `site` match an `--only` value: its config key, or its reference as written (with or
/// without the digest; `docker.io/library/…` spellings of the same name count).
fn only_matches(site: &infx_image::ImageSite, want: &str) -> bool {
    if let infx_image::SiteKind::MasterImage { config_key } = &site.kind
        && config_key == want
    {
        return true;
    }
    let tagged = |s: &str| infx_image::Reference::parse(s).ok().map(|r| r.tagged());
    let written = site.written.split('@').next().unwrap_or(&site.written);
    let want_base = want.split('@').next().unwrap_or(want);
    written == want_base
        || (tagged(&site.written).is_some() && tagged(&site.written) == tagged(want))
}

/// The references this run pins, each with why (see the module docs).
fn select_sites(
    sites: &[infx_image::ImageSite],
    only: &[String],
    changed: &[bool],
    refresh: bool,
) -> Selection {
    if !only.is_empty() {
        let unmatched_only = only
            .iter()
            .filter(|o| !sites.iter().any(|s| only_matches(s, o)))
            .cloned()
            .collect();
        let sites = sites
            .iter()
            .filter(|s| only.iter().any(|o| only_matches(s, o)))
            .map(|s| (s.clone(), Why::Only))
            .collect();
        return Selection {
            sites,
            unmatched_only,
        };
    }
    let sites = sites
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let why = if !s.written.contains('@') {
                Why::Unpinned
            } else if changed.get(i).copied().unwrap_or(false) {
                Why::Changed
            } else if refresh {
                Why::Refresh
            } else {
                return None;
            };
            Some((s.clone(), why))
        })
        .collect();
    Selection {
        sites,
        unmatched_only: Vec::new(),
    }
}

/// Per site: does the change (the working tree against the base, found as validate finds it)
/// add or alter it? All `false` outside a git repository.
fn sites_in_change(
    root: &Path,
    base: Option<&str>,
    sites: &[infx_image::ImageSite],
) -> Result<Vec<bool>, Diagnostic> {
    let mut out = vec![false; sites.len()];
    let Ok(repo) = infx_git::Repo::discover(root) else {
        return Ok(out);
    };
    let Some(workdir) = repo.workdir() else {
        return Ok(out);
    };
    let opts = infx_diff::ChangeOptions {
        base: base.map(str::to_string),
        ..Default::default()
    };
    let set = infx_diff::changed_files(&workdir, &opts)?;
    let base_oid = set
        .base
        .commit
        .as_deref()
        .and_then(|c| infx_git::Oid::from_str(c).ok());
    let workdir = std::fs::canonicalize(&workdir).unwrap_or(workdir);
    // The sites of each changed file at the base, by where they sit (config key or field).
    let mut at_base: BTreeMap<PathBuf, Vec<infx_image::ImageSite>> = BTreeMap::new();
    for (i, site) in sites.iter().enumerate() {
        let Some(rel) = std::fs::canonicalize(&site.path)
            .ok()
            .and_then(|p| p.strip_prefix(&workdir).ok().map(Path::to_path_buf))
        else {
            continue;
        };
        if !set.files.iter().any(|f| f.path == rel) {
            continue;
        }
        let before = at_base.entry(rel.clone()).or_insert_with(|| {
            base_oid
                .and_then(|oid| repo.blob_at(oid, &rel.to_string_lossy()).ok().flatten())
                .and_then(|blob| String::from_utf8(blob.data).ok())
                .and_then(|text| {
                    let root = infx_yaml::parse_str(&site.path, &text).ok()?;
                    let doc = infx_yaml::Document {
                        path: site.path.clone(),
                        text: text.into(),
                        root: root.into(),
                    };
                    Some(infx_image::sites_in(&doc).0)
                })
                .unwrap_or_default()
        });
        out[i] = !before
            .iter()
            .any(|b| b.kind == site.kind && b.written == site.written);
    }
    Ok(out)
}

/// Where a multi-file pin keeps its journal: the `.git` directory of the repository holding
/// the tree, else the tree itself (docs/security.md, "Pinning").
fn journal_path(root: &Path) -> PathBuf {
    match infx_git::Repo::discover(root) {
        Ok(repo) => repo.git_dir().join("infx-pin.journal"),
        Err(_) => root.join(".infx-pin.journal"),
    }
}

fn report_recovery(r: &pin::Recovery) {
    let list = |v: &[PathBuf]| {
        v.iter()
            .map(|p| crate::hygiene::escape_line(&p.display().to_string()).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    eprintln!(
        "pin: completed an interrupted pin: {} file(s) now hold their pins ({})",
        r.completed.len(),
        list(&r.completed)
    );
    if !r.left.is_empty() {
        eprintln!(
            "warning: edited since the interrupted pin, left as they are: {}",
            list(&r.left)
        );
    }
}

/// Test hook: with `INFX_PIN_TEST_STOP_AFTER_RENAMES=N`, the write stops after its N-th rename
/// (it creates `<journal>.stopped` and sleeps) so a test can SIGKILL it between renames.
fn stop_hook(journal: &Path) -> impl Fn(usize) {
    let stop_after = std::env::var("INFX_PIN_TEST_STOP_AFTER_RENAMES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    let marker = PathBuf::from(format!("{}.stopped", journal.display()));
    move |n| {
        if stop_after == Some(n) {
            let _ = std::fs::write(&marker, b"");
            std::thread::sleep(Duration::from_secs(120));
        }
    }
}

/// A registry client set up the way `pin` uses it: credentials from the Docker config or the
/// `INFX_REGISTRY_*` variables, hermetic when asked or when `INFX_HERMETIC` / `NIX_BUILD_TOP`
/// is set. `validate --online` uses it too.
pub fn registry_client(
    hermetic: bool,
    overrides: BTreeMap<String, String>,
    timeout: Duration,
) -> Client {
    let hermetic = hermetic || env_set("INFX_HERMETIC") || env_set("NIX_BUILD_TOP");
    Client::new(ClientConfig {
        timeout,
        overrides,
        credentials: load_credentials(),
        hermetic,
        ..Default::default()
    })
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

fn emit(mut diags: Vec<Diagnostic>, sources: &SourceMap, format: Format) {
    if diags.is_empty() {
        return;
    }
    sort_for_report(&mut diags);
    print!("{}", output::render(&diags, sources, format));
}

fn parse_platforms(list: &[String]) -> Result<Vec<Platform>, String> {
    if list.is_empty() {
        return Ok(Platform::defaults());
    }
    list.iter()
        .map(|s| {
            Platform::parse(s).ok_or_else(|| {
                format!("--platform `{s}`: expected OS/ARCH[/VARIANT], e.g. linux/arm64")
            })
        })
        .collect()
}

/// Why no file list came out of the arguments.
enum Refused {
    /// The command line names nothing usable (exit 2).
    Usage(String),
    /// The tree could not be read as the command line asks (exit 1).
    Tree(String),
}

fn collect_files(root: &Path, paths: &[PathBuf]) -> Result<Vec<PathBuf>, Refused> {
    if paths.is_empty() {
        if !root.is_dir() {
            return Err(Refused::Usage(format!(
                "{} is not a directory (use --root or give PATHS)",
                root.display()
            )));
        }
        return pin::discover(root)
            .map_err(|e| Refused::Tree(format!("reading {}: {e}", root.display())));
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            pin::yaml_files(p, &mut out)
                .map_err(|e| Refused::Tree(format!("reading {}: {e}", p.display())))?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(Refused::Usage(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    Ok(out)
}

/// Registry credentials: `$DOCKER_CONFIG/config.json` or `~/.docker/config.json` (`auths`
/// only), plus `INFX_REGISTRY_HOST` / `INFX_REGISTRY_USER` / `INFX_REGISTRY_PASSWORD`.
/// Never printed.
fn load_credentials() -> BTreeMap<String, Credential> {
    let dir = std::env::var_os("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")));
    let mut creds = BTreeMap::new();
    if let Some(file) = dir.map(|d| d.join("config.json")).filter(|f| f.is_file()) {
        match std::fs::read_to_string(&file)
            .map_err(|e| e.to_string())
            .and_then(|t| infx_image::parse_docker_config(&t))
        {
            Ok(c) => creds = c,
            Err(e) => eprintln!(
                "warning: ignoring {}",
                crate::hygiene::escape_line(&format!("{}: {e}", file.display()))
            ),
        }
    }
    if let (Ok(host), Ok(user), Ok(pass)) = (
        std::env::var("INFX_REGISTRY_HOST"),
        std::env::var("INFX_REGISTRY_USER"),
        std::env::var("INFX_REGISTRY_PASSWORD"),
    ) {
        creds.insert(host, Credential::from_user_password(&user, &pass));
    }
    creds
}

/// A one-line progress bar on stderr, only when stderr is a terminal.
struct Progress {
    on: bool,
    what: &'static str,
}

impl Progress {
    fn new(what: &'static str) -> Progress {
        Progress {
            on: std::io::stderr().is_terminal(),
            what,
        }
    }
    fn tick(&self, n: usize, total: usize) {
        if !self.on || total == 0 {
            return;
        }
        let width = 30;
        let filled = n * width / total;
        eprint!(
            "\r{} [{}{}] {n}/{total}",
            self.what,
            "#".repeat(filled),
            " ".repeat(width - filled)
        );
    }
    fn finish(&self) {
        if self.on {
            eprint!("\r\x1b[2K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read};
    use std::net::TcpListener;

    fn sha256(b: &[u8]) -> String {
        infx_image::Digest::sha256_of(b).to_string()
    }

    /// A minimal registry: every tag of every repository is the same two-platform index, whose
    /// content depends on `version` (bump it to "move" every tag).
    fn fake_registry(
        version: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ) -> (
        String,
        std::thread::JoinHandle<()>,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let h = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s2.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                }
                let v = version.load(std::sync::atomic::Ordering::SeqCst);
                let d = "sha256:".to_string() + &"0".repeat(64);
                let index = format!(
                    r#"{{"annotations":{{"v":"{v}"}},"manifests":[{{"digest":"{d}","mediaType":"application/vnd.oci.image.manifest.v1+json","platform":{{"architecture":"amd64","os":"linux"}},"size":1}},{{"digest":"{d}","mediaType":"application/vnd.oci.image.manifest.v1+json","platform":{{"architecture":"arm64","os":"linux"}},"size":1}}],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2}}"#
                );
                let digest = sha256(index.as_bytes());
                let path = line.split_whitespace().nth(1).unwrap_or("");
                let found = !path.contains("/manifests/sha256:") || path.ends_with(&digest);
                let head = line.starts_with("HEAD");
                let resp = if found {
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.index.v1+json\r\nDocker-Content-Digest: {digest}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                        index.len(),
                        if head { "" } else { index.as_str() }
                    )
                } else {
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .to_string()
                };
                let _ = conn.write_all(resp.as_bytes());
                let mut sink = Vec::new();
                let _ = conn.set_read_timeout(Some(Duration::from_millis(1)));
                let _ = reader.read_to_end(&mut sink);
            }
        });
        (format!("http://127.0.0.1:{port}"), h, stop)
    }

    fn pin(args: &[&str]) -> u8 {
        let mut argv = vec!["cargo xtask", "pin"];
        argv.extend_from_slice(args);
        let code = crate::main_with_args(argv);
        // ExitCode has no accessor; compare against the known values.
        [0u8, 1, 2]
            .into_iter()
            .find(|c| ExitCode::from(*c) == code)
            .unwrap_or(255)
    }

    const PIN_CLI_TEST: &str = "cmd_pin::tests::pin_check_and_idempotence_via_the_cli";

    /// Runs the test `name` of this test binary in a child process with `env` changed; panics
    /// unless it ran and passed.
    fn run_test_in_child(name: &str, set: &[(&str, &str)], remove: &[&str]) {
        let exe = std::env::current_exe().expect("test binary");
        let mut cmd = duct::cmd(exe, ["--exact", name, "--test-threads=1"]);
        for (k, v) in set {
            cmd = cmd.env(k, v);
        }
        for k in remove {
            cmd = cmd.env_remove(k);
        }
        let out = cmd
            .stdin_null()
            .stderr_to_stdout()
            .stdout_capture()
            .unchecked()
            .run()
            .expect("run the test binary");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
    }

    /// A Nix build (`checks.tests`) sets NIX_BUILD_TOP, which makes pin hermetic (so does
    /// INFX_HERMETIC); this test's registry is on loopback, so it runs again without them.
    fn rerun_without_hermetic_env() -> bool {
        let hermetic_env = ["NIX_BUILD_TOP", "INFX_HERMETIC"];
        if hermetic_env.iter().all(|k| std::env::var_os(k).is_none()) {
            return false;
        }
        run_test_in_child(PIN_CLI_TEST, &[], &hermetic_env);
        true
    }

    /// The conditions of `checks.tests` in the Nix sandbox (docs/nix-and-ci.md), outside Nix.
    #[test]
    fn pin_cli_test_passes_under_the_nix_build_environment() {
        run_test_in_child(
            PIN_CLI_TEST,
            &[
                ("NIX_BUILD_TOP", "/build"),
                ("INFX_HERMETIC", "1"),
                ("HOME", "/homeless-shelter"),
            ],
            &[],
        );
    }

    #[test]
    fn pin_check_and_idempotence_via_the_cli() {
        if rerun_without_hermetic_env() {
            return;
        }
        let version = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(1));
        let (url, handle, stop) = fake_registry(version.clone());
        let dir = tempfile::tempdir().unwrap();
        let configs = dir.path().join("configs");
        std::fs::create_dir_all(&configs).unwrap();
        let master = configs.join("nvidia-master.yaml");
        let original = "# header comment\na:\n  image: lmsysorg/sglang:v1   # pinned by infx\n  model: m\nb:\n  image: \"nvcr.io#nvidia/x:1.0\"\n";
        std::fs::write(&master, original).unwrap();
        let root = dir.path().to_str().unwrap();
        let ov1 = format!("docker.io={url}");
        let ov2 = format!("nvcr.io={url}");
        let common = [
            "--root",
            root,
            "--registry-override",
            &ov1,
            "--registry-override",
            &ov2,
        ];

        // Hermetic: fails, writes nothing.
        let mut hermetic = common.to_vec();
        hermetic.push("--hermetic");
        assert_eq!(pin(&hermetic), 1);
        assert_eq!(std::fs::read_to_string(&master).unwrap(), original);

        // Unpinned refs fail --check.
        let mut check = common.to_vec();
        check.push("--check");
        assert_eq!(pin(&check), 1);

        assert_eq!(pin(&common), 0);
        let pinned = std::fs::read_to_string(&master).unwrap();
        assert_ne!(pinned, original);
        let re_stripped: String = {
            let mut s = pinned.clone();
            while let Some(i) = s.find("@sha256:") {
                s.replace_range(i..i + 8 + 64, "");
            }
            s
        };
        assert_eq!(re_stripped, original, "only the digests were added");
        assert_eq!(pin(&common), 0);
        assert_eq!(
            std::fs::read_to_string(&master).unwrap(),
            pinned,
            "second run changes nothing"
        );
        assert_eq!(pin(&check), 0);

        // The tags move: --check fails, the file stays.
        version.store(2, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(pin(&check), 1);
        assert_eq!(std::fs::read_to_string(&master).unwrap(), pinned);

        // Usage errors.
        assert_eq!(pin(&["--root", root, "--platform", "linux"]), 2);
        assert_eq!(
            pin(&[
                "--root",
                root,
                "--registry-override",
                "docker.io=http://127.0.0.1:"
            ]),
            2
        );
        assert_eq!(
            pin(&["--root", root, "--registry-override", "docker.io"]),
            2
        );

        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(url.trim_start_matches("http://"));
        handle.join().unwrap();
    }

    fn site(key: &str, written: &str) -> infx_image::ImageSite {
        infx_image::ImageSite {
            path: PathBuf::from("configs/nvidia-master.yaml"),
            span: infx_report::Span::default(),
            range: None,
            written: written.into(),
            kind: infx_image::SiteKind::MasterImage {
                config_key: key.into(),
            },
        }
    }

    #[test]
    fn only_names_a_key_or_a_reference_in_any_spelling() {
        let pinned = site(
            "a",
            &format!("lmsysorg/sglang:v1@sha256:{}", "1".repeat(64)),
        );
        for want in [
            "a",
            "lmsysorg/sglang:v1",
            "docker.io/lmsysorg/sglang:v1",
            &pinned.written,
        ] {
            assert!(only_matches(&pinned, want), "{want}");
        }
        for other in ["b", "lmsysorg/sglang:v2", "lmsysorg/sglang", "sglang:v1"] {
            assert!(!only_matches(&pinned, other), "{other}");
        }
    }

    #[test]
    fn the_default_selection_is_unpinned_or_changed_and_refresh_adds_the_rest() {
        let d = format!("@sha256:{}", "2".repeat(64));
        let sites = [
            site("untouched", &format!("x/y:v1{d}")),
            site("unpinned", "x/y:v2"),
            site("changed", &format!("x/y:v3{d}")),
        ];
        let changed = [false, false, true];
        let whys = |s: &Selection| s.sites.iter().map(|(_, w)| *w).collect::<Vec<_>>();
        let default = select_sites(&sites, &[], &changed, false);
        assert_eq!(whys(&default), [Why::Unpinned, Why::Changed]);
        assert_eq!(default.describe(), "1 unpinned, 1 in the change");
        let refresh = select_sites(&sites, &[], &changed, true);
        assert_eq!(whys(&refresh), [Why::Refresh, Why::Unpinned, Why::Changed]);
        let only = select_sites(
            &sites,
            &["untouched".into(), "nope".into()],
            &changed,
            false,
        );
        assert_eq!(whys(&only), [Why::Only]);
        assert_eq!(only.unmatched_only, ["nope"]);
    }

    #[test]
    fn override_urls_need_a_host_and_a_real_port() {
        let one = |v: &str| parse_overrides(&[v.to_string()]);
        assert!(one("docker.io=http://127.0.0.1:5000").is_ok());
        assert!(one("docker.io=https://mirror.example/").is_ok());
        assert!(one("docker.io=http://[::1]:5000/").is_ok());
        for (bad, why) in [
            ("docker.io=http://127.0.0.1:", "port after `:` is empty"),
            ("docker.io=http://127.0.0.1:/v2", "port after `:` is empty"),
            ("docker.io=http://[::1]:", "port after `:` is empty"),
            ("docker.io=http://:5000", "host is empty"),
            ("docker.io=http://h:99999", "1 to 65535"),
            ("docker.io=http://h:5x", "1 to 65535"),
            ("docker.io=http://h:0", "1 to 65535"),
            ("=http://h:5000", "NAME must be a registry host name"),
            (
                "docker io=http://h:5000",
                "NAME must be a registry host name",
            ),
            ("docker.io=http://h:5000/?q=1", "query"),
            ("docker.io=http://h:5000#frag", "fragment"),
            ("docker.io=http://u:p@h:1", "credentials"),
        ] {
            let e = one(bad).expect_err(bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = one("docker.io=http://h\0\u{1b}[2J:1").expect_err("control characters");
        assert!(!e.contains('\0') && !e.contains('\u{1b}'), "{e:?}");
        assert!(e.contains("\\u{0}"), "{e:?}");
    }
}
