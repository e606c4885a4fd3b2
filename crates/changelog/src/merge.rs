//! The three-way merge of `perf-changelog.yaml` used as a git merge driver
//! (docs/changelog.md, "The merge driver").
//!
//! The policy is upstream's `resolve-conflict`: the upstream side (main) is kept byte for byte;
//! the other side (the PR) must be a valid strict change of the ancestor; its appended entries
//! that main does not already hold are re-appended after main's bytes, one empty line apart; a
//! PR that only corrects `pr-link` lines has those corrections applied to main's entries. The
//! merged text is strict-checked against main before it is returned as clean; anything else is
//! a conflict. The one deliberate difference: the appended `pr-link` is not rewritten to the PR
//! URL (a merge driver does not know the PR number); the link is kept as the PR wrote it.

use crate::entry::{Dialect, eq_without};
use crate::strict::{
    LinkMode, Parsed, StrictError, compare_entries, entry_starts, parse_changelog,
    validate_raw_change,
};
use infx_yaml::Node;

/// The result of a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    Clean(Vec<u8>),
    /// Conflict: the text with conflict markers to leave in the work tree, and why.
    Conflict {
        text: Vec<u8>,
        reason: String,
    },
}

/// Which side is the upstream (main) side whose bytes stay first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    Ours,
    Theirs,
}

/// What git is doing while it calls the driver, which decides which side is upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitOperation {
    /// `git rebase` / `git pull --rebase` / `git am`: "ours" is the branch being rebased onto
    /// (upstream), "theirs" the commit being replayed.
    Rebase,
    /// `git cherry-pick`, `git revert`, and any other single-commit apply: "ours" is the branch
    /// receiving the commit.
    Apply,
    /// `git merge` / `git pull`: "ours" is the checked-out branch, "theirs" the merged-in one.
    Merge {
        /// The checked-out branch is the upstream branch (e.g. `main`).
        current_is_upstream: bool,
        /// The merged-in branch is the upstream branch (e.g. `origin/main`).
        merged_is_upstream: bool,
    },
}

impl GitOperation {
    /// The side whose bytes stay first.
    pub fn keep(&self) -> Keep {
        match self {
            GitOperation::Rebase | GitOperation::Apply => Keep::Ours,
            GitOperation::Merge {
                current_is_upstream: true,
                ..
            } => Keep::Ours,
            // A feature branch merging main in (upstream's merge_with_reuse flow): main is theirs.
            GitOperation::Merge {
                merged_is_upstream: true,
                ..
            } => Keep::Theirs,
            // Two non-upstream branches: the checked-out branch's history comes first.
            GitOperation::Merge { .. } => Keep::Ours,
        }
    }
}

/// Merges `ours` and `theirs`, both descended from `ancestor`; `keep` names the upstream side.
pub fn merge(
    ancestor: &[u8],
    ours: &[u8],
    theirs: &[u8],
    keep: Keep,
    dialect: Dialect,
) -> MergeOutcome {
    let conflict = |reason: String| MergeOutcome::Conflict {
        text: conflict_text(ours, theirs),
        reason,
    };
    let (main, pr) = match keep {
        Keep::Ours => (ours, theirs),
        Keep::Theirs => (theirs, ours),
    };
    let merged = if ours == theirs || theirs == ancestor {
        Ok(ours.to_vec())
    } else if ours == ancestor {
        Ok(theirs.to_vec())
    } else {
        resolve(ancestor, pr, main, dialect)
    };
    match merged.and_then(|m| self_check(main, &m, dialect).map(|()| m)) {
        Ok(m) => MergeOutcome::Clean(m),
        Err(reason) => conflict(reason),
    }
}

fn describe(e: &StrictError) -> String {
    match e.line {
        Some(l) => format!("{} (line {l}) [{}]", e.message, e.code),
        None => format!("{} [{}]", e.message, e.code),
    }
}

/// Upstream `resolve-conflict` on the three sides (PR = the non-upstream side).
fn resolve(ancestor: &[u8], pr: &[u8], main: &[u8], dialect: Dialect) -> Result<Vec<u8>, String> {
    let parse =
        |raw: &[u8], label: &str| parse_changelog(raw, label, dialect).map_err(|e| describe(&e));
    let base_p = parse(ancestor, "merge-base perf-changelog.yaml")?;
    let pr_p = parse(pr, "PR-side perf-changelog.yaml")?;
    let main_p = parse(main, "main-side perf-changelog.yaml")?;
    let c = compare_entries(&base_p.entries, &pr_p.entries, LinkMode::Local)
        .map_err(|e| format!("the PR side is not a strict change: {}", describe(&e)))?;
    validate_raw_change(ancestor, pr, c.additions, c.corrections)
        .map_err(|e| format!("the PR side is not a strict change: {}", describe(&e)))?;
    if c.additions > 0 {
        let spans = entry_spans(pr, &pr_p)?;
        let blocks: Vec<&[u8]> = pr_p.entries[base_p.entries.len()..]
            .iter()
            .zip(&spans[base_p.entries.len()..])
            .filter(|(e, _)| !main_p.entries.iter().any(|m| same_but_link(m, e)))
            .map(|(_, &(start, end))| &pr[start..end])
            .collect();
        if blocks.is_empty() {
            return Err(
                "the PR has no changelog contribution remaining after merging main".to_string(),
            );
        }
        let mut out = main.to_vec();
        if !main.ends_with(b"\n\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(&blocks.join(&b'\n'));
        return Ok(out);
    }
    if c.corrections > 0 {
        let main_spans = entry_spans(main, &main_p)?;
        let mut replacements = Vec::new();
        for (i, (b, p)) in base_p.entries.iter().zip(&pr_p.entries).enumerate() {
            if b == p {
                continue;
            }
            let Some(m) = main_p.entries.get(i) else {
                return Err(format!("main is missing corrected entry {}", i + 1));
            };
            if !same_but_link(m, b) {
                return Err(format!(
                    "main changed corrected entry {}; resolve manually",
                    i + 1
                ));
            }
            let (base_link, desired, main_link) = (link(b), link(p), link(m));
            if main_link == desired {
                continue;
            }
            if main_link != base_link {
                return Err(format!(
                    "main has a conflicting pr-link for entry {}",
                    i + 1
                ));
            }
            let (start, end) = main_spans[i];
            replacements.push((start, end, replace_pr_link(&main[start..end], &desired)?));
        }
        if replacements.is_empty() {
            return Err("the PR's pr-link corrections are already present on main".to_string());
        }
        let mut out = main.to_vec();
        for (start, end, block) in replacements.into_iter().rev() {
            out.splice(start..end, block);
        }
        return Ok(out);
    }
    Err("the PR has no appended entry or pr-link correction to preserve".to_string())
}

/// The merged text must be a valid strict change of the upstream side (the rules of
/// `changelog check --mode strict`, links judged in local mode).
fn self_check(main: &[u8], merged: &[u8], dialect: Dialect) -> Result<(), String> {
    let m = parse_changelog(merged, "merged perf-changelog.yaml", dialect)
        .map_err(|e| format!("the merged file is not a valid changelog: {}", describe(&e)))?;
    if merged == main {
        return Ok(());
    }
    let base = parse_changelog(main, "main-side perf-changelog.yaml", dialect)
        .map_err(|e| describe(&e))?;
    let c = compare_entries(&base.entries, &m.entries, LinkMode::Local).map_err(|e| {
        format!(
            "the merged file is not a strict change of main: {}",
            describe(&e)
        )
    })?;
    validate_raw_change(main, merged, c.additions, c.corrections).map_err(|e| {
        format!(
            "the merged file is not a strict change of main: {}",
            describe(&e)
        )
    })
}

fn link(n: &Node) -> String {
    crate::entry::py_str_or_empty(n.as_map().and_then(|m| m.get("pr-link")))
}

/// Upstream's entry signature: the entry without its `pr-link`.
fn same_but_link(a: &Node, b: &Node) -> bool {
    match (a.as_map(), b.as_map()) {
        (Some(x), Some(y)) => eq_without(x, y, "pr-link"),
        _ => a == b,
    }
}

/// Each entry's bytes: from its `- config-keys:` line to its last non-blank line.
fn entry_spans(raw: &[u8], parsed: &Parsed) -> Result<Vec<(usize, usize)>, String> {
    let starts = entry_starts(raw);
    if starts.len() != parsed.entries.len() {
        return Err("could not map parsed changelog entries to raw byte spans".to_string());
    }
    Ok(starts
        .iter()
        .enumerate()
        .map(|(i, &start)| {
            let end = starts.get(i + 1).copied().unwrap_or(raw.len());
            let mut content_end = end;
            for line in raw[start..end].split_inclusive(|&b| b == b'\n').rev() {
                if line.iter().all(|b| b" \t\r\n".contains(b)) {
                    content_end -= line.len();
                } else {
                    break;
                }
            }
            (start, content_end)
        })
        .collect())
}

/// Replaces the one `  pr-link:` line of an entry block.
fn replace_pr_link(block: &[u8], new_link: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(block.len());
    let mut done = false;
    for line in block.split_inclusive(|&b| b == b'\n') {
        if !done && line.starts_with(b"  pr-link:") {
            out.extend_from_slice(format!("  pr-link: {new_link}").as_bytes());
            let keep_from = line
                .iter()
                .position(|&b| b == b'\r' || b == b'\n')
                .unwrap_or(line.len());
            out.extend_from_slice(&line[keep_from..]);
            done = true;
        } else {
            out.extend_from_slice(line);
        }
    }
    if !done {
        return Err("could not locate exactly one pr-link line in a changelog entry".to_string());
    }
    Ok(out)
}

/// Conflict markers around the differing middle (common leading/trailing lines kept).
fn conflict_text(ours: &[u8], theirs: &[u8]) -> Vec<u8> {
    let a: Vec<&[u8]> = ours.split_inclusive(|&c| c == b'\n').collect();
    let b: Vec<&[u8]> = theirs.split_inclusive(|&c| c == b'\n').collect();
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suf = a.len().min(b.len()) - pre;
    let suf = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = Vec::new();
    for l in &a[..pre] {
        out.extend_from_slice(l);
    }
    let section = |out: &mut Vec<u8>, lines: &[&[u8]]| {
        for l in lines {
            out.extend_from_slice(l);
        }
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
    };
    out.extend_from_slice(b"<<<<<<< ours\n");
    section(&mut out, &a[pre..a.len() - suf]);
    out.extend_from_slice(b"=======\n");
    section(&mut out, &b[pre..b.len() - suf]);
    out.extend_from_slice(b">>>>>>> theirs\n");
    for l in &a[a.len() - suf..] {
        out.extend_from_slice(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(k: &str) -> String {
        format!("- config-keys:\n    - {k}\n  description:\n    - d {k}\n  pr-link: XXX\n")
    }

    fn merge_oct(base: &str, ours: &str, theirs: &str, keep: Keep) -> MergeOutcome {
        merge(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            keep,
            Dialect::Oct,
        )
    }

    /// The merged text of a clean merge.
    fn clean(outcome: MergeOutcome) -> String {
        match outcome {
            MergeOutcome::Clean(m) => String::from_utf8(m).unwrap(),
            MergeOutcome::Conflict { reason, .. } => panic!("conflict: {reason}"),
        }
    }

    #[test]
    fn two_appends_merge_with_first_side_untouched() {
        let base = entry("a");
        let ours = format!("{base}\n{}", entry("b"));
        let theirs = format!("{base}\n{}", entry("c"));
        let m = clean(merge_oct(&base, &ours, &theirs, Keep::Theirs));
        assert!(m.starts_with(&theirs));
        assert_eq!(m, format!("{theirs}\n{}", entry("b")));
        let m2 = clean(merge_oct(&base, &ours, &theirs, Keep::Ours));
        assert_eq!(m2, format!("{ours}\n{}", entry("c")));
    }

    #[test]
    fn history_edit_is_a_conflict() {
        let base = format!("{}\n{}", entry("a"), entry("b"));
        let ours = base.replace("d a", "changed");
        let theirs = format!("{base}\n{}", entry("c"));
        match merge_oct(&base, &ours, &theirs, Keep::Theirs) {
            MergeOutcome::Conflict { text, .. } => {
                let t = String::from_utf8(text).unwrap();
                assert!(t.contains("<<<<<<< ours\n") && t.contains(">>>>>>> theirs\n"));
            }
            MergeOutcome::Clean(_) => panic!("must conflict"),
        }
    }

    #[test]
    fn a_contribution_main_already_holds_is_a_conflict_as_upstream() {
        let base = entry("a");
        let ours = format!("{base}\n{}", entry("b"));
        let theirs = format!(
            "{base}\n{}",
            entry("b").replace("XXX", "https://github.com/SemiAnalysisAI/InferenceX/pull/7")
        );
        match merge_oct(&base, &ours, &theirs, Keep::Theirs) {
            MergeOutcome::Conflict { reason, .. } => {
                assert!(
                    reason.contains("no changelog contribution remaining"),
                    "{reason}"
                )
            }
            MergeOutcome::Clean(m) => panic!("must conflict: {}", String::from_utf8_lossy(&m)),
        }
    }

    #[test]
    fn main_editing_history_still_takes_the_pr_append() {
        let base = format!("{}\n{}", entry("a"), entry("b"));
        let main = base.replacen(
            "XXX",
            "https://github.com/SemiAnalysisAI/InferenceX/pull/3",
            1,
        );
        let pr = format!("{base}\n{}", entry("c"));
        let m = clean(merge_oct(&base, &pr, &main, Keep::Theirs));
        assert_eq!(m, format!("{main}\n{}", entry("c")));
    }

    #[test]
    fn a_link_only_correction_is_applied_to_main() {
        let base = format!("{}\n{}", entry("a"), entry("b"));
        let link = "https://github.com/SemiAnalysisAI/InferenceX/pull/4";
        let pr = base.replacen("XXX", link, 1);
        let main = format!("{base}\n{}", entry("m"));
        let m = clean(merge_oct(&base, &pr, &main, Keep::Theirs));
        assert_eq!(m, main.replacen("XXX", link, 1));
    }

    #[test]
    fn a_broken_append_or_cr_bytes_stay_a_conflict() {
        let base = entry("a");
        let main = format!("{base}\n{}", entry("m"));
        for pr in [
            format!("{base}\n- config-keys:\n    - [\n"),
            format!("{base}\n{}", entry("c").replace('\n', "\r\n")),
            format!("{base}\n- config-keys: x\n  other: 1\n"),
            format!("{base}\n  description:\n    - d\n"),
            format!("{base}\n{}\n\n", entry("c")),
        ] {
            match merge_oct(&base, &pr, &main, Keep::Theirs) {
                MergeOutcome::Conflict { .. } => {}
                MergeOutcome::Clean(m) => {
                    panic!("{pr:?} merged: {}", String::from_utf8_lossy(&m))
                }
            }
        }
    }

    #[test]
    fn the_operation_decides_the_upstream_side() {
        assert_eq!(GitOperation::Rebase.keep(), Keep::Ours);
        assert_eq!(GitOperation::Apply.keep(), Keep::Ours);
        let merge = |c, m| GitOperation::Merge {
            current_is_upstream: c,
            merged_is_upstream: m,
        };
        assert_eq!(merge(true, false).keep(), Keep::Ours);
        assert_eq!(merge(false, true).keep(), Keep::Theirs);
        assert_eq!(merge(false, false).keep(), Keep::Ours);
    }

    proptest! {
        /// Any two pure appends merge cleanly; the kept side is a byte prefix and every new
        /// entry appears once, separated by exactly one empty line.
        #[test]
        fn appends_always_merge(a in proptest::collection::vec("k[a-z]{1,6}", 0..4),
                                b in proptest::collection::vec("K[A-Z]{1,6}", 1..4)) {
            let base = entry("base");
            let ours: String = a.iter().fold(base.clone(), |acc, k| format!("{acc}\n{}", entry(k)));
            let theirs: String = b.iter().fold(base.clone(), |acc, k| format!("{acc}\n{}", entry(k)));
            match merge_oct(&base, &ours, &theirs, Keep::Theirs) {
                MergeOutcome::Clean(m) => {
                    let m = String::from_utf8(m).unwrap();
                    prop_assert!(m.starts_with(&theirs));
                    prop_assert!(!m.contains("\n\n\n"));
                    prop_assert!(!m.ends_with("\n\n"));
                    for k in a.iter().chain(&b) {
                        let line = format!("    - {k}\n");
                        prop_assert!(m.contains(&line), "missing {}", line);
                    }
                }
                MergeOutcome::Conflict { reason, .. } => prop_assert!(false, "{}", reason),
            }
        }
    }
}
