//! Renderers. Each takes the diagnostics in report order and returns the text to print.

use crate::{Diagnostic, LineIndex, Severity, Span};
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Source texts by path, so the human renderer can show the offending line. A text is shared,
/// not copied (a parsed document's `Arc<str>`), or moved in whole ([`SourceMap::insert_owned`]),
/// and its line index is built the first time a snippet needs it: most files of a whole-tree
/// run have no finding.
#[derive(Default)]
pub struct SourceMap {
    /// Keyed with a fast hasher: every rendered finding looks its file up (docs/performance.md).
    files: foldhash::HashMap<PathBuf, (Text, OnceLock<LineIndex>)>,
}

/// A source text as the map holds it.
enum Text {
    Shared(Arc<str>),
    Owned(Box<str>),
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Text::Shared(t) => t,
            Text::Owned(t) => t,
        }
    }
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn insert(&mut self, path: impl AsRef<Path>, text: impl Into<Arc<str>>) {
        let text = Text::Shared(text.into());
        self.files
            .insert(path.as_ref().to_path_buf(), (text, OnceLock::new()));
    }
    /// Like [`SourceMap::insert`] for a text nobody else holds: moved in, where making an
    /// `Arc<str>` of a `String` copies it (`diff-check`'s 700 KB of finding files;
    /// docs/performance.md, "diff-check's start").
    pub fn insert_owned(&mut self, path: impl AsRef<Path>, text: String) {
        let text = Text::Owned(text.into_boxed_str());
        self.files
            .insert(path.as_ref().to_path_buf(), (text, OnceLock::new()));
    }
    pub fn contains(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }
    /// Every (path, text), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&Path, &str)> {
        self.files.iter().map(|(p, (t, _))| (p.as_path(), &**t))
    }
    /// The text of 1-based `line` of `path`, without its line break.
    pub fn line(&self, path: &Path, line: usize) -> Option<&str> {
        let (text, idx) = self.files.get(path)?;
        let range = idx
            .get_or_init(|| LineIndex::new(text))
            .line_range(text, line)?;
        text.get(range)
    }
}

/// The widest source line shown, in characters; a longer line is cut to a window around the
/// span, with `…` marking the cuts (a 50 MB line is never echoed whole, docs/security.md).
const MAX_LINE_CHARS: usize = 160;
/// The most lines of one multi-line span shown.
const MAX_SPAN_LINES: usize = 6;
/// The most secondary labels shown per diagnostic.
const MAX_LABELS: usize = 8;
/// The most source snippets in one report; later diagnostics keep header, help and notes.
const MAX_SNIPPETS: usize = 500;
/// The longest message, help or note shown, in characters.
const MAX_TEXT_CHARS: usize = 2000;

/// Characters never printed raw from inputs or registries (docs/security.md, "Output"):
/// control characters (C0, DEL and C1, e.g. U+009B, a one-character CSI), the bidirectional
/// controls that reorder a line as it is shown (U+202A–U+202E, U+2066–U+2069, U+200E/F,
/// U+061C), and the line and paragraph separators.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// A JSON text with every unsafe character written as a `\uXXXX` escape: serde_json leaves
/// DEL, C1 and bidi controls raw, which a terminal or viewer would act on. Outside strings JSON
/// holds none of them but the pretty printer's newlines, which stay.
pub fn json_safe(s: String) -> String {
    if !s.chars().any(|c| c != '\n' && is_unsafe_char(c)) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if c != '\n' && is_unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Makes untrusted text safe to print on one line of a log: newline, carriage return, NUL, ESC
/// and every other control character become visible escapes (`\n`, `\u{1b}`), so a file name or
/// key cannot start a line of its own, forge a GitHub workflow command or drive the terminal;
/// a leading `::` is broken up for the same reason; text longer than a cap is cut with a count
/// of what was left out.
pub fn escape_control(s: &str) -> String {
    escape(s, false)
}

/// [`escape_control`], optionally keeping newlines (for formats that encode them themselves).
fn escape(s: &str, keep_newlines: bool) -> String {
    // Printable ASCII within the cap (nearly every message) has nothing to escape: copied
    // whole rather than character by character (docs/performance.md).
    let plain = s.len() <= MAX_TEXT_CHARS && s.bytes().all(|b| matches!(b, b' '..=b'~' | b'\t'));
    let mut out = if plain {
        s.to_string()
    } else {
        escape_chars(s, keep_newlines)
    };
    if out.trim_start().starts_with("::") {
        out = out.replacen("::", "\\u{3a}:", 1);
    }
    out
}

/// [`escape`]'s character by character part.
fn escape_chars(s: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_TEXT_CHARS + 32));
    for (shown, (i, c)) in s.char_indices().enumerate() {
        if shown >= MAX_TEXT_CHARS {
            out.push_str(&format!("… ({} more bytes)", s.len() - i));
            break;
        }
        match c {
            '\n' if keep_newlines => out.push('\n'),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push('\t'),
            c if is_unsafe_char(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// A shown source line: the snippet renderer prints C0 controls as control pictures (␛) but
/// C1 and bidi controls raw, so those become U+FFFD, one character for one (columns hold).
fn picture_safe(line: &str) -> String {
    let other = |c: char| is_unsafe_char(c) && !matches!(c, '\0'..='\u{1f}');
    if !line.chars().any(other) {
        return line.to_string();
    }
    line.chars()
        .map(|c| if other(c) { '\u{fffd}' } else { c })
        .collect()
}

/// One line's shown part: the characters `lo..hi` of it, with `…` where it was cut.
struct ShownLine {
    text: String,
    lo: usize,
    hi: usize,
    cut_left: bool,
}

impl ShownLine {
    /// Cuts `line` to at most [`MAX_LINE_CHARS`] characters around column `anchor` (1-based).
    fn new(line: &str, anchor: usize) -> ShownLine {
        // Counting stops early: a hostile line is never walked further than needed.
        let long = line.chars().nth(MAX_LINE_CHARS).is_some();
        if !long {
            return ShownLine {
                text: picture_safe(line),
                lo: 0,
                hi: usize::MAX,
                cut_left: false,
            };
        }
        let lo = anchor.saturating_sub(1).saturating_sub(MAX_LINE_CHARS / 4);
        let hi = lo + MAX_LINE_CHARS;
        let mut text = String::new();
        if lo > 0 {
            text.push('…');
        }
        // An ASCII line is cut by byte index; only other lines need walking char by char.
        let (middle, more) = if line.is_ascii() {
            let a = lo.min(line.len());
            let b = hi.min(line.len());
            (&line[a..b], b < line.len())
        } else {
            let mut it = line.char_indices().skip(lo);
            let a = it.next().map_or(line.len(), |(i, _)| i);
            let b = line[a..]
                .char_indices()
                .nth(MAX_LINE_CHARS)
                .map_or(line.len(), |(i, _)| a + i);
            (&line[a..b], b < line.len())
        };
        text.push_str(middle);
        if more {
            text.push('…');
        }
        ShownLine {
            text: picture_safe(&text),
            lo,
            hi,
            cut_left: lo > 0,
        }
    }

    /// Byte offset in `text` of 1-based character column `col`, clamped to the shown part.
    fn offset_of(&self, col: usize) -> usize {
        let c = col.saturating_sub(1).clamp(self.lo, self.hi) - self.lo;
        let skip = usize::from(self.cut_left);
        self.text
            .char_indices()
            .nth(c + skip)
            .map(|(i, _)| i)
            .unwrap_or(self.text.len())
    }
}

/// Lines apart at which a secondary span gets its own excerpt instead of sharing the primary's.
const MAX_SHARED_LINES: usize = 12;

/// A source excerpt: lines `first_line..` of a file (each cut to a window), and the byte ranges
/// of the spans inside it.
#[derive(Debug)]
struct Excerpt {
    first_line: usize,
    text: String,
    ranges: Vec<std::ops::Range<usize>>,
}

/// The last line of `span` shown (multi-line spans are capped).
fn last_shown_line(span: Span) -> usize {
    span.end
        .line()
        .max(span.start.line())
        .min(span.start.line() + MAX_SPAN_LINES - 1)
}

/// One excerpt covering all `spans`, or `None` when the file or the first line is unknown.
fn excerpt(sources: &SourceMap, path: &Path, spans: &[Span]) -> Option<Excerpt> {
    let first = spans.iter().map(|s| s.start.line()).min()?;
    let last = spans.iter().map(|s| last_shown_line(*s)).max()?;
    sources.line(path, first)?;
    let mut text = String::new();
    let mut lines: Vec<(usize, ShownLine)> = Vec::new();
    for n in first..=last {
        let line = sources.line(path, n).unwrap_or("");
        let anchor = spans
            .iter()
            .filter(|s| s.start.line() == n)
            .map(|s| s.start.col())
            .min()
            .unwrap_or(1);
        let shown = ShownLine::new(line, anchor);
        lines.push((text.len(), shown));
        text.push_str(&lines[lines.len() - 1].1.text);
        if n < last {
            text.push('\n');
        }
    }
    let ranges = spans
        .iter()
        .map(|s| {
            let (base, shown) = &lines[s.start.line() - first];
            let start = base + shown.offset_of(s.start.col());
            let end_line = last_shown_line(*s);
            let (ebase, eshown) = &lines[end_line - first];
            let mut end = if end_line == s.end.line() && s.end.col() > 0 {
                ebase + eshown.offset_of(s.end.col())
            } else {
                ebase + eshown.text.len()
            };
            if end <= start {
                // A point: one character wide when there is one, as rustc shows it.
                end = text[start..]
                    .chars()
                    .next()
                    .filter(|c| *c != '\n')
                    .map_or(start, |c| start + c.len_utf8());
            }
            start..end
        })
        .collect();
    Some(Excerpt {
        first_line: first,
        text,
        ranges,
    })
}

/// rustc-like text rendered by `annotate-snippets` (the renderer rustc and cargo use): a header
/// line, the source lines with the span underlined, secondary spans with their labels, then help
/// and notes. `color` adds ANSI colours (only when printing to a terminal). Every piece of
/// untrusted text goes through [`escape_control`]; source lines are cut to a window.
pub fn render_human(diags: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    let mut snippets = 0usize;
    let mut omitted = 0usize;
    for d in diags {
        let code = escape_control(d.code.as_str());
        let message = escape_control(&d.message);
        let path = d
            .path
            .as_ref()
            .map(|p| escape_control(&p.display().to_string()));
        // Excerpts: the primary span with the labels near it, then each far label on its own.
        let mut excerpts: Vec<(Excerpt, Vec<Option<String>>)> = Vec::new();
        if let (Some(p), Some(span)) = (&d.path, d.span)
            && sources.line(p, span.start.line()).is_some()
        {
            if snippets < MAX_SNIPPETS {
                snippets += 1;
                let labels: Vec<_> = d
                    .labels
                    .iter()
                    .filter(|l| sources.line(p, l.span.start.line()).is_some())
                    .take(MAX_LABELS)
                    .collect();
                let near = |l: &&crate::Label| {
                    l.span.start.line().abs_diff(span.start.line()) <= MAX_SHARED_LINES
                };
                let mut spans = vec![span];
                let mut texts = vec![None];
                for l in labels.iter().filter(|l| near(l)) {
                    spans.push(l.span);
                    texts.push(Some(escape_control(&l.message)));
                }
                if let Some(x) = excerpt(sources, p, &spans) {
                    excerpts.push((x, texts));
                }
                for l in labels.iter().filter(|l| !near(l)) {
                    if let Some(x) = excerpt(sources, p, &[l.span]) {
                        excerpts.push((x, vec![Some(escape_control(&l.message))]));
                    }
                }
            } else {
                omitted += 1;
            }
        }
        // infx's own help may span lines (a changelog entry to paste): its first line is the
        // help, the rest is printed after the finding at column 0, as it is to be pasted. Each
        // line is escaped on its own, so none can start with a forged `::` command.
        let mut help_lines = d
            .help
            .as_deref()
            .map(|h| h.trim_end_matches('\n').split('\n').map(escape_control))
            .into_iter()
            .flatten();
        let help = help_lines.next();
        let paste: Vec<String> = help_lines.collect();
        let notes: Vec<String> = d.all_notes().map(|n| escape_control(&n)).collect();
        let origin = d
            .span
            .filter(|s| s.start.line() > 0)
            .map(|s| (s.start.line(), s.start.col()));
        let shape = Shape {
            level: d.severity,
            code: &code,
            message: &message,
            path: path.as_deref(),
            origin,
            excerpts: &excerpts,
            help: help.as_deref(),
            notes: &notes,
        };
        if color || !render_plain(&shape, &mut out) {
            out.push_str(&render_snippets(&renderer, &shape));
        }
        out.push_str("\n\n");
        if !paste.is_empty() {
            out.push_str(&paste.join("\n"));
            out.push_str("\n\n");
        }
    }
    if omitted > 0 {
        let _ = writeln!(
            out,
            "note: source excerpts of {omitted} later findings omitted (at most {MAX_SNIPPETS} per report)\n"
        );
    }
    out
}

/// One finding as [`render_human`] shows it: its pieces, already escaped and cut.
struct Shape<'a> {
    level: Severity,
    code: &'a str,
    message: &'a str,
    path: Option<&'a str>,
    /// Line and column of the span's start, when it has a line.
    origin: Option<(usize, usize)>,
    /// The source excerpts with the labels of their spans (`None`: the primary span's own).
    excerpts: &'a [(Excerpt, Vec<Option<String>>)],
    help: Option<&'a str>,
    notes: &'a [String],
}

/// A finding rendered by `annotate-snippets`.
fn render_snippets(renderer: &Renderer, shape: &Shape) -> String {
    let level = match shape.level {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Note => Level::NOTE,
    };
    let mut group = Group::with_title(level.primary_title(shape.message).id(shape.code));
    if shape.excerpts.is_empty() {
        if let Some(p) = shape.path {
            let mut origin = Origin::path(p);
            if let Some((line, col)) = shape.origin {
                origin = origin.line(line).char_column(col);
            }
            group = group.element(origin);
        }
    } else if let Some(p) = shape.path {
        for (i, (x, labels)) in shape.excerpts.iter().enumerate() {
            let mut snippet = Snippet::source(x.text.as_str())
                .line_start(x.first_line)
                .path(p);
            for (j, (range, label)) in x.ranges.iter().zip(labels).enumerate() {
                let kind = if i == 0 && j == 0 {
                    AnnotationKind::Primary
                } else {
                    AnnotationKind::Context
                };
                snippet = snippet.annotation(kind.span(range.clone()).label(label.as_deref()));
            }
            group = group.element(snippet);
        }
    }
    if let Some(h) = shape.help {
        group = group.element(Level::HELP.message(h));
    }
    for n in shape.notes {
        group = group.element(Level::NOTE.message(n.as_str()));
    }
    renderer.render(&[group])
}

/// The longest source line [`render_plain`] writes itself: well inside the renderer's default
/// width (140 columns), where `annotate-snippets` would start trimming a line.
const PLAIN_LINE_MAX: usize = 100;

/// Whether `s` is printable ASCII only (space to `~`): text that nothing needs to escape,
/// replace or widen before it is shown (the snippet renderer's plain shapes, table cells).
pub fn is_printable_ascii(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b' '..=b'~'))
}

/// The two shapes nearly every finding of a whole-tree run takes, written directly into `out`:
/// a finding with no excerpt (its path and position only), and one with one excerpt of one
/// line, its primary span alone underlined. The text is byte for byte what
/// `annotate-snippets`' plain renderer makes of the same pieces (test
/// `plain_shapes_render_as_annotate_snippets`), at a fraction of its cost: rendering was 11 %
/// of a whole-tree run's instructions (docs/performance.md, "Session 46: the common findings
/// written directly"). Anything else (labels, several lines, any character outside printable
/// ASCII, a long line, no path) is declined before anything is written: `false`, for
/// `annotate-snippets`.
fn render_plain(shape: &Shape, out: &mut String) -> bool {
    let Some(path) = shape.path.filter(|p| is_printable_ascii(p)) else {
        return false;
    };
    let pieces_plain = !shape.code.is_empty()
        && is_printable_ascii(shape.code)
        && is_printable_ascii(shape.message)
        && shape.help.is_none_or(is_printable_ascii)
        && shape.notes.iter().all(|n| is_printable_ascii(n));
    // The excerpt written, if any: one line, its one span unlabelled and not empty.
    let excerpt = match shape.excerpts {
        [] => None,
        [(x, labels)] => match (x.ranges.as_slice(), labels.as_slice()) {
            ([range], [None])
                if x.text.len() <= PLAIN_LINE_MAX
                    && is_printable_ascii(&x.text)
                    && range.start < range.end
                    && range.end <= x.text.len() =>
            {
                Some((x, range))
            }
            _ => return false,
        },
        _ => return false,
    };
    if !pieces_plain {
        return false;
    }
    let level = match shape.level {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    };
    let _ = write!(out, "{level}[{}]: {}", shape.code, shape.message);
    // The gutter: as wide as the line number shown, none without a snippet.
    let gutter = match excerpt {
        None => {
            let _ = write!(out, "\n--> {path}");
            if let Some((line, col)) = shape.origin {
                let _ = write!(out, ":{line}:{col}");
            }
            0
        }
        Some((x, range)) => {
            let line = x.first_line;
            let w = line.checked_ilog10().map_or(1, |d| d as usize + 1);
            let (at, len) = (range.start, range.end - range.start);
            let _ = write!(out, "\n{:w$}--> {path}:{line}:{}", "", at + 1);
            let _ = write!(out, "\n{:w$} |\n{line} | {}", "", x.text);
            let _ = write!(out, "\n{:w$} | {:at$}{:^<len$}", "", "", "");
            w
        }
    };
    if gutter > 0 && (shape.help.is_some() || !shape.notes.is_empty()) {
        let _ = write!(out, "\n{:gutter$} |", "");
    }
    if let Some(h) = shape.help {
        let _ = write!(out, "\n{:gutter$} = help: {h}", "");
    }
    for n in shape.notes {
        let _ = write!(out, "\n{:gutter$} = note: {n}", "");
    }
    true
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
            "line": d.span.map(|s| s.start.line()),
            "col": d.span.map(|s| s.start.col()),
            "end_line": d.span.map(|s| s.end.line()),
            "end_col": d.span.map(|s| s.end.col()),
            "message": clip(&d.message),
            "help": d.help.as_deref().map(clip),
            "notes": d.all_notes().map(|n| clip(&n)).collect::<Vec<_>>(),
        });
        let mut v = v;
        // Only with a base compared: a run without one prints what it always printed.
        if let Some(state) = d.baseline {
            v["baseline"] = serde_json::json!(state.as_str());
        }
        out.push_str(&json_safe(v.to_string()));
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
                escape_property(&escape(&p.display().to_string(), false))
            ));
            if let Some(s) = d.span {
                props.push(format!("line={}", s.start.line()));
                props.push(format!("col={}", s.start.col()));
                if s.end.line() >= s.start.line() && s.end.line() > 0 {
                    props.push(format!("endLine={}", s.end.line().max(s.start.line())));
                }
                // GitHub's endColumn is the last column of the range (inclusive); infx's end is
                // the position after it. Only a range within one line has one.
                if s.end.line() == s.start.line() && s.end.col() > s.start.col() + 1 {
                    props.push(format!("endColumn={}", s.end.col() - 1));
                }
            }
        }
        props.push(format!(
            "title={}",
            escape_property(&escape_control(d.code.as_str()))
        ));
        // Newlines are percent-encoded by escape_data (the runner decodes them inside the
        // annotation); every other control character is made visible first.
        let mut msg = escape(&d.message, true);
        if let Some(h) = &d.help {
            msg.push_str("\nhelp: ");
            msg.push_str(&escape(h, true));
        }
        for n in d.all_notes() {
            msg.push_str("\nnote: ");
            msg.push_str(&escape(&n, true));
        }
        let _ = writeln!(out, "::{level} {}::{}", props.join(","), escape_data(&msg));
    }
    out
}

/// Text cut to [`MAX_TEXT_CHARS`] characters (JSON escapes control characters itself).
fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_TEXT_CHARS) {
        Some((i, _)) => format!("{}… ({} more bytes)", &s[..i], s.len() - i),
        None => s.to_string(),
    }
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

    #[test]
    fn escape_copies_plain_text_and_escapes_the_rest() {
        assert_eq!(escape_control("a b\tc ~"), "a b\tc ~");
        assert_eq!(escape_control("  ::x"), "  \\u{3a}:x");
        assert_eq!(escape_control("a\nb\u{1b}é"), "a\\nb\\u{1b}é");
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        assert!(escape_control(&long).ends_with("… (1 more bytes)"));
        assert_eq!(escape_control(&long[1..]), long[1..]);
    }
    use crate::{Pos, Span};

    fn sample() -> (Diagnostic, SourceMap) {
        let text = "a:\n  tp: \"4\"\n".to_string();
        let idx = LineIndex::new(&text);
        let start = text.find('"').unwrap();
        let span = idx.span(&text, start, start + 3);
        let mut sm = SourceMap::new();
        sm.insert("c.yaml", text);
        let d = Diagnostic::error(
            crate::Code::error("config/T1", "a test code"),
            "tp must be an integer",
        )
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
            "error[config/T1]: tp must be an integer\n --> c.yaml:2:7\n  |\n2 |   tp: \"4\"\n  |       ^^^\n  |\n  = help: write tp: 4\n\n"
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
        assert_eq!(v["code"], "config/T1"); // not a code: the JSON text
        assert_eq!(v["severity"], "error");
    }

    #[test]
    fn github_escapes_and_locates() {
        let d = Diagnostic::warning(crate::Code::warning("x/y", "a test code"), "50% done\nnext")
            .at("a,b.yaml", Span::point(Pos::new(0, 3, 4)));
        let out = render_github(&[d]);
        assert_eq!(
            out,
            "::warning file=a%2Cb.yaml,line=3,col=4,endLine=3,title=x/y::50%25 done%0Anext\n"
        );
    }

    /// A text moved in shows its lines as a shared one does.
    #[test]
    fn an_owned_text_renders_as_a_shared_one() {
        let text = "a: 1\nb: 2 \n";
        let idx = LineIndex::new(text);
        let d = Diagnostic::error(crate::Code::error("x/y", "a test code"), "trailing")
            .at("f.yaml", idx.span(text, 9, 10));
        let (mut shared, mut owned) = (SourceMap::new(), SourceMap::new());
        shared.insert("f.yaml", text);
        owned.insert_owned("f.yaml", text.to_string());
        let out = render_human(std::slice::from_ref(&d), &owned, false);
        assert!(out.contains("b: 2"), "{out}");
        assert_eq!(out, render_human(&[d], &shared, false));
    }

    fn one_file(text: &str) -> (SourceMap, LineIndex) {
        let mut sm = SourceMap::new();
        sm.insert("f.yaml", text.to_string());
        (sm, LineIndex::new(text))
    }

    #[test]
    fn duplicate_key_shows_first_definition() {
        let text = "a: 1\nb: 2\na: 3\n";
        let (sm, idx) = one_file(text);
        let d = Diagnostic::error(
            crate::Code::error("yaml/duplicate-key", "a test code"),
            "duplicate key a",
        )
        .at("f.yaml", idx.span(text, 10, 11))
        .with_label(idx.span(text, 0, 1), "first defined here");
        let out = render_human(&[d], &sm, false);
        assert_eq!(
            out,
            "error[yaml/duplicate-key]: duplicate key a\n --> f.yaml:3:1\n  |\n1 | a: 1\n  | - first defined here\n2 | b: 2\n3 | a: 3\n  | ^\n\n"
        );
    }

    #[test]
    fn multi_line_span_is_underlined_across_lines() {
        let text = "x:\n  - 1\n  - 2\ny: 0\n";
        let (sm, idx) = one_file(text);
        let d = Diagnostic::error(
            crate::Code::error("recipe/zip-length", "a test code"),
            "lists differ",
        )
        .at("f.yaml", idx.span(text, 5, 14));
        let out = render_human(&[d], &sm, false);
        assert_eq!(
            out,
            "error[recipe/zip-length]: lists differ\n --> f.yaml:2:3\n  |\n2 | /   - 1\n3 | |   - 2\n  | |_____^\n\n"
        );
    }

    #[test]
    fn control_characters_never_reach_the_output_raw() {
        let text = "k: \"a\u{0}b\u{1b}[31m\"\n";
        let (sm, idx) = one_file(text);
        let d = Diagnostic::error(
            crate::Code::error("x/y", "a test code"),
            "bad key `k\n::error file=x::forged`\u{0}\u{1b}[2J",
        )
        .at("dir\n::warning::x/f.yaml", idx.span(text, 3, 10))
        .with_help("::error::help")
        .with_note("a\rb");
        let mut sm2 = SourceMap::new();
        sm2.insert("dir\n::warning::x/f.yaml", text.to_string());
        drop(sm);
        for out in [
            render_human(std::slice::from_ref(&d), &sm2, false),
            render_github(std::slice::from_ref(&d)),
        ] {
            for bad in ['\u{0}', '\u{1b}', '\r'] {
                assert!(!out.contains(bad), "{bad:?} in {out:?}");
            }
            for line in out.lines() {
                assert!(
                    !line.trim_start().starts_with("::") || line.starts_with("::error file=dir"),
                    "forged line {line:?} in {out}"
                );
            }
        }
        let human = render_human(&[d], &sm2, false);
        assert!(
            human.contains("bad key `k\\n::error file=x::forged`\\u{0}\\u{1b}[2J"),
            "{human}"
        );
        assert!(human.contains("help: \\u{3a}:error::help"), "{human}");
        assert!(human.contains("a␀b␛[31m"), "{human}");
    }

    /// Issue #42, item 6: ESC in a file name, bidi controls (U+202E, U+2067) and a C1 control
    /// (U+009B, as a registry's JSON may carry) never reach any format raw, in paths,
    /// messages, help, notes or source lines (docs/security.md, "Output").
    #[test]
    fn bidi_and_c1_controls_never_reach_any_format_raw() {
        let hostile = "a\u{202e}b\u{2067}c\u{9b}31md\u{1b}[2J";
        let text = format!("k: \"{hostile}\"\n");
        let (_, idx) = one_file(&text);
        let path = format!("dir/{hostile}.yaml");
        let d = Diagnostic::error(crate::Code::error("x/y", "a test code"), hostile)
            .at(&path, idx.span(&text, 3, 10))
            .with_help(hostile)
            .with_note(hostile);
        let mut sm = SourceMap::new();
        sm.insert(&path, text.clone());
        let one = std::slice::from_ref(&d);
        for (name, out) in [
            ("human", render_human(one, &sm, false)),
            ("github", render_github(one)),
            ("json", render_json(one)),
            ("sarif", crate::render_sarif(one, "0")),
        ] {
            for bad in ['\u{202e}', '\u{2067}', '\u{9b}', '\u{1b}'] {
                assert!(!out.contains(bad), "{name}: {bad:?} in {out:?}");
            }
        }
        // The data formats keep the text itself (escaped in the JSON string, decoded back).
        let v: serde_json::Value = serde_json::from_str(render_json(one).trim()).unwrap();
        assert_eq!(v["message"], hostile);
        assert_eq!(v["path"], path.as_str());
    }

    #[test]
    fn a_huge_line_is_cut_to_a_window() {
        let mut text = "k: ".to_string();
        text.push_str(&"x".repeat(50 << 20));
        text.push_str(" BAD tail\n");
        let at = text.find("BAD").unwrap();
        let (sm, idx) = one_file(&text);
        let d = Diagnostic::error(crate::Code::error("x/y", "a test code"), "bad")
            .at("f.yaml", idx.span(&text, at, at + 3));
        let t = std::time::Instant::now();
        let out = render_human(&[d], &sm, false);
        let took = t.elapsed();
        assert!(out.len() < 2000, "{} bytes", out.len());
        assert!(out.contains("…xxxx"), "{out}");
        assert!(out.contains("BAD tail"), "{out}");
        assert!(out.contains("^^^"), "{out}");
        assert!(took < std::time::Duration::from_secs(2), "{took:?}");
        let huge = Diagnostic::error(
            crate::Code::error("x/y", "a test code"),
            "y".repeat(10 << 20),
        );
        assert!(render_json(std::slice::from_ref(&huge)).len() < 10_000);
        assert!(render_github(std::slice::from_ref(&huge)).len() < 10_000);
        assert!(render_human(&[huge], &SourceMap::new(), false).len() < 10_000);
    }

    #[test]
    fn snippets_are_capped_in_count() {
        let text = "a: 1\n";
        let (sm, idx) = one_file(text);
        let d = Diagnostic::error(crate::Code::error("x/y", "a test code"), "m")
            .at("f.yaml", idx.span(text, 0, 1));
        let many = vec![d; MAX_SNIPPETS + 3];
        let out = render_human(&many, &sm, false);
        assert_eq!(out.matches("1 | a: 1").count(), MAX_SNIPPETS);
        assert!(
            out.contains("source excerpts of 3 later findings omitted"),
            "{}",
            &out[out.len() - 200..]
        );
    }

    #[test]
    fn github_has_end_column_for_ranges() {
        let (d, _) = sample();
        let out = render_github(&[d]);
        assert!(
            out.starts_with(
                "::error file=c.yaml,line=2,col=7,endLine=2,endColumn=9,title=config/T1::"
            ),
            "{out}"
        );
    }

    mod plain {
        use super::super::*;
        use proptest::prelude::*;
        use proptest::test_runner::TestRunner;
        use std::sync::atomic::{AtomicUsize, Ordering};

        /// Printable ASCII, the fast path's alphabet, with spaces at the ends now and then.
        fn text(max: usize) -> impl Strategy<Value = String> {
            prop_oneof![
                4 => proptest::string::string_regex(&format!("[ -~]{{0,{max}}}")).unwrap(),
                1 => proptest::string::string_regex(&format!(" {{0,3}}[a-z`:]{{0,{max}}} {{0,3}}")).unwrap(),
            ]
        }

        /// A one-line excerpt with one span (sometimes an empty one), as `excerpt` makes.
        fn one_line() -> impl Strategy<Value = (Excerpt, Vec<Option<String>>)> {
            (
                1usize..300_000,
                text(110),
                any::<proptest::sample::Index>(),
                0usize..40,
            )
                .prop_map(|(line, text, at, len)| {
                    let start = at.index(text.len() + 1);
                    let end = (start + len).min(text.len());
                    let x = Excerpt {
                        first_line: line,
                        text,
                        ranges: std::iter::once(start..end).collect(),
                    };
                    (x, vec![None])
                })
        }

        fn severity() -> impl Strategy<Value = Severity> {
            prop_oneof![
                Just(Severity::Error),
                Just(Severity::Warning),
                Just(Severity::Note)
            ]
        }

        /// Whatever `render_plain` writes is what `annotate-snippets` renders, and it writes
        /// most of the generated findings (the test would pass vacuously otherwise).
        #[test]
        fn plain_shapes_render_as_annotate_snippets() {
            let shapes = (
                severity(),
                proptest::string::string_regex("[a-z]{1,8}/[a-z-]{1,12}|[ -~]{0,12}").unwrap(),
                text(80),
                proptest::option::weighted(0.9, text(60)),
                proptest::option::of((1usize..300_000, 1usize..300)),
                proptest::option::weighted(0.6, one_line()),
                proptest::option::of(text(120)),
                proptest::collection::vec(text(60), 0..3),
            );
            let taken = AtomicUsize::new(0);
            let mut runner = TestRunner::new(ProptestConfig::with_cases(4000));
            let run = runner.run(
                &shapes,
                |(level, code, message, path, origin, excerpt, help, notes)| {
                    let excerpts: Vec<_> = excerpt.into_iter().collect();
                    let shape = Shape {
                        level,
                        code: &code,
                        message: &message,
                        path: path.as_deref(),
                        origin,
                        excerpts: &excerpts,
                        help: help.as_deref(),
                        notes: &notes,
                    };
                    let mut fast = String::new();
                    if render_plain(&shape, &mut fast) {
                        taken.fetch_add(1, Ordering::Relaxed);
                        prop_assert_eq!(fast, render_snippets(&Renderer::plain(), &shape));
                    } else {
                        // Declined before writing: the caller's text is left as it was.
                        prop_assert!(fast.is_empty());
                    }
                    Ok(())
                },
            );
            if let Err(e) = run {
                panic!("{e}");
            }
            let taken = taken.into_inner();
            assert!(
                taken > 2000,
                "only {taken} of 4000 shapes took the plain path"
            );
        }
    }
}
