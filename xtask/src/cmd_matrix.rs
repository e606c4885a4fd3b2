//! `cargo xtask matrix full-sweep|test-config …` (owner: matrix).

use std::process::ExitCode;

#[derive(clap::Subcommand, Debug)]
pub enum MatrixCommand {
    /// Every config (filters as upstream's full-sweep).
    FullSweep,
    /// Selected config keys (as upstream's test-config).
    TestConfig,
}

pub fn run(_cmd: MatrixCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("matrix: not implemented yet")
}
