//! `validate` diffs the change once: the change step, diff-check and review read the one
//! loaded change (docs/diff.md, "One load"). The diff counter is process-wide; this binary
//! holds a single test, so no other run touches it.

#[path = "support/refresh.rs"]
mod refresh;
mod support;

#[test]
fn a_change_is_diffed_once_per_run() {
    let (_tmp, repo) = refresh::scenario();
    refresh::inject(&repo, refresh::fault("trailing-whitespace"));
    let before = infx_diff::diffs_computed();
    let report = xtask::validate::validate(&xtask::validate::Options {
        hermetic: true,
        ..xtask::validate::Options::new(repo.join("inferencex-e2e"))
    });
    let diffs = infx_diff::diffs_computed() - before;
    // The run saw the change (paths) and its texts (diff-check's finding).
    assert!(
        report
            .check("diff-check")
            .is_some_and(|c| !c.diagnostics.is_empty()),
        "diff-check found the injected fault"
    );
    assert_eq!(diffs, 1, "diffs computed in one validate run");
}
