//! `cargo xtask review …` (owner: review).

use std::process::ExitCode;

#[derive(clap::Subcommand, Debug)]
pub enum ReviewCommand {
    /// Run every repository-decidable review check.
    Check,
}

pub fn run(_cmd: ReviewCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("review: not implemented yet")
}
