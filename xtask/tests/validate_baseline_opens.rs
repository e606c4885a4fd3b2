//! The base comparison reads through the run's one repository handle (docs/performance.md,
//! "One repository handle"): a run that compares with the base opens no more repositories than
//! a run with nothing to compare. Its own test binary with one test: the counter is per process.

use std::path::Path;
use xtask::validate::{Options, Report, validate};
mod support;
use support::{edit, git};
#[path = "support/refresh.rs"]
mod refresh;
use refresh::{MASTER, scenario};

fn run(repo: &Path) -> Report {
    validate(&Options {
        hermetic: true,
        ..Options::new(repo.join("inferencex-e2e"))
    })
}

#[test]
fn the_base_comparison_opens_no_repository_of_its_own() {
    let (_clean_tmp, clean) = scenario();
    let opened = infx_git::repositories_opened();
    assert!(run(&clean).baseline.is_none(), "nothing to compare");
    let without_base = infx_git::repositories_opened() - opened;

    // A finding already on the base (an unpinned image), so the run reads the base.
    let (_tmp, repo) = scenario();
    git(&repo, &["checkout", "-q", "main"]);
    edit(&repo, MASTER, |t| {
        t.replacen(
            "lmsysorg/sglang:v0.5.14-cu130@sha256:5027e95bf6ec536856b1b52a91d1f35ff5c564ab83e8a94758a169ff09bb8df3",
            "lmsysorg/sglang:v0.5.14-cu130",
            1,
        )
    });
    git(&repo, &["commit", "-q", "-am", "unpinned on main"]);
    git(&repo, &["checkout", "-q", "refresh"]);
    git(&repo, &["rebase", "-q", "main"]);
    let opened = infx_git::repositories_opened();
    let report = run(&repo);
    assert!(report.baseline.is_some(), "the base was compared");
    assert_eq!(infx_git::repositories_opened() - opened, without_base);
}
