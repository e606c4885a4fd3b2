//! `cargo xtask validate`: the main job (owner: lead).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("validate: not implemented yet")
}
