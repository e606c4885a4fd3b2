//! infx-changelog: `perf-changelog.yaml` entries, the append-only rules against git history
//! (gate mode = upstream CI, strict mode = upstream merge tooling), config-key resolution
//! against the master configs of the same revision, the sweep plan, and the merge driver.
//!
//! Everything here is pure: callers load bytes and get [`Diagnostic`]s. Nothing here reads git:
//! the plan takes the changelog texts and generation inputs of both revisions, the replay walks
//! a [`replay::History`]; xtask's `history` module reads them (docs/architecture.md). `infx-git`
//! is a dependency only for its in-memory line diff (`diff_lines`, `LineDiff`, `DiffLine`) and
//! its id and commit types (`Oid`, `CommitInfo`).

pub mod codes;
mod coverage;
mod entry;
mod findings;
mod gate;
mod impact;
mod keys;
mod labels;
mod matrix_gen;
mod merge;
mod plan;
mod replay;
mod strict;
mod text;

pub use coverage::{Appended, PlannedRows, coverage, planned_rows};
pub use entry::{Dialect, Entry, EntryError, validate_entry};
pub use findings::{all_faults, appended_count};
pub use gate::{Added, GateError, GateStage, Modifiers, gate, parse_added};
pub use impact::{
    Impact, Impacted, RecipeUse, launcher_impact, master_impact, recipe_impact, runners_impact,
};
pub use infx_matrix::ScenarioType;
pub use keys::{KeyError, MasterKeys, resolve_keys};
pub use labels::{PrContext, SKIP_SWEEP, at_merge_time, check_labels, modifiers};
pub use matrix_gen::{MatrixGenerator, RevisionInputs, plan_between};
pub use merge::{GitOperation, Keep, MergeOutcome, merge};
pub use plan::{PlanError, PlanOptions, PlanStage};
pub use replay::{CommitVerdict, History, replay_tree};
pub use strict::{
    Comparison, LinkMode, StrictError, StrictStage, is_placeholder, parse_changelog, strict_check,
};

use infx_report::{Diagnostic, Span};
use std::path::Path;

/// Default changelog path (repository-relative; layout probing adds `inferencex-e2e/`).
pub const CHANGELOG_PATH: &str = infx_config::layout::CHANGELOG;
/// Master configs in upstream's merge order (AMD first).
pub const MASTER_CONFIGS: [&str; 2] = [
    infx_config::layout::MASTER_CONFIGS[1],
    infx_config::layout::MASTER_CONFIGS[0],
];

/// Which append-only rule set to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Upstream merge-time rules (byte prefix, separators, pr-link rules). The default.
    #[default]
    Strict,
    /// Upstream CI gate (no deleted non-blank line; added lines form valid entries).
    Gate,
    /// Both.
    Both,
}

/// Options of [`check_change`].
#[derive(Debug, Clone, Copy)]
pub struct CheckOptions {
    pub mode: Mode,
    pub links: Option<LinkMode>,
    pub dialect: Dialect,
    pub modifiers: Modifiers,
}

/// Checks a change of the changelog: `base` = the file at the base (`None` if absent), `head` =
/// the new bytes, `path` = the path to report, `master` = the master-config keys of the head
/// revision (`None` skips key resolution, e.g. when the masters failed to load: report that
/// separately). Returns diagnostics in file order; empty = the change is fine.
/// The most entries one change may append (docs/security.md, "Budgets and read paths, with
/// their tests"): 2,000, above the whole real changelog (772 entries in August 2026, so even a
/// `--base` at its first commit fits) and 180 times the most one real commit appended (11);
/// 10^5 appended entries took 16-41 s and printed 25 MB before.
pub const MAX_APPENDED_ENTRIES: usize = 2_000;

/// `changelog/too-many-entries` when `head` appends more than [`MAX_APPENDED_ENTRIES`] entries
/// to `base` (counted by their `- config-keys:` lines, before any parse), at the first one
/// past the budget.
pub fn appended_over_budget(base: &[u8], head: &[u8], path: &Path) -> Option<Diagnostic> {
    let n = findings::appended_count(base, head);
    if n <= MAX_APPENDED_ENTRIES {
        return None;
    }
    let starts = strict::entry_starts(head);
    let at = starts
        .len()
        .checked_sub(n)
        .and_then(|first| starts.get(first + MAX_APPENDED_ENTRIES))
        .copied()
        .unwrap_or(0);
    let line = head[..at.min(head.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    Some(
        Diagnostic::error(
            codes::TOO_MANY_ENTRIES,
            format!(
                "the change appends {n} entries; at most {MAX_APPENDED_ENTRIES} are checked per change, so none is"
            ),
        )
        .at(path, infx_report::Span::line(line))
        .with_help("split the change, or compare with a later --base"),
    )
}

pub fn check_change(
    base: Option<&[u8]>,
    head: &[u8],
    path: &Path,
    master: Option<&MasterKeys>,
    opts: &CheckOptions,
) -> Vec<Diagnostic> {
    if let Some(b) = base
        && let Some(d) = appended_over_budget(b, head, path)
    {
        return vec![d];
    }
    let mut out = Vec::new();
    let links = opts.links.unwrap_or(LinkMode::Local);
    let mut added: Vec<Entry> = Vec::new();
    if matches!(opts.mode, Mode::Strict | Mode::Both) {
        match base {
            None => match parse_changelog(head, CHANGELOG_PATH, opts.dialect) {
                // A new file: every entry is an addition.
                Ok(p) => added.extend(entries_of(&p, head, opts.dialect)),
                Err(e) => out.push(strict_diag(path, &e)),
            },
            Some(b) => match strict_parsed(b, head, links, opts.dialect) {
                Ok((c, h)) => {
                    // Only the appended entries (the tail) are new; validate just those.
                    let text = std::str::from_utf8(head).ok();
                    let n = h.entries.len();
                    added.extend(
                        h.entries[n.saturating_sub(c.additions)..]
                            .iter()
                            .filter_map(|e| validate_entry(e, opts.dialect, text).ok()),
                    );
                }
                Err((stage, e)) => {
                    let mut d = strict_diag(path, &e);
                    if stage == StrictStage::BaseParse {
                        d = d.with_note("the base version of the file is already invalid; only the change can be judged by the gate (--changelog-mode gate)");
                    }
                    // Upstream stops at the first fault; report every one (findings.rs). The
                    // first fault is always reported: from upstream's model too when the full
                    // pass has no finding of its rule or on its line.
                    let all = if stage == StrictStage::BaseParse {
                        findings::Faults::default()
                    } else {
                        findings::all_faults(b, head, path, links, opts.dialect)
                    };
                    let line = |x: &Diagnostic| x.span.map(|s| s.start.line());
                    if !all
                        .diagnostics
                        .iter()
                        .any(|f| f.code == d.code || (line(f).is_some() && line(f) == line(&d)))
                    {
                        out.push(d);
                    }
                    out.extend(all.diagnostics);
                    added.extend(all.appended);
                }
            },
        }
    }
    if matches!(opts.mode, Mode::Gate | Mode::Both) {
        match gate(
            base,
            head,
            &path.display().to_string(),
            opts.dialect,
            opts.modifiers,
        ) {
            Ok(a) => {
                if opts.mode == Mode::Gate {
                    added = a.entries;
                }
            }
            Err(e) => out.push(gate_diag(path, &e)),
        }
    } else if !added.is_empty()
        && let Err(e) = gate::check_preconditions(&added, opts.modifiers)
    {
        out.push(gate_diag(path, &e));
    }
    if let Some(master) = master {
        for e in &added {
            if let Err(k) = resolve_keys(&e.config_keys, master) {
                let mut d =
                    Diagnostic::error(k.code, k.message).at(path, Span::line(e.span.start.line()));
                if let Some(h) = k.help {
                    d = d.with_help(h);
                }
                out.push(d);
            }
        }
    }
    out
}

/// The strict sequence, keeping the parsed head (one parse per side).
fn strict_parsed(
    base: &[u8],
    head: &[u8],
    links: LinkMode,
    dialect: Dialect,
) -> Result<(Comparison, strict::Parsed), (StrictStage, StrictError)> {
    // The common change appends to the file. When the base is a byte prefix of the head that
    // ends where an entry starts, the base's entries are unchanged bytes and nothing after the
    // boundary can alter an earlier list item: only the appended part is parsed (with blank
    // lines standing in for the base, so line numbers stay those of the file). The base itself
    // is taken as valid: it is the upstream file, checked when it was merged. Any failure takes
    // the full path below, which reports base and head errors exactly as upstream does.
    if head.starts_with(base) && appends_at_entry_boundary(base, &head[base.len()..]) {
        if head[base.len()..].iter().all(|&b| b == b'\n') {
            // Nothing but blank lines appended: no entry to parse, only the raw rules apply.
            strict::validate_raw_change(base, head, 0, 0).map_err(|e| (StrictStage::Raw, e))?;
            let none = strict::Comparison {
                additions: 0,
                corrections: 0,
            };
            return Ok((
                none,
                strict::Parsed {
                    entries: Vec::new(),
                },
            ));
        }
        let base_lines = base.iter().filter(|&&b| b == b'\n').count();
        let mut appended = vec![b'\n'; base_lines];
        appended.extend_from_slice(&head[base.len()..]);
        if let Ok(h) = parse_changelog(&appended, "head perf-changelog.yaml", dialect) {
            let c = strict::compare_entries(&[], &h.entries, links)
                .map_err(|e| (StrictStage::Compare, e))?;
            strict::validate_raw_change(base, head, c.additions, c.corrections)
                .map_err(|e| (StrictStage::Raw, e))?;
            return Ok((c, h));
        }
    }
    let b = parse_changelog(base, "base perf-changelog.yaml", dialect)
        .map_err(|e| (StrictStage::BaseParse, e))?;
    let h = parse_changelog(head, "head perf-changelog.yaml", dialect)
        .map_err(|e| (StrictStage::HeadParse, e))?;
    let c = strict::check_parsed(base, &b, head, &h, links)?;
    Ok((c, h))
}

/// `suffix` (what follows the base in the head) is blank lines, then nothing or a new entry at
/// column 0; the base ends with a newline.
fn appends_at_entry_boundary(base: &[u8], suffix: &[u8]) -> bool {
    if !base.ends_with(b"\n") {
        return false;
    }
    let rest = suffix
        .iter()
        .position(|&b| b != b'\n')
        .map_or(&[][..], |i| &suffix[i..]);
    rest.is_empty() || rest.starts_with(b"- ")
}

fn entries_of(p: &strict::Parsed, head: &[u8], dialect: Dialect) -> Vec<Entry> {
    let text = std::str::from_utf8(head).ok();
    p.entries
        .iter()
        .filter_map(|n| validate_entry(n, dialect, text).ok())
        .collect()
}

/// A strict-mode failure as a diagnostic at its line.
pub fn strict_diag(path: &Path, e: &StrictError) -> Diagnostic {
    let mut d = Diagnostic::error(e.code, e.message.clone()).with_path(path);
    if let Some(l) = e.line {
        d = d.with_span(Span::line(l));
    }
    if let Some(h) = &e.help {
        d = d.with_help(h.clone());
    }
    d
}

/// A gate failure as a diagnostic.
pub fn gate_diag(path: &Path, e: &GateError) -> Diagnostic {
    let code = e.code.unwrap_or_else(|| e.stage.code());
    let mut d = Diagnostic::error(code, e.message.clone()).with_path(path);
    if let Some(l) = e.line {
        d = d.with_span(Span::line(l));
        if e.line_in_base {
            d = d.with_note(format!("line {l} refers to the base version of the file"));
        }
    }
    if let Some(h) = &e.help {
        d = d.with_help(h.clone());
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    const E1: &str = "- config-keys:\n    - a\n  description:\n    - one\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n";
    const E2: &str = "- config-keys:\n    - b-*\n  description:\n    - two\n  pr-link: XXX\n";

    fn check(base: &str, head: &str, mode: Mode) -> Vec<Diagnostic> {
        let m = MasterKeys::from_keys(["a", "b-1"].map(String::from));
        let opts = CheckOptions {
            mode,
            links: None,
            dialect: Dialect::Oct,
            modifiers: Modifiers::default(),
        };
        check_change(
            Some(base.as_bytes()),
            head.as_bytes(),
            Path::new("perf-changelog.yaml"),
            Some(&m),
            &opts,
        )
    }

    #[test]
    fn append_fast_path_agrees_with_the_full_strict_check() {
        let e3_bad = "- config-keys:\n    - c\n  description: one line\n  pr-link: XXX\n";
        let cases: Vec<(String, String)> = vec![
            (E1.into(), format!("{E1}\n{E2}")),
            (E1.into(), format!("{E1}\n\n{E2}")),
            (E1.into(), format!("{E1}{E2}")),
            (E1.into(), format!("{E1}\n{e3_bad}")),
            (E1.into(), E1.into()),
            (format!("{E1}\n{E2}"), format!("{E1}\n{E2}\n{E1}")),
            (E1.into(), format!("{E1}  extra: 1\n")),
            (String::new(), E1.into()),
        ];
        for (base, head) in cases {
            let fast = strict_parsed(
                base.as_bytes(),
                head.as_bytes(),
                LinkMode::Local,
                Dialect::Oct,
            )
            .map(|(c, _)| c);
            let full = strict_check(
                Some(base.as_bytes()),
                head.as_bytes(),
                LinkMode::Local,
                Dialect::Oct,
            );
            assert_eq!(fast, full, "base {base:?} head {head:?}");
        }
        // The one deliberate difference: a base that is itself invalid is not re-checked when
        // the change only appends (the full check reports the base).
        let bad_base = E1.replace("    - one", "    - one\t");
        let head = format!("{bad_base}\n{E2}");
        assert!(
            strict_check(
                Some(bad_base.as_bytes()),
                head.as_bytes(),
                LinkMode::Local,
                Dialect::Oct
            )
            .is_err()
        );
        let fast = strict_parsed(
            bad_base.as_bytes(),
            head.as_bytes(),
            LinkMode::Local,
            Dialect::Oct,
        );
        assert_eq!(fast.map(|(c, _)| c.additions), Ok(1));
    }

    #[test]
    fn append_passes_and_history_edits_fail_with_line() {
        assert!(check(E1, &format!("{E1}\n{E2}"), Mode::Both).is_empty());
        let d = check(
            E1,
            &format!("{}\n{E2}", E1.replace("one", "uno")),
            Mode::Strict,
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, crate::codes::ENTRY_CHANGED);
        // The edited description line.
        assert_eq!(d[0].span.map(|s| s.start.line()), Some(4));
        let d = check(
            E1,
            &format!("{}\n{E2}", E1.replace("one", "uno")),
            Mode::Gate,
        );
        assert_eq!(d[0].code, crate::codes::DELETED_LINE);
        assert_eq!(d[0].span.map(|s| s.start.line()), Some(4));
    }

    #[test]
    fn rendered_findings_snapshot() {
        let mut out = String::new();
        let ws = format!("{}\n{E2}", E1.replace("    - one", "    - one "));
        let trap = format!("{E1}\n{}", E2.replace("    - two", "    - 2026-08-01"));
        for (head, mode) in [(ws, Mode::Both), (trap, Mode::Strict)] {
            let diags = check(E1, &head, mode);
            let mut sources = infx_report::SourceMap::new();
            sources.insert("perf-changelog.yaml", head);
            out.push_str(&infx_report::render_human(&diags, &sources, false));
        }
        insta::assert_snapshot!(out);
    }

    #[test]
    fn unknown_key_in_new_entry() {
        let d = check(
            E1,
            &format!("{E1}\n{}", E2.replace("b-*", "zzz")),
            Mode::Strict,
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, crate::codes::CONFIG_KEY);
        assert_eq!(d[0].span.map(|s| s.start.line()), Some(7));
    }
}
