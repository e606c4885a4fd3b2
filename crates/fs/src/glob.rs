//! The one shell-glob matcher of the workspace: Python's `fnmatch.fnmatchcase(name, pattern)`,
//! which both upstream tools use (matrix `--config-keys` globs, srtctl's override selectors;
//! docs/matrix.md, docs/recipe.md). `*`, `?`, `[seq]`, `[!seq]`; a `]` right after `[` or `[!`
//! is a member; a `[` without a closing `]` is literal; a backslash is an ordinary character.
//! Case-sensitive and `/` is not special (names, not paths: CODEOWNERS patterns follow
//! gitignore rules and have their own matcher in infx-review).

/// Whether `name` matches the glob `pattern` (argument order as in Python).
pub fn fnmatch(name: &str, pattern: &str) -> bool {
    let n: Vec<char> = name.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    matches(&n, &p)
}

/// One pattern token.
enum Tok {
    Any,
    One,
    Lit(char),
    Class {
        negate: bool,
        items: Vec<(char, char)>,
    },
}

fn tokens(p: &[char]) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '*' => {
                // Consecutive stars are one star.
                if !matches!(out.last(), Some(Tok::Any)) {
                    out.push(Tok::Any);
                }
                i += 1;
            }
            '?' => {
                out.push(Tok::One);
                i += 1;
            }
            '[' => {
                let mut j = i + 1;
                if j < p.len() && p[j] == '!' {
                    j += 1;
                }
                if j < p.len() && p[j] == ']' {
                    j += 1;
                }
                while j < p.len() && p[j] != ']' {
                    j += 1;
                }
                if j >= p.len() {
                    out.push(Tok::Lit('['));
                    i += 1;
                    continue;
                }
                let mut k = i + 1;
                let negate = p[k] == '!';
                if negate {
                    k += 1;
                }
                let mut items = Vec::new();
                let body = &p[k..j];
                let mut b = 0;
                while b < body.len() {
                    if b + 2 < body.len() && body[b + 1] == '-' {
                        items.push((body[b], body[b + 2]));
                        b += 3;
                    } else {
                        items.push((body[b], body[b]));
                        b += 1;
                    }
                }
                out.push(Tok::Class { negate, items });
                i = j + 1;
            }
            c => {
                out.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    out
}

fn matches(name: &[char], pattern: &[char]) -> bool {
    let toks = tokens(pattern);
    // Classic two-pointer wildcard matching with backtracking to the last star.
    let (mut ni, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < name.len() {
        let ok = match toks.get(ti) {
            Some(Tok::Any) => {
                star = Some((ti, ni));
                ti += 1;
                continue;
            }
            Some(Tok::One) => true,
            Some(Tok::Lit(c)) => *c == name[ni],
            Some(Tok::Class { negate, items }) => {
                let hit = items
                    .iter()
                    .any(|(lo, hi)| *lo <= name[ni] && name[ni] <= *hi);
                hit != *negate
            }
            None => false,
        };
        if ok {
            ni += 1;
            ti += 1;
        } else if let Some((st, sn)) = star {
            ti = st + 1;
            ni = sn + 1;
            star = Some((st, sn + 1));
        } else {
            return false;
        }
    }
    toks[ti..].iter().all(|t| matches!(t, Tok::Any))
}

#[cfg(test)]
mod tests {
    use super::fnmatch;

    #[test]
    fn shell_globs() {
        assert!(fnmatch("dsv4-fp4-b200", "dsv4-*"));
        assert!(!fnmatch("dsr1-fp4", "dsv4-*"));
        assert!(fnmatch(
            "qwen3.5-fp4-b200-sglang",
            "qwen3.5-fp?-b[23]00-sglang"
        ));
        assert!(!fnmatch(
            "qwen3.5-fp4-b400-sglang",
            "qwen3.5-fp?-b[23]00-sglang"
        ));
        assert!(fnmatch("a[b", "a[b"));
        assert!(fnmatch("ab", "a[!c]"));
        assert!(!fnmatch("ac", "a[!c]"));
        assert!(fnmatch("x", "*"));
        assert!(fnmatch("", "*"));
        assert!(fnmatch("abcabd", "*abd"));
        assert!(!fnmatch("ABC", "abc"));
        assert!(fnmatch("override_tp4_mtp", "*mtp*"));
        assert!(fnmatch("zip_b", "zip_[a-c]*"));
        assert!(!fnmatch("zip_b", "zip_[!a-c]*"));
    }

    /// Bracket corner cases, each checked against CPython's `fnmatch.fnmatchcase`.
    #[test]
    fn brackets_as_python() {
        let cases = [
            ("b", "[!]]", true),
            ("]", "[!]]", false),
            ("a]", "[!]]", false),
            ("]", "[]]", true),
            ("a", "[]a]", true),
            ("[", "[]", false),
            ("[]", "[]", true),
            ("x", "[!]", false),
            ("[!]", "[!]", true),
            ("-", "[a-]", true),
            ("b", "[a-]", false),
            ("b", "[z-a]", false),
            ("a-b", "a[--/]b", true),
            ("/", "[!a]", true),
            ("a\\b", "a\\b", true),
            ("ab", "a\\b", false),
            ("", "", true),
            ("a", "", false),
        ];
        for (name, pattern, want) in cases {
            assert_eq!(fnmatch(name, pattern), want, "{name:?} vs {pattern:?}");
        }
    }
}
