//! Inline acknowledgement of warnings: a YAML comment
//! `# infx: allow(review/dp-cuda-graph) <reason>` on the warning's line, or on a comment-only
//! line directly above it (README, "Acknowledging a warning"). The reason is mandatory; only
//! warnings can be acknowledged; an allow that matches nothing is itself a warning.

use crate::codes::{NO_REASON, NOT_A_WARNING, SYNTAX, UNUSED};
use crate::{Diagnostic, LineIndex, Severity, Span, check_of, is_code_name};
use std::path::{Path, PathBuf};

/// The comment's directive, after `#` and optional spaces.
const DIRECTIVE: &str = "infx:";

/// One `# infx: allow(…) reason` comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allow {
    pub path: PathBuf,
    /// The comment itself (from `#` to the end of the line).
    pub span: Span,
    /// The line whose findings it acknowledges: its own line when it trails a value, else the
    /// first line after the block of comment-only lines it stands in.
    pub target_line: usize,
    pub codes: Vec<String>,
    pub reason: String,
}

/// A warning an allow comment acknowledged, with the comment's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acknowledged {
    pub diagnostic: Diagnostic,
    pub reason: String,
    /// Where the allow comment is (same file as the diagnostic).
    pub allow_span: Span,
}

/// The allow comments of one YAML text, and the findings about malformed ones (no reason, no
/// code, an unknown `infx:` directive). A malformed comment acknowledges nothing.
pub fn allows_in(path: &Path, text: &str) -> (Vec<Allow>, Vec<Diagnostic>) {
    // Every allow comment, well-formed or not, holds the directive: a text without it (nearly
    // every file) needs no line index or line walk, which were ~1 % of a one-config validate.
    if !text.contains(DIRECTIVE) {
        return (Vec::new(), Vec::new());
    }
    let index = LineIndex::new(text);
    let mut allows = Vec::new();
    let mut problems = Vec::new();
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let Some(hash) = comment_start(line) else {
            continue;
        };
        let body = line[hash + 1..].trim_start();
        let Some(directive) = body.strip_prefix(DIRECTIVE) else {
            continue;
        };
        let line_no = i + 1;
        let line_start = index
            .line_range(text, line_no)
            .map(|r| r.start)
            .unwrap_or(0);
        let span = index.span(text, line_start + hash, line_start + line.len());
        let at = |d: Diagnostic| d.at(path, span);
        let directive = directive.trim_start();
        let Some(rest) = directive.strip_prefix("allow(") else {
            problems.push(at(Diagnostic::error(
                SYNTAX,
                "an `# infx:` comment must be `# infx: allow(<code>) <reason>`",
            )
            .with_help(
                "write e.g. `# infx: allow(review/dp-cuda-graph) <why this is fine>`",
            )));
            continue;
        };
        let Some(close) = rest.find(')') else {
            problems.push(at(Diagnostic::error(
                SYNTAX,
                "the allow comment has no closing `)` after its codes",
            )
            .with_help("write `# infx: allow(<code>) <reason>`")));
            continue;
        };
        let codes: Vec<String> = rest[..close]
            .split(',')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect();
        if let Some(bad) = codes.iter().find(|c| !is_code_name(c)) {
            problems.push(at(Diagnostic::error(
                SYNTAX,
                format!(
                    "`{bad}` is not a diagnostic code (codes look like `review/dp-cuda-graph`)"
                ),
            )
            .with_help("copy the code from the warning's `warning[<code>]` header")));
            continue;
        }
        if codes.is_empty() {
            problems.push(at(Diagnostic::error(
                SYNTAX,
                "the allow comment names no diagnostic code",
            )
            .with_help("copy the code from the warning's `warning[<code>]` header")));
            continue;
        }
        let reason = rest[close + 1..].trim().to_string();
        if reason.is_empty() {
            problems.push(at(Diagnostic::error(
                NO_REASON,
                "the allow comment gives no reason",
            )
            .with_help(format!(
                "say why the warning does not apply, after the codes: `# infx: allow({}) <reason>`",
                codes.join(", ")
            ))));
            continue;
        }
        let trailing = !line[..hash].trim().is_empty();
        let target_line = if trailing {
            line_no
        } else {
            // Past the rest of this comment block: the first line that is not comment-only.
            let mut t = line_no + 1;
            while lines
                .get(t - 1)
                .is_some_and(|l| l.trim_start().starts_with('#'))
            {
                t += 1;
            }
            t
        };
        allows.push(Allow {
            path: path.to_path_buf(),
            span,
            target_line,
            codes,
            reason,
        });
    }
    (allows, problems)
}

/// What [`acknowledge`] did besides filtering: the acknowledged warnings, and the findings
/// about the allow comments themselves (errors on an error, unused allows).
#[derive(Debug, Default)]
pub struct Outcome {
    pub acknowledged: Vec<Acknowledged>,
    pub problems: Vec<Diagnostic>,
}

/// Applies `allows` to every list in `groups` (one per check), removing the acknowledged
/// warnings from it. An allow matches a finding of one of its codes in its file whose span
/// starts on its target line. A matched warning is acknowledged; a matched error or note stays
/// and the allow is an error (`allow/not-a-warning`). An allow that matches nothing is an
/// `allow/unused` warning, but only when `ran(check)` says a check that produces its code ran
/// (a skipped check proves nothing).
pub fn acknowledge<'a>(
    groups: impl IntoIterator<Item = &'a mut Vec<Diagnostic>>,
    allows: &[Allow],
    ran: impl Fn(&str) -> bool,
) -> Outcome {
    let mut out = Outcome::default();
    let mut used = vec![false; allows.len()];
    for group in groups {
        let mut kept = Vec::with_capacity(group.len());
        for d in std::mem::take(group) {
            match allows.iter().position(|a| matches(a, &d)) {
                Some(i) if d.severity == Severity::Warning => {
                    used[i] = true;
                    out.acknowledged.push(Acknowledged {
                        reason: allows[i].reason.clone(),
                        allow_span: allows[i].span,
                        diagnostic: d,
                    });
                }
                Some(i) => {
                    used[i] = true;
                    out.problems.push(not_a_warning(&allows[i], &d));
                    kept.push(d);
                }
                None => kept.push(d),
            }
        }
        *group = kept;
    }
    for (a, used) in allows.iter().zip(used) {
        if used || !a.codes.iter().any(|c| ran(check_of(c))) {
            continue;
        }
        out.problems.push(
            Diagnostic::warning(
                UNUSED,
                format!(
                    "this allow comment acknowledges nothing: no {} finding on line {}",
                    a.codes.join(" or "),
                    a.target_line
                ),
            )
            .at(&a.path, a.span)
            .with_help(
                "remove it, or move it onto (or directly above) the line the warning points at",
            ),
        );
    }
    out
}

fn not_a_warning(a: &Allow, d: &Diagnostic) -> Diagnostic {
    let article = if d.severity == Severity::Error {
        "an"
    } else {
        "a"
    };
    let message = format!(
        "only warnings can be acknowledged; `{}` on line {} is {article} {}",
        d.code, a.target_line, d.severity
    );
    Diagnostic::error(NOT_A_WARNING, message)
        .at(&a.path, a.span)
        .with_help("fix the finding instead, and remove this allow comment")
}

fn matches(a: &Allow, d: &Diagnostic) -> bool {
    d.path.as_deref() == Some(a.path.as_path())
        && d.span.is_some_and(|s| s.start.line() == a.target_line)
        && a.codes.iter().any(|c| d.code.is_named(c))
}

/// Byte index of the `#` that starts a YAML comment on `line`: at the start or after
/// whitespace (YAML's rule; a `#` inside a word is text). Quoted scalars are not tracked: a
/// quoted `" # infx: allow("` would read as a comment, which can only acknowledge a warning.
fn comment_start(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    (0..bytes.len()).find(|&i| bytes[i] == b'#' && (i == 0 || bytes[i - 1].is_ascii_whitespace()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "a:\n  # why the next line is fine\n  # infx: allow(review/x) reviewed in run 1\n  b: 64\n  c: 1  # infx: allow(review/y, review/z) trailing form\n";

    fn warn(name: &'static str, line: usize) -> Diagnostic {
        Diagnostic::warning(crate::Code::warning(name, "a test code"), "w")
            .at("f.yaml", Span::line(line))
    }

    #[test]
    fn parses_standalone_and_trailing_allows() {
        let (allows, problems) = allows_in(Path::new("f.yaml"), YAML);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(allows.len(), 2);
        assert_eq!(
            (allows[0].target_line, allows[0].codes.clone()),
            (4, vec!["review/x".to_string()])
        );
        assert_eq!(allows[0].reason, "reviewed in run 1");
        assert_eq!(
            (allows[0].span.start.line(), allows[0].span.start.col()),
            (3, 3)
        );
        assert_eq!(allows[1].target_line, 5);
        assert_eq!(allows[1].codes, ["review/y", "review/z"]);
    }

    #[test]
    fn a_missing_reason_and_bad_syntax_are_errors() {
        let text = "a: 1 # infx: allow(review/x)\nb: 2 # infx: allow(review/x\nc: 3 # infx: ignore\nd: 4 # infx: allow(nonsense) why\ne: '#not a comment'\n";
        let (allows, problems) = allows_in(Path::new("f.yaml"), text);
        assert!(allows.is_empty());
        let got: Vec<_> = problems
            .iter()
            .map(|d| (d.code, d.span.map(|s| s.start.line()), d.severity))
            .collect();
        assert_eq!(
            got,
            [
                (NO_REASON, Some(1), Severity::Error),
                (SYNTAX, Some(2), Severity::Error),
                (SYNTAX, Some(3), Severity::Error),
                (SYNTAX, Some(4), Severity::Error),
            ]
        );
    }

    #[test]
    fn warnings_are_acknowledged_errors_are_not_and_unused_allows_warn() {
        let (allows, _) = allows_in(Path::new("f.yaml"), YAML);
        let mut first = vec![warn("review/x", 4)];
        let mut second = vec![
            Diagnostic::error(crate::Code::error("review/y", "a test code"), "e")
                .at("f.yaml", Span::line(5)),
            warn("review/x", 5),
        ];
        let out = acknowledge([&mut first, &mut second], &allows, |_| true);
        assert_eq!(out.acknowledged.len(), 1);
        assert_eq!(out.acknowledged[0].reason, "reviewed in run 1");
        assert!(out.acknowledged[0].diagnostic.code.is_named("review/x"));
        // The error and the other-code warning on line 5 stay shown.
        assert!(first.is_empty());
        assert_eq!(second.len(), 2);
        let problems: Vec<_> = out.problems.iter().map(|d| d.code).collect();
        assert_eq!(problems, [NOT_A_WARNING]);

        let out = acknowledge([&mut vec![warn("review/x", 3)]], &allows, |_| true);
        assert_eq!(out.acknowledged.len(), 0);
        let unused: Vec<_> = out
            .problems
            .iter()
            .map(|d| (d.code, d.severity, d.span.map(|s| s.start.line())))
            .collect();
        assert_eq!(
            unused,
            [
                (UNUSED, Severity::Warning, Some(3)),
                (UNUSED, Severity::Warning, Some(5)),
            ]
        );
        // A check that did not run proves nothing about its allows.
        let out = acknowledge([&mut Vec::new()], &allows, |check| check != "review");
        assert!(out.problems.is_empty());
    }
}
