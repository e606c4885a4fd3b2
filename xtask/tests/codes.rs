//! `cargo xtask codes` and `codes --check` (README, "Diagnostic codes"): the table lists every
//! registered code, and the check holds the code tables in docs/ and README.md to the
//! registries, both ways. The first test is the suite's guard that the docs do not drift.

use std::path::Path;
use std::process::Command;

fn xtask(args: &[&str]) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("xtask runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (text, out.status.code().unwrap_or(-1))
}

#[test]
fn the_docs_of_this_workspace_document_exactly_the_registered_codes() {
    let (out, code) = xtask(&["codes", "--check"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("registered codes and the code tables"),
        "{out}"
    );
}

#[test]
fn the_table_has_a_row_per_code_with_severity_crate_and_summary() {
    let (out, code) = xtask(&["codes"]);
    assert_eq!(code, 0, "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("config/X5 "))
        .unwrap_or_else(|| panic!("no config/X5 row:\n{out}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[0], infx_config::codes::X5.as_str(), "{row}");
    assert_eq!(&cols[1..3], ["error", "infx-config"], "{row}");
    assert!(row.contains("runners.yaml"), "{row}");
    let warning = out
        .lines()
        .find(|l| l.starts_with("allow/unused "))
        .unwrap_or_else(|| panic!("no allow/unused row:\n{out}"));
    assert!(warning.contains(" warning "), "{warning}");
    // One row per code plus the header; far more than a handful of codes are registered.
    assert!(out.lines().count() > 200, "{out}");
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn drift_both_ways_fails_with_the_differing_rows() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "README.md",
        "# x\n\n| code | meaning |\n| --- | --- |\n| `config/X5` | a label |\n",
    );
    write(
        tmp.path(),
        "docs/config.md",
        "| code | meaning |\n| --- | --- |\n| `config/Z9` | no such rule |\nprose about `config/C2` does not count\n",
    );
    let root = tmp.path().to_str().unwrap();
    let (out, code) = xtask(&["codes", "--check", "--docs-root", root]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("documented, not registered: config/Z9  (docs/config.md:3)"),
        "{out}"
    );
    assert!(
        out.contains("registered, not documented: config/C2  error  infx-config  "),
        "{out}"
    );
    assert!(!out.contains("not documented: config/X5 "), "{out}");
}

#[test]
fn a_missing_docs_folder_is_an_error_not_a_pass() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "README.md", "# x\n");
    let (out, code) = xtask(&[
        "codes",
        "--check",
        "--docs-root",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("docs"), "{out}");
}
