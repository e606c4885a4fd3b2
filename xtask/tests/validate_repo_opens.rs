//! `validate` reads git through one repository handle, not one per file it reads from a
//! revision (docs/performance.md, "One repository handle"): on a clean checkout, where the
//! last changelog commit stands in for the change and every base recipe is read from git, a
//! handle per read opened the repository 26 times. The counter is process-wide; this binary
//! holds a single test, so no other run touches it.

mod support;

#[test]
fn a_run_opens_the_repository_a_few_times() {
    let tmp = support::bundled_repo();
    let before = infx_git::repositories_opened();
    let report = xtask::validate::validate(&xtask::validate::Options {
        hermetic: true,
        ..xtask::validate::Options::new(tmp.path().join("inferencex-e2e"))
    });
    let opened = infx_git::repositories_opened() - before;
    let change = report.check("change").map(|c| c.scope.clone());
    assert!(
        change.as_deref().is_some_and(|s| s.contains("stands in")),
        "the last changelog commit stands in: {change:?}"
    );
    println!("repository handles opened: {opened}");
    // Change detection opens it once and every later read shares that handle (5 before
    // session 36: the search, the diff, the stand-in's walk and diff, the shared handle).
    assert_eq!(opened, 1, "repository handles opened in one run");
}
