//! Every command that compares a change with its base picks the same base in one clone
//! (docs/diff.md, "Base"; issue 14 step 3). The clone below is built so that the two upstream
//! lists infx once had disagree: `master` exists (the changelog's old list tried it) and
//! `upstream/main` exists (validate's list tried it), at different commits.

use std::path::Path;
mod support;
use support::{copy_dir, git};

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

/// The bundled tree committed as A on `trunk` (`master` points there), a commit B on top that
/// `upstream/main` points to, and a `feature` branch with commit C on top of B.
fn clone_with_two_upstreams() -> (tempfile::TempDir, String, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path();
    let ws = xtask::paths::workspace_root();
    copy_dir(&ws.join("inferencex-e2e"), &repo.join("inferencex-e2e"));
    copy_dir(&ws.join(".github"), &repo.join(".github"));
    git(repo, &["init", "-q", "-b", "trunk"]);
    git(repo, &["config", "user.email", "dev@example.com"]);
    git(repo, &["config", "user.name", "Dev"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "A: bundled tree"]);
    git(repo, &["branch", "master"]);
    let a = git(repo, &["rev-parse", "HEAD"]);
    std::fs::write(repo.join("notes.txt"), "one\n").expect("write");
    git(repo, &["add", "notes.txt"]);
    git(repo, &["commit", "-q", "-m", "B: upstream moved on"]);
    let b = git(repo, &["rev-parse", "HEAD"]);
    git(repo, &["update-ref", "refs/remotes/upstream/main", &b]);
    git(repo, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(repo.join("notes.txt"), "one\ntwo\n").expect("write");
    git(repo, &["commit", "-q", "-am", "C: the change"]);
    (tmp, a, b)
}

/// (exit code, stdout + stderr) of `cargo xtask <args>` standing in `dir`.
fn xtask_in(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = duct::cmd(XTASK, args)
        .dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stderr_to_stdout()
        .stdout_capture()
        .unchecked()
        .run()
        .expect("xtask runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn validate_diff_check_and_changelog_pick_one_base() {
    let (tmp, a, b) = clone_with_two_upstreams();
    let repo = tmp.path();
    let b12 = &b[..12];

    let (code, out) = xtask_in(repo, &["validate"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("since {b12} (merge-base with upstream/main)")),
        "validate: {out}"
    );

    let (code, out) = xtask_in(repo, &["diff-check"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "base {b12} (merge-base of HEAD and upstream/main)"
        )),
        "diff-check: {out}"
    );

    // Before one resolution, changelog check tried `master` first and measured against A.
    let (code, out) = xtask_in(repo, &["changelog", "check"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("against {b})")),
        "changelog check: {out}"
    );
    assert!(!out.contains(&a), "changelog check used master: {out}");
}

#[test]
fn changelog_check_reports_a_missing_base_as_validate_does() {
    let (tmp, _, _) = clone_with_two_upstreams();
    let repo = tmp.path();
    let (code, validate) = xtask_in(repo, &["validate", "--base", "no-such-rev"]);
    assert_ne!(code, 0);
    assert!(
        validate.contains("base revision `no-such-rev` not found"),
        "{validate}"
    );
    let (code, changelog) = xtask_in(repo, &["changelog", "check", "--base", "no-such-rev"]);
    assert_ne!(code, 0);
    assert!(
        changelog.contains("base revision `no-such-rev` not found"),
        "{changelog}"
    );
}
