//! Which folders a command may read (docs/security.md, "What each command may read"): before a
//! command runs, the repository around each tree it was given is registered with infx-fs, and
//! from then on no file outside those roots is read, whatever symlinks the tree holds.

use crate::cli::Command;
use crate::lazy::Lazy;
use crate::paths::repository_root;
use std::path::{Path, PathBuf};

/// The folder a file named on the command line lives in, as a tree to confine to.
fn around_file(p: &Path) -> PathBuf {
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    repository_root(&parent)
}

/// `p` lies below `dir` by name, before any symlink is resolved.
fn lexically_within(p: &Path, dir: &Path) -> bool {
    match (std::path::absolute(p), std::path::absolute(dir)) {
        (Ok(p), Ok(dir)) => p.starts_with(dir),
        _ => false,
    }
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

/// The roots `cmd` may read below; `None` for commands that read no tree (test, conformance,
/// fuzz, the merge driver whose three files git chooses) and for `diff-check`, which confines
/// itself once its repository is open.
pub fn roots_of(cmd: &Command) -> Option<Vec<PathBuf>> {
    use crate::cmd_changelog::ChangelogCommand as C;
    use crate::cmd_matrix::MatrixCommand as M;
    use crate::cmd_review::ReviewCommand as R;
    let repo_or_cwd = |r: &Option<PathBuf>| repository_root(r.as_deref().unwrap_or(&cwd()));
    let tree_or_default = |r: &Option<PathBuf>| {
        repository_root(&r.clone().unwrap_or_else(crate::paths::default_tree))
    };
    Some(match cmd {
        Command::Validate(a) => vec![repository_root(&a.root)],
        Command::Matrix(Lazy(M::FullSweep(a))) => vec![repository_root(&a.common.tree())],
        Command::Matrix(Lazy(M::TestConfig(a))) => vec![repository_root(&a.common.tree())],
        Command::DryRun(a) => {
            let mut roots = vec![repository_root(&a.tree)];
            for t in &a.target {
                // `file.yaml:selector`: the file part is up to the first ':' that leaves an
                // existing path, else the whole argument.
                let file = t
                    .char_indices()
                    .filter(|(_, c)| *c == ':')
                    .map(|(i, _)| &t[..i])
                    .find(|f| Path::new(f).exists())
                    .unwrap_or(t);
                // A file inside the tree as given needs no root of its own: adding the
                // folder a link in the tree resolves to would let that link out.
                if !lexically_within(Path::new(file), &a.tree) {
                    roots.push(around_file(Path::new(file)));
                }
            }
            roots
        }
        Command::Changelog(Lazy(C::Check(crate::cmd_changelog::CheckArgs { repo, .. })))
        | Command::Changelog(Lazy(C::Plan(crate::cmd_changelog::PlanArgs { repo, .. })))
        | Command::Changelog(Lazy(C::Replay { repo, .. })) => vec![repo_or_cwd(&repo.repo)],
        Command::Changelog(Lazy(C::MergeDriver { .. })) => return None,
        Command::InstallMergeDriver(a) => vec![repo_or_cwd(&a.repo)],
        #[cfg(feature = "registry")]
        Command::Pin(a) => {
            let mut roots = vec![repository_root(&a.root)];
            for p in &a.paths {
                if lexically_within(p, &a.root) {
                    continue;
                }
                roots.push(if p.is_dir() {
                    repository_root(p)
                } else {
                    around_file(p)
                });
            }
            roots
        }
        // Without the registry client `pin` is handed over before anything is read.
        #[cfg(not(feature = "registry"))]
        Command::Pin(_) => return None,
        // Confined by the command itself as soon as it has opened the repository around
        // `--repo` (cmd_diff_check.rs): searching for it here too cost a second open, a
        // twentieth of a small change's run (docs/performance.md, "diff-check's start").
        Command::DiffCheck(_) => return None,
        Command::Review(Lazy(R::Check(a))) => vec![tree_or_default(&a.root)],
        Command::Review(Lazy(R::Owners(a))) => vec![repo_or_cwd(&a.root)],
        Command::Review(Lazy(R::Cookbook(a))) => vec![tree_or_default(&a.root)],
        Command::Review(Lazy(R::Signoff(a))) => {
            let mut roots = vec![tree_or_default(&a.root)];
            // Result artifacts may live outside the tree (a downloaded run).
            if let Some(dir) = &a.run_artifacts {
                roots.push(repository_root(dir));
            }
            roots
        }
        Command::Review(Lazy(R::Pareto(_))) => return None,
        Command::Conformance(_) | Command::Test(_) | Command::Fuzz(_) | Command::Codes(_) => {
            return None;
        }
    })
}

/// Registers the roots of `cmd` with infx-fs.
pub fn confine(cmd: &Command) {
    for root in roots_of(cmd).unwrap_or_default() {
        // A root that does not resolve is registered as given (infx-fs never falls back to
        // unconfined reads); the command itself reports the missing folder.
        let _ = infx_fs::confine_to(&root);
    }
}
