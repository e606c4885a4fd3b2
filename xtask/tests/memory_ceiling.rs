//! The memory ceiling (issue #42, item 5; docs/security.md, "Memory"): `validate` under a small
//! address-space limit (`ulimit -v`) gives the same verdict as without one, and a limit too
//! small for the run ends it with `process/out-of-memory` and exit 1, never SIGABRT (exit 134).
//! The bundled tree always (CI); the August tree of ../shared/corpus when it is there.

use std::path::{Path, PathBuf};
use std::process::Command;
mod support;
use support::copy_dir;

/// What a run printed and how it ended.
struct Ended {
    code: Option<i32>,
    out: String,
    err: String,
}

/// `xtask validate --root TREE --all --hermetic` under `ulimit -v KIB` (none: unlimited).
fn validate(tree: &Path, kib: Option<u64>) -> Ended {
    let xtask = env!("CARGO_BIN_EXE_xtask");
    let limit = kib.map_or("unlimited".to_string(), |k| k.to_string());
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v \"$1\" && shift && exec \"$@\"")
        .arg("sh")
        .arg(&limit)
        .arg(xtask)
        .args(["validate", "--root"])
        .arg(tree)
        .args(["--all", "--hermetic"])
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("sh runs");
    Ended {
        code: out.status.code(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The verdict line (`validate: passed …` / `validate: FAILED (N errors, M warnings)`), timing cut.
fn verdict(e: &Ended) -> String {
    e.out
        .lines()
        .find(|l| l.starts_with("validate: "))
        .map(|l| l.split(" in ").next().unwrap_or(l).to_string())
        .unwrap_or_default()
}

fn ceiling(tree: &Path) {
    let free = validate(tree, None);
    assert!(matches!(free.code, Some(0 | 1)), "{}{}", free.out, free.err);
    // 256 MiB of address space: the August tree peaks at 63 MB resident.
    let limited = validate(tree, Some(256 * 1024));
    assert_eq!(limited.code, free.code, "{}{}", limited.out, limited.err);
    assert_eq!(verdict(&limited), verdict(&free), "{}", limited.err);
    assert!(!verdict(&free).is_empty(), "{}", free.out);
    // Far too little: a finding and exit 1, not an abort.
    let starved = validate(tree, Some(48 * 1024));
    assert_eq!(starved.code, Some(1), "{}{}", starved.out, starved.err);
    assert!(
        starved
            .err
            .contains("error[process/out-of-memory]: out of memory: an allocation of "),
        "{}",
        starved.err
    );
}

/// A copy outside any git work tree, so the whole tree is judged the same way each time.
fn copy_of(tree: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let copy = tmp.path().join("tree");
    copy_dir(tree, &copy);
    (tmp, copy)
}

#[test]
fn the_bundled_tree_validates_under_256_mib_of_address_space() {
    let (_tmp, tree) = copy_of(&xtask::paths::workspace_root().join("inferencex-e2e"));
    ceiling(&tree);
}

#[test]
fn the_august_tree_validates_under_256_mib_of_address_space() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        eprintln!("SKIP: no ../shared/corpus (INFX_CORPUS) for the August tree");
        return;
    };
    let (_tmp, tree) = copy_of(&corpus.join("inferencex-aug2026"));
    ceiling(&tree);
}
