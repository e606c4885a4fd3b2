//! `diff-check` searches for its repository once: the command confines itself to the
//! repository it has opened instead of the confinement step searching for it first
//! (docs/performance.md, "diff-check's start"). The counter is process-wide; this binary holds
//! a single test, so no other run touches it.

mod support;

#[test]
fn diff_check_opens_the_repository_once() {
    let tmp = support::bundled_repo();
    let before = infx_git::repositories_opened();
    let code = xtask::main_with_args([
        "xtask".into(),
        "diff-check".into(),
        "--repo".into(),
        tmp.path().join("inferencex-e2e").into_os_string(),
    ]);
    assert_eq!(code, std::process::ExitCode::SUCCESS, "a clean checkout");
    let opened = infx_git::repositories_opened() - before;
    assert_eq!(opened, 1, "repository handles opened by one diff-check");
}
