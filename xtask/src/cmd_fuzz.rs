//! `cargo xtask fuzz`: builds the cargo-fuzz targets in `fuzz/` with the nightly toolchain and
//! runs each one for a fixed time (docs/security.md, "Fuzzing").
//!
//! The targets are built the way cargo-fuzz builds them (sanitizer coverage, AddressSanitizer,
//! `--cfg fuzzing`) so that cargo-fuzz itself need not be installed. Each target starts from
//! its hand-written seeds in `fuzz/seeds/<target>/` and keeps what it finds in the ignored
//! `target/fuzz-corpus/<target>/`; a crashing input is written to `fuzz/artifacts/<target>/`
//! and makes the command fail.

use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// Every target in `fuzz/Cargo.toml`, in the order they run.
pub const TARGETS: [&str; 5] = [
    "yaml_load",
    "recipe_expand",
    "changelog_entry",
    "image_reference",
    "www_authenticate",
];

/// Seconds per target in `--smoke`: five targets stay under the 60 s CI allowance.
pub const SMOKE_SECONDS_PER_TARGET: u64 = 10;

const FUZZ_TRIPLE: &str = "x86_64-unknown-linux-gnu";

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seconds of fuzzing per target.
    #[arg(long, default_value_t = 60, conflicts_with = "smoke")]
    pub seconds: u64,
    /// The short CI pass: 10 s per target, 50 s in total (after the build).
    #[arg(long)]
    pub smoke: bool,
    /// Run only this target (repeatable); default: all of them.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(TARGETS))]
    pub target: Vec<String>,
    /// Build the targets and stop.
    #[arg(long)]
    pub build_only: bool,
}

/// What one run of one target reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRun {
    pub target: String,
    pub execs: Option<u64>,
    pub seconds: u64,
    /// libFuzzer's coverage (`cov:`) and corpus size (`corp: N/…`) at its last report.
    pub coverage: Option<u64>,
    pub corpus: Option<u64>,
    /// Why the run failed: a crash, a hang, too much memory, or no input executed at all.
    pub failure: Option<String>,
}

impl TargetRun {
    /// One line: `yaml_load: 52311 runs in 10 s, 0 crashes` or the failure.
    pub fn summary(&self) -> String {
        let execs = self.execs.map_or("?".to_string(), |n| n.to_string());
        let stats = match (self.coverage, self.corpus) {
            (Some(cov), Some(corp)) => format!(" (cov {cov}, corpus {corp})"),
            _ => String::new(),
        };
        match &self.failure {
            None => format!(
                "{}: {execs} runs in {} s, 0 crashes{stats}",
                self.target, self.seconds
            ),
            Some(why) => format!("{}: FAILED after {execs} runs: {why}", self.target),
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::paths::checkout_root();
    let seconds = if args.smoke {
        SMOKE_SECONDS_PER_TARGET
    } else {
        args.seconds.max(1)
    };
    let targets: Vec<&str> = if args.target.is_empty() {
        TARGETS.to_vec()
    } else {
        TARGETS
            .iter()
            .copied()
            .filter(|t| args.target.iter().any(|a| a == t))
            .collect()
    };
    let seconds = (!args.build_only).then_some(seconds);
    let runs = build_and_run(&root, &targets, seconds)?;
    if args.build_only {
        return Ok(ExitCode::SUCCESS);
    }
    let failed = runs.iter().filter(|r| r.failure.is_some()).count();
    println!(
        "fuzz: {} target(s), {} failed, {} runs in total",
        runs.len(),
        failed,
        runs.iter().filter_map(|r| r.execs).sum::<u64>()
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Whether `cargo +nightly` can work here: rustup knows a nightly toolchain.
pub fn nightly_available() -> bool {
    Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .env_remove("RUSTUP_TOOLCHAIN")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Builds `targets` and, with `seconds`, runs each that long, one after the other (the
/// command and `cargo xtask test`'s `fuzz` step share this). Each run's outcome is printed to
/// stderr as it ends.
pub fn build_and_run(
    root: &Path,
    targets: &[&str],
    seconds: Option<u64>,
) -> anyhow::Result<Vec<TargetRun>> {
    let fuzz_dir = root.join("fuzz");
    if !fuzz_dir.join("Cargo.toml").is_file() {
        bail!("no fuzz/Cargo.toml below {}", root.display());
    }
    let target_dir = root.join("target/fuzz");
    let built = Instant::now();
    build(&fuzz_dir, &target_dir, targets)?;
    eprintln!(
        "fuzz: built {} target(s) in {:.0} s",
        targets.len(),
        built.elapsed().as_secs_f64()
    );
    let Some(seconds) = seconds else {
        return Ok(Vec::new());
    };
    let mut runs = Vec::new();
    for t in targets {
        let bin = target_dir.join(FUZZ_TRIPLE).join("release").join(t);
        let r = run_target(root, &bin, t, seconds)?;
        eprintln!("fuzz: {}", r.summary());
        runs.push(r);
    }
    Ok(runs)
}

/// The flags cargo-fuzz passes to rustc for libFuzzer targets.
fn fuzz_rustflags() -> String {
    [
        "-Cpasses=sancov-module",
        "-Cllvm-args=-sanitizer-coverage-level=4",
        "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
        "-Cllvm-args=-sanitizer-coverage-pc-table",
        "-Cllvm-args=-sanitizer-coverage-trace-compares",
        "-Zsanitizer=address",
        "--cfg",
        "fuzzing",
        "-Cdebug-assertions",
        "-Coverflow-checks",
    ]
    .join(" ")
}

fn build(fuzz_dir: &Path, target_dir: &Path, targets: &[&str]) -> anyhow::Result<()> {
    let mut cmd = Command::new("cargo");
    cmd.arg("+nightly")
        .arg("build")
        .arg("--release")
        .arg("--manifest-path")
        .arg(fuzz_dir.join("Cargo.toml"))
        .arg("--target")
        .arg(FUZZ_TRIPLE)
        .arg("--target-dir")
        .arg(target_dir);
    for t in targets {
        cmd.arg("--bin").arg(t);
    }
    // rust-toolchain.toml pins stable for the workspace; `+nightly` overrides it, and the
    // workspace's own RUSTFLAGS must not leak into the sanitizer build.
    cmd.env("RUSTFLAGS", fuzz_rustflags())
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTUP_TOOLCHAIN");
    let status = cmd.status().context(
        "running `cargo +nightly build` for fuzz/ (is the nightly toolchain installed?)",
    )?;
    if !status.success() {
        bail!("building the fuzz targets failed ({status})");
    }
    Ok(())
}

fn run_target(root: &Path, bin: &Path, target: &str, seconds: u64) -> anyhow::Result<TargetRun> {
    let corpus = root.join("target/fuzz-corpus").join(target);
    let seeds = root.join("fuzz/seeds").join(target);
    let artifacts = root.join("fuzz/artifacts").join(target);
    for d in [&corpus, &artifacts] {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let mut cmd = Command::new(bin);
    cmd.arg(format!("-max_total_time={seconds}"))
        // A single input slower than this is a hang (issue: "never hang").
        .arg("-timeout=10")
        .arg("-rss_limit_mb=2048")
        .arg("-max_len=65536")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg(&corpus);
    if seeds.is_dir() {
        cmd.arg(&seeds);
    }
    let out = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    let log = String::from_utf8_lossy(&out.stderr);
    let run = target_run(target, seconds, out.status.success(), &log);
    if run.failure.is_some() {
        // The tail names the crash and the artifact file.
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        for l in tail.iter().rev() {
            eprintln!("  {}", crate::hygiene::escape_line(l));
        }
    }
    Ok(run)
}

/// The outcome of one libFuzzer run from its exit status and stderr. Any non-zero exit is a
/// failure (libFuzzer exits non-zero on a crash, a sanitizer report, a timeout or the RSS
/// limit); so is a run that executed no input, which would otherwise pass while proving
/// nothing.
pub fn target_run(target: &str, seconds: u64, exited_ok: bool, log: &str) -> TargetRun {
    let execs = executions(log);
    let failure = if !exited_ok {
        let what = log
            .lines()
            .find_map(|l| {
                let l = l.trim();
                (l.starts_with("==") && l.contains("ERROR:"))
                    .then(|| l.split_once("ERROR:").map_or(l, |(_, e)| e).trim())
            })
            .or_else(|| {
                log.lines()
                    .map(str::trim)
                    .find(|l| l.starts_with("thread '"))
            })
            .unwrap_or("libFuzzer exited non-zero");
        let artifact = log.lines().find_map(|l| {
            l.split_once("Test unit written to ")
                .map(|(_, p)| p.trim().to_string())
        });
        Some(match artifact {
            Some(a) => format!("{what} (input: {a})"),
            None => what.to_string(),
        })
    } else if execs.unwrap_or(0) == 0 {
        Some("no input was executed".to_string())
    } else {
        None
    };
    TargetRun {
        target: target.to_string(),
        execs,
        seconds,
        coverage: last_stat(log, "cov:"),
        corpus: last_stat(log, "corp:"),
        failure: failure.map(|f| crate::hygiene::escape_line(&f).into_owned()),
    }
}

/// The total from libFuzzer's closing line `Done 123456 runs in 10 second(s)`, or the last
/// progress line (`#123456 ...`) when the run ended early.
pub fn executions(log: &str) -> Option<u64> {
    let done = log.lines().rev().find_map(|l| {
        let rest = l.strip_prefix("Done ")?;
        rest.split_whitespace().next()?.parse().ok()
    });
    done.or_else(|| {
        log.lines().rev().find_map(|l| {
            let rest = l.strip_prefix('#')?;
            rest.split_whitespace().next()?.parse().ok()
        })
    })
}

/// The number after `key` (`cov:`, `corp:`) on libFuzzer's last progress line that has it.
fn last_stat(log: &str, key: &str) -> Option<u64> {
    log.lines().rev().find_map(|l| {
        let mut words = l.strip_prefix('#')?.split_whitespace();
        words.find(|w| *w == key)?;
        let n = words.next()?;
        n.split('/').next()?.parse().ok()
    })
}

/// The crash inputs kept for regression tests: every file below `fuzz/artifacts/`.
pub fn artifacts(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for t in TARGETS {
        if let Ok(rd) = std::fs::read_dir(root.join("fuzz/artifacts").join(t)) {
            out.extend(rd.flatten().map(|e| e.path()));
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_runs_from_the_closing_line_or_the_last_progress_line() {
        let done = "#2\tINITED cov: 3\n#1024\tpulse  cov: 9\nDone 52311 runs in 11 second(s)\n";
        assert_eq!(executions(done), Some(52311));
        let early = "#2\tINITED cov: 3\n#4096\tNEW    cov: 9\n==1==ERROR: AddressSanitizer\n";
        assert_eq!(executions(early), Some(4096));
        assert_eq!(executions("no numbers here\n"), None);
    }

    /// A deliberately crashing input as libFuzzer reports it (a panic in the target, turned
    /// into an abort by libfuzzer-sys, then libFuzzer's deadly-signal report): the run is a
    /// failure naming the panic and the saved input, so the `fuzz` step of `cargo xtask test`
    /// fails.
    #[test]
    fn a_crashing_input_fails_the_run_and_names_the_input() {
        let log = "INFO: Seed: 1\n#2\tINITED cov: 40 ft: 41 corp: 1/1b exec/s: 0 rss: 30Mb\n\
                   #77\tNEW    cov: 52 ft: 60 corp: 4/19b lim: 4 exec/s: 0 rss: 31Mb\n\
                   thread '<unnamed>' panicked at fuzz_targets/yaml_load.rs:9:5:\n\
                   deliberate crash\n\
                   ==4242== ERROR: libFuzzer: deadly signal\n\
                   MS: 1 ChangeByte-; base unit: 0000\n\
                   artifact_prefix='fuzz/artifacts/yaml_load/'; Test unit written to fuzz/artifacts/yaml_load/crash-da39a3ee\n";
        let run = target_run("yaml_load", 10, false, log);
        assert_eq!(run.execs, Some(77));
        assert_eq!(
            run.failure.as_deref(),
            Some("libFuzzer: deadly signal (input: fuzz/artifacts/yaml_load/crash-da39a3ee)")
        );
        assert!(
            run.summary().contains("FAILED after 77 runs"),
            "{}",
            run.summary()
        );
        // A non-zero exit without any report is still a failure.
        let bare = target_run("yaml_load", 10, false, "#5\tpulse\n");
        assert_eq!(bare.failure.as_deref(), Some("libFuzzer exited non-zero"));
    }

    #[test]
    fn a_clean_run_passes_only_when_it_executed_inputs() {
        let log = "#2\tINITED cov: 40 ft: 41 corp: 1/1b exec/s: 0 rss: 30Mb\n\
                   #8192\tpulse  cov: 311 ft: 900 corp: 120/4Kb lim: 80 exec/s: 4096 rss: 40Mb\n\
                   Done 52311 runs in 11 second(s)\n";
        let ok = target_run("image_reference", 10, true, log);
        assert_eq!(ok.failure, None);
        assert_eq!(
            ok.summary(),
            "image_reference: 52311 runs in 10 s, 0 crashes (cov 311, corpus 120)"
        );
        let idle = target_run("image_reference", 10, true, "INFO: Seed: 1\n");
        assert_eq!(idle.failure.as_deref(), Some("no input was executed"));
    }

    #[test]
    fn every_target_has_a_source_file_and_seeds() {
        let root = crate::paths::workspace_root();
        let manifest = std::fs::read_to_string(root.join("fuzz/Cargo.toml")).unwrap();
        for t in TARGETS {
            assert!(
                manifest.contains(&format!("name = \"{t}\"")),
                "{t} missing in fuzz/Cargo.toml"
            );
            assert!(root.join(format!("fuzz/fuzz_targets/{t}.rs")).is_file());
            assert!(root.join(format!("fuzz/seeds/{t}")).is_dir(), "{t} seeds");
        }
    }
}
