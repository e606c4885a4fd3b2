//! `cargo xtask changelog …` and `install-merge-driver` (owner: changelog).

use std::process::ExitCode;

#[derive(clap::Subcommand, Debug)]
pub enum ChangelogCommand {
    /// Check the changelog against the base (append-only, entries).
    Check,
}

#[derive(clap::Args, Debug)]
pub struct InstallArgs {}

pub fn run(_cmd: ChangelogCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("changelog: not implemented yet")
}

pub fn install_merge_driver(_args: InstallArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("install-merge-driver: not implemented yet")
}
