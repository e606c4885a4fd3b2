//! Printing tree-derived text (file names, keys, messages quoting the tree) to a terminal or
//! a CI log outside crates/report's renderers: one line per finding, no forged lines.
//!
//! GitHub Actions reads any stdout/stderr line starting with `::` as a workflow command
//! (docs/security.md, "Output"), so a key or file name holding a newline and
//! `::error file=…` would forge an annotation; ESC sequences can rewrite a terminal.

use std::borrow::Cow;
use std::io::Write as _;

/// Writes `text` to stdout like `print!`, except that a closed stdout (EPIPE: the reader, e.g.
/// `head -1`, has gone) ends the output quietly instead of panicking; the command's exit code
/// stays its verdict. Later writes are skipped.
pub fn print_stdout(text: &str) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static CLOSED: AtomicBool = AtomicBool::new(false);
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        CLOSED.store(true, Ordering::Relaxed);
    }
}

/// True for the panic `print!` raises on a closed stdout ("failed printing to stdout: Broken
/// pipe"): main.rs ends such a run quietly.
pub fn is_broken_pipe_panic(payload: &(dyn std::any::Any + Send)) -> bool {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    msg.starts_with("failed printing to std") && msg.contains("Broken pipe")
}

/// `s` on one line: line breaks, NUL, ESC and other control characters (tab excepted), C1
/// controls and bidi controls as `\n`, `\0`, `\u{1b}`, `\u{9b}`, `\u{202e}`
/// (`infx_report::is_unsafe_char`); a leading `::` as `\::` so no runner takes it for a
/// workflow command.
pub fn escape_line(s: &str) -> Cow<'_, str> {
    let needs = s.starts_with("::")
        || s.chars()
            .any(|c| infx_report::is_unsafe_char(c) && c != '\t');
    if !needs {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    if s.starts_with("::") {
        out.push('\\');
    }
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push('\t'),
            '\0' => out.push_str("\\0"),
            c if infx_report::is_unsafe_char(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape_line`] for every line of a multi-line text: the line structure is kept, but no
/// line may start with `::` and no line holds a control character.
pub fn escape_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.push_str(&escape_line(body));
        out.push_str(nl);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forged_workflow_commands_stay_on_one_harmless_line() {
        let key = "dsr1\n::error file=x.yaml,line=1::forged\u{1b}[2J\0";
        let shown = escape_line(key);
        assert_eq!(
            shown,
            "dsr1\\n::error file=x.yaml,line=1::forged\\u{1b}[2J\\0"
        );
        assert!(!shown.contains('\n'));
        assert_eq!(escape_line("::warning::x"), "\\::warning::x");
        assert_eq!(escape_line("plain text: fine"), "plain text: fine");
    }

    #[test]
    fn multi_line_text_keeps_its_lines_but_loses_the_commands() {
        let text = "first\n::error::forged\nlast \u{1b}[31mred\n";
        assert_eq!(
            escape_lines(text),
            "first\n\\::error::forged\nlast \\u{1b}[31mred\n"
        );
    }
}
