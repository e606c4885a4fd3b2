//! Recipe references (`path[:selector]`) and selectors.

use crate::codes;
use infx_report::Diagnostic;
use std::fmt;

/// Which variants of a bundle to take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// `base`: the base block alone.
    Base,
    /// `override_<n>`: one override (the full key, `override_` included).
    Override(String),
    /// `zip_override_<g>` (all of the group) or `zip_override_<g>[i]` (one of it). `key` is the
    /// full key.
    Zip { key: String, index: Option<usize> },
    /// A glob (`*`, `?`, `[…]`) matched against the sorted override and zip keys (never `base`).
    Glob(String),
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Base => f.write_str("base"),
            Selector::Override(k) | Selector::Glob(k) => f.write_str(k),
            Selector::Zip { key, index: None } => f.write_str(key),
            Selector::Zip {
                key,
                index: Some(i),
            } => write!(f, "{key}[{i}]"),
        }
    }
}

const SELECTOR_HELP: &str = "a selector is 'base', 'override_<name>', 'zip_override_<name>', \
                             'zip_override_<name>[N]', or a glob pattern like '*mtp*'";

impl Selector {
    /// Parses a selector with srtctl's grammar (`base`, `override_\S+`, `zip_override_[\w-]+`,
    /// `zip_override_[\w-]+\[\d+\]`, anything containing `*` or `?`).
    pub fn parse_srtctl(s: &str) -> Result<Selector, Diagnostic> {
        if s == "base" {
            return Ok(Selector::Base);
        }
        if s.contains('*') || s.contains('?') {
            return Ok(Selector::Glob(s.to_string()));
        }
        if let Some(rest) = s.strip_prefix("zip_override_") {
            if let Some(open) = rest.find('[') {
                let (group, idx) = rest.split_at(open);
                if is_word_dash(group)
                    && let Some(digits) = idx.strip_prefix('[').and_then(|x| x.strip_suffix(']'))
                    && !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && let Ok(i) = digits.parse::<usize>()
                {
                    return Ok(Selector::Zip {
                        key: format!("zip_override_{group}"),
                        index: Some(i),
                    });
                }
            } else if is_word_dash(rest) {
                return Ok(Selector::Zip {
                    key: s.to_string(),
                    index: None,
                });
            }
        }
        if let Some(rest) = s.strip_prefix("override_")
            && !rest.is_empty()
            && !rest.chars().any(char::is_whitespace)
        {
            return Ok(Selector::Override(s.to_string()));
        }
        Err(Diagnostic::error(
            codes::SELECTOR,
            format!(
                "Invalid selector '{s}'. Must be 'base', 'override_<name>', 'zip_override_<name>', \
                 'zip_override_<name>[N]', or a glob pattern like '*mtp*'."
            ),
        )
        .with_help(SELECTOR_HELP))
    }

    /// Parses a selector with InferenceX's row-reference grammar: only `base`,
    /// `override_<name>` and `zip_override_<name>[<i>]`.
    pub fn parse_inferencex(s: &str) -> Result<Selector, Diagnostic> {
        match Selector::parse_srtctl(s) {
            Ok(sel @ (Selector::Base | Selector::Override(_))) => Ok(sel),
            Ok(sel @ Selector::Zip { index: Some(_), .. }) => Ok(sel),
            _ => Err(Diagnostic::error(
                codes::SELECTOR,
                format!("invalid selector '{s}' in a recipe reference"),
            )
            .with_help("use 'base', 'override_<name>' or 'zip_override_<name>[<i>]'")),
        }
    }
}

fn is_word_dash(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A parsed `path[:selector]` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeRef {
    pub path: String,
    pub selector: Option<Selector>,
}

impl RecipeRef {
    /// InferenceX row references (`srt-recipe:` in master configs): split at the **first** `:`;
    /// an empty selector means none; the selector grammar is [`Selector::parse_inferencex`].
    pub fn parse_inferencex(s: &str) -> Result<RecipeRef, Diagnostic> {
        let (path, sel) = match s.split_once(':') {
            Some((p, sel)) => (p, sel),
            None => (s, ""),
        };
        if path.is_empty() {
            return Err(
                Diagnostic::error(codes::REFERENCE, "recipe reference has an empty path")
                    .with_help("write <path>[:<selector>]"),
            );
        }
        let selector = if sel.is_empty() {
            None
        } else {
            Some(Selector::parse_inferencex(sel)?)
        };
        Ok(RecipeRef {
            path: path.to_string(),
            selector,
        })
    }

    /// `srtctl dry-run -f` references: split at the **last** `:`; the selector grammar is
    /// [`Selector::parse_srtctl`] (globs allowed).
    pub fn parse_srtctl(s: &str) -> Result<RecipeRef, Diagnostic> {
        let Some((path, sel)) = s.rsplit_once(':') else {
            return Ok(RecipeRef {
                path: s.to_string(),
                selector: None,
            });
        };
        if path.is_empty() {
            return Err(Diagnostic::error(
                codes::REFERENCE,
                "Invalid config path in selector syntax.",
            )
            .with_help("write <path>[:<selector>]"));
        }
        Ok(RecipeRef {
            path: path.to_string(),
            selector: Some(Selector::parse_srtctl(sel)?),
        })
    }
}

impl fmt::Display for RecipeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.selector {
            Some(s) => write!(f, "{}:{s}", self.path),
            None => f.write_str(&self.path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors() {
        assert_eq!(Selector::parse_srtctl("base").unwrap(), Selector::Base);
        assert_eq!(
            Selector::parse_srtctl("zip_override_g-1[12]").unwrap(),
            Selector::Zip {
                key: "zip_override_g-1".into(),
                index: Some(12)
            }
        );
        assert!(matches!(
            Selector::parse_srtctl("*mtp*").unwrap(),
            Selector::Glob(_)
        ));
        assert!(Selector::parse_srtctl("bad selector!").is_err());
        assert!(Selector::parse_srtctl("zip_override_x[a]").is_err());
        assert!(Selector::parse_inferencex("zip_override_x").is_err());
    }

    #[test]
    fn split_first_vs_last_colon() {
        let r = RecipeRef::parse_srtctl("a:b.yaml:override_x").unwrap();
        assert_eq!(r.path, "a:b.yaml");
        let r = RecipeRef::parse_inferencex("a.yaml:override_x").unwrap();
        assert_eq!(r.selector, Some(Selector::Override("override_x".into())));
        assert!(RecipeRef::parse_srtctl(":base").is_err());
        assert_eq!(
            RecipeRef::parse_inferencex("a.yaml:").unwrap().selector,
            None
        );
    }
}
