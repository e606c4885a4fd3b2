//! `cargo xtask matrix` from the repository root of a fresh clone (issue 15, item 2): the tree
//! and its config files are found as validate finds them, and paths given on the command line
//! are read from the current directory.

use std::path::Path;
use std::process::Command;
mod support;
use support::{copy_dir, git};

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");
const KEY: &str = "dsv41flash-fp4-b300-sglang-agentic-dspark";

fn fresh_clone() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ws = xtask::paths::workspace_root();
    copy_dir(
        &ws.join("inferencex-e2e"),
        &tmp.path().join("inferencex-e2e"),
    );
    git(tmp.path(), &["init", "-q", "-b", "main"]);
    tmp
}

/// (exit code, stdout, stderr) of `cargo xtask <args>` standing in `dir`.
fn xtask_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(XTASK)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("xtask runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn rows(json: &str) -> usize {
    serde_json::from_str::<Vec<serde_json::Value>>(json)
        .map(|v| v.len())
        .unwrap_or_else(|e| panic!("{e}: {json}"))
}

#[test]
fn matrix_runs_from_the_repository_root_as_a_contributor_types_it() {
    let clone = fresh_clone();
    let root = clone.path();
    // The exact command of issue 15, from the repository root.
    let (code, from_root, err) = xtask_in(
        root,
        &[
            "matrix",
            "test-config",
            "--config-files",
            "inferencex-e2e/configs/nvidia-master.yaml",
            "--config-keys",
            KEY,
            "--no-evals",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(rows(&from_root), 9);
    // No paths at all: the tree's master configs and runners.yaml.
    let (code, defaults, err) = xtask_in(
        root,
        &["matrix", "test-config", "--config-keys", KEY, "--no-evals"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(defaults, from_root);
    // From inside the tree, a path relative to where the user stands.
    let (code, inside, err) = xtask_in(
        &root.join("inferencex-e2e/configs"),
        &[
            "matrix",
            "test-config",
            "--config-files",
            "nvidia-master.yaml",
            "--config-keys",
            KEY,
            "--no-evals",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(inside, from_root);
    // An explicit --root keeps upstream's tree-relative paths.
    let (code, rooted, err) = xtask_in(
        root,
        &[
            "matrix",
            "test-config",
            "--root",
            "inferencex-e2e",
            "--config-files",
            "configs/nvidia-master.yaml",
            "--config-keys",
            KEY,
            "--no-evals",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(rooted, from_root);
    // --bind from the root: the row → variant table on stderr, the matrix on stdout.
    let (code, bound, table) = xtask_in(
        root,
        &[
            "matrix",
            "test-config",
            "--config-keys",
            KEY,
            "--no-evals",
            "--bind",
        ],
    );
    assert_eq!(code, 0, "{table}");
    assert_eq!(bound, from_root);
    insta::assert_snapshot!("matrix_bind_from_repository_root", table);
}

#[test]
fn matrix_outside_any_tree_says_what_to_pass() {
    let empty = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = xtask_in(empty.path(), &["matrix", "full-sweep"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    let err = err.replace(&empty.path().display().to_string(), "<dir>");
    insta::assert_snapshot!("matrix_no_tree", err);
}
