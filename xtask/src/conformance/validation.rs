//! `cargo xtask conformance validation`.

use std::path::Path;

pub fn run(_corpus: &Path) -> anyhow::Result<super::Outcome> {
    anyhow::bail!("conformance validation: not implemented yet")
}
