//! Span-preserving text edits: replace byte ranges of the original text and keep every other
//! byte (comments, quoting, indentation) exactly as it was.

/// Replace `range` of the original text with `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: std::ops::Range<usize>,
    pub replacement: String,
}

/// Applies non-overlapping edits (in any order) to `text`. Returns `None` when two edits
/// overlap or a range lies outside the text or splits a character.
pub fn apply_edits(text: &str, edits: &[Edit]) -> Option<String> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for e in sorted {
        if e.range.start < cursor || e.range.end < e.range.start {
            return None;
        }
        out.push_str(text.get(cursor..e.range.start)?);
        text.get(e.range.clone())?;
        out.push_str(&e.replacement);
        cursor = e.range.end;
    }
    out.push_str(text.get(cursor..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_keep_everything_else() {
        let text = "image: a:1 # pin me\nother: a:1\n";
        let s = text.find("a:1").unwrap();
        let out = apply_edits(
            text,
            &[Edit {
                range: s..s + 3,
                replacement: "a:1@sha256:00".into(),
            }],
        );
        assert_eq!(
            out.as_deref(),
            Some("image: a:1@sha256:00 # pin me\nother: a:1\n")
        );
    }

    #[test]
    fn overlapping_edits_are_refused() {
        let e1 = Edit {
            range: 0..3,
            replacement: String::new(),
        };
        let e2 = Edit {
            range: 2..4,
            replacement: String::new(),
        };
        assert_eq!(apply_edits("abcdef", &[e1, e2]), None);
    }
}
