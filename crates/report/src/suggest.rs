//! Near-miss suggestions ("did you mean `conc-list`?") for names a tree misspells: field names,
//! recipe files, variant selectors, config keys (docs/architecture.md, "Near-miss suggestions").

/// The candidate closest to `word` by Damerau–Levenshtein distance (a swap of two neighbouring
/// characters is one edit, so `conc-lsit` is one edit from `conc-list`), when it is close
/// enough to be a typo: at most a third of the word's length, at least 1 and at most 3 edits.
/// Ties go to the first candidate; `word` itself is never suggested.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == word {
            continue;
        }
        let d = strsim::damerau_levenshtein(word, c);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// "did you mean `x`? " when [`nearest`] finds one, else the empty string: the start of a help.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(word, candidates).map_or_else(String::new, |c| format!("did you mean `{c}`? "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_word_and_strangers_find_none() {
        let fields = ["conc-list", "conc-start", "conc-end", "tp", "ep"];
        assert_eq!(nearest("conc-lsit", fields), Some("conc-list"));
        assert_eq!(
            nearest("agentik.yaml", ["agentic.yaml", "fixed.yaml"]),
            Some("agentic.yaml")
        );
        assert_eq!(nearest("tq", fields), Some("tp"));
        assert_eq!(nearest("scheduler", fields), None);
        assert_eq!(
            nearest("tp", ["tp"]),
            None,
            "the word itself is no suggestion"
        );
        assert_eq!(did_you_mean("eq", fields), "did you mean `ep`? ");
        assert_eq!(did_you_mean("scheduler", fields), "");
    }
}
