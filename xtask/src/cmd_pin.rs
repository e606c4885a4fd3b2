//! `cargo xtask pin [--check] [PATHS…]` (owner: image).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("pin: not implemented yet")
}
