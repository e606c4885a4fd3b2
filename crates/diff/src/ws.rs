//! Git's whitespace rules (`core.whitespace`, the `whitespace` attribute) and the per-line checks
//! `git diff --check` applies, reimplemented byte for byte from git's documented behaviour and
//! verified against git 2.47 by the parity tests.

use crate::codes;
use std::fmt;

/// One kind of whitespace error, named like git's `core.whitespace` classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WsKind {
    /// `blank-at-eol`: whitespace at the end of a line.
    TrailingWhitespace,
    /// `space-before-tab`: a space right before a tab in the indent.
    SpaceBeforeTab,
    /// `indent-with-non-tab`: `tabwidth` or more spaces in the indent.
    IndentWithNonTab,
    /// `tab-in-indent`: a tab in the indent.
    TabInIndent,
    /// `blank-at-eof`: the change adds blank lines at the end of the file.
    BlankAtEof,
    /// A leftover merge conflict marker (`<<<<<<<`, `=======`, `>>>>>>>`, `|||||||`).
    ConflictMarker,
}

impl WsKind {
    pub const ALL: [WsKind; 6] = [
        WsKind::TrailingWhitespace,
        WsKind::SpaceBeforeTab,
        WsKind::IndentWithNonTab,
        WsKind::TabInIndent,
        WsKind::BlankAtEof,
        WsKind::ConflictMarker,
    ];

    /// The diagnostic code, `diff/<kind>`.
    pub fn code(self) -> infx_report::Code {
        match self {
            WsKind::TrailingWhitespace => codes::TRAILING_WHITESPACE,
            WsKind::SpaceBeforeTab => codes::SPACE_BEFORE_TAB,
            WsKind::IndentWithNonTab => codes::INDENT_WITH_NON_TAB,
            WsKind::TabInIndent => codes::TAB_IN_INDENT,
            WsKind::BlankAtEof => codes::BLANK_AT_EOF,
            WsKind::ConflictMarker => codes::CONFLICT_MARKER,
        }
    }

    /// The words git prints for this kind (`git diff --check` joins several with ", ").
    pub fn git_message(self) -> &'static str {
        match self {
            WsKind::TrailingWhitespace => "trailing whitespace",
            WsKind::SpaceBeforeTab => "space before tab in indent",
            WsKind::IndentWithNonTab => "indent with spaces",
            WsKind::TabInIndent => "tab in indent",
            WsKind::BlankAtEof => "new blank line at EOF",
            WsKind::ConflictMarker => "leftover conflict marker",
        }
    }

    /// Parses a git message fragment back to a kind (used to read `git diff --check` output).
    pub fn from_git_message(s: &str) -> Option<WsKind> {
        WsKind::ALL.into_iter().find(|k| k.git_message() == s)
    }
}

impl fmt::Display for WsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.git_message())
    }
}

const BLANK_AT_EOL: u32 = 0o100;
const SPACE_BEFORE_TAB: u32 = 0o200;
const INDENT_WITH_NON_TAB: u32 = 0o400;
const CR_AT_EOL: u32 = 0o1000;
const BLANK_AT_EOF: u32 = 0o2000;
const TAB_IN_INDENT: u32 = 0o4000;
const TRAILING_SPACE: u32 = BLANK_AT_EOL | BLANK_AT_EOF;
const TAB_WIDTH_MASK: u32 = 0o77;

/// Rule names in git's order; `loosens` marks `cr-at-eol`, `not_default` marks `tab-in-indent`
/// (both left out when the `whitespace` attribute is simply set).
const RULE_NAMES: [(&str, u32, bool, bool); 7] = [
    ("trailing-space", TRAILING_SPACE, false, false),
    ("space-before-tab", SPACE_BEFORE_TAB, false, false),
    ("indent-with-non-tab", INDENT_WITH_NON_TAB, false, false),
    ("cr-at-eol", CR_AT_EOL, true, false),
    ("blank-at-eol", BLANK_AT_EOL, false, false),
    ("blank-at-eof", BLANK_AT_EOF, false, false),
    ("tab-in-indent", TAB_IN_INDENT, false, true),
];

/// A set of whitespace rules plus the tab width, like git's `ws_rule` word.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct WsRule(u32);

impl Default for WsRule {
    /// Git's default: `trailing-space,space-before-tab,tabwidth=8`.
    fn default() -> Self {
        WsRule(TRAILING_SPACE | SPACE_BEFORE_TAB | 8)
    }
}

impl fmt::Debug for WsRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = RULE_NAMES
            .iter()
            .filter(|(_, bits, _, _)| bits.count_ones() == 1 && self.0 & bits != 0)
            .map(|(n, ..)| *n)
            .collect();
        write!(
            f,
            "WsRule({},tabwidth={})",
            names.join(","),
            self.tab_width()
        )
    }
}

/// Where a `whitespace` attribute left a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WsAttr {
    /// No attribute, or `!whitespace`: the configured rule applies.
    Unspecified,
    /// `whitespace`: every error class except `cr-at-eol` and `tab-in-indent`.
    Set,
    /// `-whitespace`: no checks.
    Unset,
    /// `whitespace=<rules>`: parsed from git's default, not from `core.whitespace`.
    Value(String),
}

impl WsRule {
    /// Parses a `core.whitespace` / attribute value the way git does: comma-separated class
    /// names (any prefix of a name matches it), `-name` removes, `tabwidth=N` (0 < N < 64)
    /// sets the tab width; parsing stops at an empty token. Git refuses the combination of
    /// `tab-in-indent` and `indent-with-non-tab` (fatal), so do we.
    pub fn parse(value: &str) -> Result<WsRule, String> {
        let mut rule = WsRule::default().0;
        let mut s = value.as_bytes();
        loop {
            let skip = s
                .iter()
                .take_while(|b| matches!(b, b',' | b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            s = &s[skip..];
            let end = s.iter().position(|&b| b == b',').unwrap_or(s.len());
            let mut tok = &s[..end];
            let negated = tok.first() == Some(&b'-');
            if negated {
                tok = &tok[1..];
            }
            if tok.is_empty() {
                break;
            }
            if let Some((_, bits, _, _)) = RULE_NAMES
                .iter()
                .find(|(name, ..)| name.as_bytes().starts_with(tok))
            {
                if negated {
                    rule &= !bits;
                } else {
                    rule |= bits;
                }
            }
            if let Some(arg) = tok.strip_prefix(b"tabwidth=") {
                let width = atoi(arg);
                if width > 0 && width < 64 {
                    rule = (rule & !TAB_WIDTH_MASK) | width as u32;
                }
                // Out of range: git warns and keeps the previous width.
            }
            if end == s.len() {
                break;
            }
            s = &s[end..];
        }
        if rule & TAB_IN_INDENT != 0 && rule & INDENT_WITH_NON_TAB != 0 {
            return Err(format!(
                "whitespace rule {value:?} enforces both tab-in-indent and indent-with-non-tab"
            ));
        }
        Ok(WsRule(rule))
    }

    /// The rule for one path: `config` is the parsed `core.whitespace` (or the default).
    pub fn for_attr(config: WsRule, attr: &WsAttr) -> Result<WsRule, String> {
        let width = config.0 & TAB_WIDTH_MASK;
        Ok(match attr {
            WsAttr::Unspecified => config,
            WsAttr::Unset => WsRule(width),
            WsAttr::Set => WsRule(
                RULE_NAMES
                    .iter()
                    .filter(|(_, _, loosens, not_default)| !loosens && !not_default)
                    .fold(width, |acc, (_, bits, _, _)| acc | bits),
            ),
            WsAttr::Value(v) => WsRule::parse(v)?,
        })
    }

    pub fn tab_width(self) -> usize {
        (self.0 & TAB_WIDTH_MASK) as usize
    }
    fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }
    /// Whether `blank-at-eof` is checked.
    pub fn blank_at_eof(self) -> bool {
        self.has(BLANK_AT_EOF)
    }
}

/// C `atoi` on bytes: optional leading whitespace and sign, then digits; 0 when none.
fn atoi(s: &[u8]) -> i64 {
    let mut i = s.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut n: i64 = 0;
    for &b in s[i.min(s.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
    {
        n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg { -n } else { n }
}

/// `conflict-marker-size` attribute value → marker size (git: `atoi`, default 7 when <= 0).
pub(crate) fn marker_size(attr_value: Option<&str>) -> usize {
    match attr_value.map(|v| atoi(v.as_bytes())) {
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(7),
        _ => 7,
    }
}

/// Git's `isspace`: space, tab, LF, CR only (not vertical tab or form feed).
pub(crate) fn is_git_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// One whitespace error on a line: the kind and the byte offset of the offending whitespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineError {
    pub kind: WsKind,
    pub byte: usize,
}

/// The whitespace errors git's `ws_check` finds on one added line (`line` without the leading
/// `+`, with or without its newline), in git's message order.
pub(crate) fn check_line(line: &[u8], rule: WsRule) -> Vec<LineError> {
    let mut len = line.len();
    if len > 0 && line[len - 1] == b'\n' {
        len -= 1;
    }
    if rule.has(CR_AT_EOL) && len > 0 && line[len - 1] == b'\r' {
        len -= 1;
    }
    let mut trailing = len;
    if rule.has(BLANK_AT_EOL) {
        while trailing > 0 && is_git_space(line[trailing - 1]) {
            trailing -= 1;
        }
    }
    let trailing_err = (trailing < len).then_some(trailing);

    let mut space_before_tab = None;
    let mut tab_in_indent = None;
    let mut written = 0;
    let mut i = 0;
    while i < trailing {
        match line[i] {
            b' ' => {}
            b'\t' => {
                if rule.has(SPACE_BEFORE_TAB) && written < i {
                    space_before_tab.get_or_insert(written);
                } else if rule.has(TAB_IN_INDENT) {
                    tab_in_indent.get_or_insert(i);
                }
                written = i + 1;
            }
            _ => break,
        }
        i += 1;
    }
    let indent_non_tab =
        (rule.has(INDENT_WITH_NON_TAB) && i - written >= rule.tab_width()).then_some(written);

    [
        (WsKind::TrailingWhitespace, trailing_err),
        (WsKind::SpaceBeforeTab, space_before_tab),
        (WsKind::IndentWithNonTab, indent_non_tab),
        (WsKind::TabInIndent, tab_in_indent),
    ]
    .into_iter()
    .filter_map(|(kind, byte)| Some(LineError { kind, byte: byte? }))
    .collect()
}

/// Git's conflict-marker test on an added line: `marker_size` copies of one of `<=>|`, then a
/// whitespace byte (the newline counts; a last line without one is treated as having it).
pub(crate) fn is_conflict_marker(line: &[u8], marker_size: usize) -> bool {
    let has_nl = line.last() == Some(&b'\n');
    let len = if has_nl { line.len() } else { line.len() + 1 };
    let at = |i: usize| line.get(i).copied().unwrap_or(b'\n');
    if len < marker_size + 1 {
        return false;
    }
    let first = at(0);
    if !matches!(first, b'=' | b'>' | b'<' | b'|') {
        return false;
    }
    (1..marker_size).all(|i| at(i) == first) && is_git_space(at(marker_size))
}

/// Number of lines as git counts them (a last line without newline counts; empty text has 0).
pub(crate) fn count_lines(text: &[u8]) -> usize {
    if text.is_empty() {
        return 0;
    }
    let nl = text.iter().filter(|&&b| b == b'\n').count();
    if text.last() == Some(&b'\n') {
        nl
    } else {
        nl + 1
    }
}

/// Number of whitespace-only lines at the end of `text`, exactly as git's
/// `count_trailing_blank` counts them — including its quirk of never examining a first line
/// shorter than two bytes.
pub(crate) fn count_trailing_blank(text: &[u8]) -> usize {
    if text.is_empty() {
        return 0;
    }
    // Signed indices mirror git's pointer walk, which may step before the buffer.
    let mut ptr = text.len() as isize - 1;
    if text[ptr as usize] == b'\n' {
        ptr -= 1;
    }
    let mut cnt = 0;
    while 0 < ptr {
        let mut prev_eol = ptr;
        while prev_eol >= 0 && text[prev_eol as usize] != b'\n' {
            prev_eol -= 1;
        }
        let line = &text[(prev_eol + 1) as usize..=(ptr as usize)];
        if !line.iter().all(|&b| is_git_space(b)) {
            break;
        }
        cnt += 1;
        ptr = prev_eol - 1;
    }
    cnt
}

/// Git's `blank-at-eof` finding: `Some(line)` when the new text ends in more blank lines than
/// the old one; `line` is where git reports it (first trailing blank line of the new text, as
/// git counts them).
pub(crate) fn blank_at_eof(old: &[u8], new: &[u8]) -> Option<usize> {
    let l1 = count_trailing_blank(old);
    let l2 = count_trailing_blank(new);
    (l2 > l1).then(|| count_lines(new) - l2 + 1)
}

/// Git's binary test on content: a NUL byte in the first 8000 bytes.
pub(crate) fn looks_binary(content: &[u8]) -> bool {
    content.iter().take(8000).any(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(line: &str, rule: WsRule) -> Vec<(WsKind, usize)> {
        check_line(line.as_bytes(), rule)
            .into_iter()
            .map(|e| (e.kind, e.byte))
            .collect()
    }

    #[test]
    fn parse_defaults_prefixes_and_negation() {
        assert_eq!(WsRule::parse("").unwrap(), WsRule::default());
        let r = WsRule::parse("-trail,indent,tabwidth=4").unwrap();
        assert!(!r.has(BLANK_AT_EOL) && !r.has(BLANK_AT_EOF));
        assert!(r.has(INDENT_WITH_NON_TAB) && r.has(SPACE_BEFORE_TAB));
        assert_eq!(r.tab_width(), 4);
        // Out-of-range tab width is ignored; an empty token ends parsing (git's loop).
        assert_eq!(WsRule::parse("tabwidth=64").unwrap().tab_width(), 8);
        assert!(WsRule::parse("-,tab-in-indent").unwrap() == WsRule::default());
        assert!(WsRule::parse("tab-in-indent,indent-with-non-tab").is_err());
        // A token longer than every name matches none.
        assert_eq!(
            WsRule::parse("trailing-space-x,-blank-at-eol").unwrap().0 & BLANK_AT_EOL,
            0
        );
    }

    #[test]
    fn attribute_forms() {
        let cfg = WsRule::parse("tabwidth=4,-space-before-tab").unwrap();
        assert_eq!(WsRule::for_attr(cfg, &WsAttr::Unspecified).unwrap(), cfg);
        assert_eq!(WsRule::for_attr(cfg, &WsAttr::Unset).unwrap(), WsRule(4));
        let set = WsRule::for_attr(cfg, &WsAttr::Set).unwrap();
        assert!(set.has(INDENT_WITH_NON_TAB) && set.has(SPACE_BEFORE_TAB) && !set.has(CR_AT_EOL));
        assert!(!set.has(TAB_IN_INDENT));
        assert_eq!(set.tab_width(), 4);
        let v = WsRule::for_attr(cfg, &WsAttr::Value("cr-at-eol".into())).unwrap();
        assert_eq!(
            v.tab_width(),
            8,
            "a value starts from git's default, not the config"
        );
    }

    #[test]
    fn line_checks() {
        let d = WsRule::default();
        assert_eq!(kinds("a  \n", d), [(WsKind::TrailingWhitespace, 1)]);
        assert_eq!(kinds("a\r\n", d), [(WsKind::TrailingWhitespace, 1)]);
        let cr = WsRule::parse("cr-at-eol").unwrap();
        assert!(kinds("a\r\n", cr).is_empty());
        assert_eq!(kinds("a \r\n", cr), [(WsKind::TrailingWhitespace, 1)]);
        assert_eq!(kinds("  \tx\n", d), [(WsKind::SpaceBeforeTab, 0)]);
        assert_eq!(kinds("\t \tx", d), [(WsKind::SpaceBeforeTab, 1)]);
        assert!(
            kinds("a\x0b\n", d).is_empty(),
            "vertical tab is not whitespace to git"
        );
        // An all-blank line is only trailing whitespace, never an indent error.
        assert_eq!(kinds(" \t \n", d), [(WsKind::TrailingWhitespace, 0)]);
        let iwnt = WsRule::parse("indent-with-non-tab,tabwidth=4").unwrap();
        assert_eq!(kinds("\t    x\n", iwnt), [(WsKind::IndentWithNonTab, 1)]);
        assert!(kinds("\t   x\n", iwnt).is_empty());
        let tii = WsRule::parse("tab-in-indent").unwrap();
        assert_eq!(kinds("  \tx\n", tii), [(WsKind::SpaceBeforeTab, 0)]);
        assert_eq!(
            kinds("\t  \tx\n", tii),
            [(WsKind::SpaceBeforeTab, 1), (WsKind::TabInIndent, 0)]
        );
    }

    #[test]
    fn conflict_markers() {
        for l in [
            "<<<<<<<\n",
            "======= x\n",
            ">>>>>>>",
            "|||||||\t\n",
            "<<<<<<<\r\n",
        ] {
            assert!(is_conflict_marker(l.as_bytes(), 7), "{l:?}");
        }
        for l in ["<<<<<<<<\n", "<<<<<<", "-------\n", "<<<<<<<x\n"] {
            assert!(!is_conflict_marker(l.as_bytes(), 7), "{l:?}");
        }
        assert!(is_conflict_marker(b"<<<< x\n", 4));
        assert_eq!(marker_size(Some("4")), 4);
        assert_eq!(marker_size(Some("0")), 7);
        assert_eq!(marker_size(Some("x")), 7);
        assert_eq!(marker_size(None), 7);
    }

    #[test]
    fn trailing_blank_matches_git_counting() {
        assert_eq!(count_trailing_blank(b"a\n\n\n"), 2);
        assert_eq!(
            count_trailing_blank(b"\n\n\n"),
            1,
            "git never looks at a short first line"
        );
        assert_eq!(count_trailing_blank(b"  \n\n"), 2);
        assert_eq!(count_trailing_blank(b"a\n \t\n"), 1);
        assert_eq!(count_trailing_blank(b"a\n  "), 1);
        assert_eq!(blank_at_eof(b"x\n", b"x\ny\nz\n\n"), Some(4));
        assert_eq!(blank_at_eof(b"", b"\n\n\n"), Some(3));
        assert_eq!(blank_at_eof(b"a\n\n", b"b\n\n"), None);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b""), 0);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_offsets_stay_in_the_line(
            rule in "[-a-z=,0-9 ]{0,40}",
            line in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just(b' '), proptest::strategy::Just(b'\t'),
                proptest::strategy::Just(b'\r'), proptest::strategy::Just(b'<'), 0u8..=255u8
            ], 0..40),
            size in 1usize..12,
        ) {
            let r = WsRule::parse(&rule).unwrap_or_default();
            for e in check_line(&line, r) {
                proptest::prop_assert!(e.byte < line.len());
            }
            let _ = is_conflict_marker(&line, size);
            let blanks = count_trailing_blank(&line);
            proptest::prop_assert!(blanks <= count_lines(&line));
        }
    }
}
