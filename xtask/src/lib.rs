//! The xtask library: argument parsing, orchestration and rendering for every subcommand.
//! Only this crate prints, reads the environment or decides exit codes.

pub mod cli;
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
pub mod forwarded;
pub mod gate_configs;
pub mod history;
pub mod hygiene;
pub mod lazy;
pub mod output;
pub mod paths;
pub mod registry_handover;
pub mod registry_override;
// Its own `pub` items are left to the crates it is moving into (issue #40).
#[allow(unreachable_pub)]
pub mod validate;

// The command line's types live in `cli`, below `confine` and the handover that match on
// them; named here too, as the crate's API (docs/architecture.md, "Module graph").
use clap::Parser;
pub use cli::{Cli, Command, PinArgs};
use lazy::Lazy;
use std::ffi::OsString;
use std::process::ExitCode;

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
