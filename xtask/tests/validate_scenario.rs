//! The DeepSeek-V4.1-Flash B300 refresh, end to end in a throwaway git repository: the refresh
//! commit validates clean, and each single fault injected into it fails with exactly the
//! expected diagnostic.

use infx_report::{Diagnostic, Severity};
use std::path::{Path, PathBuf};
use xtask::validate::{Options, validate};
mod support;
use support::{copy_dir, edit, git};

const RECIPE: &str = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";
const MASTER: &str = "inferencex-e2e/configs/nvidia-master.yaml";
const CHANGELOG: &str = "inferencex-e2e/perf-changelog.yaml";
const NEW_IMAGE: &str = "lmsysorg/sglang:nightly-dev-cu13-20261004-295a53c9@sha256:7cfd4dd8e0e902d2a3c0560565963c4e172091e1586aaed15ff5a0a131394d34";
const OLD_IMAGE: &str = "lmsysorg/sglang:nightly-dev-cu13-20260915-8d1e0f3a@sha256:0b9a7c55e1f2d3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9012345";

/// A repository whose `main` holds the curve before the refresh and whose checked-out branch
/// `refresh` holds the bundled tree as it is (the refresh commit).
fn scenario() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let ws = xtask::paths::workspace_root();
    copy_dir(&ws.join("inferencex-e2e"), &repo.join("inferencex-e2e"));
    copy_dir(&ws.join(".github"), &repo.join(".github"));
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
    git(&repo, &["add", "-A"]);
    git(
        &repo,
        &[
            "commit",
            "-q",
            "-m",
            "DSV4.1 B300 agentic, before the refresh",
        ],
    );

    // The refresh commit: the bundled tree as shipped.
    git(&repo, &["checkout", "-q", "-b", "refresh"]);
    for rel in [MASTER, RECIPE, CHANGELOG] {
        std::fs::copy(ws.join(rel), repo.join(rel)).unwrap();
    }
    git(&repo, &["add", "-A"]);
    git(
        &repo,
        &[
            "commit",
            "-q",
            "-m",
            "Refresh DSV4.1 B300 agentic on the 2026-10-04 nightly",
        ],
    );
    (tmp, repo)
}

fn run(repo: &Path) -> Vec<Diagnostic> {
    let report = validate(&Options {
        hermetic: true,
        ..Options::new(repo.join("inferencex-e2e"))
    });
    report.diagnostics()
}

fn errors(diags: &[Diagnostic]) -> Vec<String> {
    diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{} {}", d.code, d.location()))
        .collect()
}

#[test]
fn refresh_commit_validates_clean() {
    let (_tmp, repo) = scenario();
    let diags = run(&repo);
    assert_eq!(errors(&diags), Vec::<String>::new(), "{diags:#?}");
}

#[test]
fn refresh_on_an_autocrlf_checkout_validates_clean() {
    // Git for Windows' default: the checkout holds CRLF, git commits LF, so a correct change
    // must not fail on line endings (docs/diff.md).
    let (_tmp, repo) = scenario();
    git(&repo, &["config", "core.autocrlf", "true"]);
    for rel in [MASTER, RECIPE, CHANGELOG] {
        std::fs::remove_file(repo.join(rel)).unwrap();
    }
    git(&repo, &["checkout", "--", "."]);
    let text = std::fs::read(repo.join(CHANGELOG)).unwrap();
    assert!(
        text.windows(2).any(|w| w == b"\r\n"),
        "the checkout wrote CRLF"
    );
    let diags = run(&repo);
    assert_eq!(errors(&diags), Vec::<String>::new(), "{diags:#?}");
}

fn line_of(repo: &Path, rel: &str, needle: &str) -> usize {
    let text = std::fs::read_to_string(repo.join(rel)).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle present")
        + 1
}

/// Injects one fault into the refresh (an edit of `rel`) and expects exactly one error: `code`
/// at `rel`, on the line holding `marker`, column `col`.
fn single_fault(
    rel: &str,
    fault: impl FnOnce(String) -> String,
    marker: &str,
    code: &str,
    col: usize,
) {
    let (_tmp, repo) = scenario();
    edit(&repo, rel, fault);
    let line = line_of(&repo, rel, marker);
    assert_eq!(errors(&run(&repo)), [format!("{code} {rel}:{line}:{col}")]);
}

#[test]
fn editing_a_historical_changelog_line_fails() {
    let ws = xtask::paths::workspace_root();
    let text = std::fs::read_to_string(ws.join(CHANGELOG)).unwrap();
    let at = text.find("description:").unwrap();
    let first_description = text[at..].lines().nth(1).unwrap().to_string();
    single_fault(
        CHANGELOG,
        |t| {
            t.replacen(
                &first_description,
                &format!("{first_description} (edited)"),
                1,
            )
        },
        "(edited)",
        "changelog/entry-changed",
        // The edited value's column (after `    - `), not the line's start.
        7,
    );
}

#[test]
fn trailing_whitespace_fails() {
    single_fault(
        CHANGELOG,
        |t| {
            t.replace(
                "behind sglang-router 0.3.2\n",
                "behind sglang-router 0.3.2  \n",
            )
        },
        "behind sglang-router 0.3.2  ",
        "diff/trailing-whitespace",
        112,
    );
}

#[test]
fn unpinned_image_fails() {
    let unpinned = NEW_IMAGE.split('@').next().unwrap();
    single_fault(
        MASTER,
        |t| t.replace(NEW_IMAGE, unpinned),
        unpinned,
        "image/unpinned",
        10,
    );
}

#[test]
fn point_without_a_variant_fails() {
    single_fault(
        MASTER,
        |t| {
            t.replace(
                "conc-list: [1, 4, 16, 24, 32, 48]",
                "conc-list: [1, 4, 16, 24, 28, 32, 48]",
            )
        },
        "24, 28, 32",
        "matrix/binding-none",
        9,
    );
}

#[test]
fn recipe_override_with_a_bad_key_fails() {
    single_fault(
        RECIPE,
        |t| {
            t.replace(
                "override_tp2_c16:\n  roles:\n    agg:\n",
                "override_tp2_c16:\n  roles:\n    agg:\n      bogus-key: 1\n",
            )
        },
        "bogus-key: 1",
        "recipe/unknown-field",
        7,
    );
}

#[test]
fn recipe_fragment_setting_a_binder_owned_key_fails() {
    single_fault(
        RECIPE,
        |t| {
            t.replace(
                "base:\n  schema: 2\n",
                "base:\n  schema: 2\n  model:\n    path: hf:someone/else\n",
            )
        },
        "path: hf:someone/else",
        "recipe/binder-owned",
        11,
    );
}
