//! Where things are: the checkout, the benchmark tree, the shared corpus.
//!
//! Every default is found at run time from the current directory, never from where the binary
//! was built: a copied, cached or `nix build`-installed `xtask` must check the checkout the user
//! stands in. The rule (also in `--help` and README's "Set up"):
//! - the checkout is the enclosing git work tree (the nearest ancestor of the current directory
//!   holding `.git`, a directory or a worktree's file), else the current directory;
//! - the benchmark tree is the checkout's `inferencex-e2e/` when it has one, else the checkout
//!   itself (an upstream-style repository with `configs/` at its top).

use std::path::{Path, PathBuf};

/// The enclosing git work tree of `start`, if any.
pub fn enclosing_work_tree(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The checkout the user stands in: the enclosing git work tree of the current directory, else
/// the current directory itself.
pub fn checkout_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    enclosing_work_tree(&cwd).unwrap_or(cwd)
}

/// The benchmark tree of a checkout: its `inferencex-e2e/` when present, else the checkout.
pub fn tree_of(checkout: &Path) -> PathBuf {
    let bundled = checkout.join("inferencex-e2e");
    if bundled.is_dir() {
        bundled
    } else {
        checkout.to_path_buf()
    }
}

/// The benchmark tree validated by default (see the module docs for the rule).
pub fn default_tree() -> PathBuf {
    tree_of(&checkout_root())
}

/// The source checkout this binary was compiled from. Only for tests, which legitimately want
/// the sources they were built with; commands use [`checkout_root`].
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// `../shared/corpus` beside the checkout, or `INFX_CORPUS` when set. `None` when absent
/// (a user's clone has no corpus: corpus-based tests skip and say so).
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFX_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => checkout_root().parent()?.join("shared").join("corpus"),
    };
    dir.is_dir().then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_is_found_from_the_current_directory_not_the_build_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let clone = dir.path().join("clone");
        let deep = clone.join("inferencex-e2e").join("configs");
        std::fs::create_dir_all(&deep).expect("mkdir");
        std::fs::create_dir_all(clone.join(".git")).expect("mkdir .git");
        assert_eq!(enclosing_work_tree(&deep), Some(clone.clone()));
        assert_eq!(tree_of(&clone), clone.join("inferencex-e2e"));
        // An upstream-style repository: configs/ at the top, no inferencex-e2e/.
        let upstream = dir.path().join("upstream");
        std::fs::create_dir_all(upstream.join("configs")).expect("mkdir");
        std::fs::write(upstream.join(".git"), "gitdir: elsewhere\n").expect("worktree file");
        assert_eq!(
            enclosing_work_tree(&upstream.join("configs")),
            Some(upstream.clone())
        );
        assert_eq!(tree_of(&upstream), upstream);
        // Outside any work tree there is no enclosing one.
        let loose = dir.path().join("loose");
        std::fs::create_dir_all(&loose).expect("mkdir");
        if enclosing_work_tree(dir.path()).is_none() {
            assert_eq!(enclosing_work_tree(&loose), None);
        }
    }
}
