//! Small text helpers with Python semantics where upstream relies on them.

/// Python `str.splitlines()` (no line ends kept).
pub(crate) fn py_splitlines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, after) = match line_break(rest) {
            Some((at, len)) => (&rest[..at], &rest[at + len..]),
            None => (rest, ""),
        };
        rest = after;
        Some(line)
    })
}

/// Where the first of Python's line breaks in `text` is, and its length in bytes. Scanned by
/// byte: every break is an ASCII control or starts with 0xC2 (NEL) or 0xE2 (LS, PS), so other
/// bytes are passed over without decoding characters (the changelog is scanned whole, twice a
/// run; docs/performance.md).
fn line_break(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b >= 0x20 && b != 0xc2 && b != 0xe2 {
            i += 1;
            continue;
        }
        let len = match (b, bytes.get(i + 1), bytes.get(i + 2)) {
            (b'\r', Some(b'\n'), _) => 2,
            (b'\n' | b'\r' | 0x0b | 0x0c | 0x1c | 0x1d | 0x1e, _, _) => 1,
            (0xc2, Some(0x85), _) => 2,
            (0xe2, Some(0x80), Some(0xa8 | 0xa9)) => 3,
            _ => 0,
        };
        if len > 0 {
            return Some((i, len));
        }
        i += 1;
    }
    None
}

/// Python `str.isspace()` per character (Unicode White_Space plus the 0x1c..0x1f separators).
pub(crate) fn py_is_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// `not s.strip()` in Python.
pub(crate) fn py_blank(s: &str) -> bool {
    s.chars().all(py_is_space)
}

/// 1-based line of a byte offset.
pub(crate) fn line_of_offset(raw: &[u8], offset: usize) -> usize {
    raw[..offset.min(raw.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitlines_like_python() {
        let v: Vec<_> = py_splitlines("a\nb\r\nc\rd\u{2028}e").collect();
        assert_eq!(v, ["a", "b", "c", "d", "e"]);
        let v: Vec<_> = py_splitlines("a\n\n").collect();
        assert_eq!(v, ["a", ""]);
        assert!(py_blank(" \t\u{3000}\x1c"));
        assert!(!py_blank(" x"));
        assert_eq!(line_of_offset(b"a\nb\n", 2), 2);
        let v: Vec<_> = py_splitlines("é\u{85}x\u{2029}y\x0bz\x1c\u{2027}\u{a0}\r").collect();
        assert_eq!(v, ["é", "x", "y", "z", "\u{2027}\u{a0}"]);
    }

    proptest::proptest! {
        #[test]
        fn splitlines_by_byte_as_by_character(
            text in "[a\r\n\x0b\x0c\x1c\x1d\x1e\x1f\u{85}\u{2028}\u{2029}\u{2027}\u{a0}é ]{0,40}"
        ) {
            // Python's rule, character by character.
            let mut want = Vec::new();
            let mut line = String::new();
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '\r' => {
                        chars.next_if_eq(&'\n');
                        want.push(std::mem::take(&mut line));
                    }
                    '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}'
                    | '\u{2029}' => want.push(std::mem::take(&mut line)),
                    c => line.push(c),
                }
            }
            if !line.is_empty() {
                want.push(line);
            }
            let got: Vec<String> = py_splitlines(&text).map(str::to_string).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
