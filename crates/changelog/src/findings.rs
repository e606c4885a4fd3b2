//! Every strict-mode fault of a change in one run (docs/changelog.md, "Diagnostic codes": strict mode). Upstream's
//! strict check (strict.rs models it) stops at its first failure, so a branch with five faults
//! needs five runs; validate and `changelog check` keep going: every tab, CR and NUL (at its
//! column), every edited or reordered historical entry, every appended entry's schema errors,
//! pr-link and separator. strict.rs stays the upstream model (first failure, its messages).

use crate::codes;
use crate::entry::{Dialect, Entry, eq_without, validate_entry};
use crate::strict::{
    CANONICAL_PREFIX, LinkMode, append_byte_faults, appended_tail_faults,
    entry_start_mismatch_line, entry_starts, first_difference, first_removed_entry, is_canonical,
    link_of, parse_changelog, validate_added_pr_link,
};
use crate::text::py_splitlines;
use infx_report::{Code, Diagnostic, LineIndex, Span};
use infx_yaml::{LoadOptions, Node, Value};
use std::path::Path;

/// The most lines reported per kind of forbidden byte (tab, CR, NUL); the rest are counted.
const MAX_LINES_PER_KIND: usize = 20;

/// What [`all_faults`] found: the findings, and the appended entries that are valid (their
/// config-keys still get resolved).
#[derive(Debug, Default)]
pub struct Faults {
    pub diagnostics: Vec<Diagnostic>,
    pub appended: Vec<Entry>,
}

/// How many entries the head starts beyond the base, by upstream's `- config-keys:` line rule;
/// the count a summary can give even when the appended entries do not parse.
pub fn appended_count(base: &[u8], head: &[u8]) -> usize {
    entry_starts(head)
        .len()
        .saturating_sub(entry_starts(base).len())
}

/// Every strict fault of `head` against `base` (both present). Empty when the base itself does
/// not parse (only the gate can judge that change) or when nothing is wrong.
pub fn all_faults(
    base: &[u8],
    head: &[u8],
    path: &Path,
    links: LinkMode,
    dialect: Dialect,
) -> Faults {
    let mut out = Faults::default();
    let Ok(b) = parse_changelog(base, "base perf-changelog.yaml", dialect) else {
        return out;
    };
    let lossy = String::from_utf8_lossy(head);
    let index = LineIndex::new(&lossy);
    byte_faults(head, &lossy, &index, path, &mut out.diagnostics);
    let Ok(text) = std::str::from_utf8(head) else {
        // The strict finding names the encoding fault; nothing after it can be read.
        return out;
    };
    let clean = blank_forbidden_bytes(text);
    let root = match infx_yaml::parse_str_with(path, &clean, &LoadOptions::default()) {
        Ok(r) => r,
        Err(d) => {
            let mut d = Diagnostic {
                code: codes::YAML,
                message: format!("perf-changelog.yaml is not valid YAML: {}", d.message),
                ..d
            };
            d.path = Some(path.to_path_buf());
            out.diagnostics.push(d);
            return out;
        }
    };
    let Value::Seq(items) = &root.value else {
        out.diagnostics.push(fault(
            path,
            codes::ROOT,
            "perf-changelog.yaml root must be a YAML list".into(),
            Span::line(1),
        ));
        return out;
    };
    let top = py_splitlines(&clean)
        .filter(|l| l.starts_with("- config-keys:"))
        .count();
    if top != items.len() {
        // Entries and `- config-keys:` lines disagree: positions cannot be compared.
        out.diagnostics.push(
            fault(
                path,
                codes::ENTRY_START,
                format!("perf-changelog.yaml has {top} top-level config entries but YAML parsed {} entries", items.len()),
                Span::line(entry_start_mismatch_line(&clean, items)),
            )
            .with_help("start every entry at column 0 with `- config-keys:` (config-keys must be the first key)"),
        );
        return out;
    }
    let history_faults = compare_history(&b.entries, items, path, &mut out.diagnostics);
    // (entry number, entry): the tail, or the inserted entries wherever they sit.
    let appended: Vec<(usize, &Node)> = match &history_faults.inserted {
        Some(at) => at
            .iter()
            .filter_map(|&i| Some((i + 1, items.get(i)?)))
            .collect(),
        None => items
            .iter()
            .enumerate()
            .skip(b.entries.len())
            .map(|(i, e)| (i + 1, e))
            .collect(),
    };
    if history_faults.corrections > 0 && !appended.is_empty() {
        out.diagnostics.push(
            fault(
                path,
                codes::MIXED_CORRECTIONS,
                "do not mix historical pr-link corrections with new changelog entries".into(),
                appended[0].1.span,
            )
            .with_help("send the pr-link corrections in a separate change"),
        );
    }
    for (number, e) in &appended {
        appended_entry_faults(e, *number, &clean, dialect, links, path, &mut out);
    }
    if history_faults.inserted.is_none() && !appended.is_empty() {
        raw_faults(
            base,
            head,
            &lossy,
            &index,
            (appended.len(), history_faults.any),
            path,
            &mut out.diagnostics,
        );
    }
    out
}

/// One changelog finding at `span` of `path`.
fn fault(path: &Path, code: Code, msg: String, span: Span) -> Diagnostic {
    Diagnostic::error(code, msg).at(path, span)
}

/// Every line with a tab, CR or NUL, at the column of its first one (the first
/// MAX_LINES_PER_KIND of each kind, then a count: a hostile file could have millions,
/// docs/security.md), and a missing final newline.
fn byte_faults(
    head: &[u8],
    lossy: &str,
    index: &LineIndex,
    path: &Path,
    diags: &mut Vec<Diagnostic>,
) {
    const KINDS: [(char, Code, &str); 3] = [
        ('\t', codes::TAB, "a tab"),
        ('\r', codes::CR, "a CR character"),
        ('\0', codes::NUL, "a NUL byte"),
    ];
    let mut seen = [0usize; 3];
    let mut line_start = 0;
    for line in lossy.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        for (k, (ch, code, what)) in KINDS.iter().enumerate() {
            let Some(at) = body.find(*ch) else { continue };
            seen[k] += 1;
            if seen[k] > MAX_LINES_PER_KIND {
                continue;
            }
            let pos = index.pos(lossy, line_start + at);
            diags.push(
                fault(
                    path,
                    *code,
                    format!(
                        "perf-changelog.yaml contains {what} (line {}, column {})",
                        pos.line(),
                        pos.col()
                    ),
                    Span {
                        start: pos,
                        end: index.pos(lossy, line_start + at + ch.len_utf8()),
                    },
                )
                .with_help("use LF line endings and spaces only"),
            );
        }
        line_start += line.len();
    }
    for (k, (_, code, what)) in KINDS.iter().enumerate() {
        if seen[k] > MAX_LINES_PER_KIND {
            diags.push(
                Diagnostic::error(
                    *code,
                    format!(
                        "perf-changelog.yaml contains {what} on {} more lines",
                        seen[k] - MAX_LINES_PER_KIND
                    ),
                )
                .with_path(path)
                .with_help("use LF line endings and spaces only"),
            );
        }
    }
    if !head.ends_with(b"\n") {
        let end = index.pos(lossy, lossy.len());
        diags.push(
            fault(
                path,
                codes::FINAL_NEWLINE,
                "perf-changelog.yaml does not end with a newline".into(),
                Span::point(end),
            )
            .with_help("end the file with exactly one newline"),
        );
    }
}

/// The text with tabs, CRs and NULs blanked (same lines and columns) and a final newline, so
/// one tab does not hide the faults after it.
fn blank_forbidden_bytes(text: &str) -> String {
    let mut clean: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\t' | '\r' | '\0') {
                ' '
            } else {
                c
            }
        })
        .collect();
    if !clean.ends_with('\n') {
        clean.push('\n');
    }
    clean
}

/// An appended entry's schema errors and its pr-link; a valid entry joins `out.appended`.
fn appended_entry_faults(
    e: &Node,
    number: usize,
    clean: &str,
    dialect: Dialect,
    links: LinkMode,
    path: &Path,
    out: &mut Faults,
) {
    if e.as_map().is_none() {
        out.diagnostics.push(fault(
            path,
            codes::ENTRY_SCHEMA,
            format!("entry {number} is not a mapping"),
            e.span,
        ));
        return;
    }
    match validate_entry(e, dialect, Some(clean)) {
        Ok(entry) => out.appended.push(entry),
        Err(errors) => {
            for err in errors {
                let mut d = Diagnostic::error(
                    err.code,
                    // The message names the field already.
                    format!("entry {number}: {}", err.message),
                )
                .at(path, err.span);
                if let Some(h) = err.help {
                    d = d.with_help(h);
                }
                out.diagnostics.push(d);
            }
        }
    }
    if let Err(err) = validate_added_pr_link(&link_of(e), links) {
        let span = e.get("pr-link").map_or(e.span, |n| n.span);
        let mut d = fault(
            path,
            err.code,
            format!("entry {number}: {}", err.message),
            span,
        );
        if let Some(h) = err.help {
            d = d.with_help(h);
        }
        out.diagnostics.push(d);
    }
}

struct History {
    any: bool,
    corrections: usize,
    /// Head positions of entries inserted among the base's (the base entries are all still
    /// there, in order): the new entries, wherever they sit.
    inserted: Option<Vec<usize>>,
}

/// When `head` is `base` with entries added, the head positions of the added ones (`None`
/// when a base entry is missing, changed or moved).
fn added_positions(base: &[Node], head: &[Node]) -> Option<Vec<usize>> {
    let mut next = 0;
    let mut added = Vec::new();
    for (i, n) in head.iter().enumerate() {
        if base.get(next) == Some(n) {
            next += 1;
        } else {
            added.push(i);
        }
    }
    (next == base.len()).then_some(added)
}

/// Every historical entry that changed, each once: a swap of two entries is one finding naming
/// both positions, an entry moved from elsewhere says where from, an edit points at the first
/// edited value.
fn compare_history(
    base: &[Node],
    head: &[Node],
    path: &Path,
    out: &mut Vec<Diagnostic>,
) -> History {
    let before = out.len();
    let mut h = History {
        any: false,
        corrections: 0,
        inserted: None,
    };
    let at = |code: Code, msg: String, span: Span| Diagnostic::error(code, msg).at(path, span);
    if head.len() < base.len() {
        let i = first_removed_entry(base, head);
        let span = head
            .get(i)
            .map(|n| n.span)
            .or_else(|| head.last().map(|n| Span::point(n.span.end)))
            .unwrap_or_else(|| Span::line(1));
        out.push(
            at(
                codes::ENTRIES_DELETED,
                "perf-changelog.yaml entries were deleted".into(),
                span,
            )
            .with_help(format!(
                "restore the deleted entries (base entry {} is the first one missing); the changelog only grows at its end",
                i + 1
            )),
        );
        h.any = true;
        return h;
    }
    // An entry added before the end shifts every base entry after it: one finding for the
    // insertion, none for the entries it shifted (docs/changelog.md, "Entries inserted before
    // the end").
    if let Some(added) = added_positions(base, head)
        && added.iter().any(|&i| i < base.len())
    {
        for &i in added.iter().filter(|&&i| i < base.len()) {
            out.push(
                at(
                    codes::ENTRY_INSERTED,
                    format!(
                        "entry {} is inserted before the end, after entry {}: appended entries must be at the end",
                        i + 1,
                        i
                    ),
                    Span::point(head[i].span.start),
                )
                .with_help({
                    let after = head.len() - i - 1;
                    format!(
                        "move it after the last entry (after one empty line); the {after} entr{} after it {} the base's, unchanged",
                        if after == 1 { "y" } else { "ies" },
                        if after == 1 { "is" } else { "are" }
                    )
                }),
            );
        }
        h.any = true;
        h.inserted = Some(added);
        return h;
    }
    let mut explained = vec![false; base.len()];
    for i in 0..base.len() {
        let (b, n) = (&base[i], &head[i]);
        if b == n || explained[i] {
            continue;
        }
        if let Some(j) = (0..base.len()).find(|&j| j != i && base[j] == *n) {
            if head.get(j) == Some(b) {
                explained[j] = true;
                out.push(
                    at(
                        codes::ENTRY_REORDERED,
                        format!(
                            "entries {} and {} are swapped: existing entries keep their positions",
                            i + 1,
                            j + 1
                        ),
                        Span::point(n.span.start),
                    )
                    .with_label(
                        Span::point(head[j].span.start),
                        format!("entry {} is base entry {}", j + 1, i + 1),
                    )
                    .with_help("put them back in their base order; new entries go at the end"),
                );
            } else {
                out.push(
                    at(
                        codes::ENTRY_REORDERED,
                        format!(
                            "entry {} is base entry {} moved here: existing entries keep their positions",
                            i + 1,
                            j + 1
                        ),
                        Span::point(n.span.start),
                    )
                    .with_help("restore the base order; new entries go at the end"),
                );
            }
            continue;
        }
        let same_keys = b.get("config-keys") == n.get("config-keys");
        let span = if same_keys {
            first_difference(b, n).span
        } else {
            Span::point(n.span.start)
        };
        let same_rest = match (b.as_map(), n.as_map()) {
            (Some(bm), Some(hm)) => eq_without(bm, hm, "pr-link"),
            _ => false,
        };
        if !same_rest {
            out.push(
                at(
                    codes::ENTRY_CHANGED,
                    format!("entry {} changed; existing entries are immutable except for pr-link-only corrections", i + 1),
                    span,
                )
                .with_help("restore the historical entry as it was and append new entries at the end of the file"),
            );
            continue;
        }
        let (old, new) = (link_of(b), link_of(n));
        if old == new {
            out.push(at(
                codes::ENTRY_CHANGED,
                format!("entry {} was reformatted without a semantic change", i + 1),
                span,
            ));
        } else if !is_canonical(&new) {
            out.push(
                at(
                    codes::PR_LINK,
                    format!(
                        "entry {} pr-link correction is not canonical: {new:?}",
                        i + 1
                    ),
                    span,
                )
                .with_help(format!("use {CANONICAL_PREFIX}<number>")),
            );
        } else {
            // A valid correction is not a fault.
            h.corrections += 1;
        }
    }
    h.any = out.len() > before;
    h
}

/// The byte rules of an append (upstream `validate_raw_change`), every one: the history
/// unchanged, one empty line before the first appended entry and between appended entries,
/// one newline at the end. Upstream judges the separators only once the history's bytes are
/// the base's; here a history fault (`history_faulted`: an edited or reordered entry, already
/// reported) or other historical bytes do not hide them: they are judged on the head
/// (`appended_tail_faults`), so one run finds both.
fn raw_faults(
    base: &[u8],
    head: &[u8],
    lossy: &str,
    index: &LineIndex,
    (additions, history_faulted): (usize, bool),
    path: &Path,
    out: &mut Vec<Diagnostic>,
) {
    let mut faults = if history_faulted {
        Vec::new()
    } else {
        append_byte_faults(base, head, additions)
    };
    if !head.starts_with(base) {
        faults.extend(appended_tail_faults(head, additions));
    }
    for f in faults {
        out.push(
            Diagnostic::error(f.code, f.message)
                .at(path, Span::point(index.pos(lossy, f.offset)))
                .with_help(f.help),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E1: &str = "- config-keys:\n    - a\n  description:\n    - one\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n";
    const E2: &str = "- config-keys:\n    - b\n  description:\n    - two\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2\n";

    fn faults(base: &str, head: &str) -> Vec<(infx_report::Code, usize, usize)> {
        all_faults(
            base.as_bytes(),
            head.as_bytes(),
            Path::new("perf-changelog.yaml"),
            LinkMode::Local,
            Dialect::Oct,
        )
        .diagnostics
        .iter()
        .map(|d| {
            let s = d.span.unwrap_or_default();
            (d.code, s.start.line(), s.start.col())
        })
        .collect()
    }

    #[test]
    fn five_faults_are_five_findings() {
        let base = format!("{E1}\n{E2}");
        // A tab at column 17, an invalid pr-link, two empty lines before the next entry, a
        // description that is not a list, and an empty line at the end.
        let head = format!(
            "{base}\n- config-keys:\n    - a\n  description:\n    - \"Rerun the\tsweep\"\n  pr-link: see PR\n\n\n- config-keys:\n    - b\n  description: one line\n  pr-link: XXX\n\n"
        );
        let got = faults(&base, &head);
        let codes: Vec<_> = got.iter().map(|(c, _, _)| *c).collect();
        assert_eq!(
            codes,
            [
                codes::TAB,
                codes::PR_LINK,
                codes::ENTRY_SCHEMA,
                codes::SEPARATOR,
                codes::TRAILING_BLANK
            ],
            "{got:?}"
        );
        assert_eq!((got[0].1, got[0].2), (16, 17));
    }

    #[test]
    fn forbidden_bytes_are_reported_per_line_up_to_a_cap() {
        let base = format!("{E1}\n{E2}");
        let lines: String = (0..25).map(|i| format!("    - \"line\t{i}\"\n")).collect();
        let head =
            format!("{base}\n- config-keys:\n    - a\n  description:\n{lines}  pr-link: XXX\n");
        let got = faults(&base, &head);
        let tabs: Vec<_> = got.iter().filter(|(c, _, _)| *c == codes::TAB).collect();
        assert_eq!(tabs.len(), MAX_LINES_PER_KIND + 1, "{got:?}");
        assert_eq!((tabs[0].1, tabs[0].2), (16, 12));
        // The last one counts the rest and has no position.
        assert_eq!(
            (tabs[MAX_LINES_PER_KIND].1, tabs[MAX_LINES_PER_KIND].2),
            (0, 0)
        );
    }

    /// An entry inserted between two historical ones is one finding at the insertion; the base
    /// entry it shifts is not a new entry (no pr-link or key checks on it).
    #[test]
    fn an_insertion_before_the_end_is_one_finding() {
        let e3 = E2
            .replace("    - b\n", "    - c\n")
            .replace("pull/2", "pull/3");
        let base = format!("{E1}\n{E2}");
        let head = format!("{E1}\n{e3}\n{E2}");
        assert_eq!(faults(&base, &head), [(codes::ENTRY_INSERTED, 7, 3)]);
        // At the end it is simply appended.
        assert_eq!(faults(&base, &format!("{E1}\n{E2}\n{e3}")), []);
    }

    #[test]
    fn a_swap_is_named_with_both_positions() {
        let base = format!("{E1}\n{E2}");
        let head = format!("{E2}\n{E1}");
        let d = all_faults(
            base.as_bytes(),
            head.as_bytes(),
            Path::new("perf-changelog.yaml"),
            LinkMode::Local,
            Dialect::Oct,
        )
        .diagnostics;
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, codes::ENTRY_REORDERED);
        assert_eq!(
            d[0].message,
            "entries 1 and 2 are swapped: existing entries keep their positions"
        );
        assert_eq!(d[0].labels.len(), 1);
    }

    #[test]
    fn an_edit_points_at_the_edited_value_and_counts_appended_entries() {
        let base = format!("{E1}\n{E2}");
        let head = format!("{E1}\n{}", E2.replace("    - two", "    - two (edited)"));
        assert_eq!(faults(&base, &head), [(codes::ENTRY_CHANGED, 10, 7)]);
        assert_eq!(
            appended_count(base.as_bytes(), format!("{base}\n{E1}").as_bytes()),
            1
        );
        assert!(
            faults(
                &base,
                &format!("{base}\n{}", E1.replace("pull/1", "pull/3"))
            )
            .is_empty()
        );
    }
}
