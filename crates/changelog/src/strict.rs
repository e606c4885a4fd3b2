//! Strict mode: the byte-level append contract of upstream's merge tooling
//! (`parse_changelog`, `compare_entries`, `validate_raw_change`).

use crate::codes;
use crate::entry::{Dialect, eq_without, py_str_or_empty, validate_entry};
use crate::text::{line_of_offset, py_splitlines};
use infx_report::Code;
use infx_yaml::{LoadOptions, Node, Value};
use std::path::Path;

pub(crate) const CANONICAL_PREFIX: &str = "https://github.com/SemiAnalysisAI/InferenceX/pull/";
pub(crate) const PLACEHOLDERS: [&str; 2] = [
    "XXX",
    "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX",
];

/// A strict-mode failure: its diagnostic code, upstream's message, the 1-based line in the head
/// file when one applies, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictError {
    pub code: Code,
    pub message: String,
    pub line: Option<usize>,
    pub help: Option<String>,
}

impl StrictError {
    fn new(code: Code, message: impl Into<String>) -> Self {
        StrictError {
            code,
            message: message.into(),
            line: None,
            help: None,
        }
    }
    fn line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }
    fn help(mut self, h: impl Into<String>) -> Self {
        self.help = Some(h.into());
        self
    }
}

/// A strictly parsed changelog: the root list's entry nodes (mappings) and the text.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub entries: Vec<Node>,
}

/// `true` for `https://github.com/SemiAnalysisAI/InferenceX/pull/<digits>`.
pub(crate) fn is_canonical(link: &str) -> bool {
    link.strip_prefix(CANONICAL_PREFIX)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

pub fn is_placeholder(link: &str) -> bool {
    PLACEHOLDERS.contains(&link)
}

/// Upstream `parse_changelog`: file invariants, YAML (duplicate keys rejected), root list,
/// `- config-keys:` line count = entry count, each entry a valid `ChangelogEntry`.
pub fn parse_changelog(raw: &[u8], label: &str, dialect: Dialect) -> Result<Parsed, StrictError> {
    if !raw.ends_with(b"\n") {
        // Counted only here: the changelog is the largest file a run reads whole.
        let last_line = raw.iter().filter(|&&b| b == b'\n').count() + 1;
        return Err(StrictError::new(
            codes::FINAL_NEWLINE,
            format!("{label} does not end with a newline"),
        )
        .line(last_line)
        .help("end the file with exactly one newline"));
    }
    for (byte, code, what) in [
        (b'\r', codes::CR, "CR characters"),
        (b'\t', codes::TAB, "tabs"),
        (0u8, codes::NUL, "NUL bytes"),
    ] {
        if let Some(pos) = memchr::memchr(byte, raw) {
            let line = raw[..pos].iter().filter(|&&b| b == b'\n').count() + 1;
            return Err(StrictError::new(code, format!("{label} contains {what}"))
                .line(line)
                .help("use LF line endings and spaces only"));
        }
    }
    let text = std::str::from_utf8(raw).map_err(|e| {
        let line = raw[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        StrictError::new(codes::ENCODING, format!("{label} is not UTF-8: {e}")).line(line)
    })?;
    let root = infx_yaml::parse_str_with(Path::new(label), text, &LoadOptions::default()).map_err(
        |d| {
            let mut e = StrictError::new(
                codes::YAML,
                format!("{label} is not valid YAML: {}", d.message),
            );
            e.line = d.span.map(|s| s.start.line());
            e.help = d.help;
            e
        },
    )?;
    if let Some(line) = merge_key_line(text) {
        return Err(StrictError::new(
            codes::YAML,
            format!("{label} is not valid YAML: could not determine a constructor for the tag 'tag:yaml.org,2002:merge'"),
        )
        .line(line)
        .help("write the keys out in each entry; the changelog's strict parser has no `<<` merge keys"));
    }
    let Value::Seq(items) = root.value else {
        return Err(
            StrictError::new(codes::ROOT, format!("{label} root must be a YAML list")).line(1),
        );
    };
    let top = py_splitlines(text)
        .filter(|l| l.starts_with("- config-keys:"))
        .count();
    if top != items.len() {
        let line = entry_start_mismatch_line(text, &items);
        return Err(StrictError::new(
            codes::ENTRY_START,
            format!("{label} has {top} top-level config entries but YAML parsed {} entries", items.len()),
        )
        .line(line)
        .help("start every entry at column 0 with `- config-keys:` (config-keys must be the first key)"));
    }
    for (i, it) in items.iter().enumerate() {
        if it.as_map().is_none() {
            return Err(StrictError::new(
                codes::ENTRY_SCHEMA,
                format!("{label} entry {} is not a mapping", i + 1),
            )
            .line(it.span.start.line()));
        }
        if let Err(errs) = validate_entry(it, dialect, Some(text)) {
            let first = &errs[0];
            let mut e = StrictError::new(
                first.code,
                format!(
                    "{label} entry {} fails ChangelogEntry validation: {}",
                    i + 1,
                    first.message
                ),
            )
            .line(first.span.start.line());
            e.help = first.help.clone();
            return Err(e);
        }
    }
    Ok(Parsed { entries: items })
}

/// The line of the first plain `<<` scalar. Upstream's strict loader replaces PyYAML's mapping
/// constructor without merge-key support, so a `<<` anywhere fails to construct
/// (docs/changelog.md, strict mode); infx-yaml itself merges it as `safe_load` does.
fn merge_key_line(text: &str) -> Option<usize> {
    use saphyr_parser::{Event, Parser, ScalarStyle};
    // A `<<` scalar needs the two bytes: a changelog without them (every real one) is not
    // parsed a second time (the event scan was 4 % of a whole-tree run; docs/performance.md).
    if !text.contains("<<") {
        return None;
    }
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((ev, span))) = parser.next_event() {
        if let Event::Scalar(value, ScalarStyle::Plain, _, None) = ev
            && value == "<<"
        {
            return Some(span.start.line());
        }
    }
    None
}

/// Where the `- config-keys:` lines and the parsed entries part: the first entry that does
/// not start on such a line, or the first such line that starts no entry (e.g. inside a
/// block scalar); the file's last line when neither (more lines than entries at the end).
pub(crate) fn entry_start_mismatch_line(text: &str, items: &[Node]) -> usize {
    let starts: Vec<usize> = py_splitlines(text)
        .enumerate()
        .filter(|(_, l)| l.starts_with("- config-keys:"))
        .map(|(i, _)| i + 1)
        .collect();
    let item_lines: Vec<usize> = items.iter().map(|it| it.span.start.line()).collect();
    let first_item_off = item_lines.iter().find(|l| !starts.contains(l)).copied();
    let first_start_off = starts.iter().find(|l| !item_lines.contains(l)).copied();
    match (first_item_off, first_start_off) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => py_splitlines(text).count().max(1),
    }
}

/// The result of `compare_entries`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparison {
    pub additions: usize,
    pub corrections: usize,
}

pub(crate) fn link_of(n: &Node) -> String {
    py_str_or_empty(n.as_map().and_then(|m| m.get("pr-link")))
}

/// How appended entries' `pr-link` is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkMode {
    /// A commit on main: canonical links only (upstream main mode).
    Main,
    /// A PR with a known number: that PR's canonical URL or a placeholder (upstream PR mode).
    Pr(u64),
    /// A local change whose PR number is not known yet: a placeholder or any canonical URL.
    Local,
}

impl From<Option<u64>> for LinkMode {
    fn from(pr: Option<u64>) -> Self {
        pr.map_or(LinkMode::Main, LinkMode::Pr)
    }
}

/// The node of `head` where it first differs from `base` (depth first, in written order).
pub(crate) fn first_difference<'a>(base: &Node, head: &'a Node) -> &'a Node {
    match (&base.value, &head.value) {
        (Value::Map(b), Value::Map(h)) => {
            for (k, _, hv) in h.iter() {
                match b.get(k) {
                    Some(bv) if bv == hv => {}
                    Some(bv) => return first_difference(bv, hv),
                    None => return hv,
                }
            }
            head
        }
        (Value::Seq(b), Value::Seq(h)) => {
            for (bv, hv) in b.iter().zip(h) {
                if bv != hv {
                    return first_difference(bv, hv);
                }
            }
            h.get(b.len()).unwrap_or(head)
        }
        _ => head,
    }
}

/// When the head has fewer entries than the base: the index of the first base entry the head
/// no longer holds at its position (the head's length when it is a prefix).
pub(crate) fn first_removed_entry(base: &[Node], head: &[Node]) -> usize {
    base.iter()
        .zip(head)
        .position(|(b, h)| b != h)
        .unwrap_or(head.len())
}

/// Upstream `compare_entries`, positional.
pub(crate) fn compare_entries(
    base: &[Node],
    head: &[Node],
    mode: LinkMode,
) -> Result<Comparison, StrictError> {
    if head.len() < base.len() {
        // Point at the first entry that no longer matches (or the end of the file).
        let i = first_removed_entry(base, head);
        let line = match head.get(i) {
            Some(h) => h.span.start.line(),
            None => head.last().map_or(1, |h| h.span.end.line()),
        };
        return Err(StrictError::new(
            codes::ENTRIES_DELETED,
            "perf-changelog.yaml entries were deleted",
        )
        .line(line)
        .help(format!(
            "restore the deleted entries (base entry {} is the first one missing); the changelog only grows at its end",
            i + 1
        )));
    }
    let mut corrections = 0;
    for (i, (b, h)) in base.iter().zip(head).enumerate() {
        if b == h {
            continue;
        }
        // A different `config-keys` means another entry stands here (insertion, reorder): point
        // at the entry. Otherwise point at the first value that was edited.
        let same_keys = b.get("config-keys") == h.get("config-keys");
        let line = if same_keys {
            first_difference(b, h).span.start.line()
        } else {
            h.span.start.line()
        };
        let same_rest = match (b.as_map(), h.as_map()) {
            (Some(bm), Some(hm)) => eq_without(bm, hm, "pr-link"),
            _ => false,
        };
        if !same_rest {
            return Err(StrictError::new(
                codes::ENTRY_CHANGED,
                format!("entry {} changed; existing entries are immutable except for pr-link-only corrections", i + 1),
            )
            .line(line)
            .help("restore the historical entry as it was and append new entries at the end of the file"));
        }
        let (old, new) = (link_of(b), link_of(h));
        if old == new {
            return Err(StrictError::new(
                codes::ENTRY_CHANGED,
                format!("entry {} was reformatted without a semantic change", i + 1),
            )
            .line(line));
        }
        if !is_canonical(&new) {
            return Err(StrictError::new(
                codes::PR_LINK,
                format!(
                    "entry {} pr-link correction is not canonical: {new:?}",
                    i + 1
                ),
            )
            .line(line)
            .help(format!("use {CANONICAL_PREFIX}<number>")));
        }
        corrections += 1;
    }
    let additions = &head[base.len()..];
    if corrections > 0 && !additions.is_empty() {
        return Err(StrictError::new(
            codes::MIXED_CORRECTIONS,
            "do not mix historical pr-link corrections with new changelog entries",
        )
        .line(additions[0].span.start.line())
        .help("send the pr-link corrections in a separate change"));
    }
    for e in additions {
        validate_added_pr_link(&link_of(e), mode).map_err(|err| err.line(e.span.start.line()))?;
    }
    Ok(Comparison {
        additions: additions.len(),
        corrections,
    })
}

pub(crate) fn validate_added_pr_link(link: &str, mode: LinkMode) -> Result<(), StrictError> {
    match mode {
        LinkMode::Local => {
            if !is_placeholder(link) && !is_canonical(link) {
                return Err(StrictError::new(
                    codes::PR_LINK,
                    format!("new entry has invalid pr-link: {link:?}"),
                )
                .help(format!(
                    "use XXX until the PR exists, then {CANONICAL_PREFIX}<number>"
                )));
            }
        }
        LinkMode::Main => {
            if !is_canonical(link) {
                return Err(StrictError::new(
                    codes::PR_LINK,
                    format!("new main-branch entry has invalid pr-link: {link:?}"),
                )
                .help(format!("use {CANONICAL_PREFIX}<number>")));
            }
        }
        LinkMode::Pr(n) => {
            let expected = format!("{CANONICAL_PREFIX}{n}");
            if !is_placeholder(link) && link != expected {
                return Err(StrictError::new(
                    codes::PR_LINK,
                    format!(
                        "new PR entry must use {expected:?} or an XXX placeholder; found {link:?}"
                    ),
                )
                .help(format!(
                    "write `pr-link: {expected}` (or XXX until the PR number is known)"
                )));
            }
        }
    }
    Ok(())
}

/// One byte rule an append breaks, at a byte offset of the head.
pub(crate) struct AppendByteFault {
    pub code: Code,
    pub message: &'static str,
    pub help: &'static str,
    pub offset: usize,
}

/// Every byte rule of an append, in upstream's order: the history unchanged (nothing else is
/// judged when it is not), one empty line before the first appended entry and between appended
/// entries, one newline at the end. The strict check reports the first, the findings all.
pub(crate) fn append_byte_faults(
    base: &[u8],
    head: &[u8],
    additions: usize,
) -> Vec<AppendByteFault> {
    let fault = |code, message, offset, help| AppendByteFault {
        code,
        message,
        help,
        offset,
    };
    if !head.starts_with(base) {
        let diff_at = base
            .iter()
            .zip(head)
            .position(|(a, b)| a != b)
            .unwrap_or(base.len().min(head.len()));
        return vec![fault(
            codes::HISTORY_BYTES,
            "appended entries changed historical perf-changelog.yaml bytes; restore the base file byte-for-byte and append at the end",
            diff_at,
            "undo every change above the new entries (including whitespace), then append",
        )];
    }
    let mut out = Vec::new();
    let suffix = &head[base.len()..];
    let expected: &[u8] = if base.ends_with(b"\n\n") {
        b"- config-keys:"
    } else {
        b"\n- config-keys:"
    };
    if !suffix.starts_with(expected) {
        out.push(fault(
            codes::SEPARATOR,
            "new changelog entries must be separated from history by one empty line and appended at the end",
            base.len(),
            "leave exactly one empty line between the last historical entry and the new one",
        ));
    }
    let starts = entry_starts(head);
    let appended = &starts[starts.len().saturating_sub(additions)..];
    for &s in appended.iter().skip(1) {
        let prefix = &head[..s];
        if !prefix.ends_with(b"\n\n") || prefix.ends_with(b"\n\n\n") {
            out.push(fault(
                codes::SEPARATOR,
                "appended changelog entries must have exactly one empty separator line",
                s,
                "put exactly one empty line (no spaces) between appended entries",
            ));
        }
    }
    if head.ends_with(b"\n\n") {
        out.push(fault(
            codes::TRAILING_BLANK,
            "the final appended changelog entry must end with one newline",
            head.len() - 1,
            "remove the empty line(s) at the end of the file",
        ));
    }
    out
}

/// The separator and end rules of an append, judged on the head alone: exactly one empty line
/// before each of the last `additions` entries, one newline at the end. For a change whose
/// history is itself at fault (edited, reordered, other bytes), where the base's bytes are no
/// longer a prefix to measure from, so that one run reports both (docs/changelog.md,
/// "Diagnostic codes").
pub(crate) fn appended_tail_faults(head: &[u8], additions: usize) -> Vec<AppendByteFault> {
    let mut out = Vec::new();
    let starts = entry_starts(head);
    for &s in &starts[starts.len().saturating_sub(additions)..] {
        let prefix = &head[..s];
        if !prefix.ends_with(b"\n\n") || prefix.ends_with(b"\n\n\n") {
            out.push(AppendByteFault {
                code: codes::SEPARATOR,
                message: "appended changelog entries must have exactly one empty separator line",
                help: "put exactly one empty line (no spaces) before each appended entry",
                offset: s,
            });
        }
    }
    if head.ends_with(b"\n\n") {
        out.push(AppendByteFault {
            code: codes::TRAILING_BLANK,
            message: "the final appended changelog entry must end with one newline",
            help: "remove the empty line(s) at the end of the file",
            offset: head.len() - 1,
        });
    }
    out
}

/// Upstream `validate_raw_change`: historical bytes are exact outside explicit link fixes.
pub(crate) fn validate_raw_change(
    base: &[u8],
    head: &[u8],
    additions: usize,
    corrections: usize,
) -> Result<(), StrictError> {
    if additions > 0 {
        // Upstream stops at its first failure.
        return match append_byte_faults(base, head, additions).into_iter().next() {
            Some(f) => Err(StrictError::new(f.code, f.message)
                .line(line_of_offset(head, f.offset))
                .help(f.help)),
            None => Ok(()),
        };
    }
    if corrections > 0 {
        let bl = split_keep_ends(base);
        let hl = split_keep_ends(head);
        if bl.len() != hl.len() {
            return Err(StrictError::new(
                codes::PR_LINK_LINES,
                "pr-link corrections may not add or delete lines",
            ));
        }
        let mut changed = 0;
        for (i, (b, h)) in bl.iter().zip(&hl).enumerate() {
            if b == h {
                continue;
            }
            changed += 1;
            if !(b.starts_with(b"  pr-link:")
                && h.starts_with(b"  pr-link:")
                && b.ends_with(b"\n")
                && h.ends_with(b"\n"))
            {
                return Err(StrictError::new(
                    codes::HISTORY_BYTES,
                    format!(
                        "historical bytes changed outside a pr-link line at line {}",
                        i + 1
                    ),
                )
                .line(i + 1)
                .help("only the `  pr-link:` line of an entry may change in a correction"));
            }
        }
        if changed != corrections {
            return Err(StrictError::new(
                codes::PR_LINK_LINES,
                format!("expected {corrections} changed pr-link line(s), found {changed}"),
            ));
        }
        return Ok(());
    }
    if base != head {
        let diff_at = base
            .iter()
            .zip(head)
            .position(|(a, b)| a != b)
            .unwrap_or(base.len().min(head.len()));
        return Err(StrictError::new(
            codes::HISTORY_BYTES,
            "changelog diff has no appended entry or pr-link correction; historical whitespace and formatting are immutable",
        )
        .line(line_of_offset(head, diff_at))
        .help("restore the historical bytes exactly (whitespace included)"));
    }
    Ok(())
}

/// Byte offsets of lines matching `^- config-keys:[^\r\n]*\n`.
pub(crate) fn entry_starts(raw: &[u8]) -> Vec<usize> {
    const START: &[u8] = b"- config-keys:";
    // memmem finds the few hundred candidates in a changelog of ~400 KB without a byte loop
    // over every line (the gate runs this on head and base of every change).
    memchr::memmem::find_iter(raw, START)
        .filter(|&at| at == 0 || raw[at - 1] == b'\n')
        .filter(|&at| {
            // `[^\r\n]*\n`: the line must end with a newline and hold no CR.
            let rest = &raw[at + START.len()..];
            memchr::memchr2(b'\n', b'\r', rest).is_some_and(|e| rest[e] == b'\n')
        })
        .collect()
}

/// Python `bytes.splitlines(keepends=True)` (bytes split on \n, \r\n and \r).
fn split_keep_ends(raw: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'\n' => {
                out.push(&raw[start..=i]);
                start = i + 1;
            }
            b'\r' => {
                let end = if raw.get(i + 1) == Some(&b'\n') {
                    i + 1
                } else {
                    i
                };
                out.push(&raw[start..=end]);
                i = end;
                start = end + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < raw.len() {
        out.push(&raw[start..]);
    }
    out
}

/// The strict sequence in order: parse base, parse head, compare, raw. `base = None` (file
/// absent at the base) is a `base-read` failure, as upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictStage {
    BaseRead,
    BaseParse,
    HeadParse,
    Compare,
    Raw,
}

impl StrictStage {
    pub fn as_str(&self) -> &'static str {
        match self {
            StrictStage::BaseRead => "base-read",
            StrictStage::BaseParse => "base-parse",
            StrictStage::HeadParse => "head-parse",
            StrictStage::Compare => "compare",
            StrictStage::Raw => "raw",
        }
    }
}

pub fn strict_check(
    base: Option<&[u8]>,
    head: &[u8],
    mode: LinkMode,
    dialect: Dialect,
) -> Result<Comparison, (StrictStage, StrictError)> {
    let Some(base) = base else {
        return Err((
            StrictStage::BaseRead,
            StrictError::new(codes::BASE_READ, "the changelog does not exist at the base"),
        ));
    };
    let b = parse_changelog(base, "base perf-changelog.yaml", dialect)
        .map_err(|e| (StrictStage::BaseParse, e))?;
    let h = parse_changelog(head, "head perf-changelog.yaml", dialect)
        .map_err(|e| (StrictStage::HeadParse, e))?;
    check_parsed(base, &b, head, &h, mode)
}

/// Compare + raw on already parsed sides (lets callers cache parses).
pub(crate) fn check_parsed(
    base: &[u8],
    b: &Parsed,
    head: &[u8],
    h: &Parsed,
    mode: LinkMode,
) -> Result<Comparison, (StrictStage, StrictError)> {
    let c = compare_entries(&b.entries, &h.entries, mode).map_err(|e| (StrictStage::Compare, e))?;
    validate_raw_change(base, head, c.additions, c.corrections)
        .map_err(|e| (StrictStage::Raw, e))?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    const E1: &str = "- config-keys:\n    - a\n  description:\n    - one\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n";
    const E2: &str = "- config-keys:\n    - b\n  description:\n    - two\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2\n";
    const E3X: &str = "- config-keys:\n    - c\n  description:\n    - three\n  pr-link: XXX\n";

    fn strict(
        base: &str,
        head: &str,
        pr: Option<u64>,
    ) -> Result<Comparison, (StrictStage, StrictError)> {
        strict_check(
            Some(base.as_bytes()),
            head.as_bytes(),
            pr.into(),
            Dialect::Aug,
        )
    }

    #[test]
    fn entry_starts_are_whole_lines_ending_in_a_newline_without_cr() {
        let raw = b"- config-keys:\n x- config-keys:\n- config-keys: [a]\n- config-keys:\r\n\
                    - config-keys:\r- config-keys: b\n  - config-keys:\n- config-keys:";
        // Python: [m.start() for m in re.finditer(rb"(?m)^- config-keys:[^\r\n]*\n", raw)]
        assert_eq!(entry_starts(raw), [0, 32]);
        assert_eq!(entry_starts(b""), Vec::<usize>::new());
    }

    #[test]
    fn entry_start_findings_carry_the_line() {
        // Entry 2 starts with description: its config-keys is not the first key.
        let head =
            format!("{E1}\n- description:\n    - two\n  config-keys:\n    - b\n  pr-link: XXX\n");
        let e = parse_changelog(head.as_bytes(), "x", Dialect::Oct).unwrap_err();
        assert_eq!((e.code, e.line), (codes::ENTRY_START, Some(7)), "{e:?}");
        // An entry in flow form has no `- config-keys:` line.
        let head = format!("{E1}\n- {{config-keys: [b], description: [x], pr-link: XXX}}\n");
        let e = parse_changelog(head.as_bytes(), "x", Dialect::Oct).unwrap_err();
        assert_eq!((e.code, e.line), (codes::ENTRY_START, Some(7)), "{e:?}");
    }

    #[test]
    fn strict_parsing_rejects_merge_keys_as_upstream() {
        let head =
            format!("{E1}\n- config-keys:\n    - b\n  <<: {{description: [x]}}\n  pr-link: XXX\n");
        let e = parse_changelog(head.as_bytes(), "x", Dialect::Oct).unwrap_err();
        assert_eq!((e.code, e.line), (codes::YAML, Some(9)), "{e:?}");
        assert!(e.message.contains("tag:yaml.org,2002:merge"), "{e:?}");
        // A quoted "<<" is an ordinary string.
        let quoted = format!("{E1}\n{}", E3X.replace("three", "\"<<\""));
        assert!(parse_changelog(quoted.as_bytes(), "x", Dialect::Oct).is_ok());
    }

    #[test]
    fn append_passes_in_pr_mode_and_placeholder_fails_in_main_mode() {
        let base = format!("{E1}\n{E2}");
        let head = format!("{base}\n{E3X}");
        assert_eq!(
            strict(&base, &head, Some(3)).unwrap(),
            Comparison {
                additions: 1,
                corrections: 0
            }
        );
        let (st, e) = strict(&base, &head, None).unwrap_err();
        assert_eq!(st, StrictStage::Compare);
        assert!(
            e.message
                .contains("new main-branch entry has invalid pr-link")
        );
        assert_eq!(e.line, Some(13));
        let other = head.replace(
            "pr-link: XXX",
            "pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/9",
        );
        assert!(
            strict(&base, &other, Some(3))
                .unwrap_err()
                .1
                .message
                .contains("new PR entry must use")
        );
    }

    #[test]
    fn historical_edits_are_caught_with_line() {
        let base = format!("{E1}\n{E2}");
        // description edit
        let head = format!("{}\n{E2}\n{E3X}", E1.replace("one", "uno"));
        let (_, e) = strict(&base, &head, Some(3)).unwrap_err();
        assert!(e.message.contains("entry 1 changed"), "{e:?}");
        // The line of the edited value (`- uno`), not the entry's first line.
        assert_eq!(e.line, Some(4));
        // reorder
        let head = format!("{E2}\n{E1}\n{E3X}");
        assert!(
            strict(&base, &head, Some(3))
                .unwrap_err()
                .1
                .message
                .contains("entry 1 changed")
        );
        // insertion in the middle
        let head = format!("{E1}\n{E3X}\n{E2}");
        let (_, e) = strict(&base, &head, Some(3)).unwrap_err();
        assert!(e.message.contains("entry 2 changed"));
        assert_eq!(e.line, Some(7));
        // deletion
        assert!(
            strict(&base, E1, Some(3))
                .unwrap_err()
                .1
                .message
                .contains("deleted")
        );
        // trailing whitespace on an old line
        let head = format!("{}\n{E2}\n{E3X}", E1.replace("    - one", "    - one "));
        let (st, e) = strict(&base, &head, Some(3)).unwrap_err();
        assert_eq!(st, StrictStage::Raw);
        assert_eq!(e.code, codes::HISTORY_BYTES);
        assert_eq!(e.line, Some(4));
        // dropped final newline
        let head = format!("{base}\n{}", E3X.trim_end());
        let (st, e) = strict(&base, &head, Some(3)).unwrap_err();
        assert_eq!(st, StrictStage::HeadParse);
        assert_eq!(e.code, codes::FINAL_NEWLINE);
    }

    #[test]
    fn raw_separator_rules() {
        let base = format!("{E1}\n{E2}");
        let two_blank = format!("{base}\n\n{E3X}");
        assert_eq!(
            strict(&base, &two_blank, Some(3)).unwrap_err().1.code,
            codes::SEPARATOR
        );
        let e4 = E3X.replace("    - c\n", "    - d\n");
        let tight = format!("{base}\n{E3X}\n\n{e4}");
        assert!(
            strict(&base, &tight, Some(3))
                .unwrap_err()
                .1
                .message
                .contains("exactly one empty separator")
        );
        let trailing = format!("{base}\n{E3X}\n");
        assert_eq!(
            strict(&base, &trailing, Some(3)).unwrap_err().1.code,
            codes::TRAILING_BLANK
        );
        let ok2 = format!("{base}\n{E3X}\n{e4}");
        assert_eq!(strict(&base, &ok2, Some(3)).unwrap().additions, 2);
    }

    #[test]
    fn corrections() {
        let base = format!("{E1}\n{E3X}");
        let fixed = base.replace(
            "pr-link: XXX",
            "pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/3",
        );
        assert_eq!(
            strict(&base, &fixed, None).unwrap(),
            Comparison {
                additions: 0,
                corrections: 1
            }
        );
        let mixed = format!("{fixed}\n{E2}");
        assert!(
            strict(&base, &mixed, None)
                .unwrap_err()
                .1
                .message
                .contains("do not mix")
        );
        let bad = base.replace("pr-link: XXX", "pr-link: TBD");
        assert!(
            strict(&base, &bad, None)
                .unwrap_err()
                .1
                .message
                .contains("not canonical")
        );
        let ws = fixed.replacen("- config-keys:\n    - a", "- config-keys: \n    - a", 1);
        let (_, e) = strict(&base, &ws, None).unwrap_err();
        assert!(
            e.message.contains("outside a pr-link line at line 1"),
            "{e:?}"
        );
        assert!(strict(&base, &base, None).is_ok());
    }

    fn numbered(k: usize) -> String {
        format!(
            "- config-keys:\n    - k{k}\n  description:\n    - d{k}\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{k}\n"
        )
    }

    proptest::proptest! {
        /// Appending passes; editing, deleting or moving any one historical entry fails, at
        /// a line inside the file.
        #[test]
        fn append_only_invariant(n in 1usize..8, victim in 0usize..8, op in 0u8..3) {
            let victim = victim % n;
            let entries: Vec<String> = (0..n).map(numbered).collect();
            let base = entries.join("\n");
            let appended = format!("{base}\n{}", numbered(100));
            proptest::prop_assert!(strict(&base, &appended, None).is_ok());
            let mut changed = entries.clone();
            match op {
                0 => changed[victim] = changed[victim].replace("    - d", "    - edited d"),
                1 => { changed.remove(victim); }
                _ => { let e = changed.remove(victim); changed.push(e); }
            }
            changed.push(numbered(100));
            let head = changed.join("\n");
            let lines = head.lines().count();
            let r = strict(&base, &head, None);
            if op == 2 && victim == n - 1 {
                // Moving the last entry to the end is no change at all.
                proptest::prop_assert!(r.is_ok());
            } else {
                let (_, e) = r.expect_err("must fail");
                let line = e.line.unwrap_or(0);
                proptest::prop_assert!(line >= 1 && line <= lines, "line {} of {}", line, lines);
            }
        }
    }

    #[test]
    fn parse_rules() {
        let fails = |text: &[u8]| parse_changelog(text, "head", Dialect::Aug).unwrap_err();
        let e =
            fails(b"- config-keys: [a]\n  description: [x]\n  description: [y]\n  pr-link: X\n");
        assert_eq!(e.code, codes::YAML);
        let e = fails(b"- description: [x]\n  config-keys: [a]\n  pr-link: X\n");
        assert_eq!(e.code, codes::ENTRY_START);
        let e = fails(b"- config-keys: [a]\n  description: x\n  pr-link: X\n");
        assert!(
            e.message
                .contains("entry 1 fails ChangelogEntry validation")
        );
        assert_eq!(fails(b"a\tb\n").code, codes::TAB);
        assert!(is_canonical(
            "https://github.com/SemiAnalysisAI/InferenceX/pull/12"
        ));
        assert!(!is_canonical(
            "https://github.com/SemiAnalysisAI/InferenceX/pull/12/changes"
        ));
    }
}
