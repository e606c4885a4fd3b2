//! `cargo xtask diff-check` (owner: diff).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("diff-check: not implemented yet")
}
