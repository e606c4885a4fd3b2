//! The DeepSeek-V4.1-Flash B300 refresh, end to end in a throwaway git repository: the refresh
//! commit validates clean, and each single fault injected into it fails with exactly the
//! expected diagnostic.

use infx_report::{Diagnostic, Severity};
use std::path::Path;
use xtask::validate::{Options, validate};
mod support;
use support::git;
#[path = "support/refresh.rs"]
mod refresh;
use refresh::{CHANGELOG, MASTER, RECIPE, scenario};

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

/// Injects the fault `name` into the refresh and expects exactly its one error.
fn single_fault(name: &str) {
    let fault = refresh::fault(name);
    let (_tmp, repo) = scenario();
    refresh::inject(&repo, fault);
    let line = line_of(&repo, fault.rel, fault.marker);
    assert_eq!(
        errors(&run(&repo)),
        [format!("{} {}:{line}:{}", fault.code, fault.rel, fault.col)]
    );
}

#[test]
fn editing_a_historical_changelog_line_fails() {
    single_fault("historical-changelog-line");
}

#[test]
fn trailing_whitespace_fails() {
    single_fault("trailing-whitespace");
}

#[test]
fn unpinned_image_fails() {
    single_fault("unpinned-image");
}

#[test]
fn point_without_a_variant_fails() {
    single_fault("point-without-a-variant");
}

#[test]
fn recipe_override_with_a_bad_key_fails() {
    single_fault("recipe-override-bad-key");
}

#[test]
fn recipe_fragment_setting_a_binder_owned_key_fails() {
    single_fault("recipe-fragment-binder-owned-key");
}
