//! `cargo xtask dry-run FILE[:SELECTOR]` (owner: recipe).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Recipe file, optionally with a selector (`file.yaml:override_x`).
    pub target: String,
}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("dry-run: not implemented yet")
}
