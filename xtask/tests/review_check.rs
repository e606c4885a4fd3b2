//! `cargo xtask review check` reads the change the way `validate` does: the appended changelog
//! entries through the gate (so `append-only: True`, YAML's boolean, counts as `true`), the
//! base's master keys from the base texts.

use std::path::Path;
mod support;
use support::{bundled_repo, edit};

/// `cargo xtask review check --base main --format json` inside `repo`: stdout.
fn review_check(repo: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["review", "check", "--base", "main", "--format", "json"])
        .current_dir(repo)
        .env("NO_COLOR", "1")
        .env("INFX_HERMETIC", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo)
        .output()
        .expect("xtask runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const ENTRY: &str = "\n- config-keys:\n    - dsv41flash-fp4-b300-sglang-agentic-dspark\n  scenario-type:\n    - agentic-coding\n  description:\n    - Add a point\n  append-only: FLAG\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n";

fn with_appended(flag: &str) -> String {
    let tmp = bundled_repo();
    edit(tmp.path(), "inferencex-e2e/perf-changelog.yaml", |t| {
        t + &ENTRY.replace("FLAG", flag)
    });
    review_check(tmp.path())
}

#[test]
fn an_append_only_entry_is_read_as_yaml_not_as_text() {
    // Uncommitted, so Check 12's base/head plan cannot run: the check says it did not run.
    for flag in ["true", "True"] {
        let out = with_appended(flag);
        assert!(
            out.contains("review/append-only") && out.contains("not run"),
            "append-only: {flag}\n{out}"
        );
    }
    let out = with_appended("false");
    assert!(!out.contains("review/append-only"), "{out}");
}
