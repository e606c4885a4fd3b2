//! The whitespace check: a pure function of the loaded texts (no repository access).

use crate::change::{Change, FileText};
use crate::ws::{self, WsKind};
use infx_report::{Diagnostic, Pos, Span};
use std::path::PathBuf;

/// One whitespace error, located the way `git diff --check` locates it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    pub path: PathBuf,
    /// 1-based line in the new text (for `blank-at-eof`: the line git reports).
    pub line: usize,
    pub kind: WsKind,
    /// Byte offset of the line's start in the new text, and of the offending whitespace in it.
    pub line_start: usize,
    pub byte_in_line: usize,
    /// Byte length of the offending run (at least 1 where there is one).
    pub len: usize,
}

/// Where lines of a text start, found by walking forward from the last line asked for: the
/// added lines come in ascending order, so a 300 KB master config with two added lines is
/// searched up to them and no table of every line is built (that table was a fifth of a
/// small change's `diff-check`; docs/performance.md, "diff-check's start").
struct LineStarts<'a> {
    text: &'a [u8],
    /// The 1-based line the cursor is on, and the byte where it starts.
    line: usize,
    start: usize,
}

impl<'a> LineStarts<'a> {
    fn new(text: &'a [u8]) -> Self {
        LineStarts {
            text,
            line: 1,
            start: 0,
        }
    }

    /// The byte where 1-based `line` starts, if the text has it (the empty line after a final
    /// newline counts). Asking for an earlier line than the last one starts over.
    fn start_of(&mut self, line: usize) -> Option<usize> {
        if line == 0 {
            return None;
        }
        if line < self.line {
            (self.line, self.start) = (1, 0);
        }
        while self.line < line {
            let rest = self.text.get(self.start..)?;
            self.start += memchr::memchr(b'\n', rest)? + 1;
            self.line += 1;
        }
        Some(self.start)
    }
}

/// Findings for one file: its added lines (as loaded) plus `blank-at-eof`. Pure.
pub fn file_findings(file: &FileText) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut lines = LineStarts::new(&file.new);
    for &lineno in &file.added {
        let Some(line_start) = lines.start_of(lineno) else {
            continue;
        };
        let line_end = lines.start_of(lineno + 1).unwrap_or(file.new.len());
        let content = file.new.get(line_start..line_end).unwrap_or_default();
        let mut push = |kind, byte_in_line: usize, len: usize| {
            out.push(Finding {
                path: file.path.clone(),
                line: lineno,
                kind,
                line_start,
                byte_in_line,
                len,
            });
        };
        if ws::is_conflict_marker(content, file.marker_size) {
            push(
                WsKind::ConflictMarker,
                0,
                file.marker_size.min(content.len()).max(1),
            );
        }
        let body = content.strip_suffix(b"\n").unwrap_or(content);
        for e in ws::check_line(content, file.rule) {
            let len = match e.kind {
                WsKind::TrailingWhitespace => body.len().saturating_sub(e.byte),
                _ => body[e.byte..]
                    .iter()
                    .take_while(|b| matches!(b, b' ' | b'\t'))
                    .count(),
            };
            push(e.kind, e.byte, len.max(1));
        }
    }
    if file.rule.blank_at_eof()
        && let Some(line) = ws::blank_at_eof(&file.old, &file.new)
    {
        let line_start = lines.start_of(line).unwrap_or(0);
        out.push(Finding {
            path: file.path.clone(),
            line,
            kind: WsKind::BlankAtEof,
            line_start,
            byte_in_line: 0,
            len: 0,
        });
    }
    out
}

fn help(kind: WsKind, file: &FileText) -> String {
    match kind {
        WsKind::TrailingWhitespace => "delete the whitespace at the end of the line".into(),
        WsKind::SpaceBeforeTab => "remove the spaces before the tab in the indent".into(),
        WsKind::IndentWithNonTab => format!(
            "indent with tabs: this file's whitespace rule has indent-with-non-tab (tabwidth={})",
            file.rule.tab_width()
        ),
        WsKind::TabInIndent => {
            "indent with spaces: this file's whitespace rule has tab-in-indent".into()
        }
        WsKind::BlankAtEof => "delete the blank lines at the end of the file".into(),
        WsKind::ConflictMarker => {
            "finish resolving the merge conflict and delete the marker line".into()
        }
    }
}

fn pos(text: &[u8], line: usize, line_start: usize, byte_in_line: usize) -> Pos {
    let offset = (line_start + byte_in_line).min(text.len());
    let prefix = text.get(line_start.min(offset)..offset).unwrap_or_default();
    let col = String::from_utf8_lossy(prefix).chars().count() + 1;
    Pos::new(offset, line, col)
}

/// A finding as a diagnostic `diff/<kind>` at file:line:col (col of the offending whitespace).
pub fn to_diagnostic(f: &Finding, file: &FileText) -> Diagnostic {
    let start = pos(&file.new, f.line, f.line_start, f.byte_in_line);
    let end = pos(&file.new, f.line, f.line_start, f.byte_in_line + f.len);
    // git's own words, so the finding reads the same as `git diff --check` output.
    let message = f.kind.git_message();
    Diagnostic::error(f.kind.code(), message)
        .at(&f.path, Span { start, end })
        .with_help(help(f.kind, file))
}

/// Every whitespace error of the change, as `git diff --check` would report it, in file then
/// line order. Pure: works on texts already loaded by [`crate::load_change`].
pub fn whitespace_errors(change: &Change) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for file in &change.texts {
        out.extend(file_findings(file).iter().map(|f| to_diagnostic(f, file)));
    }
    infx_report::sort_for_report(&mut out);
    out
}

/// All findings of the change, sorted (the parity tests compare these with git's output).
pub fn findings(change: &Change) -> Vec<Finding> {
    let mut out: Vec<Finding> = change.texts.iter().flat_map(file_findings).collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ws::WsRule;
    use proptest::prelude::*;

    proptest! {
        /// The cursor names the same start as a table of every line's start would, for lines
        /// asked in any order (forward, repeated, backwards) and past the end.
        #[test]
        fn line_starts_match_a_table_of_every_line(
            text in "[a-c\\n]{0,40}",
            asked in proptest::collection::vec(0usize..20, 0..12),
        ) {
            let bytes = text.as_bytes();
            let table: Vec<usize> = std::iter::once(0)
                .chain(bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1))
                .collect();
            let mut lines = LineStarts::new(bytes);
            for line in asked {
                let expected = line.checked_sub(1).and_then(|i| table.get(i)).copied();
                prop_assert_eq!(lines.start_of(line), expected, "line {}", line);
            }
        }
    }

    fn file(old: &str, new: &str) -> FileText {
        let (old, new) = (old.as_bytes().to_vec(), new.as_bytes().to_vec());
        FileText::new("a.yaml", old, new, WsRule::default(), 7).unwrap()
    }

    /// A change of just these texts (no paths, explicit empty base).
    fn change_of(texts: Vec<FileText>) -> Change {
        Change {
            set: crate::ChangeSet {
                root: ".".into(),
                base: crate::Base {
                    commit: None,
                    source: crate::BaseSource::Explicit,
                },
                head: None,
                files: vec![],
            },
            texts,
            binary: vec![],
        }
    }

    #[test]
    fn only_added_lines_are_checked() {
        let f = file("keep \nx\n", "keep \nx\ny  \n");
        let got: Vec<_> = file_findings(&f)
            .into_iter()
            .map(|f| (f.line, f.kind))
            .collect();
        assert_eq!(got, [(3, WsKind::TrailingWhitespace)]);
    }

    #[test]
    fn diagnostic_points_at_the_whitespace() {
        let f = file("", "a: ü  \n");
        let d = whitespace_errors(&change_of(vec![f]));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, crate::codes::TRAILING_WHITESPACE);
        assert_eq!(d[0].location(), "a.yaml:1:5");
        let span = d[0].span.unwrap();
        assert_eq!((span.end.col(), span.end.offset()), (7, 7));
    }

    #[test]
    fn conflict_marker_and_blank_eof() {
        let f = file("a\n", "a\n<<<<<<< HEAD\n\n");
        let got: Vec<_> = file_findings(&f)
            .into_iter()
            .map(|f| (f.line, f.kind))
            .collect();
        assert_eq!(got, [(2, WsKind::ConflictMarker), (3, WsKind::BlankAtEof)]);
    }

    #[test]
    fn rendered_report_snapshot() {
        let mut f = file(
            "name: a\nitems:\n  - x\n",
            "name: a \nitems:\n  - x\n \t- y\n<<<<<<< ours\n\n",
        );
        f.path = "configs/nvidia-master.yaml".into();
        let change = change_of(vec![f.clone()]);
        let diags = whitespace_errors(&change);
        let mut sources = infx_report::SourceMap::new();
        sources.insert(&f.path, String::from_utf8_lossy(&f.new).into_owned());
        insta::assert_snapshot!(infx_report::render_human(&diags, &sources, false));
    }
}
