//! The command line: [`Cli`] and its subcommands, each with the arguments of its module.
//! Imported by the crate root, which runs them, and by the modules that look at a parsed
//! command before it runs ([`crate::confine`], [`crate::handover`]); it imports no
//! module that imports it (docs/architecture.md, "Module graph").

use crate::lazy::Lazy;
use crate::{
    cmd_changelog, cmd_codes, cmd_diff_check, cmd_dry_run, cmd_fuzz, cmd_matrix, cmd_review,
    validate,
};
use clap::{Parser, Subcommand};

/// `pin`'s arguments; a build without the registry client hands them over verbatim
/// (README, "What builds when").
#[cfg(feature = "registry")]
pub type PinArgs = crate::cmd_pin::Args;
#[cfg(not(feature = "registry"))]
pub type PinArgs = crate::forwarded::Forwarded;

/// The arguments of a developer command (`test`, `conformance`): every build hands them over
/// verbatim to the `xtask-dev` binary, which parses them (issue #40 item 6).
pub type DevArgs = crate::forwarded::Forwarded;

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
    Conformance(Lazy<DevArgs>),
    /// Run the whole test suite (the README's test command).
    Test(Lazy<DevArgs>),
    /// Build the fuzz targets in fuzz/ (nightly) and run each for a while.
    Fuzz(Lazy<cmd_fuzz::Args>),
    /// List every diagnostic code (or --check the code tables in docs/ against them).
    Codes(Lazy<cmd_codes::Args>),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`cmd_matrix::parse_line`] stands in for this command line where `cli` cannot be
    /// imported: it must accept, reject and render what [`Cli`] does.
    #[test]
    fn the_matrix_line_parses_as_the_command_line() {
        let lines: &[&[&str]] = &[
            &["full-sweep", "--config-files", "a.yaml", "--single-node"],
            &["full-sweep", "--config-f", "a.yaml", "--config-f", "b.yaml"],
            &[
                "test-config",
                "--config-keys",
                "k",
                "--config-files",
                "a.yaml",
            ],
            &["test-config", "--help"],
            &["full-sweep", "--no-such-option"],
            &["no-such-command"],
            &["--help"],
            &["--version"],
            &[],
        ];
        for words in lines {
            let argv: Vec<&str> = ["cargo xtask", "matrix"]
                .iter()
                .chain(*words)
                .copied()
                .collect();
            let ours = cmd_matrix::parse_line(&argv);
            let cli = Cli::try_parse_from(&argv).map(|c| match c.command {
                Command::Matrix(Lazy(m)) => m,
                other => panic!("{argv:?} is no matrix command: {other:?}"),
            });
            match (ours, cli) {
                (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{argv:?}"),
                (Err(a), Err(b)) => {
                    assert_eq!(a.kind(), b.kind(), "{argv:?}");
                    assert_eq!(a.use_stderr(), b.use_stderr(), "{argv:?}");
                    assert_eq!(a.to_string(), b.to_string(), "{argv:?}");
                }
                (a, b) => panic!("{argv:?}: matrix line {a:?}, command line {b:?}"),
            }
        }
    }
}
