//! `cargo xtask review check` reads the tree and the change the way `validate` does (its load,
//! docs/architecture.md): the appended changelog entries through the gate (so
//! `append-only: True`, YAML's boolean, counts as `true`), the base's master keys from the base
//! texts, and the tree's `# infx: allow(code) reason` comments.

use std::path::Path;
mod support;
use support::{bundled_repo, edit};

/// `cargo xtask review check --base main --format json` inside `repo`: stdout.
fn review_check(repo: &Path) -> String {
    review_check_with_summary(repo).0
}

/// `cargo xtask review check --base main --format json` inside `repo`: stdout and stderr.
fn review_check_with_summary(repo: &Path) -> (String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["review", "check", "--base", "main", "--format", "json"])
        .current_dir(repo)
        .env("NO_COLOR", "1")
        .env("INFX_HERMETIC", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo)
        .output()
        .expect("xtask runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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

const RECIPE: &str = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";

#[test]
fn allow_comments_acknowledge_warnings_as_in_validate() {
    // The bundled DP4 C192 cuda-graph warning is acknowledged in the recipe: validate counts
    // it as acknowledged, and so does review check.
    let tmp = bundled_repo();
    let (out, err) = review_check_with_summary(tmp.path());
    assert!(!out.contains("review/dp-cuda-graph"), "{out}");
    assert!(err.contains("0 warnings, 1 acknowledged"), "{err}");
    // Without the comment the warning is shown again.
    edit(tmp.path(), RECIPE, |t| {
        t.replace("  # infx: allow(review/dp-cuda-graph)", "  # was allow")
    });
    let (out, err) = review_check_with_summary(tmp.path());
    assert!(out.contains("review/dp-cuda-graph"), "{out}");
    assert!(err.contains("1 warnings (load"), "{err}");
    // An allow that acknowledges nothing is reported, as validate reports it.
    edit(tmp.path(), RECIPE, |t| {
        t.replace(
            "        cuda-graph-max-bs-decode: 64  # was allow",
            "        cuda-graph-max-bs-decode: 96  # infx: allow(review/dp-cuda-graph)",
        )
    });
    let (out, _) = review_check_with_summary(tmp.path());
    assert!(
        out.contains("allow/unused") && !out.contains("review/dp-cuda-graph\""),
        "{out}"
    );
}
