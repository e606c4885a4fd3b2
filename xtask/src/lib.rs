//! The xtask library: argument parsing, orchestration and rendering for every subcommand.
//! Only this crate prints, reads the environment or decides exit codes.

pub mod cmd_changelog;
pub mod cmd_codes;
pub mod cmd_diff_check;
pub mod cmd_dry_run;
pub mod cmd_fuzz;
pub mod cmd_matrix;
#[cfg(feature = "registry")]
pub mod cmd_pin;
pub mod cmd_review;
pub mod cmd_test;
pub mod codes;
pub mod confine;
pub mod conformance;
pub mod gate_configs;
pub mod history;
pub mod hygiene;
pub mod lazy;
pub mod output;
pub mod paths;
pub mod registry_handover;
pub mod registry_override;
pub mod validate;

use clap::{Parser, Subcommand};
use lazy::Lazy;
use std::ffi::OsString;
use std::process::ExitCode;

/// `pin`'s arguments; a build without the registry client hands them over verbatim
/// (README, "What builds when").
#[cfg(feature = "registry")]
pub type PinArgs = cmd_pin::Args;
#[cfg(not(feature = "registry"))]
pub type PinArgs = registry_handover::Forwarded;

#[derive(Parser, Debug)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Validate an InferenceX-style benchmark repository: configs, recipes, matrix, changelog, images, diff, review checks.",
    version
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run every check that applies to the change (the main job).
    Validate(Lazy<validate::Args>),
    /// Generate the sweep matrix exactly as InferenceX's generator does.
    #[command(subcommand)]
    Matrix(Lazy<cmd_matrix::MatrixCommand>),
    /// Resolve recipe variants like `srtctl dry-run` (or a master entry's points with
    /// --config-key) and render their launch commands.
    DryRun(Lazy<cmd_dry_run::Args>),
    /// Perf-changelog tools: check, plan, merge driver.
    #[command(subcommand)]
    Changelog(Lazy<cmd_changelog::ChangelogCommand>),
    /// Register the perf-changelog merge driver in this clone's git config.
    InstallMergeDriver(Lazy<cmd_changelog::InstallArgs>),
    /// Pin image references to their multi-arch index digests (or --check existing pins).
    Pin(Lazy<PinArgs>),
    /// Report the whitespace errors `git diff --check` reports, for the complete change.
    DiffCheck(Lazy<cmd_diff_check::Args>),
    /// Reviewer checks a machine can decide (CODEOWNERS, images, flags, Pareto, …).
    #[command(subcommand)]
    Review(Lazy<cmd_review::ReviewCommand>),
    /// Compare against the reference outputs in ../shared/corpus.
    Conformance(Lazy<conformance::Args>),
    /// Run the whole test suite (the README's test command).
    Test(Lazy<cmd_test::Args>),
    /// Build the fuzz targets in fuzz/ (nightly) and run each for a while.
    Fuzz(Lazy<cmd_fuzz::Args>),
    /// List every diagnostic code (or --check the code tables in docs/ against them).
    Codes(Lazy<cmd_codes::Args>),
}

/// Parses `args` (including the program name) and runs the subcommand.
/// Exit codes: 0 clean, 1 findings or failure, 2 usage error.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    #[cfg(not(feature = "registry"))]
    if registry_handover::asks_help_for_pin(&args) {
        return registry_handover::hand_over(&args);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    #[cfg(not(feature = "registry"))]
    if registry_handover::needs_registry(&cli.command) {
        return registry_handover::hand_over(&args);
    }
    // A pull request's tree is hostile input: from here on no file outside the repository is
    // read (docs/security.md).
    confine::confine(&cli.command);
    let result = match cli.command {
        Command::Validate(Lazy(a)) => validate::run(a),
        Command::Matrix(Lazy(a)) => cmd_matrix::run(a),
        Command::DryRun(Lazy(a)) => cmd_dry_run::run(a),
        Command::Changelog(Lazy(a)) => cmd_changelog::run(a),
        Command::InstallMergeDriver(Lazy(a)) => cmd_changelog::install_merge_driver(a),
        #[cfg(feature = "registry")]
        Command::Pin(Lazy(a)) => cmd_pin::run(a),
        #[cfg(not(feature = "registry"))]
        Command::Pin(_) => Ok(registry_handover::hand_over(&args)),
        Command::DiffCheck(Lazy(a)) => cmd_diff_check::run(a),
        Command::Review(Lazy(a)) => cmd_review::run(a),
        Command::Conformance(Lazy(a)) => conformance::run(a),
        Command::Test(Lazy(a)) => cmd_test::run(a),
        Command::Fuzz(Lazy(a)) => cmd_fuzz::run(a),
        Command::Codes(Lazy(a)) => cmd_codes::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
