//! Where things are: the workspace root, the bundled tree, the shared corpus.

use std::path::{Path, PathBuf};

/// The workspace root (parent of the xtask crate), fixed at compile time.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The benchmark tree validated by default.
pub fn default_tree() -> PathBuf {
    workspace_root().join("inferencex-e2e")
}

/// `../shared/corpus` beside the workspace, or `INFX_CORPUS` when set. `None` when absent
/// (a user's clone has no corpus: corpus-based tests skip and say so).
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFX_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => workspace_root().parent()?.join("shared").join("corpus"),
    };
    dir.is_dir().then_some(dir)
}
