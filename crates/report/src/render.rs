//! Renderers. Each takes the diagnostics in report order and returns the text to print.

use crate::{Diagnostic, LineIndex, Severity};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Source texts by path, so the human renderer can show the offending line.
#[derive(Default)]
pub struct SourceMap {
    files: HashMap<PathBuf, (String, LineIndex)>,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn insert(&mut self, path: impl AsRef<Path>, text: String) {
        let idx = LineIndex::new(&text);
        self.files.insert(path.as_ref().to_path_buf(), (text, idx));
    }
    pub fn contains(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }
    fn line(&self, path: &Path, line: usize) -> Option<&str> {
        let (text, idx) = self.files.get(path)?;
        let range = idx.line_range(text, line)?;
        text.get(range)
    }
}

/// rustc-like text: a header line, the source line with a caret under the column, help and
/// notes. `color` adds ANSI colours (only when printing to a terminal).
pub fn render_human(diags: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let mut out = String::new();
    for d in diags {
        let (sev_on, bold, off, blue) = if color {
            let c = match d.severity {
                Severity::Error => "\x1b[1;31m",
                Severity::Warning => "\x1b[1;33m",
                Severity::Note => "\x1b[1;36m",
            };
            (c, "\x1b[1m", "\x1b[0m", "\x1b[1;34m")
        } else {
            ("", "", "", "")
        };
        let _ = writeln!(
            out,
            "{sev_on}{}[{}]{off}{bold}: {}{off}",
            d.severity, d.code, d.message
        );
        let _ = writeln!(out, "  {blue}-->{off} {}", d.location());
        if let (Some(path), Some(span)) = (&d.path, d.span)
            && let Some(src) = sources.line(path, span.start.line)
        {
            let num = span.start.line.to_string();
            let pad = " ".repeat(num.len());
            // Width of the caret run: to the end of the span when it stays on the line.
            let line_chars = src.chars().count();
            let start_col = span.start.col.max(1);
            let width = if span.end.line == span.start.line && span.end.col > start_col {
                span.end.col - start_col
            } else {
                1
            }
            .min(line_chars.saturating_sub(start_col - 1).max(1));
            // Keep tabs so the caret lines up under the same characters in any terminal.
            let lead: String = src
                .chars()
                .take(start_col - 1)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            let _ = writeln!(out, "  {blue}{pad} |{off}");
            let _ = writeln!(out, "  {blue}{num} |{off} {src}");
            let _ = writeln!(
                out,
                "  {blue}{pad} |{off} {lead}{sev_on}{}{off}",
                "^".repeat(width)
            );
        }
        if let Some(help) = &d.help {
            let _ = writeln!(out, "  {bold}help{off}: {help}");
        }
        for n in &d.notes {
            let _ = writeln!(out, "  {bold}note{off}: {n}");
        }
        out.push('\n');
    }
    out
}

/// JSON Lines: one object per diagnostic, with the fields
/// `code, severity, path, line, col, end_line, end_col, message, help, notes`
/// (`path`, positions and `help` are `null` when unknown). Documented in the README.
pub fn render_json(diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        let v = serde_json::json!({
            "code": d.code,
            "severity": d.severity,
            "path": d.path.as_ref().map(|p| p.display().to_string()),
            "line": d.span.map(|s| s.start.line),
            "col": d.span.map(|s| s.start.col),
            "end_line": d.span.map(|s| s.end.line),
            "end_col": d.span.map(|s| s.end.col),
            "message": d.message,
            "help": d.help,
            "notes": d.notes,
        });
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

/// GitHub Actions workflow commands (`::error file=…,line=…,col=…,title=…::message`).
/// Properties and message are escaped as the runner expects, so multi-line text survives.
pub fn render_github(diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let mut props = Vec::new();
        if let Some(p) = &d.path {
            props.push(format!(
                "file={}",
                escape_property(&p.display().to_string())
            ));
            if let Some(s) = d.span {
                props.push(format!("line={}", s.start.line));
                props.push(format!("col={}", s.start.col));
                if s.end.line >= s.start.line && s.end.line > 0 {
                    props.push(format!("endLine={}", s.end.line.max(s.start.line)));
                }
            }
        }
        props.push(format!("title={}", escape_property(&d.code)));
        let mut msg = d.message.clone();
        if let Some(h) = &d.help {
            msg.push_str("\nhelp: ");
            msg.push_str(h);
        }
        for n in &d.notes {
            msg.push_str("\nnote: ");
            msg.push_str(n);
        }
        let _ = writeln!(out, "::{level} {}::{}", props.join(","), escape_data(&msg));
    }
    out
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Pos, Span};

    fn sample() -> (Diagnostic, SourceMap) {
        let text = "a:\n  tp: \"4\"\n".to_string();
        let idx = LineIndex::new(&text);
        let start = text.find('"').unwrap();
        let span = idx.span(&text, start, start + 3);
        let mut sm = SourceMap::new();
        sm.insert("c.yaml", text);
        let d = Diagnostic::error("config/T1", "tp must be an integer")
            .at("c.yaml", span)
            .with_help("write tp: 4");
        (d, sm)
    }

    #[test]
    fn human_shows_line_and_caret() {
        let (d, sm) = sample();
        let out = render_human(&[d], &sm, false);
        assert_eq!(
            out,
            "error[config/T1]: tp must be an integer\n  --> c.yaml:2:7\n    |\n  2 |   tp: \"4\"\n    |       ^^^\n  help: write tp: 4\n\n"
        );
    }

    #[test]
    fn json_is_one_object_per_line() {
        let (d, _) = sample();
        let out = render_json(&[d.clone(), d]);
        assert_eq!(out.lines().count(), 2);
        let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        assert_eq!(v["line"], 2);
        assert_eq!(v["col"], 7);
        assert_eq!(v["code"], "config/T1");
        assert_eq!(v["severity"], "error");
    }

    #[test]
    fn github_escapes_and_locates() {
        let d = Diagnostic::warning("x/y", "50% done\nnext").at(
            "a,b.yaml",
            Span::point(Pos {
                offset: 0,
                line: 3,
                col: 4,
            }),
        );
        let out = render_github(&[d]);
        assert_eq!(
            out,
            "::warning file=a%2Cb.yaml,line=3,col=4,endLine=3,title=x/y::50%25 done%0Anext\n"
        );
    }
}
