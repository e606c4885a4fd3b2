//! `cargo xtask conformance recipes`.

use std::path::Path;

pub fn run(_corpus: &Path) -> anyhow::Result<super::Outcome> {
    anyhow::bail!("conformance recipes: not implemented yet")
}
