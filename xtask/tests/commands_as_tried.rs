//! `review check`, `changelog plan` and `changelog replay` run the way a contributor first
//! tries them (issue 15, item 7): in a clone on a feature branch, with no --base/--head, the
//! change is found as validate finds it; review prints repository-relative paths; replay
//! follows the changelog where the tree keeps it (`inferencex-e2e/perf-changelog.yaml`).

use std::path::Path;
mod support;
use support::{copy_dir, git};

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");
const RECIPE: &str = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";
const CHANGELOG: &str = "inferencex-e2e/perf-changelog.yaml";

/// The bundled tree committed on `main`, then a `feature` branch checked out.
fn clone_on_a_branch() -> tempfile::TempDir {
    let tmp = support::bundled_repo();
    git(tmp.path(), &["checkout", "-q", "-b", "feature"]);
    tmp
}

/// (exit code, stdout, stderr) of `cargo xtask <args>` standing in `dir`.
fn xtask_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = duct::cmd(XTASK, args)
        .dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .expect("xtask runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Timings vary run to run.
fn without_timings(s: &str) -> String {
    s.lines()
        .map(|l| match l.find(" (load ") {
            Some(i) => format!("{}\n", &l[..i]),
            None => match (l.find(" in "), l.find(" s:")) {
                (Some(a), Some(b)) if a < b => format!("{}{}\n", &l[..a], &l[b + 2..]),
                _ => format!("{l}\n"),
            },
        })
        .collect()
}

#[test]
fn review_check_finds_the_change_and_prints_repository_paths() {
    let clone = clone_on_a_branch();
    let repo = clone.path();
    support::edit(repo, RECIPE, |t| {
        t.replacen(
            "        PYTHONUNBUFFERED: \"1\"\n",
            "        PYTHONUNBUFFERED: \"1\"\n        SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: \"1\"\n",
            1,
        )
    });
    // --signer needs the change: found without --base, as validate finds it.
    let (code, out, err) = xtask_in(repo, &["review", "check", "--signer", "@someone"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("error[review/codeowners-signer]"),
        "{out}{err}"
    );
    let locations: Vec<&str> = out
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--> "))
        .collect();
    assert!(!locations.is_empty(), "{out}");
    for l in &locations {
        assert!(
            l.starts_with("inferencex-e2e/") || l.starts_with(".github/"),
            "not repository-relative: {l}\n{out}"
        );
    }
    insta::assert_snapshot!(
        "review_check_default_base",
        format!("{out}{}", without_timings(&err))
    );
    // Outside git there is no change: the change-based checks are skipped, the rest runs.
    let loose = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &repo.join("inferencex-e2e"),
        &loose.path().join("inferencex-e2e"),
    );
    let (code, out, err) = xtask_in(
        loose.path(),
        &["review", "check", "--root", "inferencex-e2e"],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("error[review/draft-precision-env]") && !out.contains("codeowners"),
        "{out}"
    );
}

/// Appends an entry re-running dsr1-fp4-b300-sglang and commits it.
fn append_a_rerun_entry(repo: &Path) {
    support::edit(repo, CHANGELOG, |t| {
        format!(
            "{t}\n- config-keys:\n    - dsr1-fp4-b300-sglang\n  description:\n    - Re-run on the same image\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n"
        )
    });
    git(repo, &["commit", "-q", "-am", "changelog: re-run dsr1"]);
}

/// On a clean clone (nothing since the base) `changelog plan` plans the last commit that
/// changed the changelog, as validate does, instead of exiting 1 with "No additions found"
/// (issue 43, item 7).
#[test]
fn changelog_plan_on_a_clean_clone_plans_the_last_changelog_commit() {
    let tmp = support::bundled_repo();
    let repo = tmp.path();
    append_a_rerun_entry(repo);
    let (code, plan, err) = xtask_in(repo, &["changelog", "plan"]);
    assert_eq!(code, 0, "{err}");
    assert!(plan.contains("dsr1-fp4-b300-sglang"), "{plan}");
}

#[test]
fn changelog_plan_and_replay_default_as_validate() {
    let clone = clone_on_a_branch();
    let repo = clone.path();
    append_a_rerun_entry(repo);
    // No --base / --head: the merge-base with main, and HEAD.
    let (code, plan, err) = xtask_in(repo, &["changelog", "plan"]);
    assert_eq!(code, 0, "{err}");
    let (code, explicit, err) = xtask_in(
        repo,
        &["changelog", "plan", "--base", "main", "--head", "HEAD"],
    );
    assert_eq!(code, 0, "{err}");
    let json = |s: &str| -> serde_json::Value { serde_json::from_str(s).expect("plan JSON") };
    let (mut plan_json, mut explicit_json) = (json(&plan), json(&explicit));
    // The base is labelled as given: `main` there, the merge-base commit here.
    let merge_base = git(repo, &["merge-base", "main", "HEAD"]);
    assert_eq!(
        plan_json["changelog_metadata"]["base_ref"],
        merge_base.as_str()
    );
    plan_json["changelog_metadata"]["base_ref"] = serde_json::Value::Null;
    explicit_json["changelog_metadata"]["base_ref"] = serde_json::Value::Null;
    assert_eq!(plan_json, explicit_json);
    assert!(plan.contains("dsr1-fp4-b300-sglang"), "{plan}");
    // Replay follows inferencex-e2e/perf-changelog.yaml: both commits that touched it.
    let (code, out, err) = xtask_in(repo, &["changelog", "replay"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("replayed 2 commits of inferencex-e2e/perf-changelog.yaml"),
        "{out}"
    );
    insta::assert_snapshot!("changelog_replay_nested_tree", without_timings(&out));
}
