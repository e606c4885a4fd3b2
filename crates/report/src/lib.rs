//! Diagnostics shared by every infx check, and their renderers (human, JSON, GitHub annotations).
//!
//! A [`Diagnostic`] carries a stable code (`config/C2`, `yaml/duplicate-key`, …), a severity, the
//! file it concerns, a [`Span`] inside that file, a message and optionally a `help:` line.
//! Libraries only produce diagnostics; printing belongs to the xtask.

mod allow;
mod code;
pub mod codes;
mod par;
mod render;
mod sarif;
mod suggest;

pub use allow::{Acknowledged, Allow, Outcome as AllowOutcome, acknowledge, allows_in};
pub use code::{Code, check_of, is_code_name};
pub use par::parallel_map;
pub use render::{
    SourceMap, escape_control, is_printable_ascii, is_unsafe_char, json_safe, render_github,
    render_human, render_json,
};
pub use sarif::{render_sarif, render_sarif_with_acknowledged};
pub use suggest::{did_you_mean, nearest};

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// A position in a source text. `line` and `col` are 1-based; `col` counts characters
/// (not bytes), the way editors and GitHub annotations count them. `offset` is the byte offset.
///
/// The three are stored as `u32`: every YAML node carries two positions, and a smaller node
/// makes the loader faster (docs/performance.md). Files are capped at 16 MiB
/// (docs/security.md), far below `u32::MAX`; [`Pos::new`] saturates rather than wraps in case
/// a caller passes more.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Pos {
    offset: u32,
    line: u32,
    col: u32,
}

/// `n` as a `u32`, or `u32::MAX` when it does not fit.
fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Pos {
    /// A position from its byte offset and 1-based line and column (each saturates at
    /// `u32::MAX`).
    pub fn new(offset: usize, line: usize, col: usize) -> Pos {
        Pos {
            offset: saturate(offset),
            line: saturate(line),
            col: saturate(col),
        }
    }
    /// Byte offset in the text.
    pub fn offset(&self) -> usize {
        self.offset as usize
    }
    /// 1-based line.
    pub fn line(&self) -> usize {
        self.line as usize
    }
    /// 1-based column, in characters.
    pub fn col(&self) -> usize {
        self.col as usize
    }
    /// The same offset and column on another line (a span re-anchored to the lines of a
    /// larger text).
    pub fn with_line(self, line: usize) -> Pos {
        Pos::new(self.offset(), line, self.col())
    }
}

/// A half-open byte range `[start, end)` of a source text, with line/column of both ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Span {
    pub start: Pos,
    pub end: Pos,
}

impl Span {
    pub fn point(pos: Pos) -> Span {
        Span {
            start: pos,
            end: pos,
        }
    }
    /// A span that only knows its line (column 1), for line-based findings (diffs, changelog).
    pub fn line(line: usize) -> Span {
        Span::point(Pos::new(0, line, 1))
    }
    pub fn byte_range(&self) -> std::ops::Range<usize> {
        self.start.offset()..self.end.offset()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        })
    }
}

/// One finding. Build it with [`Diagnostic::error`] / [`Diagnostic::warning`] and the `with_*`
/// methods.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Stable identifier from a crate's code registry, `<check>/<rule>` (e.g. `config/C2`).
    pub code: Code,
    pub severity: Severity,
    /// The file the finding is about, as the user should see it (relative to the checked root
    /// when possible). `None` for findings about the invocation or the repository as a whole.
    pub path: Option<PathBuf>,
    pub span: Option<Span>,
    pub message: String,
    /// How to fix it, when we know.
    pub help: Option<String>,
    /// Extra context lines (e.g. why each candidate variant did not match).
    pub notes: Vec<String>,
    /// Secondary spans in the same file, each with its label ("first defined here").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    /// Whether the finding is new with the change or was already on the base
    /// (docs/baseline.md); `None` when no base was
    /// compared (a clean checkout, `--all`, outside git).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineState>,
    /// The identity the baseline matched it by (a digest; SARIF's `partialFingerprints`).
    #[serde(skip)]
    pub fingerprint: Option<String>,
    /// Findings this one causes, folded into it (docs/architecture.md, "One finding per
    /// cause"): not reported on their own, every format lists each as a note with its location.
    #[serde(skip)]
    pub consequences: Vec<Diagnostic>,
}

/// A finding's state relative to the base revision, as SARIF's `baselineState` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineState {
    /// The change introduced it: it fails the contribution when it is an error.
    New,
    /// The base already had it: counted, never blamed on the change.
    Unchanged,
}

impl BaselineState {
    /// SARIF 2.1.0's name for the state (`result.baselineState`).
    pub fn as_str(self) -> &'static str {
        match self {
            BaselineState::New => "new",
            BaselineState::Unchanged => "unchanged",
        }
    }
}

/// A secondary span of a [`Diagnostic`], in the diagnostic's file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

impl Diagnostic {
    pub fn new(severity: Severity, code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity,
            path: None,
            span: None,
            message: message.into(),
            help: None,
            notes: Vec::new(),
            labels: Vec::new(),
            baseline: None,
            fingerprint: None,
            consequences: Vec::new(),
        }
    }
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }
    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }
    pub fn note(code: Code, message: impl Into<String>) -> Self {
        Self::new(Severity::Note, code, message)
    }
    pub fn with_path(mut self, path: impl AsRef<Path>) -> Self {
        self.path = Some(path.as_ref().to_path_buf());
        self
    }
    pub fn with_span(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }
    /// Path and span together, the common case.
    pub fn at(self, path: impl AsRef<Path>, span: Span) -> Self {
        self.with_path(path).with_span(span)
    }
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
    /// Folds `consequence`, a finding this one causes, into it: the consequence is no longer
    /// reported by itself but as a note of its cause, with its location (docs/architecture.md,
    /// "One finding per cause").
    pub fn fold(mut self, consequence: Diagnostic) -> Self {
        self.fold_in(consequence);
        self
    }
    /// [`Diagnostic::fold`] on a finding held by reference.
    pub fn fold_in(&mut self, consequence: Diagnostic) {
        self.consequences.push(consequence);
    }
    /// The notes every format prints: the finding's own, then one per folded consequence
    /// (`caused here: file:line:col: warning[code]: message`).
    pub fn all_notes(&self) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
        self.notes
            .iter()
            .map(|n| std::borrow::Cow::Borrowed(n.as_str()))
            .chain(
                self.consequences
                    .iter()
                    .map(|c| std::borrow::Cow::Owned(format!("caused here: {c}"))),
            )
    }
    /// Adds a secondary span with its label, shown beside the primary one.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
    /// An error that fails the run: every error, except one the base already had.
    pub fn fails(&self) -> bool {
        self.is_error() && self.baseline != Some(BaselineState::Unchanged)
    }
    /// `file:line:col` (or as much of it as is known), for messages and tests.
    pub fn location(&self) -> String {
        let mut s = match &self.path {
            Some(p) => p.display().to_string(),
            None => String::from("<repository>"),
        };
        if let Some(span) = self.span {
            s.push_str(&format!(":{}:{}", span.start.line(), span.start.col()));
        }
        s
    }
}

impl fmt::Display for Diagnostic {
    /// One line: `file:line:col: error[code]: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}[{}]: {}",
            self.location(),
            self.severity,
            self.code,
            self.message
        )
    }
}

/// Sorts diagnostics into report order: findings about no particular file first, then by file
/// path, then by position, then by code. Stable for equal keys, so deterministic.
pub fn sort_for_report(diags: &mut [Diagnostic]) {
    diags.sort_by(|a, b| {
        let ka = (
            a.path.is_some(),
            &a.path,
            a.span.map(|s| (s.start.line(), s.start.col())),
        );
        let kb = (
            b.path.is_some(),
            &b.path,
            b.span.map(|s| (s.start.line(), s.start.col())),
        );
        ka.cmp(&kb).then_with(|| a.code.cmp(&b.code))
    });
}

/// Computes line/column for byte offsets of one text. Build once per file, query many times.
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    ascii: bool,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        // Every file read is indexed (the loader's positions, the report's source lines); a
        // SIMD search is several times faster than a byte loop on a 300 KB master config.
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex {
            line_starts,
            ascii: text.is_ascii(),
        }
    }
    /// Position of a byte offset (clamped to the text).
    pub fn pos(&self, text: &str, offset: usize) -> Pos {
        let offset = offset.min(text.len());
        let line_idx = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line_idx];
        let col = if self.ascii {
            offset - start + 1
        } else {
            text.get(start..offset)
                .map(|s| s.chars().count())
                .unwrap_or(offset - start)
                + 1
        };
        Pos::new(offset, line_idx + 1, col)
    }
    pub fn span(&self, text: &str, start: usize, end: usize) -> Span {
        Span {
            start: self.pos(text, start),
            end: self.pos(text, end),
        }
    }
    /// Byte range of line `line` (1-based) without its newline.
    #[inline]
    pub fn line_range(&self, text: &str, line: usize) -> Option<std::ops::Range<usize>> {
        let start = *self.line_starts.get(line.checked_sub(1)?)?;
        let mut end = self
            .line_starts
            .get(line)
            .map(|e| e - 1)
            .unwrap_or(text.len());
        if end > start && text.as_bytes().get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        Some(start..end.max(start))
    }
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_counts_chars_not_bytes() {
        let text = "a: 1\nb: ü x\n";
        let idx = LineIndex::new(text);
        let off = text.find('x').unwrap();
        let p = idx.pos(text, off);
        assert_eq!((p.line(), p.col()), (2, 6));
        assert_eq!(idx.line_range(text, 2), Some(5..12));
    }

    #[test]
    fn display_has_location_and_code() {
        let d = Diagnostic::error(
            crate::Code::error("config/C2", "a test code"),
            "conc-start must be <= conc-end",
        )
        .at("configs/nvidia-master.yaml", Span::line(12));
        assert_eq!(
            d.to_string(),
            "configs/nvidia-master.yaml:12:1: error[config/C2]: conc-start must be <= conc-end"
        );
    }

    #[test]
    fn pos_saturates_and_serializes_as_before() {
        let p = Pos::new(7, 2, 3);
        assert_eq!((p.offset(), p.line(), p.col()), (7, 2, 3));
        assert_eq!(
            serde_json::to_string(&p).ok().as_deref(),
            Some(r#"{"offset":7,"line":2,"col":3}"#)
        );
        // Beyond u32 (never reached under the 16 MiB file cap): saturates, no wrap, no panic.
        let max = u32::MAX as usize;
        let big = Pos::new(usize::MAX, max.saturating_add(1), max);
        assert_eq!((big.offset(), big.line(), big.col()), (max, max, max));
        // Ordering is offset first, then line, then col.
        assert!(Pos::new(1, 9, 9) < Pos::new(2, 1, 1));
        assert!(Pos::new(1, 1, 9) < Pos::new(1, 2, 1));
        assert_eq!(p.with_line(40), Pos::new(7, 40, 3));
    }

    #[test]
    fn sort_puts_repository_findings_first_and_lines_in_order() {
        let mut v = vec![
            Diagnostic::error(crate::Code::error("x/b", "a test code"), "late")
                .at("a.yaml", Span::line(9)),
            Diagnostic::error(crate::Code::error("x/c", "a test code"), "repo"),
            Diagnostic::error(crate::Code::error("x/a", "a test code"), "early")
                .at("a.yaml", Span::line(2)),
        ];
        sort_for_report(&mut v);
        let order: Vec<_> = v.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(order, ["repo", "early", "late"]);
    }
}
