//! The command line of the `xtask-dev` binary: the developer commands as `cargo xtask` shows
//! them, so that their help and usage errors read as before the split (issue #40 item 6).

use crate::{cmd_test, conformance};
use clap::{Parser, Subcommand};
use xtask::lazy::Lazy;

#[derive(Parser, Debug)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "The developer commands of cargo xtask (the xtask binary hands them over): the test suite and the conformance harness.",
    version
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Each variant's text is its line in `cargo xtask --help` (xtask's `cli::Command`).
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compare against the reference outputs in ../shared/corpus.
    Conformance(Lazy<conformance::Args>),
    /// Run the whole test suite (the README's test command).
    Test(Lazy<cmd_test::Args>),
}
