//! PyYAML's reader and scanner rules for characters, which the YAML 1.2 parser underneath is
//! laxer about (docs/yaml.md, "Characters and tabs"):
//!
//! - the reader refuses every character outside its printable set before it scans anything
//!   (C0 controls but tab, LF and CR; DEL; C1 controls but NEL; U+FFFE and U+FFFF);
//! - NEL, LS and PS are line breaks to PyYAML (YAML 1.1), plain characters to the parser;
//! - the scanner skips only spaces between tokens, so a tab is acceptable only inside a quoted
//!   scalar, inside a block scalar's content, or inside a comment.
//!
//! One pass over the bytes finds what a text holds; everything else runs only for the rare
//! text that holds a tab or a YAML 1.1 line break (docs/yaml.md, "Characters and tabs").

/// What one pass over a text found.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Survey {
    /// The first character PyYAML's reader refuses: (byte offset, character).
    pub refused: Option<(usize, char)>,
    /// The text holds a tab.
    pub tabs: bool,
    /// The text holds NEL, LS or PS (line breaks to YAML 1.1).
    pub breaks: bool,
    /// The text holds U+FEFF after its first character: content to PyYAML, an error to the
    /// parser.
    pub inner_bom: bool,
}

impl Survey {
    /// Whether the loader's fast path may read the text: none of the characters only the
    /// parser's passes handle (tabs, YAML 1.1 breaks, an inner byte order mark; docs/yaml.md,
    /// "The fast path"). A refused character is the caller's error before either reads.
    pub(crate) fn fast_readable(&self) -> bool {
        !(self.tabs || self.breaks || self.inner_bom)
    }
}

/// Bytes that need a second look: controls, DEL, and the lead bytes of U+0080–U+00BF
/// (C1 controls and NEL), U+2000–U+2FFF (LS, PS) and U+F000–U+FFFF (U+FFFE, U+FFFF).
const fn interesting() -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = true;
        b += 1;
    }
    t[0x7f] = true;
    t[0xc2] = true;
    t[0xe2] = true;
    t[0xef] = true;
    t[b'\n' as usize] = false;
    t[b'\r' as usize] = false;
    t
}

static INTERESTING: [bool; 256] = interesting();

/// Surveys `text` in one pass (stops at the first refused character: the reader stops there).
pub(crate) fn survey(text: &str) -> Survey {
    let bytes = text.as_bytes();
    let mut s = Survey::default();
    let mut i = 0;
    // Blocks of plain ASCII (printable, line breaks) are passed over whole: the test
    // vectorizes, and nearly every block of a real file is plain (docs/performance.md).
    const BLOCK: usize = 32;
    let mut plain_to = 0;
    while i < bytes.len() {
        if i >= plain_to
            && let Some(block) = bytes.get(i..i + BLOCK)
        {
            let odd = block.iter().fold(false, |odd, &b| {
                odd | ((b < 0x20 && b != b'\n' && b != b'\r') | (b >= 0x7f))
            });
            if !odd {
                i += BLOCK;
                continue;
            }
            plain_to = i + BLOCK;
        }
        let b = bytes[i];
        if !INTERESTING[b as usize] {
            i += 1;
            continue;
        }
        match b {
            b'\t' => s.tabs = true,
            0xc2 | 0xe2 | 0xef => {
                // A multi-byte character starts here (the text is valid UTF-8).
                let c = text[i..].chars().next().unwrap_or('\0');
                match c {
                    '\u{85}' | '\u{2028}' | '\u{2029}' => s.breaks = true,
                    '\u{feff}' if i > 0 => s.inner_bom = true,
                    '\u{80}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}' => {
                        s.refused = Some((i, c));
                        return s;
                    }
                    _ => {}
                }
                i += c.len_utf8();
                continue;
            }
            _ => {
                s.refused = Some((i, b as char));
                return s;
            }
        }
        i += 1;
    }
    s
}

/// PyYAML's reader error for `c` (its message, word for word).
pub(crate) fn refused_message(c: char) -> String {
    format!(
        "unacceptable character #x{:04x}: special characters are not allowed",
        c as u32
    )
}

/// Stands for U+FEFF inside the text while the parser reads it (a noncharacter: no tree
/// writes it; a text that does keeps its U+FEFF and the parser's error).
pub(crate) const BOM_STAND_IN: char = '\u{fdd0}';

/// The text the parser reads: each NEL, LS and PS as [`lex`] says to read it, and U+FEFF after
/// the first character as [`BOM_STAND_IN`] when `bom`, one character for one, so the parser's
/// character indices still name the same characters of the source.
pub(crate) fn parser_text(text: &str, breaks: &[(usize, BreakAs)], bom: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut next = breaks.iter().peekable();
    for (i, c) in text.char_indices() {
        let read = match c {
            '\u{85}' | '\u{2028}' | '\u{2029}' => {
                let how = next
                    .next_if(|&&(at, _)| at == i)
                    .map_or(BreakAs::Newline, |&(_, h)| h);
                match how {
                    BreakAs::Newline => '\n',
                    BreakAs::Space => ' ',
                    BreakAs::Keep => c,
                }
            }
            '\u{feff}' if bom && i > 0 => BOM_STAND_IN,
            c => c,
        };
        out.push(read);
    }
    out
}

/// Python's `repr` of a one-character string, as PyYAML's messages show a character: quoted,
/// with characters Python does not print (controls, separators, format characters,
/// noncharacters) escaped.
pub(crate) fn py_repr(c: char) -> String {
    let n = c as u32;
    let printable = match n {
        0x20..=0x7e => true,
        0..=0x1f | 0x7f..=0xa0 | 0xad => false,
        0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x206f | 0x3000 | 0xfeff => false,
        0xd800..=0xf8ff | 0xfdd0..=0xfdef | 0xfff9..=0xfffb | 0xfffe | 0xffff => false,
        _ => true,
    };
    match c {
        '\'' => "\"'\"".into(),
        '\\' => "'\\\\'".into(),
        '\t' => "'\\t'".into(),
        '\n' => "'\\n'".into(),
        '\r' => "'\\r'".into(),
        _ if printable => format!("'{c}'"),
        _ if n < 0x100 => format!("'\\x{n:02x}'"),
        _ if n < 0x10000 => format!("'\\u{n:04x}'"),
        _ => format!("'\\U{n:08x}'"),
    }
}

/// Whether `c` ends a line for PyYAML.
pub(crate) fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Where a tab breaks PyYAML's scanner, and how it says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TabError {
    pub offset: usize,
    /// PyYAML's context (`while scanning …`) and where it started (`None`: the tab itself).
    pub context: (&'static str, Option<usize>),
    pub problem: &'static str,
    /// A scalar opened the tab's line and no `:` came before the tab.
    pub line_key: bool,
}

impl TabError {
    /// PyYAML's stale simple key error at the tab rather than its tab rule.
    pub(crate) fn is_simple_key(&self) -> bool {
        self.context.0 == "while scanning a simple key"
    }
}

const NEXT_TOKEN: (&str, Option<usize>) = ("while scanning for the next token", None);
const CANNOT_START: &str = "found character '\\t' that cannot start any token";

/// How the parser reads one NEL, LS or PS (see [`Lexed::breaks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BreakAs {
    /// A line break (block context, comments, block scalars).
    Newline,
    /// A space (in a flow collection next to a separator; NEL inside a flow or quoted scalar,
    /// which PyYAML folds like `\n`).
    Space,
    /// Itself (LS or PS inside a quoted or flow scalar, which PyYAML keeps).
    Keep,
}

/// What the lexical pass found: the first tab PyYAML refuses, and how each YAML 1.1 line
/// break is to be read (byte offset, reading), in text order.
#[derive(Debug, Default)]
pub(crate) struct Lexed {
    pub bad_tab: Option<TabError>,
    pub breaks: Vec<(usize, BreakAs)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Normal,
    Single,
    Double,
    Comment,
    /// A block scalar's header line, after its indicator (at byte `start`); `rest`: something
    /// (spaces) came after the indicators; `parent`: the indentation its content must exceed.
    Header {
        start: usize,
        rest: bool,
        parent: usize,
    },
    /// A comment on a block scalar's header line.
    HeaderComment {
        parent: usize,
    },
    /// A block scalar's content lines; `indent`: the content's (unknown before its first line).
    Block {
        parent: usize,
        indent: Option<usize>,
    },
    /// The rest of a block scalar's content line.
    BlockLine {
        parent: usize,
        indent: usize,
    },
}

/// A quoted scalar that ends at `chars[k - 1]` and is followed by `: ` is a key, which PyYAML
/// reads on one line only: its YAML 1.1 breaks are line breaks (and the key an error, as in
/// PyYAML).
fn key_breaks(chars: &[(usize, char)], k: usize, breaks: &mut [(usize, BreakAs)]) {
    if breaks.is_empty() {
        return;
    }
    let mut j = k;
    while chars.get(j).is_some_and(|&(_, c)| c == ' ') {
        j += 1;
    }
    let colon = chars.get(j).is_some_and(|&(_, c)| c == ':')
        && chars
            .get(j + 1)
            .is_none_or(|&(_, c)| c == ' ' || c == '\t' || is_break(c));
    if colon {
        for b in breaks {
            b.1 = BreakAs::Newline;
        }
    }
}

/// `c` (then `next`) starts a plain scalar: not an indicator, or `-`, `?`, `:` followed by a
/// non-space (PyYAML's `check_plain`).
fn starts_plain(c: char, next: Option<char>, flow: usize) -> bool {
    match c {
        '-' | '?' | ':' => next.is_some_and(|n| {
            !(n == ' ' || n == '\t' || is_break(n) || (flow > 0 && is_flow_indicator(n)))
        }),
        // NBSP and other Unicode spaces are ordinary characters to PyYAML.
        _ => !"#'\"[]{},|>&*!%@` \t".contains(c) && !is_break(c),
    }
}

fn is_flow_indicator(c: char) -> bool {
    matches!(c, ',' | '[' | ']' | '{' | '}')
}

/// A small lexer that follows PyYAML's scanner only as far as its character rules need:
/// quoted scalars, comments, flow collections and block scalars (by indentation). It does not
/// judge anything else (docs/yaml.md, "Characters and tabs").
pub(crate) fn lex(text: &str) -> Lexed {
    let mut out = Lexed::default();
    let mut mode = Mode::Normal;
    let mut flow = 0usize;
    // Per line: leading spaces so far, whether only spaces came yet, the column of the node the
    // line starts (after `- ` indicators), whether a `key:` came on it, and the column.
    let mut lead = 0usize;
    let mut at_start = true;
    let mut node_col = 0usize;
    let mut after_colon = false;
    let mut col = 0usize;
    let mut prev = '\n';
    // Where the breaks of the open quoted scalar start in `out.breaks`.
    let mut quoted_from = 0usize;
    // A plain scalar is open on this line; the line holds a token; its first token is a
    // plain scalar (a key candidate).
    let mut in_plain = false;
    let mut line_content = false;
    let mut line_plain = false;
    // Columns at which lines began a `key:`, and whether the last line with a token began a
    // plain scalar at such a column without its `:` (PyYAML's required simple key, which goes
    // stale at the next line's first token: a tab there is "could not find expected ':'").
    let mut key_cols: Vec<usize> = Vec::new();
    let mut pending_key = false;
    // The pending key's column, and whether this line continues its (plain) scalar.
    let mut pending_col = 0usize;
    let mut continuation = false;
    // Columns of `- ` entries; a flow collection opened as a line's first token at a key or
    // entry column (a required key) that has not closed on its line; and whether a line
    // ended since (the key is stale at the next token).
    let mut seq_cols: Vec<usize> = Vec::new();
    let mut flow_key = false;
    let mut flow_key_stale = false;
    // The line's first token is a quoted scalar.
    let mut line_quoted = false;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut k = 0;
    // PyYAML has already failed (a required key went stale): later tabs are never reached.
    let mut stopped = false;
    let bad = |out: &mut Lexed, stopped: bool, offset: usize, context, problem| {
        if out.bad_tab.is_none() && !stopped {
            out.bad_tab = Some(TabError {
                offset,
                context,
                problem,
                line_key: false,
            });
        }
    };
    while k < chars.len() {
        let (i, c) = chars[k];
        let next = chars.get(k + 1).map(|&(_, n)| n);
        k += 1;
        if is_break(c) {
            if matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}') {
                let plain = |x: Option<char>| {
                    x.is_some_and(|x| !x.is_whitespace() && !is_flow_indicator(x) && x != '#')
                };
                let how = match mode {
                    Mode::Single | Mode::Double if c == '\u{85}' => BreakAs::Space,
                    Mode::Single | Mode::Double => BreakAs::Keep,
                    Mode::Normal if flow > 0 => {
                        if c != '\u{85}' && plain(Some(prev)) && plain(next) {
                            BreakAs::Keep
                        } else {
                            BreakAs::Space
                        }
                    }
                    _ => BreakAs::Newline,
                };
                out.breaks.push((i, how));
            }
            // `\r\n` is one break.
            if c == '\r' && next == Some('\n') {
                continue;
            }
            mode = match mode {
                Mode::Comment => Mode::Normal,
                Mode::Header { parent, .. } | Mode::HeaderComment { parent } => Mode::Block {
                    parent,
                    indent: None,
                },
                Mode::BlockLine { parent, indent } => Mode::Block {
                    parent,
                    indent: Some(indent),
                },
                m => m,
            };
            if flow_key && flow > 0 {
                flow_key_stale = true;
            }
            if mode == Mode::Normal && line_content && !continuation {
                if (line_plain || line_quoted) && after_colon && !key_cols.contains(&node_col) {
                    key_cols.push(node_col);
                }
                pending_key = line_plain && !after_colon && key_cols.contains(&node_col);
                pending_col = node_col;
            } else if matches!(mode, Mode::Block { .. }) {
                pending_key = false;
            } else if continuation && after_colon {
                stopped = true;
            }
            continuation = false;
            in_plain = false;
            line_content = false;
            line_plain = false;
            line_quoted = false;
            lead = 0;
            at_start = true;
            node_col = 0;
            after_colon = false;
            col = 0;
            prev = '\n';
            continue;
        }
        // A block scalar's indentation: its lines hold content from its indent on.
        if let Mode::Block { parent, indent } = mode {
            if c == ' ' {
                lead += 1;
                col += 1;
                prev = c;
                continue;
            }
            match indent {
                Some(n) if lead >= n => {
                    mode = Mode::BlockLine { parent, indent: n };
                }
                None if lead > parent => {
                    mode = Mode::BlockLine {
                        parent,
                        indent: lead,
                    };
                }
                // Less indented: the scalar has ended; this line is read as usual.
                _ => mode = Mode::Normal,
            }
        }
        match mode {
            Mode::BlockLine { .. } | Mode::Comment | Mode::HeaderComment { .. } => {}
            Mode::Double => match c {
                // An escaped character (not a line break: that one ends the line above).
                '\\' if next.is_some_and(|n| !is_break(n)) => k += 1,
                '"' => {
                    mode = Mode::Normal;
                    key_breaks(&chars, k, &mut out.breaks[quoted_from..]);
                }
                _ => {}
            },
            Mode::Single => {
                if c == '\'' {
                    if next == Some('\'') {
                        k += 1;
                    } else {
                        mode = Mode::Normal;
                        key_breaks(&chars, k, &mut out.breaks[quoted_from..]);
                    }
                }
            }
            Mode::Header {
                start,
                rest,
                parent,
            } => match c {
                ' ' => {
                    mode = Mode::Header {
                        start,
                        rest: true,
                        parent,
                    }
                }
                '#' if rest => mode = Mode::HeaderComment { parent },
                '\t' => {
                    let problem = if rest {
                        "expected a comment or a line break, but found '\\t'"
                    } else {
                        "expected chomping or indentation indicators, but found '\\t'"
                    };
                    bad(
                        &mut out,
                        stopped,
                        i,
                        ("while scanning a block scalar", Some(start)),
                        problem,
                    );
                }
                _ => {}
            },
            Mode::Block { .. } => {}
            Mode::Normal => {
                let sep_before = prev == '\n' || prev == ' ' || prev == '\t';
                // What ends a plain scalar on its line: `: `, ` #`, a tab, a flow indicator
                // inside a flow collection.
                if in_plain {
                    let value = c == ':'
                        && next.is_none_or(|n| {
                            n == ' '
                                || n == '\t'
                                || is_break(n)
                                || (flow > 0 && is_flow_indicator(n))
                        });
                    if value
                        || (c == '#' && sep_before)
                        || c == '\t'
                        || (flow > 0 && is_flow_indicator(c))
                    {
                        in_plain = false;
                    }
                }
                let token_start = !in_plain && (sep_before || matches!(prev, '[' | '{' | ','));
                match c {
                    ' ' if at_start => lead += 1,
                    '\t' if (pending_key && !after_colon) || flow_key_stale => bad(
                        &mut out,
                        stopped,
                        i,
                        ("while scanning a simple key", None),
                        "could not find expected ':'",
                    ),
                    '\t' => {
                        bad(&mut out, stopped, i, NEXT_TOKEN, CANNOT_START);
                        // A scalar opened the line and no `:` came yet: PyYAML scans on to the
                        // tab before its parser can object to anything on this line.
                        if let Some(t) = out.bad_tab.as_mut().filter(|t| t.offset == i) {
                            t.line_key = (line_plain || line_quoted) && !after_colon;
                        }
                    }
                    '#' if sep_before => mode = Mode::Comment,
                    _ if in_plain => {}
                    '"' if token_start => {
                        mode = Mode::Double;
                        quoted_from = out.breaks.len();
                        line_quoted |= flow == 0 && !line_content;
                    }
                    '\'' if token_start => {
                        mode = Mode::Single;
                        quoted_from = out.breaks.len();
                        line_quoted |= flow == 0 && !line_content;
                    }
                    '[' | '{' if token_start || flow > 0 => {
                        if flow == 0 {
                            flow_key = !line_content
                                && (key_cols.contains(&col) || seq_cols.contains(&col));
                            flow_key_stale = false;
                        }
                        flow += 1;
                    }
                    ']' | '}' if flow > 0 => {
                        flow -= 1;
                        if flow == 0 {
                            flow_key = false;
                            flow_key_stale = false;
                        }
                    }
                    ':' if next.is_none_or(|n| n == ' ' || n == '\t' || is_break(n)) => {
                        after_colon = true;
                    }
                    '|' | '>' if flow == 0 && token_start => {
                        // Indicators, then a space, tab, comment or the line's end.
                        let mut j = k;
                        while chars
                            .get(j)
                            .is_some_and(|&(_, x)| matches!(x, '+' | '-' | '0'..='9'))
                        {
                            j += 1;
                        }
                        let ends = chars
                            .get(j)
                            .is_none_or(|&(_, x)| x == ' ' || x == '\t' || is_break(x));
                        if ends {
                            col += j - k;
                            k = j;
                            let parent = if after_colon { node_col } else { lead };
                            mode = Mode::Header {
                                start: i,
                                rest: false,
                                parent,
                            };
                        }
                    }
                    _ if token_start && starts_plain(c, next, flow) => {
                        in_plain = true;
                        if flow == 0 && !line_content {
                            line_plain = true;
                        }
                    }
                    _ => {}
                }
                // A token on a later line than a required flow key's: PyYAML's "could not
                // find expected ':'" here.
                if flow_key_stale && flow > 0 && c != ' ' && c != '\t' && mode != Mode::Comment {
                    stopped = true;
                }
                if at_start && c != ' ' {
                    at_start = false;
                    node_col = col;
                    // The line's first token after a key still waiting for its `:`: a plain
                    // scalar goes on over a deeper line; else PyYAML's "could not find
                    // expected ':'" here, before any tab further on.
                    if pending_key && c != '\t' && mode != Mode::Comment {
                        if flow == 0 && col > pending_col && c != '#' {
                            continuation = true;
                        } else {
                            stopped = true;
                        }
                    }
                }
                if c != ' ' && c != '\t' && mode != Mode::Comment {
                    line_content = true;
                }
                // `- ` items: the node starts after them.
                if c == '-' && next == Some(' ') && node_col == col {
                    if !seq_cols.contains(&col) {
                        seq_cols.push(col);
                    }
                    node_col = col + 2;
                }
            }
        }
        col += 1;
        prev = c;
    }
    out
}
#[cfg(test)]
mod tests {

    /// [`survey`] character by character, without passing over plain blocks.
    fn survey_by_chars(text: &str) -> (Option<(usize, char)>, bool, bool, bool) {
        let (mut tabs, mut breaks, mut bom) = (false, false, false);
        for (i, c) in text.char_indices() {
            match c {
                '\t' => tabs = true,
                '\n' | '\r' => {}
                '\u{85}' | '\u{2028}' | '\u{2029}' => breaks = true,
                '\u{feff}' if i > 0 => bom = true,
                '\u{feff}' => {}
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    return (Some((i, c)), tabs, breaks, bom);
                }
                '\u{80}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}' => {
                    return (Some((i, c)), tabs, breaks, bom);
                }
                _ => {}
            }
        }
        (None, tabs, breaks, bom)
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        #[test]
        fn the_survey_passes_over_plain_blocks_only(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    "[ -~\n]{0,80}",
                    proptest::sample::select(vec![
                        "\t", "\r", "\u{7f}", "\u{1b}", "\u{85}", "\u{2028}", "\u{feff}",
                        "\u{9f}", "\u{fffe}", "é", "日本", "\u{a0}",
                    ]).prop_map(str::to_string),
                ],
                0..12,
            )
        ) {
            let text: String = parts.concat();
            let s = survey(&text);
            proptest::prop_assert_eq!(
                (s.refused, s.tabs, s.breaks, s.inner_bom),
                survey_by_chars(&text),
                "{:?}", text
            );
        }
    }
    use super::*;

    #[test]
    fn survey_finds_what_the_reader_refuses() {
        assert!(survey("a: b\n").refused.is_none());
        assert_eq!(survey("a: \u{7f}").refused, Some((3, '\u{7f}')));
        assert_eq!(survey("é\u{0b}").refused, Some((2, '\u{0b}')));
        assert_eq!(survey("x\u{9f}").refused, Some((1, '\u{9f}')));
        assert_eq!(survey("x\u{ffff}").refused, Some((1, '\u{ffff}')));
        let s = survey("a\u{85}\t\u{2028}\u{a0}\u{fffd}");
        assert!(s.refused.is_none() && s.tabs && s.breaks);
        assert!(!survey("\u{2027}\u{feff}").breaks);
    }

    fn tab_at(text: &str) -> Option<usize> {
        lex(text).bad_tab.map(|e| e.offset)
    }

    #[test]
    fn tabs_in_comments_quotes_and_block_content_are_content() {
        assert_eq!(tab_at("a: 1 #\tx\n"), None);
        assert_eq!(tab_at("a: \"\t\"\n"), None);
        assert_eq!(tab_at("a: 'it''s\t'\n"), None);
        assert_eq!(tab_at("a: |\n  x\ty\n"), None);
        assert_eq!(tab_at("- |\n  \tx\n"), None);
        assert_eq!(tab_at("a: b\t# c\n"), Some(4));
        assert_eq!(tab_at("a:\tb\n"), Some(2));
        assert_eq!(tab_at("a: |\n  x\n\ty\n"), Some(9));
        assert_eq!(tab_at("a: it's\tb\n"), Some(7));
        assert_eq!(tab_at("a: [\"x\ty\",\tz]\n"), Some(10));
    }

    #[test]
    fn breaks_are_read_by_context() {
        let b = |t: &str| {
            lex(t)
                .breaks
                .into_iter()
                .map(|(_, h)| h)
                .collect::<Vec<_>>()
        };
        assert_eq!(b("a: x\u{2028}y"), [BreakAs::Newline]);
        assert_eq!(b("a: \"x\u{2028}y\""), [BreakAs::Keep]);
        assert_eq!(b("a: \"x\u{85}y\""), [BreakAs::Space]);
        assert_eq!(
            b("a: [x\u{2028}y, \u{2029}z]"),
            [BreakAs::Keep, BreakAs::Space]
        );
        assert_eq!(b("# c\u{2028}a: 1"), [BreakAs::Newline]);
    }
}
