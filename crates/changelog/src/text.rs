//! Small text helpers with Python semantics where upstream relies on them.

/// Python `str.splitlines()` (no line ends kept).
pub(crate) fn py_splitlines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        for (i, c) in rest.char_indices() {
            let len = match c {
                '\r' if rest[i + 1..].starts_with('\n') => 2,
                '\n' | '\r' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}'
                | '\u{2028}' | '\u{2029}' => c.len_utf8(),
                _ => continue,
            };
            let line = &rest[..i];
            rest = &rest[i + len..];
            return Some(line);
        }
        let line = rest;
        rest = "";
        Some(line)
    })
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
    }
}
