//! The verdict is about the change (docs/baseline.md): findings the base already had are
//! `unchanged` and never fail; what the change introduces is `new`, also on lines it did not
//! touch. Each scenario is the refresh repository of the scenario suite (main = before the
//! refresh, `refresh` checked out), with faults committed on main first where the base must
//! already have them.

use infx_report::{BaselineState, Diagnostic};
use std::path::Path;
use xtask::validate::{Options, Report, validate};
mod support;
use support::{edit, git};
#[path = "support/refresh.rs"]
mod refresh;
use refresh::{MASTER, RECIPE, scenario};

const RUNNERS: &str = "inferencex-e2e/configs/runners.yaml";
const POLICY: &str = "inferencex-e2e/infx.yaml";
/// An entry the refresh does not touch.
const OTHER_IMAGE: &str = "lmsysorg/sglang:v0.5.14-cu130@sha256:5027e95bf6ec536856b1b52a91d1f35ff5c564ab83e8a94758a169ff09bb8df3";
const OTHER_TAG: &str = "lmsysorg/sglang:v0.5.14-cu130";
const OTHER_RUNNER: &str = "dynamo-sglang:\n  image: ";

fn run(repo: &Path) -> Report {
    validate(&Options {
        hermetic: true,
        ..Options::new(repo.join("inferencex-e2e"))
    })
}

/// Commits `f`'s edits on main and replays the refresh on top, so base and head both hold them.
fn on_the_base(repo: &Path, f: impl FnOnce(&Path)) {
    git(repo, &["checkout", "-q", "main"]);
    f(repo);
    git(repo, &["commit", "-q", "-am", "defects already on main"]);
    git(repo, &["checkout", "-q", "refresh"]);
    git(repo, &["rebase", "-q", "main"]);
}

/// The other entry's image unpinned and its runner a label runners.yaml lacks.
fn break_the_other_entry(repo: &Path) {
    edit(repo, MASTER, |t| {
        let at = t.find(OTHER_RUNNER).expect("the other entry");
        let (head, tail) = t.split_at(at);
        let tail = tail.replacen(OTHER_IMAGE, OTHER_TAG, 1).replacen(
            "runner: gb300\n",
            "runner: gb300-gone\n",
            1,
        );
        format!("{head}{tail}")
    });
}

fn summary(d: &Diagnostic) -> String {
    format!("{} {} {:?}", d.code, d.location(), d.baseline)
}

fn failing(report: &Report) -> Vec<String> {
    report
        .diagnostics()
        .iter()
        .filter(|d| d.fails())
        .map(summary)
        .collect()
}

#[test]
fn findings_already_on_the_base_do_not_fail_and_are_counted() {
    let (_tmp, repo) = scenario();
    on_the_base(&repo, break_the_other_entry);
    let report = run(&repo);
    assert_eq!(failing(&report), Vec::<String>::new());
    let all = report.diagnostics();
    for code in [infx_image::codes::UNPINNED, infx_config::codes::X5] {
        assert!(
            all.iter()
                .any(|d| d.code == code && d.baseline == Some(BaselineState::Unchanged)),
            "{code} is on the base: {:#?}",
            all.iter().map(summary).collect::<Vec<_>>()
        );
    }
    let text = xtask::validate::summary_text(&report);
    let line = text
        .lines()
        .find(|l| l.starts_with("baseline"))
        .unwrap_or_else(|| panic!("a baseline line in\n{text}"));
    assert!(
        line.contains("image/unpinned 1") && line.contains("config/X5 1"),
        "{line}"
    );
    assert!(text.contains("validate: passed (0 errors"), "{text}");
}

#[test]
fn a_new_duplicate_key_fails_alone_among_the_base_findings() {
    let (_tmp, repo) = scenario();
    on_the_base(&repo, break_the_other_entry);
    edit(&repo, RECIPE, |t| {
        t.replacen(
            "base:\n  schema: 2\n",
            "base:\n  schema: 2\n  schema: 2\n",
            1,
        )
    });
    let report = run(&repo);
    let failing = failing(&report);
    assert!(
        !failing.is_empty()
            && failing
                .iter()
                .all(|f| f.starts_with("yaml/duplicate-key ") && f.contains("agentic.yaml")),
        "{failing:#?}"
    );
}

#[test]
fn removing_a_label_still_used_fails_at_the_entry_that_uses_it() {
    let (_tmp, repo) = scenario();
    edit(&repo, RUNNERS, |t| {
        let start = t.find("  gb300:\n").expect("the gb300 label");
        let end = start + t[start..].find("  mi355x:\n").expect("the next label");
        format!("{}{}", &t[..start], &t[end..])
    });
    let report = run(&repo);
    let x5: Vec<Diagnostic> = report
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == infx_config::codes::X5)
        .collect();
    assert!(!x5.is_empty(), "X5 for the entries on gb300");
    for d in &x5 {
        assert_eq!(d.baseline, Some(BaselineState::New), "{}", summary(d));
        assert!(
            d.path
                .as_deref()
                .is_some_and(|p| p.ends_with("nvidia-master.yaml")),
            "at the entry: {}",
            summary(d)
        );
    }
    assert!(report.has_errors());
}

#[test]
fn lines_inserted_above_a_base_finding_keep_it_unchanged() {
    let (_tmp, repo) = scenario();
    on_the_base(&repo, break_the_other_entry);
    let line_before = |repo: &Path| {
        let t = std::fs::read_to_string(repo.join(MASTER)).unwrap();
        t.lines().position(|l| l.contains(OTHER_TAG)).unwrap() + 1
    };
    let before = line_before(&repo);
    edit(&repo, MASTER, |t| {
        format!("{}{t}", "# a comment line above every entry\n".repeat(50))
    });
    assert_eq!(line_before(&repo), before + 50);
    let report = run(&repo);
    let unpinned: Vec<Diagnostic> = report
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == infx_image::codes::UNPINNED)
        .collect();
    assert_eq!(unpinned.len(), 1, "{unpinned:#?}");
    assert_eq!(unpinned[0].span.map(|s| s.start.line()), Some(before + 50));
    assert_eq!(unpinned[0].baseline, Some(BaselineState::Unchanged));
}

#[test]
fn without_required_pins_a_new_tag_warns_and_a_dropped_pin_fails() {
    let (_tmp, repo) = scenario();
    // A tree that states no pin policy (upstream's): `verified`.
    on_the_base(&repo, |repo| {
        std::fs::remove_file(repo.join(POLICY)).unwrap();
        git(repo, &["rm", "-q", "--cached", POLICY]);
        break_the_other_entry(repo);
    });
    let clean = run(&repo);
    assert_eq!(failing(&clean), Vec::<String>::new());

    // A new tag-only reference: a warning, new, with the pin hint. (The new image is a new
    // benchmark of that config: its missing changelog entry is the only error.)
    edit(&repo, MASTER, |t| {
        t.replacen(OTHER_TAG, "lmsysorg/sglang:v0.5.15-cu130", 1)
    });
    let report = run(&repo);
    let failing_now = failing(&report);
    assert!(
        failing_now
            .iter()
            .all(|f| f.starts_with("changelog/entry-required ")),
        "{failing_now:#?}"
    );
    let tag_only: Vec<Diagnostic> = report
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == infx_image::codes::TAG_ONLY && d.message.contains("v0.5.15"))
        .collect();
    assert_eq!(tag_only.len(), 1);
    assert_eq!(tag_only[0].baseline, Some(BaselineState::New));
    assert!(
        tag_only[0]
            .help
            .as_deref()
            .is_some_and(|h| h.contains("cargo xtask pin"))
    );

    // The refreshed entry's pinned image replaced by its bare tag: an error.
    git(&repo, &["checkout", "-q", "--", MASTER]);
    refresh::inject(&repo, refresh::fault("unpinned-image"));
    let report = run(&repo);
    let failing = failing(&report);
    assert!(
        failing.len() == 1 && failing[0].starts_with("image/pin-dropped "),
        "{failing:#?}"
    );
}

#[test]
fn a_run_without_a_change_has_no_baseline() {
    let (_tmp, repo) = scenario();
    on_the_base(&repo, break_the_other_entry);
    let report = validate(&Options {
        hermetic: true,
        all: true,
        ..Options::new(repo.join("inferencex-e2e"))
    });
    assert!(report.baseline.is_none());
    assert!(report.diagnostics().iter().all(|d| d.baseline.is_none()));
    assert!(report.has_errors(), "--all judges the whole tree");
}

/// Where .ci/run installs the official SARIF 2.1.0 schema: Microsoft's `@microsoft/jest-sarif`
/// npm package ships it (`sarif-2.1.0-rtm.5.json`, draft-04); `INFX_SARIF_SCHEMA` overrides.
fn official_sarif_schema() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("INFX_SARIF_SCHEMA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            xtask::paths::tools_target()
                .join("tools/npm/node_modules/@microsoft/jest-sarif/lib/schemas")
                .join("sarif-2.1.0-rtm.5.json")
        });
    if path.is_file() {
        return Some(path);
    }
    let why = format!(
        "{} missing (npm install --prefix target/tools/npm --no-save @microsoft/jest-sarif@1.0.0-beta.0)",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "CI has no schema: {why}");
    println!("SKIP: SARIF against the official schema: {why}");
    None
}

#[test]
fn sarif_with_baseline_states_validates_against_the_official_schema() {
    let Some(schema_path) = official_sarif_schema() else {
        return;
    };
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).expect("schema reads"))
            .expect("schema is JSON");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    compiler
        .add_resource("sarif-2.1.0-rtm.5.json", schema)
        .expect("schema added");
    let idx = compiler
        .compile("sarif-2.1.0-rtm.5.json", &mut schemas)
        .expect("schema compiles");
    // Base findings (unchanged) and a new duplicate key (new) in one log.
    let (_tmp, repo) = scenario();
    on_the_base(&repo, break_the_other_entry);
    edit(&repo, RECIPE, |t| {
        t.replacen(
            "base:\n  schema: 2\n",
            "base:\n  schema: 2\n  schema: 2\n",
            1,
        )
    });
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["validate", "--format", "sarif"])
        .current_dir(&repo)
        .env("NO_COLOR", "1")
        .env("INFX_HERMETIC", "1")
        .output()
        .expect("xtask runs");
    assert_eq!(out.status.code(), Some(1), "the new key fails");
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one SARIF log");
    if let Err(e) = schemas.validate(&doc, idx) {
        panic!("{e:#}");
    }
    let states: Vec<&str> = doc["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["baselineState"].as_str())
        .collect();
    assert!(
        states.contains(&"new") && states.contains(&"unchanged"),
        "{states:?}"
    );
}

/// A file the change moves keeps its findings: the base's are matched at the path the change
/// gives the file (docs/baseline.md, "Fingerprint"), so a rename blames nothing on it.
#[test]
fn a_moved_file_keeps_its_base_findings() {
    let (_tmp, repo) = scenario();
    let old = "inferencex-e2e/docs/extra.yaml";
    on_the_base(&repo, |repo| {
        std::fs::create_dir_all(repo.join("inferencex-e2e/docs")).expect("a folder");
        std::fs::write(repo.join(old), "a: 1\nb: 2\na: 3\n").expect("write the file");
        git(repo, &["add", old]);
    });
    git(&repo, &["mv", old, "inferencex-e2e/docs/moved.yaml"]);
    let report = run(&repo);
    let all = report.diagnostics();
    let dup: Vec<_> = all
        .iter()
        .filter(|d| d.code == infx_yaml::codes::DUPLICATE_KEY)
        .collect();
    assert!(
        !dup.is_empty()
            && dup.iter().all(|d| d.location().contains("moved.yaml")
                && d.baseline == Some(BaselineState::Unchanged)),
        "{:#?}",
        all.iter().map(summary).collect::<Vec<_>>()
    );
    assert_eq!(failing(&report), Vec::<String>::new());
}
