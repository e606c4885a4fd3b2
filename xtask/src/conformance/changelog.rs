//! `cargo xtask conformance changelog`.

use std::path::Path;

pub fn run(_corpus: &Path) -> anyhow::Result<super::Outcome> {
    anyhow::bail!("conformance changelog: not implemented yet")
}
