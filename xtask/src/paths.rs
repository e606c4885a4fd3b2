//! Where things are: the checkout, the benchmark tree, the shared corpus, the repository around
//! a folder.
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

/// The checkout the user stands in: the enclosing git work tree of the current directory; with
/// no work tree (an exported source, e.g. the Nix build sandbox), the nearest ancestor holding
/// `inferencex-e2e/`; else the current directory itself.
pub fn checkout_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    enclosing_work_tree(&cwd)
        .or_else(|| {
            cwd.ancestors()
                .find(|dir| dir.join(infx_config::layout::BUNDLED_TREE).is_dir())
                .map(Path::to_path_buf)
        })
        .unwrap_or(cwd)
}

/// The benchmark tree of a checkout: its `inferencex-e2e/` when present, else the checkout.
pub fn tree_of(checkout: &Path) -> PathBuf {
    let bundled = checkout.join(infx_config::layout::BUNDLED_TREE);
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

/// `../shared/<name>` beside the checkout, or the directory in `env_var` when that is set.
/// `None` when absent (a user's clone has no ../shared: the tests that need it skip and say so).
pub fn shared_dir(name: &str, env_var: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os(env_var) {
        Some(p) => PathBuf::from(p),
        None => checkout_root().parent()?.join("shared").join(name),
    };
    dir.is_dir().then_some(dir)
}

/// `../shared/corpus` (or `INFX_CORPUS`): upstream's data and the outputs of its tools.
pub fn corpus_dir() -> Option<PathBuf> {
    shared_dir("corpus", "INFX_CORPUS")
}

/// `../shared/reference` (or `INFX_REFERENCE`): upstream's tools, run as oracles.
pub fn reference_dir() -> Option<PathBuf> {
    shared_dir("reference", "INFX_REFERENCE")
}

/// `../shared/nix-inputs` (or `INFX_NIX_INPUTS`): source snapshots of the flake's inputs.
pub fn nix_inputs_dir() -> Option<PathBuf> {
    shared_dir("nix-inputs", "INFX_NIX_INPUTS")
}

/// `target/` of the checkout: where the test tools and oracle environments are installed.
pub fn tools_target() -> PathBuf {
    checkout_root().join("target")
}

/// The repository a tree belongs to: the git work tree containing `dir`, else `dir` itself.
/// (The Oct layout's CODEOWNERS sits one level above `inferencex-e2e/`, in the repository.)
///
/// Taken from the path *as given*: when a symlink on the way to `dir` sits inside a
/// repository (`benchmarks/e -> /etc`), the root is that repository, never what the link
/// resolves to, so the link's target is outside the root and refused (docs/security.md,
/// "The safe file layer"). Links above any repository (a checkout reached through a linked
/// home folder) are the invoker's and are followed.
pub fn repository_root(dir: &Path) -> PathBuf {
    if let Some(repo) = repository_of_inner_link(dir) {
        return repo;
    }
    infx_git::Repo::discover(dir)
        .ok()
        .and_then(|r| r.workdir())
        .unwrap_or_else(|| dir.to_path_buf())
}

/// The work tree holding the first symlink on `dir`'s way down whose folder is inside one.
fn repository_of_inner_link(dir: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(dir).ok()?;
    let mut prefix = PathBuf::new();
    for c in abs.components() {
        let parent = prefix.clone();
        prefix.push(c);
        let is_link = std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link || parent.as_os_str().is_empty() {
            continue;
        }
        if let Some(repo) = infx_git::Repo::discover(&parent)
            .ok()
            .and_then(|r| r.workdir())
        {
            return Some(repo);
        }
    }
    None
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
