//! `cargo xtask conformance [validation|recipes|matrix|changelog]`: agreement with the reference
//! outputs in ../shared/corpus. Each area lives in its own module.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which area; all when omitted.
    pub area: Option<Area>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Area {
    Validation,
    Recipes,
    Matrix,
    Changelog,
}

/// The result of one area: `N/M agree` plus every disagreement, and the cases where we are
/// deliberately stricter than upstream (counted as agreement, with the written reason).
#[derive(Debug, Default)]
pub struct Outcome {
    pub area: &'static str,
    pub total: usize,
    pub agree: usize,
    pub disagreements: Vec<String>,
    pub explained: Vec<String>,
}

impl Outcome {
    pub fn summary(&self) -> String {
        format!("{}: {}/{} agree", self.area, self.agree, self.total)
    }
}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("conformance: not implemented yet")
}
