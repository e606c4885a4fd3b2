//! The DeepSeek-V4.1-Flash B300 refresh in a throwaway git repository, and the single faults
//! injected into it: shared by the scenario test (which checks each fault's one error) and the
//! report-stability test (which snapshots the whole report of each). Each test binary uses a
//! subset, hence the dead-code allowance.
#![allow(dead_code)]

use crate::support::{copy_dir, edit, git};
use std::path::{Path, PathBuf};

pub(crate) const RECIPE: &str = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";
pub(crate) const MASTER: &str = "inferencex-e2e/configs/nvidia-master.yaml";
pub(crate) const CHANGELOG: &str = "inferencex-e2e/perf-changelog.yaml";
const NEW_IMAGE: &str = "lmsysorg/sglang:nightly-dev-cu13-20261004-295a53c9@sha256:7cfd4dd8e0e902d2a3c0560565963c4e172091e1586aaed15ff5a0a131394d34";
const OLD_IMAGE: &str = "lmsysorg/sglang:nightly-dev-cu13-20260915-8d1e0f3a@sha256:0b9a7c55e1f2d3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9012345";
const UNPINNED_IMAGE: &str = "lmsysorg/sglang:nightly-dev-cu13-20261004-295a53c9";

/// Commits everything with a fixed author, committer and date, so commit ids (which the report
/// quotes) are the same on every run.
fn commit_all(repo: &Path, message: &str) {
    git(repo, &["add", "-A"]);
    let out = duct::cmd("git", ["commit", "-q", "-m", message])
        .dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo)
        .env("GIT_AUTHOR_DATE", "2026-10-04T12:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-10-04T12:00:00Z")
        .stderr_capture()
        .unchecked()
        .run()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git commit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository whose `main` holds the curve before the refresh and whose checked-out branch
/// `refresh` holds the bundled tree as it is (the refresh commit).
pub(crate) fn scenario() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let ws = xtask::paths::workspace_root();
    copy_dir(&ws.join("inferencex-e2e"), &repo.join("inferencex-e2e"));
    // Only what validate reads of .github/: the commit ids the reports quote hash the tree, and
    // a workflow edit must not change the snapshots of validate's reports.
    std::fs::create_dir_all(repo.join(".github")).unwrap();
    std::fs::copy(
        ws.join(".github/CODEOWNERS"),
        repo.join(".github/CODEOWNERS"),
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "dev@example.com"]);
    git(&repo, &["config", "user.name", "Dev"]);
    git(&repo, &["config", "core.autocrlf", "false"]);

    // Before the refresh: the older nightly, no DP4 point, no DP4 override, no changelog entry.
    edit(&repo, MASTER, |t| {
        let t = t.replace(NEW_IMAGE, OLD_IMAGE);
        t.lines()
            .filter(|l| {
                !(l.contains("tp: 4, ep: 4, dp-attn: true") && l.contains("conc-list: [192]"))
            })
            .map(|l| format!("{l}\n"))
            .collect()
    });
    edit(&repo, RECIPE, |t| {
        let cut = t
            .find("\n# DP-attention across 4 ranks")
            .expect("the DP4 override is in the recipe");
        format!("{}\n", &t[..cut])
    });
    edit(&repo, CHANGELOG, |t| {
        let body = t.trim_end_matches('\n');
        let cut = body.rfind("\n\n- ").expect("the changelog has entries");
        format!("{}\n", &body[..cut])
    });
    commit_all(&repo, "DSV4.1 B300 agentic, before the refresh");

    // The refresh commit: the bundled tree as shipped.
    git(&repo, &["checkout", "-q", "-b", "refresh"]);
    for rel in [MASTER, RECIPE, CHANGELOG] {
        std::fs::copy(ws.join(rel), repo.join(rel)).unwrap();
    }
    commit_all(
        &repo,
        "Refresh DSV4.1 B300 agentic on the 2026-10-04 nightly",
    );
    (tmp, repo)
}

/// One fault injected into the refresh (an uncommitted edit of `rel`) and the one error it must
/// cause: `code` at `rel`, on the line holding `marker`, column `col`.
pub(crate) struct Fault {
    pub name: &'static str,
    pub rel: &'static str,
    pub apply: fn(String) -> String,
    pub marker: &'static str,
    pub code: infx_report::Code,
    pub col: usize,
}

/// The changelog's first `description:` item line, which the historical-edit fault changes.
fn first_description(changelog: &str) -> &str {
    let at = changelog
        .find("description:")
        .expect("an entry has a description");
    changelog[at..].lines().nth(1).expect("a description item")
}

pub(crate) const FAULTS: &[Fault] = &[
    Fault {
        name: "historical-changelog-line",
        rel: CHANGELOG,
        apply: |t| {
            let line = first_description(&t).to_string();
            t.replacen(&line, &format!("{line} (edited)"), 1)
        },
        marker: "(edited)",
        code: infx_changelog::codes::ENTRY_CHANGED,
        // The edited value's column (after `    - `), not the line's start.
        col: 7,
    },
    Fault {
        name: "trailing-whitespace",
        rel: CHANGELOG,
        apply: |t| {
            t.replace(
                "behind sglang-router 0.3.2\n",
                "behind sglang-router 0.3.2  \n",
            )
        },
        marker: "behind sglang-router 0.3.2  ",
        code: infx_diff::codes::TRAILING_WHITESPACE,
        col: 112,
    },
    Fault {
        name: "unpinned-image",
        rel: MASTER,
        apply: |t| t.replace(NEW_IMAGE, UNPINNED_IMAGE),
        marker: UNPINNED_IMAGE,
        code: infx_image::codes::UNPINNED,
        col: 10,
    },
    Fault {
        name: "point-without-a-variant",
        rel: MASTER,
        apply: |t| {
            t.replace(
                "conc-list: [1, 4, 16, 24, 32, 48]",
                "conc-list: [1, 4, 16, 24, 28, 32, 48]",
            )
        },
        marker: "24, 28, 32",
        code: infx_matrix::codes::BINDING_NONE,
        col: 9,
    },
    Fault {
        name: "recipe-override-bad-key",
        rel: RECIPE,
        apply: |t| {
            t.replace(
                "override_tp2_c16:\n  roles:\n    agg:\n",
                "override_tp2_c16:\n  roles:\n    agg:\n      bogus-key: 1\n",
            )
        },
        marker: "bogus-key: 1",
        code: infx_recipe::codes::UNKNOWN_FIELD,
        col: 7,
    },
    Fault {
        name: "recipe-fragment-binder-owned-key",
        rel: RECIPE,
        apply: |t| {
            t.replace(
                "base:\n  schema: 2\n",
                "base:\n  schema: 2\n  model:\n    path: hf:someone/else\n",
            )
        },
        marker: "path: hf:someone/else",
        code: infx_recipe::codes::BINDER_OWNED,
        col: 11,
    },
];

/// The fault named `name`.
pub(crate) fn fault(name: &str) -> &'static Fault {
    FAULTS
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no fault {name}"))
}

/// Injects `fault` into the refresh repository.
pub(crate) fn inject(repo: &Path, fault: &Fault) {
    assert!(NEW_IMAGE.starts_with(UNPINNED_IMAGE));
    edit(repo, fault.rel, fault.apply);
}
