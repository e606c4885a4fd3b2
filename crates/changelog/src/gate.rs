//! Gate mode: what upstream CI enforces (final newline; no deleted non-blank line versus the
//! base; the added lines on their own parse as a YAML list of valid entries).

use crate::codes;
use crate::entry::{Dialect, Entry, validate_entry};
use crate::text::py_blank;
use infx_report::Code;
use infx_yaml::{LoadOptions, Node, Value};
use std::path::Path;

/// Where the gate stopped (upstream's `gate_stage` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateStage {
    Newline,
    Deletion,
    NoAdditions,
    Yaml,
    NoEntries,
    EntrySchema,
    AppendOnly,
}

impl GateStage {
    pub fn as_str(self) -> &'static str {
        match self {
            GateStage::Newline => "newline",
            GateStage::Deletion => "deletion",
            GateStage::NoAdditions => "no-additions",
            GateStage::Yaml => "yaml",
            GateStage::NoEntries => "no-entries",
            GateStage::EntrySchema => "entry-schema",
            GateStage::AppendOnly => "append-only",
        }
    }
    /// The diagnostic code of a failure at this stage.
    pub fn code(self) -> Code {
        match self {
            GateStage::Newline => codes::FINAL_NEWLINE,
            GateStage::Deletion => codes::DELETED_LINE,
            GateStage::NoAdditions | GateStage::NoEntries => codes::NO_ADDITIONS,
            GateStage::Yaml => codes::ADDED_YAML,
            GateStage::EntrySchema => codes::ENTRY_SCHEMA,
            GateStage::AppendOnly => codes::APPEND_ONLY_MIX,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct GateError {
    pub stage: GateStage,
    /// Upstream's message (what the processor raised).
    pub message: String,
    /// 1-based line: in the base file for a deletion, in the head file otherwise.
    pub line: Option<usize>,
    /// `true` when `line` refers to the base version of the file.
    pub line_in_base: bool,
    pub help: Option<String>,
    /// For `EntrySchema`: the precise diagnostic code (`changelog/yaml11-trap`, …).
    pub code: Option<infx_report::Code>,
}

impl GateError {
    fn new(stage: GateStage, message: impl Into<String>) -> Self {
        GateError {
            stage,
            message: message.into(),
            line: None,
            line_in_base: false,
            help: None,
            code: None,
        }
    }
}

/// CLI eval modifiers (PR labels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Modifiers {
    pub all_evals: bool,
    pub evals_only: bool,
}

/// The entries a change adds, as the gate reads them.
#[derive(Debug, Clone)]
pub struct Added {
    /// The added lines joined with `\n` (what upstream parses).
    pub text: String,
    /// Head line number of each line of `text`.
    pub line_map: Vec<usize>,
    pub entries: Vec<Entry>,
}

impl Added {
    /// Head line of a line of `text` (1-based in, 1-based out).
    pub fn head_line(&self, text_line: usize) -> Option<usize> {
        self.line_map.get(text_line.checked_sub(1)?).copied()
    }
}

/// Runs the gate's changelog part. `base = None`: the file does not exist at the base.
pub fn gate(
    base: Option<&[u8]>,
    head: &[u8],
    path: &str,
    dialect: Dialect,
    modifiers: Modifiers,
) -> Result<Added, GateError> {
    if !head.ends_with(b"\n") {
        let mut e = GateError::new(
            GateStage::Newline,
            format!("{path} does not end with a newline"),
        );
        e.line = Some(head.iter().filter(|&&b| b == b'\n').count() + 1);
        e.help = Some("end the file with a newline".into());
        return Err(e);
    }
    let diff = infx_git::diff_lines(base, Some(head))
        .map_err(|e| GateError::new(GateStage::Deletion, format!("cannot diff {path}: {e}")))?;
    if let Some(line) = undecodable_changed_line(base, head, &diff) {
        let mut e = GateError::new(
            GateStage::Yaml,
            format!("{path}: the diff is not valid UTF-8 ('utf-8' codec can't decode it)"),
        );
        e.line = Some(line);
        e.code = Some(codes::ENCODING);
        e.help = Some("save the file as UTF-8".into());
        return Err(e);
    }
    if let Some(d) = diff.deleted.iter().find(|d| !py_blank(&d.content)) {
        let mut e = GateError::new(
            GateStage::Deletion,
            format!(
                "Deletions are not allowed in {path}. Only additions to the changelog are permitted. Found deleted line: {}",
                d.content
            ),
        );
        e.line = Some(d.line);
        e.line_in_base = true;
        e.help = Some("restore the line exactly as it is on the base branch (merge or rebase onto it first if it changed there)".into());
        return Err(e);
    }
    parse_diff_additions(&diff, dialect, modifiers)
}

/// The added lines of a changelog diff as upstream reads them: joined with `\n`, parsed, each
/// item validated as an entry, then the sweep preconditions (append-only mixing, modifiers).
pub(crate) fn parse_diff_additions(
    diff: &infx_git::LineDiff,
    dialect: Dialect,
    modifiers: Modifiers,
) -> Result<Added, GateError> {
    let text = diff
        .added
        .iter()
        .map(|l| l.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let line_map: Vec<usize> = diff.added.iter().map(|l| l.line).collect();
    let entries = parse_added(&text, &line_map, dialect)?;
    check_preconditions(&entries, modifiers)?;
    Ok(Added {
        text,
        line_map,
        entries,
    })
}

/// Parses added text as upstream does (`yaml.safe_load`, then `ChangelogEntry` per item).
pub fn parse_added(
    text: &str,
    line_map: &[usize],
    dialect: Dialect,
) -> Result<Vec<Entry>, GateError> {
    let head_line = |l: usize| line_map.get(l.saturating_sub(1)).copied();
    if py_blank(text) {
        let mut e = GateError::new(
            GateStage::NoAdditions,
            "No additions found in the changelog file.",
        );
        e.help = Some("append a new entry at the end of the changelog".into());
        return Err(e);
    }
    if let Some((line, what)) = pyyaml_reader_rejects(text) {
        let mut e = GateError::new(
            GateStage::Yaml,
            format!("the added lines are not valid YAML: {what}"),
        );
        e.line = head_line(line);
        e.help = Some(
            "use spaces, not tabs, outside quoted strings; save the file without a byte order mark"
                .into(),
        );
        return Err(e);
    }
    let opts = LoadOptions {
        duplicate_keys: infx_yaml::DuplicateKeys::KeepLast,
        ..LoadOptions::default()
    };
    let root = infx_yaml::parse_str_with(Path::new("<added lines>"), text, &opts).map_err(|d| {
        let mut e = GateError::new(GateStage::Yaml, format!("the added lines are not valid YAML: {}", d.message));
        e.line = d.span.and_then(|s| head_line(s.start.line()));
        e.help = Some("the added lines on their own must form a YAML list of complete entries: append whole entries at the end instead of editing inside an existing one".into());
        e
    })?;
    if is_falsy(&root) {
        return Err(GateError::new(
            GateStage::NoEntries,
            "No valid YAML entries found in the changelog additions.",
        ));
    }
    let items: Vec<&Node> = match &root.value {
        Value::Seq(items) => items.iter().collect(),
        _ => {
            let mut e = GateError::new(
                GateStage::EntrySchema,
                format!(
                    "the added lines form a YAML {}, not a list of entries",
                    root.value.type_name()
                ),
            );
            e.line = head_line(root.span.start.line());
            e.help = Some("append whole entries (`- config-keys: …`) at the end instead of editing inside an existing one".into());
            return Err(e);
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        match validate_entry(it, dialect, Some(text)) {
            Ok(mut e) => {
                // Re-anchor the span to head lines for reporting.
                if let Some(l) = head_line(e.span.start.line()) {
                    e.span.start = e.span.start.with_line(l);
                }
                if let Some(l) = head_line(e.span.end.line()) {
                    e.span.end = e.span.end.with_line(l);
                }
                out.push(e)
            }
            Err(errs) => {
                let first = &errs[0];
                let mut e = GateError::new(
                    GateStage::EntrySchema,
                    format!("invalid changelog entry: {}", first.message),
                );
                e.line = head_line(first.span.start.line());
                e.help = first.help.clone();
                e.code = Some(first.code);
                return Err(e);
            }
        }
    }
    Ok(out)
}

/// The first head line (1-based) near a change that is not UTF-8. Upstream reads `git diff`'s
/// output as text, so an undecodable byte in an added line or its three context lines fails
/// the gate (docs/changelog.md, gate mode).
fn undecodable_changed_line(
    base: Option<&[u8]>,
    head: &[u8],
    diff: &infx_git::LineDiff,
) -> Option<usize> {
    let bad_line = |raw: &[u8]| {
        std::str::from_utf8(raw)
            .err()
            .map(|e| crate::text::line_of_offset(raw, e.valid_up_to()))
    };
    let near =
        |bad: usize, lines: &[infx_git::DiffLine]| lines.iter().any(|l| l.line.abs_diff(bad) <= 3);
    if let Some(bad) = bad_line(head)
        && near(bad, &diff.added)
    {
        return Some(bad);
    }
    // An undecodable base line next to a deletion; reported at the head's first added line.
    match base.and_then(bad_line) {
        Some(bad) if near(bad, &diff.deleted) => Some(diff.added.first().map_or(bad, |l| l.line)),
        _ => None,
    }
}

/// What PyYAML's scanner rejects and infx-yaml's parser accepts in the added text: a tab
/// outside quoted scalars, comments and block scalars ("found character '\t' that cannot
/// start any token"), and a byte order mark at the start of a line other than the first
/// (PyYAML only skips one at the very start of the stream). `(line, message)`, 1-based.
fn pyyaml_reader_rejects(text: &str) -> Option<(usize, String)> {
    let mut block_indent: Option<usize> = None;
    for (i, line) in text.split('\n').enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(parent) = block_indent {
            if line.trim().is_empty() || indent > parent {
                continue;
            }
            block_indent = None;
        }
        if i > 0 && line.trim_start_matches(' ').starts_with('\u{feff}') {
            return Some((i + 1, "a byte order mark where a token starts".to_string()));
        }
        let mut quote: Option<char> = None;
        let mut prev = ' ';
        let mut content_end = 0;
        for (at, c) in line.char_indices() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    '#' if prev == ' ' || prev == '\t' || at == 0 => break,
                    '\'' | '"' if matches!(prev, ' ' | '[' | '{' | ',' | ':' | '-') => {
                        quote = Some(c)
                    }
                    '\t' => {
                        return Some((
                            i + 1,
                            "found character '\\t' that cannot start any token".to_string(),
                        ));
                    }
                    _ => {}
                },
            }
            if c != ' ' {
                content_end = at + c.len_utf8();
            }
            prev = c;
        }
        let code = line[..content_end].trim_end();
        let indicator = code
            .rsplit([' ', ':', '-'])
            .next()
            .unwrap_or("")
            .trim_end_matches(|c: char| c.is_ascii_digit() || c == '+' || c == '-');
        if quote.is_none() && (indicator == "|" || indicator == ">") {
            block_indent = Some(indent);
        }
    }
    None
}

/// Cross-entry rules checked before any generation (docs/changelog.md, "Cross-entry rules").
pub(crate) fn check_preconditions(entries: &[Entry], m: Modifiers) -> Result<(), GateError> {
    let any_ao = entries.iter().any(|e| e.append_only);
    if any_ao && !entries.iter().all(|e| e.append_only) {
        let mut e = GateError::new(
            GateStage::AppendOnly,
            "append-only entries cannot share a sweep with regular changelog entries",
        );
        e.help = Some("send the append-only entry in its own PR".into());
        return Err(e);
    }
    if any_ao && (m.all_evals || m.evals_only) {
        return Err(GateError::new(
            GateStage::AppendOnly,
            "append-only sweeps cannot use all-evals or evals-only modifiers",
        ));
    }
    if entries.iter().any(|e| e.no_evals) && (m.all_evals || m.evals_only) {
        return Err(GateError::new(
            GateStage::AppendOnly,
            "no-evals entries cannot use all-evals or evals-only modifiers",
        ));
    }
    Ok(())
}

/// Python truthiness of a loaded YAML value.
fn is_falsy(n: &Node) -> bool {
    match &n.value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Float(f) => f.value == 0.0,
        Value::Str(s) => s.is_empty(),
        Value::Timestamp(_) => false,
        Value::Seq(s) => s.is_empty(),
        Value::Map(m) => m.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E1: &str = "- config-keys:\n    - a\n  description:\n    - one\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n";
    const E2: &str = "- config-keys:\n    - b\n  description:\n    - two\n  pr-link: XXX\n";

    fn g(base: &str, head: &str) -> Result<Added, GateError> {
        gate(
            Some(base.as_bytes()),
            head.as_bytes(),
            "perf-changelog.yaml",
            Dialect::Aug,
            Modifiers::default(),
        )
    }

    #[test]
    fn what_upstreams_reader_rejects_fails_the_gate() {
        // A BOM before the appended entry: PyYAML reads `\u{feff}- config-keys` as a key.
        let bom = format!("{E1}\n\u{feff}{E2}");
        assert!(g(E1, &bom).is_err(), "BOM in an appended entry");
        // A tab after a plain value cannot start a token in PyYAML.
        let tab = format!("{E1}\n{}", E2.replace("    - b\n", "    - b\t\n"));
        let e = g(E1, &tab).unwrap_err();
        assert_eq!((e.stage, e.line), (GateStage::Yaml, Some(8)), "{e:?}");
        // Tabs inside quotes, comments and block scalars are fine.
        let fine = format!(
            "{E1}\n{}",
            E2.replace("    - two\n", "    - 'a\tb' # c\td\n    - |\n      x\ty\n")
        );
        assert!(g(E1, &fine).is_ok(), "{:?}", g(E1, &fine).err());
        // Non-UTF-8 bytes: git diff's output does not decode.
        let mut bad = format!("{E1}\n{E2}").into_bytes();
        let at = bad.len() - 3;
        bad[at] = 0xff;
        let e = gate(
            Some(E1.as_bytes()),
            &bad,
            "perf-changelog.yaml",
            Dialect::Aug,
            Modifiers::default(),
        )
        .unwrap_err();
        assert_eq!(e.code, Some(codes::ENCODING), "{e:?}");
        assert_eq!(e.line, Some(11));
    }

    #[test]
    fn append_passes_anywhere() {
        let a = g(E1, &format!("{E1}\n{E2}")).unwrap();
        assert_eq!(a.entries.len(), 1);
        assert_eq!(a.entries[0].config_keys, ["b"]);
        assert_eq!(a.entries[0].span.start.line(), 7);
        // A top insertion passes the gate (not strict mode).
        assert!(g(E1, &format!("{E2}\n{E1}")).is_ok());
    }

    #[test]
    fn deletions_and_edits_fail() {
        let e = g(&format!("{E1}\n{E2}"), E1).unwrap_err();
        assert_eq!(e.stage, GateStage::Deletion);
        assert!(e.message.contains("Found deleted line: - config-keys:"));
        assert_eq!(e.line, Some(7));
        assert!(e.line_in_base);
        // trailing space on an old non-blank line = a deletion
        let e = g(E1, &format!("{}\n{E2}", E1.replace("- one", "- one "))).unwrap_err();
        assert_eq!(e.stage, GateStage::Deletion);
        assert_eq!(e.line, Some(4));
        // whitespace-only line deletions are allowed
        let base = format!("{E1}  \n{E2}");
        assert!(g(&base, &format!("{E1}\n{E2}\n{}", E2.replace("- b", "- c"))).is_ok());
        // adding a list item inside an old entry does not form complete entries
        let e = g(E1, &E1.replace("    - one\n", "    - one\n    - more\n")).unwrap_err();
        assert_eq!(e.stage, GateStage::EntrySchema);
    }

    #[test]
    fn newline_and_no_additions() {
        let e = g(E1, &format!("{E1}\n{}", E2.trim_end())).unwrap_err();
        assert_eq!(e.stage, GateStage::Newline);
        assert_eq!(g(E1, E1).unwrap_err().stage, GateStage::NoAdditions);
        assert_eq!(
            g(E1, &format!("{E1}\n\n")).unwrap_err().stage,
            GateStage::NoAdditions
        );
        assert_eq!(
            g(E1, &format!("{E1}# c\n")).unwrap_err().stage,
            GateStage::NoEntries
        );
    }

    #[test]
    fn append_only_preconditions() {
        let ao = "- config-keys: [c]\n  description: [x]\n  pr-link: XXX\n  append-only: true\n";
        let e = g(E1, &format!("{E1}\n{E2}\n{ao}")).unwrap_err();
        assert_eq!(e.stage, GateStage::AppendOnly);
        let e = gate(
            Some(E1.as_bytes()),
            format!("{E1}\n{ao}").as_bytes(),
            "p",
            Dialect::Aug,
            Modifiers {
                all_evals: true,
                evals_only: false,
            },
        )
        .unwrap_err();
        assert!(e.message.contains("append-only sweeps cannot use"));
    }
}
