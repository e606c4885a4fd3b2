//! The developer commands of `cargo xtask`, out of the product binary (issue #40 item 6):
//! `test`, the CI runner, and `conformance`, the harness against upstream's tools. The `xtask`
//! binary hands both over to this crate's `xtask-dev` binary, arguments verbatim, as it hands
//! `pin` to `xtask-registry` (README, "What builds when"). What they share with the product
//! (paths, validate, the matrix and changelog commands) they import from xtask's library.

pub mod cli;
pub mod cmd_test;
pub mod conformance;

use clap::Parser;
pub use cli::{Cli, Command};
use std::ffi::OsString;
use std::process::ExitCode;
use xtask::lazy::Lazy;

/// Parses `args` (including the program name) and runs the developer command, with xtask's
/// exit codes: 0 clean, 1 findings or failure, 2 usage error.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Conformance(Lazy(a)) => conformance::run(a),
        Command::Test(Lazy(a)) => cmd_test::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
