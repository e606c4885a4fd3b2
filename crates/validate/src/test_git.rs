//! The unit tests' git: a repository in a temporary folder, commands that must succeed.

use std::path::Path;

/// Runs `git args` in `dir` (with a committer identity); the test fails if git does.
pub(crate) fn git(dir: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "git {args:?}");
}
