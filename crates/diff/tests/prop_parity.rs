//! Property: for random files and random line edits full of whitespace, our findings equal
//! `git diff --check`'s, line for line. One repository is reused across cases (each case is a
//! new commit plus a working-tree edit) to keep the number of git processes down.

mod common;

use common::Repo;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Lines chosen to hit every rule: trailing blanks, CR, tabs after spaces, long space indents,
/// conflict markers, blank lines, vertical tab (not whitespace to git).
const LINES: &[&str] = &[
    "a",
    "b",
    "key: value",
    "",
    " ",
    "\t",
    "a ",
    "a\t",
    " \ta",
    "\t a",
    "        x",
    "    x",
    "\t\tx",
    "x\r",
    "x \r",
    "\r",
    "<<<<<<< HEAD",
    "=======",
    ">>>>>>> b",
    "|||||||",
    "<<<<<<<<",
    "a\x0b",
    "  \t  y",
];

#[derive(Clone, Debug)]
enum Edit {
    Insert(usize, usize),
    Delete(usize),
    Replace(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0..LINES.len()).prop_map(|(at, l)| Edit::Insert(at, l)),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), 0..LINES.len()).prop_map(|(at, l)| Edit::Replace(at, l)),
    ]
}

fn render(lines: &[usize], final_newline: bool) -> Vec<u8> {
    let mut s = lines
        .iter()
        .map(|&i| LINES[i])
        .collect::<Vec<_>>()
        .join("\n");
    if final_newline && !lines.is_empty() {
        s.push('\n');
    }
    s.into_bytes()
}

#[test]
fn random_edits_match_git_diff_check() {
    let repo = Repo::new();
    let rules = [
        "",
        "cr-at-eol",
        "indent-with-non-tab,tabwidth=4",
        "tab-in-indent,-blank-at-eof",
        "-trailing-space",
    ];
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        prop::collection::vec(0..LINES.len(), 0..12),
        prop::collection::vec(edit(), 1..6),
        any::<bool>(),
        any::<bool>(),
        0..rules.len(),
    );
    let nonempty = std::cell::Cell::new(0usize);
    let result = runner.run(&strategy, |(old, edits, nl_old, nl_new, rule)| {
        repo.git(&["config", "core.whitespace", rules[rule]]);
        repo.write("f.txt", &render(&old, nl_old));
        repo.commit_all("case");
        let mut new = old.clone();
        for e in edits {
            match e {
                Edit::Insert(at, l) => new.insert(at % (new.len() + 1), l),
                Edit::Delete(at) if !new.is_empty() => {
                    new.remove(at % new.len());
                }
                Edit::Replace(at, l) if !new.is_empty() => {
                    let n = new.len();
                    new[at % n] = l;
                }
                _ => {}
            }
        }
        let (old_bytes, new_bytes) = (render(&old, nl_old), render(&new, nl_new));
        repo.write("f.txt", &new_bytes);
        // The loader's texts are exactly the committed and the working-tree bytes.
        let change = infx_diff::load_change(
            repo.path(),
            &infx_diff::ChangeOptions::git_diff_check(Some("HEAD")),
        )
        .map_err(|d| TestCaseError::fail(d.to_string()))?;
        if old_bytes != new_bytes {
            prop_assert_eq!(change.texts.len(), 1);
            prop_assert_eq!(&change.texts[0].old[..], &old_bytes[..]);
            prop_assert_eq!(&*change.texts[0].new, &new_bytes[..]);
        }
        let git = repo.git_check(&["HEAD"]);
        let ours = repo.ours(&infx_diff::ChangeOptions::git_diff_check(Some("HEAD")));
        if !git.is_empty() {
            nonempty.set(nonempty.get() + 1);
        }
        prop_assert_eq!(ours, git);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The generator must actually produce findings most of the time.
    let n = nonempty.get();
    assert!(n >= 10, "only {n} cases had any finding");
}
