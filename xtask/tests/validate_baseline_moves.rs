//! A file an exact rename moved is parsed once per run: the base's run takes the head's parse of
//! the new path for the old one (docs/baseline.md, "Cost"), and its finding there is matched as
//! the base's. This binary holds a single test: the parse counter is global.

mod support;

use std::path::Path;
use xtask::validate::{Options, validate};

#[test]
fn an_exact_rename_is_parsed_once_and_its_old_finding_stays_unchanged() {
    let tmp = support::bundled_repo();
    let repo = tmp.path();
    let tree = repo.join("inferencex-e2e");
    // A file with a finding (a duplicate key: an error) on the base.
    std::fs::create_dir_all(tree.join("benchmarks/notes")).expect("mkdir");
    std::fs::write(tree.join("benchmarks/notes/dup.yaml"), "a: 1\na: 2\n").expect("write");
    support::git(repo, &["add", "-A"]);
    support::git(repo, &["commit", "-q", "-m", "a file with a duplicate key"]);
    // The change moves it, bytes unchanged.
    support::git(
        repo,
        &[
            "mv",
            "inferencex-e2e/benchmarks/notes",
            "inferencex-e2e/benchmarks/moved",
        ],
    );

    infx_yaml::parse_count::start();
    let report = validate(&Options {
        base: Some("HEAD".into()),
        hermetic: true,
        ..Options::new(&tree)
    });
    let counts = infx_yaml::parse_count::take();
    let parses = |end: &str| -> usize {
        counts
            .iter()
            .filter(|(p, _)| p.ends_with(Path::new(end)))
            .map(|(_, n)| n)
            .sum()
    };

    let dup = report
        .diagnostics()
        .into_iter()
        .find(|d| d.code == infx_yaml::codes::DUPLICATE_KEY)
        .expect("the moved file's duplicate key is found");
    assert_eq!(
        dup.baseline,
        Some(infx_report::BaselineState::Unchanged),
        "the base had it at the old path"
    );
    assert!(!report.has_errors(), "{:#?}", report.diagnostics());
    assert_eq!(parses("benchmarks/moved/dup.yaml"), 1, "{counts:?}");
    assert_eq!(parses("benchmarks/notes/dup.yaml"), 0, "{counts:?}");
}
