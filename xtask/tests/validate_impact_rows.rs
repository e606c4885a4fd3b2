//! Impact is about rows (docs/changelog.md, "Impact is about rows"): a config needs a new
//! changelog entry only when its sweep at head has a row that is new or differs from the
//! base's. The cases come from upstream's own PRs (the real-PR replay, docs/review.md): points
//! removed (#2263 deprecating 1k1k gave 190 false findings) need none; a point added does.

use infx_report::Diagnostic;
use std::path::Path;
use xtask::validate::{Options, validate};
mod support;
use support::edit;
#[path = "support/refresh.rs"]
mod refresh;
use refresh::{MASTER, scenario};

fn entry_required(repo: &Path) -> Vec<String> {
    let report = validate(&Options {
        hermetic: true,
        ..Options::new(repo.join("inferencex-e2e"))
    });
    report
        .diagnostics()
        .iter()
        .filter(|d: &&Diagnostic| d.code == infx_changelog::codes::ENTRY_REQUIRED)
        .map(|d| d.message.clone())
        .collect()
}

#[test]
fn removing_points_needs_no_entry() {
    let (_tmp, repo) = scenario();
    edit(&repo, MASTER, |t| {
        t.replacen("conc-list: [64, 128, 256]", "conc-list: [64, 128]", 1)
    });
    assert_eq!(entry_required(&repo), Vec::<String>::new());
}

#[test]
fn adding_a_point_needs_an_entry() {
    let (_tmp, repo) = scenario();
    edit(&repo, MASTER, |t| {
        t.replacen(
            "conc-list: [64, 128, 256]",
            "conc-list: [64, 128, 256, 384]",
            1,
        )
    });
    let found = entry_required(&repo);
    assert!(
        found.len() == 1 && found[0].contains("'dsr1-fp4-b300-sglang'"),
        "{found:#?}"
    );
    // The finding names the row that is new (docs/changelog.md, "Impact is about rows").
    assert!(found[0].contains("a new row `"), "{found:#?}");
}

#[test]
fn a_changed_field_is_named_with_its_values() {
    let (_tmp, repo) = scenario();
    edit(&repo, MASTER, |t| {
        t.replacen(
            "model: nvidia/DeepSeek-R1-0528-FP4-V2",
            "model: nvidia/DeepSeek-R1-0528-FP4-V3",
            1,
        )
    });
    let found = entry_required(&repo);
    assert!(
        found.len() == 1
            && found[0].contains(
                "a row's `model` is \"nvidia/DeepSeek-R1-0528-FP4-V3\", was \"nvidia/DeepSeek-R1-0528-FP4-V2\""
            ),
        "{found:#?}"
    );
}
