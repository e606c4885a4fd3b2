//! A file parsed again by its top-level sections: the same file at another revision (the
//! base's master config, when the head's is parsed already) shares most of its top-level
//! entries' text, and those entries' nodes are taken over with their positions moved; only
//! the sections whose text differs are parsed (docs/performance.md, "Sections of a changed
//! file"). Whenever the file is not plainly a block mapping of sections that stand alone, the
//! answer is `None` and the caller parses the whole file: the result is never a guess.

use crate::load::LoadOptions;
use crate::{Document, Node, Value};
use infx_report::{Pos, Span};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// The root of `text` (the file at `path`) as a whole-file parse gives it, built from the
/// sections of `previous` (a parse of another revision of the file) whose text is unchanged
/// and a parse of each other section alone. `None` when that cannot be shown to be the same:
/// a line break other than `\n` and `\r\n`, anything but comments before the first key, a
/// section that does not parse alone as one plain key at column 0 without findings, a changed
/// section with an anchor or alias (the alias budget is the whole file's), a taken-over
/// section whose nodes point outside it (an alias or merge of another section), or a key
/// written twice.
pub fn reparse_sections(
    path: &Path,
    text: &str,
    previous: &Document,
    opts: &LoadOptions,
) -> Option<Node> {
    reparse(path, text, Cow::Borrowed(previous), opts)
}

/// [`reparse_sections`] from a parse of `previous` that is not needed afterwards: when no one
/// else holds its tree, the unchanged sections' nodes are moved, not copied (a copy of the
/// sections was the reparse's largest cost). A tree still shared (the head's parse, offered to
/// the base's run) has only its unchanged sections copied, as [`reparse_sections`] does.
pub(crate) fn reparse_sections_owned(
    path: &Path,
    text: &str,
    previous: Document,
    opts: &LoadOptions,
) -> Option<Node> {
    if Arc::strong_count(&previous.root) > 1 {
        return reparse(path, text, Cow::Borrowed(&previous), opts);
    }
    reparse(path, text, Cow::Owned(previous), opts)
}

/// The top-level pairs of a previous parse, handed out by section: copied from a borrowed
/// parse, moved out of an owned one.
enum Pairs<'a> {
    Borrowed(Vec<(&'a Node, &'a Node)>),
    Owned(Vec<Option<(Node, Node)>>),
}

impl Pairs<'_> {
    fn take(&mut self, j: usize) -> Option<(Node, Node)> {
        match self {
            Pairs::Borrowed(p) => p.get(j).map(|(k, v)| ((*k).clone(), (*v).clone())),
            // A second base section of the same text repeats its key: the distinct-key check
            // gives up on it anyway.
            Pairs::Owned(p) => p.get_mut(j)?.take(),
        }
    }
}

fn reparse(
    path: &Path,
    text: &str,
    previous: Cow<'_, Document>,
    opts: &LoadOptions,
) -> Option<Node> {
    let sections = split(text)?;
    let prev_text: Arc<str> = previous.text.clone();
    let prev_sections = split(&prev_text)?;
    let root_span = previous.root.span;
    {
        let Value::Map(prev_map) = &previous.root.value else {
            return None;
        };
        if prev_map.len() != prev_sections.len()
            || prev_map
                .iter_nodes()
                .zip(&prev_sections)
                .any(|((k, _), sec)| k.span.start.offset() != sec.range.start)
        {
            return None;
        }
    }
    let mut prev_pairs = match previous {
        Cow::Borrowed(d) => match &d.root.value {
            Value::Map(m) => Pairs::Borrowed(m.iter_nodes().collect()),
            _ => return None,
        },
        // A tree nobody else holds is taken apart; a shared one is copied.
        Cow::Owned(d) => match Arc::unwrap_or_clone(d.root).value {
            Value::Map(m) => Pairs::Owned(m.into_pairs().into_iter().map(Some).collect()),
            _ => return None,
        },
    };
    let mut by_text: HashMap<&str, usize> = HashMap::with_capacity(prev_sections.len());
    for (i, sec) in prev_sections.iter().enumerate() {
        // A section written twice is taken from its first copy (both are the same text).
        by_text.entry(&prev_text[sec.range.clone()]).or_insert(i);
    }
    let mut pairs = Vec::with_capacity(sections.len());
    let (mut start, mut end) = (None, None);
    for (i, sec) in sections.iter().enumerate() {
        let (r, line) = (&sec.range, sec.line);
        let section = &text[r.clone()];
        let (pair, map_span) = match by_text.get(section).copied() {
            Some(j) => {
                let from = &prev_sections[j];
                let (mut k, mut v) = prev_pairs.take(j)?;
                let shift = Shift {
                    bytes: r.start as i64 - from.range.start as i64,
                    lines: line as i64 - from.line as i64,
                };
                // A node from outside the section (an alias's or merge's definition keeps
                // its span) means the section does not stand alone.
                if !shift.node_within(&mut k, &from.range)
                    || !shift.node_within(&mut v, &from.range)
                {
                    return None;
                }
                // The root mapping starts in its first section and ends in its last: known
                // here when this section was first or last in `previous` too.
                let map_span = (
                    (j == 0).then(|| shift.pos(root_span.start)),
                    (j + 1 == prev_sections.len()).then(|| shift.pos(root_span.end)),
                );
                ((k, v), map_span)
            }
            // A changed section is a piece of one section ([`parse_piece`]: alone, without an
            // anchor or alias, one plain key at its start).
            None => {
                let piece = Piece {
                    range: r.clone(),
                    line,
                    starts: vec![r.start],
                };
                let PieceParse {
                    pairs: mut one,
                    span,
                } = parse_piece(path, text, &piece, opts)?;
                (one.pop()?, (Some(span.start), Some(span.end)))
            }
        };
        if !matches!(pair.0.value, Value::Str(_)) {
            return None;
        }
        if i == 0 {
            start = map_span.0;
        }
        if i + 1 == sections.len() {
            end = map_span.1;
        }
        pairs.push(pair);
    }
    let map = crate::value::Mapping::from_distinct_pairs(pairs).ok()?;
    let mut root = Node::new(
        Value::Map(map),
        Span {
            start: start?,
            end: end?,
        },
    );
    root.style = crate::ScalarStyle::Collection;
    Some(root)
}

/// A run of whole top-level sections of a text, which parses alone ([`parse_piece`]): one of
/// the pieces [`cut`] makes for parsing one large file on several threads.
#[derive(Debug)]
pub(crate) struct Piece {
    range: Range<usize>,
    /// The (1-based) line the piece starts on.
    line: usize,
    /// Where each of its sections starts in the whole text: each must be one key of the
    /// piece's parse, in order.
    starts: Vec<usize>,
}

/// A piece's parse with positions in the whole text: its top-level pairs and its root's span.
#[derive(Debug)]
pub struct PieceParse {
    pairs: Vec<(Node, Node)>,
    span: Span,
}

/// `text` cut into at most `n` pieces of whole top-level sections of about equal bytes, when a
/// whole parse may be put together from their parses ([`parse_piece`], [`join_pieces`]);
/// `None` (parse it whole) when the text is not plainly a block mapping of sections
/// ([`reparse_sections`]'s conditions) or has fewer than two.
pub(crate) fn cut(text: &str, n: usize) -> Option<Vec<Piece>> {
    if n < 2 {
        return None;
    }
    let sections = split(text)?;
    let first = sections.first()?.range.start;
    let share = (text.len() - first).div_ceil(n);
    let mut pieces: Vec<Piece> = Vec::with_capacity(n);
    for sec in &sections {
        let all_started = pieces.len() == n;
        match pieces.last_mut() {
            Some(p) if p.range.end - p.range.start < share || all_started => {
                p.range.end = sec.range.end;
                p.starts.push(sec.range.start);
            }
            _ => pieces.push(Piece {
                range: sec.range.clone(),
                line: sec.line,
                starts: vec![sec.range.start],
            }),
        }
    }
    (pieces.len() >= 2).then_some(pieces)
}

/// The parse of `piece` of `text` alone, positions moved into the whole text; `None` when it
/// may not be what the whole parse has there: a finding (a key written twice, an error), an
/// anchor or alias (an alias may name another piece's anchor, and the alias budget is the
/// whole file's), not a mapping, or not one plain key at the start of each of its sections.
pub(crate) fn parse_piece(
    path: &Path,
    text: &str,
    piece: &Piece,
    opts: &LoadOptions,
) -> Option<PieceParse> {
    let node = crate::load::build_standalone(path, text.get(piece.range.clone())?, opts)?;
    let Value::Map(map) = node.value else {
        return None;
    };
    let mut pairs = map.into_pairs();
    if pairs.len() != piece.starts.len()
        || pairs.iter().zip(&piece.starts).any(|((k, _), &start)| {
            !matches!(k.value, Value::Str(_)) || k.span.start.offset() + piece.range.start != start
        })
    {
        return None;
    }
    let shift = Shift {
        bytes: piece.range.start as i64,
        lines: piece.line as i64 - 1,
    };
    for (k, v) in &mut pairs {
        shift.node(k);
        shift.node(v);
    }
    Some(PieceParse {
        pairs,
        span: shift.span(node.span),
    })
}

/// The root the whole parse gives, from the parses of every piece [`cut`] made, in order;
/// `None` when a key stands in two pieces.
pub(crate) fn join_pieces(parts: Vec<PieceParse>) -> Option<Node> {
    let span = Span {
        start: parts.first()?.span.start,
        end: parts.last()?.span.end,
    };
    let pairs = parts.into_iter().flat_map(|p| p.pairs).collect();
    let map = crate::value::Mapping::from_distinct_pairs(pairs).ok()?;
    let mut root = Node::new(Value::Map(map), span);
    root.style = crate::ScalarStyle::Collection;
    Some(root)
}

/// One top-level section: its bytes and the (1-based) line it starts on.
struct Section {
    range: Range<usize>,
    line: usize,
}

/// How a line of a top-level block mapping starts: its first byte decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lead {
    /// Indented, a comment, blank, or a `- ` item: it belongs to the section before it.
    Inside,
    /// A tab at column 0, which YAML does not allow as indentation.
    Tab,
    /// Anything else: a line that starts a top-level key.
    Key,
}

/// Every non-empty line of `text` as (byte offset of its start, 1-based line number, how it
/// starts): the one top-level line scan, shared by [`split`] and [`top_level_sections`]. One
/// SIMD pass over the line breaks: only a line's first byte is read here.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, usize, Lead)> + '_ {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1))
        .enumerate()
        .map_while(|(n, start)| {
            let lead = match bytes.get(start)? {
                b' ' | b'#' | b'\n' | b'\r' | b'-' => Lead::Inside,
                b'\t' => Lead::Tab,
                _ => Lead::Key,
            };
            Some((start, n + 1, lead))
        })
}

/// The top-level keys of a master config with the byte range of each one's section (from its
/// key line to the next key line): the lenient reading of [`lines`] for callers that compare
/// sections by text and have no parse to fall back to (changelog impact, validate's review
/// inputs). Unlike [`split`] it never gives up: a key line needs a `:` (the key is what stands
/// before it, unquoted), a `...` line or a column-0 tab continues the section before, and what
/// stands before the first key belongs to no section.
pub fn top_level_sections(text: &str) -> Vec<(&str, Range<usize>)> {
    let bytes = text.as_bytes();
    let mut out: Vec<(&str, Range<usize>)> = Vec::new();
    for (start, _, lead) in lines(bytes) {
        let rest = &bytes[start..];
        if lead != Lead::Key || rest.starts_with(b"...") {
            continue;
        }
        let end = memchr::memchr(b'\n', rest).map_or(bytes.len(), |i| start + i + 1);
        let Some(line) = text.get(start..end) else {
            continue;
        };
        let Some(colon) = line.find(':') else {
            continue;
        };
        let key = line[..colon].trim().trim_matches(|c| c == '"' || c == '\'');
        if let Some(last) = out.last_mut() {
            last.1.end = start;
        }
        out.push((key, start..text.len()));
    }
    out
}

/// The top-level sections of `text`, each from a line starting with a key at column 0 to the
/// next such line (comments, blank lines and `- ` items at column 0 stay in their section).
/// `None` when a line break is not `\n` or `\r\n` (PyYAML also breaks lines at a lone `\r`,
/// NEL, LS and PS), a line starts with a tab, before the first key there is anything but
/// comments and blank lines, or there is no section.
fn split(text: &str) -> Option<Vec<Section>> {
    let bytes = text.as_bytes();
    let other_break = |i: usize| {
        matches!(
            bytes.get(i..i + 3),
            Some([0xC2, 0x85, _] | [0xE2, 0x80, 0xA8 | 0xA9])
        ) || bytes.get(i..) == Some(&[0xC2, 0x85][..])
    };
    if memchr::memchr2_iter(0xC2, 0xE2, bytes).any(other_break)
        || memchr::memchr_iter(b'\r', bytes).any(|i| bytes.get(i + 1) != Some(&b'\n'))
    {
        return None;
    }
    let mut starts: Vec<(usize, usize)> = Vec::new();
    for (start, line, lead) in lines(bytes) {
        match lead {
            Lead::Inside => {
                // Before the first key only comments and blank lines may stand.
                if starts.is_empty() {
                    let content = bytes[start..]
                        .iter()
                        .take_while(|b| **b != b'\n')
                        .find(|b| !matches!(b, b' ' | b'\r'));
                    if !matches!(content, None | Some(b'#')) {
                        return None;
                    }
                }
            }
            Lead::Tab => return None,
            Lead::Key => starts.push((start, line)),
        }
    }
    let ends = starts.iter().skip(1).map(|(s, _)| *s).chain([bytes.len()]);
    let sections: Vec<Section> = starts
        .iter()
        .zip(ends)
        .map(|(&(start, line), end)| Section {
            range: start..end,
            line,
        })
        .collect();
    (!sections.is_empty()).then_some(sections)
}

/// Moves positions by whole lines (sections start at a line's start, so columns stay).
struct Shift {
    bytes: i64,
    lines: i64,
}

impl Shift {
    fn pos(&self, p: Pos) -> Pos {
        let moved = |n: usize, by: i64| usize::try_from(n as i64 + by).unwrap_or(0);
        Pos::new(
            moved(p.offset(), self.bytes),
            moved(p.line(), self.lines),
            p.col(),
        )
    }

    fn span(&self, s: Span) -> Span {
        Span {
            start: self.pos(s.start),
            end: self.pos(s.end),
        }
    }

    /// [`Self::node`], when every node of `node` lies inside `range` before the move (else
    /// `false`, the node half moved).
    fn node_within(&self, node: &mut Node, range: &Range<usize>) -> bool {
        let inside = |p: Pos| p.offset() >= range.start && p.offset() <= range.end;
        if !inside(node.span.start) || !inside(node.span.end) {
            return false;
        }
        node.span = self.span(node.span);
        match &mut node.value {
            Value::Seq(items) => items.iter_mut().all(|n| self.node_within(n, range)),
            Value::Map(map) => map
                .pairs_mut()
                .all(|(k, v)| self.node_within(k, range) && self.node_within(v, range)),
            _ => true,
        }
    }

    /// Moves every node of `node` (no range to stay inside: every position is).
    fn node(&self, node: &mut Node) {
        self.node_within(node, &(0..usize::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{DuplicateKeys, build};
    use std::sync::Arc;

    fn opts() -> LoadOptions {
        LoadOptions {
            duplicate_keys: DuplicateKeys::Record,
            ..LoadOptions::default()
        }
    }

    fn whole(text: &str) -> Node {
        let (parsed, findings) = build(Path::new("f.yaml"), text, &opts());
        assert!(findings.is_empty(), "{findings:?}");
        parsed.expect("the test's text parses")
    }

    fn doc(text: &str) -> Document {
        Document {
            path: "f.yaml".into(),
            text: Arc::from(text),
            root: whole(text).into(),
        }
    }

    /// The line-split scan [`top_level_sections`] replaced (in infx-changelog), kept as an
    /// oracle for the SIMD one.
    fn sections_by_split(text: &str) -> Vec<(&str, Range<usize>)> {
        let mut out: Vec<(&str, Range<usize>)> = Vec::new();
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            let start = offset;
            offset += line.len();
            let first = line.as_bytes().first().copied().unwrap_or(b' ');
            if matches!(first, b' ' | b'\t' | b'#' | b'-' | b'\n' | b'\r')
                || line.starts_with("...")
            {
                continue;
            }
            let Some(colon) = line.find(':') else {
                continue;
            };
            let key = line[..colon].trim().trim_matches(|c| c == '"' || c == '\'');
            if let Some(last) = out.last_mut() {
                last.1.end = start;
            }
            out.push((key, start..text.len()));
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn top_level_sections_match_the_split_scan(text in "([a-c&# :\"'.\t\r-]|\n|é){0,80}") {
            proptest::prop_assert_eq!(top_level_sections(&text), sections_by_split(&text));
        }
    }

    #[test]
    fn sections_split_at_top_level_keys() {
        let text = "# header\na-key:\n  image: x\n\n\"b-key\":\n  rows:\n  - {tp: 1}\nc: {x: 1}\n";
        let s = top_level_sections(text);
        let keys: Vec<&str> = s.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["a-key", "b-key", "c"]);
        assert_eq!(&text[s[0].1.clone()], "a-key:\n  image: x\n\n");
        assert_eq!(&text[s[1].1.clone()], "\"b-key\":\n  rows:\n  - {tp: 1}\n");
        assert_eq!(&text[s[2].1.clone()], "c: {x: 1}\n");
    }

    /// Values, spans and styles alike, all the way down (`Node`'s `==` ignores spans).
    fn assert_same(a: &Node, b: &Node, at: &str) {
        assert_eq!(a.span, b.span, "span at {at}");
        assert_eq!(a.style, b.style, "style at {at}");
        match (&a.value, &b.value) {
            (Value::Seq(x), Value::Seq(y)) => {
                assert_eq!(x.len(), y.len(), "length at {at}");
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    assert_same(p, q, &format!("{at}[{i}]"));
                }
            }
            (Value::Map(x), Value::Map(y)) => {
                let (xs, ys): (Vec<_>, Vec<_>) =
                    (x.iter_nodes().collect(), y.iter_nodes().collect());
                assert_eq!(xs.len(), ys.len(), "length at {at}");
                for ((k1, v1), (k2, v2)) in xs.into_iter().zip(ys) {
                    let key = format!("{at}.{:?}", k1.value);
                    assert_same(k1, k2, &key);
                    assert_same(v1, v2, &key);
                    // Looked up by key, both find it (the index follows the moved pairs).
                    assert_eq!(
                        y.get_entry(as_str(k1)).is_some(),
                        x.get_entry(as_str(k1)).is_some()
                    );
                }
            }
            (x, y) => assert_eq!(x, y, "value at {at}"),
        }
    }

    fn as_str(n: &Node) -> &str {
        match &n.value {
            Value::Str(s) => s,
            _ => "",
        }
    }

    /// The reparse of `new` from `old`'s parse, checked against a whole parse of `new`: the
    /// same tree, or none when the whole parse fails or has findings.
    fn check(old: &str, new: &str) -> bool {
        let reparsed = reparse_sections(Path::new("f.yaml"), new, &doc(old), &opts());
        let owned = reparse_sections_owned(Path::new("f.yaml"), new, doc(old), &opts());
        assert_eq!(
            reparsed.is_some(),
            owned.is_some(),
            "borrowed and owned agree"
        );
        let (parsed, findings) = build(Path::new("f.yaml"), new, &opts());
        match (reparsed, parsed) {
            (Some(root), Ok(whole)) if findings.is_empty() => {
                assert_same(&root, &whole, "root");
                if let Some(owned) = owned {
                    assert_same(&owned, &whole, "root (owned)");
                }
                true
            }
            (Some(_), _) => panic!("a reparse where the whole parse fails or finds:\n{new}"),
            (None, _) => false,
        }
    }

    const OLD: &str = "# a comment\n\nalpha:\n  tp: 4\n  conc: [1, 2]\n# between\nbeta:\n- x\n- y: 1\ngamma: |\n  text\n\n  more\ndelta: {a: 1, b: [2, 3]}\n";

    #[test]
    fn an_edited_section_is_parsed_and_the_rest_moved() {
        // One value edited, lines added above others, a section removed, one added.
        assert!(check(OLD, &OLD.replace("tp: 4", "tp: 8")));
        assert!(check(
            OLD,
            &OLD.replace("tp: 4\n", "tp: 4\n  ep: 2\n  extra: [a,\n    b]\n")
        ));
        assert!(check(OLD, &OLD.replace("beta:\n- x\n- y: 1\n", "")));
        assert!(check(OLD, &format!("{OLD}epsilon: 5\n")));
        assert!(check(OLD, &format!("zeta:\n  k: v\n{OLD}")));
        assert!(check(OLD, OLD));
        assert!(check(OLD, &OLD.replace("\n", "\r\n")));
        // Sections moved around: the root's start and end follow the sections.
        let swapped = OLD.replace("alpha:\n  tp: 4\n  conc: [1, 2]\n", "")
            + "alpha:\n  tp: 4\n  conc: [1, 2]\n";
        check(OLD, &swapped);
    }

    #[test]
    fn what_cannot_be_shown_the_same_is_parsed_whole() {
        // An anchor in one section and its alias in another.
        let aliased = "a: &x [1, 2]\nb: *x\n";
        assert!(!check(aliased, &aliased.replace("[1, 2]", "[1, 3]")));
        assert!(!check("a: 1\nb: 2\n", "a: 1\nb: &y 2\nc: *y\n"));
        // A merge key whose source section changed.
        let merged = "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n";
        assert!(!check(merged, &merged.replace("x: 1", "x: 5")));
        // A key written twice at the top.
        assert!(!check("a: 1\nb: 2\n", "a: 1\nb: 2\na: 3\n"));
        // A document marker, a directive, a tab, a lone carriage return, a flow line at 0.
        assert!(!check("a: 1\n", "---\na: 1\n"));
        assert!(!check("a: 1\n", "%YAML 1.1\n---\na: 1\n"));
        assert!(!check("a: 1\n", "a: 1\n\tb: 2\n"));
        assert!(!check("a: 1\nb: 2\n", "a: 1\rb: 2\n"));
        for brk in ['\u{85}', '\u{2028}', '\u{2029}'] {
            assert!(!check("a: 1\nb: 2\n", &format!("a: 1{brk}b: 2\n")));
        }
        assert!(!check("a: 1\n", "a: [1,\n2]\n"));
        // Not a mapping at the top; a complex key.
        assert!(!check("a: 1\n", "- 1\n- 2\n"));
        assert!(!check("a: 1\n", "? a\n: 1\n"));
    }

    #[test]
    fn a_master_config_reparsed_after_each_kind_of_edit_is_the_whole_parse() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/corpus/inferencex-aug2026/configs/nvidia-master.yaml");
        let Ok(old) = std::fs::read_to_string(&path) else {
            eprintln!("SKIPPED: {} is absent", path.display());
            return;
        };
        let first = old.find("conc-list: [").expect("a concurrency list");
        let edits = [
            old.replacen("conc-list: [", "conc-list: [512, ", 1),
            old.replacen("conc-list: [", "conc-list: [\n          512, ", 1),
            format!(
                "{}{}",
                &old[..first],
                &old[first..].replacen('\n', "\n      # note\n", 1)
            ),
            old.clone() + "\nnew-config:\n  image: x\n",
        ];
        for (i, new) in edits.iter().enumerate() {
            assert!(
                check(&old, new),
                "edit {i}: the sections were not taken over"
            );
        }
        // Lines deleted, doubled, or a key inserted at some indentation, at positions spread
        // over the file: each reparse is the whole parse or none.
        let mut taken = 0;
        for (_, new) in spread_edits(&old, 0x9e37_79b9_7f4a_7c15, 40, 9) {
            taken += usize::from(check(&old, &new));
        }
        assert!(taken >= 8, "only {taken} of 40 edits reparsed by sections");
    }

    /// `rounds` edits of `text`, each alone: a line deleted, a line doubled, or a key inserted
    /// with up to `indent - 1` spaces, in turn, at positions an xorshift from `seed` spreads
    /// over the file; with the round's number.
    fn spread_edits(
        text: &str,
        mut seed: u64,
        rounds: usize,
        indent: u64,
    ) -> impl Iterator<Item = (usize, String)> + '_ {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        (0..rounds).map(move |round| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed % lines.len().max(1) as u64) as usize;
            let mut new: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            match round % 3 {
                0 => {
                    new.remove(at);
                }
                1 => new.insert(at, lines[at].to_string()),
                _ => new.insert(
                    at,
                    format!("{}k{round}: 1\n", " ".repeat((seed % indent) as usize)),
                ),
            }
            (round, new.concat())
        })
    }

    /// `text` cut into `n` pieces, each parsed alone and joined, checked against a whole parse:
    /// the same tree (spans and styles too), or no join when the whole parse fails or finds.
    fn check_cut(text: &str, n: usize) -> bool {
        let path = Path::new("f.yaml");
        let joined = cut(text, n).and_then(|pieces| {
            let parts = pieces.iter().map(|p| parse_piece(path, text, p, &opts()));
            join_pieces(parts.collect::<Option<Vec<_>>>()?)
        });
        let (parsed, findings) = build(path, text, &opts());
        match (joined, parsed) {
            (Some(root), Ok(whole)) if findings.is_empty() => {
                assert_same(&root, &whole, "root");
                true
            }
            (Some(_), _) => panic!("a joined parse where the whole parse fails or finds:\n{text}"),
            (None, _) => false,
        }
    }

    #[test]
    fn a_file_cut_in_pieces_parses_as_a_whole() {
        for n in 2..6 {
            assert!(check_cut(OLD, n), "{n} pieces");
            assert!(check_cut(&OLD.replace('\n', "\r\n"), n));
        }
        // More pieces asked for than there are sections: one a section.
        assert!(check_cut("a: 1\nb: [2,\n  3]\n", 5));
        // Anchors and aliases inside one section stand alone no more than across two (the
        // alias budget is the file's); a comment naming them is no anchor.
        assert!(!check_cut("a: &x [1]\nb: 2\nc: *x\n", 2));
        assert!(!check_cut("a: &x [1]\n  # pad\nb: [*x]\nc: 3\n", 3));
        assert!(check_cut("a: 1  # &x and *y\nb: '*z'\nc: \"&w\"\n", 3));
        // A key in two pieces, a key twice in one, a second document, a flow line at 0, a
        // merge of an inline mapping at the top, a complex key, not a mapping.
        assert!(!check_cut("a: 1\nb: 2\na: 3\n", 3));
        assert!(!check_cut("a: {x: 1, x: 2}\nb: 2\n", 2));
        assert!(!check_cut("a: 1\nb: 2\n---\nc: 3\n", 2));
        assert!(!check_cut("a: [1,\n2]\nb: 2\n", 2));
        assert!(!check_cut("a: 1\n<<: {a: 2, z: 3}\nb: 2\n", 3));
        assert!(!check_cut("a: 1\n? b\n: 2\n", 2));
        assert!(!check_cut("- 1\n- 2\n", 2));
        // One section: nothing to cut.
        assert!(!check_cut("a:\n  b: 1\n  c: 2\n", 2));
    }

    #[test]
    fn the_master_configs_cut_in_pieces_parse_as_a_whole() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/corpus/inferencex-aug2026/configs");
        for name in ["nvidia-master.yaml", "amd-master.yaml", "runners.yaml"] {
            let Ok(text) = std::fs::read_to_string(dir.join(name)) else {
                eprintln!("SKIPPED: {} is absent", dir.join(name).display());
                return;
            };
            for n in [2, 7] {
                assert!(check_cut(&text, n), "{name} in {n} pieces");
            }
            // Lines deleted, doubled or a key inserted at spread positions: each join is the
            // whole parse, or none.
            for (round, new) in spread_edits(&text, 0x2545_f491_4f6c_dd1d, 12, 5) {
                check_cut(&new, 2 + round % 4);
            }
        }
    }
}
