//! The three-way merge of `perf-changelog.yaml` used as a git merge driver.
//!
//! Two sides that only appended entries to the common ancestor merge cleanly: the first side's
//! bytes are kept untouched and the other side's new entry blocks are appended after exactly
//! one empty line (upstream `resolve-conflict` semantics, minus the pr-link rewrite). Anything
//! else (an edit of a historical entry on either side) stays a conflict.

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

/// Which side's bytes stay first. Upstream keeps main's bytes and re-appends the PR's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    Ours,
    Theirs,
}

/// Merges `ours` and `theirs`, both descended from `ancestor`.
pub fn merge(ancestor: &[u8], ours: &[u8], theirs: &[u8], keep: Keep) -> MergeOutcome {
    if ours == theirs || theirs == ancestor {
        return MergeOutcome::Clean(ours.to_vec());
    }
    if ours == ancestor {
        return MergeOutcome::Clean(theirs.to_vec());
    }
    let (first, second) = match keep {
        Keep::Ours => (ours, theirs),
        Keep::Theirs => (theirs, ours),
    };
    let blocks_first = appended_blocks(ancestor, first);
    let blocks_second = appended_blocks(ancestor, second);
    let (Ok(first_blocks), Ok(second_blocks)) = (blocks_first, blocks_second) else {
        let reason =
            "a side changed historical changelog bytes (not a pure append); resolve by hand"
                .to_string();
        return MergeOutcome::Conflict {
            text: conflict_text(ours, theirs),
            reason,
        };
    };
    let mut out = first.to_vec();
    let mut added = 0;
    for b in second_blocks {
        if first_blocks.iter().any(|f| same_entry(f, &b)) {
            continue; // already merged (idempotent after a partial merge)
        }
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        if !out.ends_with(b"\n\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(&b);
        added += 1;
    }
    let _ = added;
    MergeOutcome::Clean(out)
}

/// The entry blocks `side` appended to `ancestor`: from a `- config-keys:` line to its last
/// non-blank line, each ending with `\n`. `Err` when `side` does not start with `ancestor`.
fn appended_blocks(ancestor: &[u8], side: &[u8]) -> Result<Vec<Vec<u8>>, ()> {
    let suffix = side.strip_prefix(ancestor).ok_or(())?;
    let text = std::str::from_utf8(suffix).map_err(|_| ())?;
    let mut blocks: Vec<Vec<String>> = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("- config-keys:") {
            blocks.push(vec![line.to_string()]);
        } else if let Some(b) = blocks.last_mut() {
            b.push(line.to_string());
        } else if !line.trim().is_empty() {
            // Non-blank text before the first new entry: not a clean append.
            return Err(());
        }
    }
    Ok(blocks
        .into_iter()
        .map(|mut lines| {
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
            let mut s = lines.concat();
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s.into_bytes()
        })
        .collect())
}

/// Same entry apart from its pr-link line (a placeholder canonicalised on one side).
fn same_entry(a: &[u8], b: &[u8]) -> bool {
    let strip = |x: &[u8]| -> Vec<Vec<u8>> {
        x.split(|&c| c == b'\n')
            .filter(|l| !l.starts_with(b"  pr-link:"))
            .map(<[u8]>::to_vec)
            .collect()
    };
    strip(a) == strip(b)
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

    #[test]
    fn two_appends_merge_with_first_side_untouched() {
        let base = entry("a");
        let ours = format!("{base}\n{}", entry("b"));
        let theirs = format!("{base}\n{}", entry("c"));
        let MergeOutcome::Clean(m) = merge(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            Keep::Theirs,
        ) else {
            panic!("conflict")
        };
        let m = String::from_utf8(m).unwrap();
        assert!(m.starts_with(&theirs));
        assert_eq!(m, format!("{theirs}\n{}", entry("b")));
        let MergeOutcome::Clean(m2) = merge(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            Keep::Ours,
        ) else {
            panic!("conflict")
        };
        assert_eq!(
            String::from_utf8(m2).unwrap(),
            format!("{ours}\n{}", entry("c"))
        );
    }

    #[test]
    fn history_edit_is_a_conflict() {
        let base = format!("{}\n{}", entry("a"), entry("b"));
        let ours = base.replace("d a", "changed");
        let theirs = format!("{base}\n{}", entry("c"));
        match merge(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            Keep::Theirs,
        ) {
            MergeOutcome::Conflict { text, .. } => {
                let t = String::from_utf8(text).unwrap();
                assert!(t.contains("<<<<<<< ours\n") && t.contains(">>>>>>> theirs\n"));
            }
            MergeOutcome::Clean(_) => panic!("must conflict"),
        }
    }

    #[test]
    fn duplicate_entry_is_not_appended_twice() {
        let base = entry("a");
        let ours = format!("{base}\n{}", entry("b"));
        let theirs = format!(
            "{base}\n{}",
            entry("b").replace("XXX", "https://github.com/SemiAnalysisAI/InferenceX/pull/7")
        );
        let MergeOutcome::Clean(m) = merge(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            Keep::Theirs,
        ) else {
            panic!()
        };
        assert_eq!(m, theirs.as_bytes());
    }

    proptest! {
        /// Any two pure appends merge cleanly; the kept side is a byte prefix and every new
        /// entry appears once, separated by exactly one empty line.
        #[test]
        fn appends_always_merge(a in proptest::collection::vec("[a-z]{1,6}", 0..4),
                                b in proptest::collection::vec("[A-Z]{1,6}", 1..4)) {
            let base = entry("base");
            let ours: String = a.iter().fold(base.clone(), |acc, k| format!("{acc}\n{}", entry(k)));
            let theirs: String = b.iter().fold(base.clone(), |acc, k| format!("{acc}\n{}", entry(k)));
            match merge(base.as_bytes(), ours.as_bytes(), theirs.as_bytes(), Keep::Theirs) {
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
