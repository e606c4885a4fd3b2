//! `worktree_bytes_to_commit`: the working-tree bytes as git would commit them, checked against
//! git itself (`git add` then `git show :path`, the staged blob).

mod common;

use common::Repo;
use infx_diff::codes;
use std::path::Path;

fn ours(r: &Repo, rel: &str) -> Vec<u8> {
    infx_diff::worktree_bytes_to_commit(r.path(), Path::new(rel))
        .unwrap_or_else(|d| panic!("worktree_bytes_to_commit: {d}"))
}

/// What git stores for `rel` when it is added now (staging it as a side effect).
fn staged_by_git(r: &Repo, rel: &str) -> Vec<u8> {
    r.git(&["add", "--", rel]);
    duct::cmd("git", ["show", &format!(":{rel}")])
        .dir(r.path())
        .stdout_capture()
        .run()
        .expect("git show")
        .stdout
}

fn agree(r: &Repo, rel: &str) -> Vec<u8> {
    let before = ours(r, rel);
    assert_eq!(before, staged_by_git(r, rel), "{rel}");
    before
}

#[test]
fn autocrlf_true_reads_a_crlf_checkout_as_the_lf_git_commits() {
    let r = Repo::new();
    r.git(&["config", "core.autocrlf", "true"]);
    r.write("perf-changelog.yaml", b"- a: 1\n");
    r.commit_all("base");
    // A Windows checkout: CRLF on disk, one entry appended.
    r.write("perf-changelog.yaml", b"- a: 1\r\n- b: 2\r\n");
    assert_eq!(agree(&r, "perf-changelog.yaml"), b"- a: 1\n- b: 2\n");
    // A new, untracked file is converted the same way.
    r.write("new/file.yaml", b"x: 1\r\n");
    assert_eq!(agree(&r, "new/file.yaml"), b"x: 1\n");
}

#[test]
fn without_conversion_the_bytes_on_disk_are_what_git_commits() {
    let r = Repo::new();
    r.git(&["config", "core.autocrlf", "false"]);
    r.write("a.yaml", b"a: 1\n");
    r.commit_all("base");
    r.write("a.yaml", b"a: 1\r\nb: 2\r\n");
    assert_eq!(agree(&r, "a.yaml"), b"a: 1\r\nb: 2\r\n");
}

#[test]
fn autocrlf_keeps_crlf_a_file_already_stores() {
    // git's safe autocrlf: a blob already holding CR is not normalised on the way in.
    let r = Repo::new();
    r.git(&["config", "core.autocrlf", "false"]);
    r.write("w.txt", b"a\r\n");
    r.commit_all("base");
    r.git(&["config", "core.autocrlf", "true"]);
    r.write("w.txt", b"a\r\nb\r\n");
    assert_eq!(agree(&r, "w.txt"), b"a\r\nb\r\n");
}

#[test]
fn eol_attribute_converts_without_autocrlf() {
    let r = Repo::new();
    r.git(&["config", "core.autocrlf", "false"]);
    r.write(".gitattributes", b"*.yaml text eol=crlf\n");
    r.write("c.yaml", b"c: 1\n");
    r.commit_all("base");
    r.write("c.yaml", b"c: 1\r\nd: 2\r\n");
    assert_eq!(agree(&r, "c.yaml"), b"c: 1\nd: 2\n");
}

#[test]
fn a_missing_file_is_an_error_with_a_code() {
    let r = Repo::new();
    r.git(&["config", "core.autocrlf", "true"]);
    r.write("a.yaml", b"a: 1\n");
    r.commit_all("base");
    let e = infx_diff::worktree_bytes_to_commit(r.path(), Path::new("gone.yaml")).unwrap_err();
    assert_eq!(e.code, codes::IO);
}
