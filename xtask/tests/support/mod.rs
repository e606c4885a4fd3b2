//! Helpers shared by the scenario tests: git in a throwaway repository, tree copies, edits.
//! Each test binary uses a subset, hence the dead-code allowance.
#![allow(dead_code)]

use std::path::Path;

/// Runs git in `dir` with no system or user configuration (HOME is the repository), asserts
/// success and returns stdout, trimmed.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = duct::cmd("git", args)
        .dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Copies the directory `from` to `to`, recursively.
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

/// Rewrites `rel` below `repo` with `f`; the edit must change something.
pub(crate) fn edit(repo: &Path, rel: &str, f: impl FnOnce(String) -> String) {
    let p = repo.join(rel);
    let before = std::fs::read_to_string(&p).expect("read");
    let after = f(before.clone());
    assert_ne!(before, after, "the edit of {rel} changed nothing");
    std::fs::write(&p, after).expect("write");
}

/// The bundled tree (`inferencex-e2e/` and `.github/` of this checkout) committed on `main` in
/// a throwaway repository, with a test identity and no line-ending conversion.
pub(crate) fn bundled_repo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path();
    let ws = xtask::paths::workspace_root();
    copy_dir(&ws.join("inferencex-e2e"), &repo.join("inferencex-e2e"));
    copy_dir(&ws.join(".github"), &repo.join(".github"));
    git(repo, &["init", "-q", "-b", "main"]);
    git(repo, &["config", "user.email", "dev@example.com"]);
    git(repo, &["config", "user.name", "Dev"]);
    git(repo, &["config", "core.autocrlf", "false"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "bundled tree"]);
    tmp
}

/// A copy of `corpus/<top>` as `<tmp>/corpus/<top>` in a fresh temporary folder outside any git
/// work tree, so that a report over a corpus tree does not depend on whether ../shared (or
/// INFX_CORPUS) sits inside a repository: validate scopes a tree inside one to its last commit.
/// Returns the folder (removed on drop) and the copy's `corpus` directory.
pub(crate) fn detached_corpus(
    corpus: &Path,
    tops: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    if let Some(repo) = xtask::paths::enclosing_work_tree(tmp.path()) {
        panic!(
            "the temporary folder {} is inside the git work tree {}: point TMPDIR outside it",
            tmp.path().display(),
            repo.display()
        );
    }
    let copy = tmp.path().join("corpus");
    for top in tops {
        copy_dir(&corpus.join(top), &copy.join(top));
    }
    (tmp, copy)
}
