//! Typed diagnostic codes. Every code a check can emit is a `pub const` in its crate's
//! `codes` registry (`infx_config::codes::X5`, …) with its default severity and a one-line
//! summary; `cargo xtask codes` lists them all and `cargo xtask codes --check` keeps the code
//! tables in docs/ in step with them (README, "Diagnostic codes").

use crate::Severity;
use serde::{Serialize, Serializer};
use std::fmt;

/// A diagnostic code: `<check>/<rule>` (`config/X5`), the severity it is usually reported at,
/// and what it means in one line. Names are unique across the registries, so comparing codes
/// compares names, and codes order by name; the derives (name first) make the constants usable
/// as `match` patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code {
    name: &'static str,
    severity: Severity,
    summary: &'static str,
}

impl Code {
    pub const fn new(name: &'static str, severity: Severity, summary: &'static str) -> Code {
        Code {
            name,
            severity,
            summary,
        }
    }
    pub const fn error(name: &'static str, summary: &'static str) -> Code {
        Code::new(name, Severity::Error, summary)
    }
    pub const fn warning(name: &'static str, summary: &'static str) -> Code {
        Code::new(name, Severity::Warning, summary)
    }
    pub const fn note(name: &'static str, summary: &'static str) -> Code {
        Code::new(name, Severity::Note, summary)
    }
    /// `config/X5`, exactly as every output format writes it.
    pub const fn as_str(&self) -> &'static str {
        self.name
    }
    pub const fn severity(&self) -> Severity {
        self.severity
    }
    pub const fn summary(&self) -> &'static str {
        self.summary
    }
    /// The check the code belongs to: `config` for `config/X5`.
    pub fn check(&self) -> &'static str {
        check_of(self.name)
    }
    /// The rule inside the check: `X5` for `config/X5`.
    pub fn rule(&self) -> &'static str {
        self.name.split_once('/').map_or(self.name, |(_, r)| r)
    }
    /// Whether text a user wrote (an `# infx: allow(...)` comment) names this code. The one
    /// place code names are compared as text, because the user's side is text.
    pub fn is_named(&self, text: &str) -> bool {
        self.name == text
    }
}

/// Declares a crate's code registry: a `pub const` per code and `pub const ALL` with every code
/// in the order listed (name order, by convention). An entry `NAME = error("check/rule",
/// "summary");` declares `pub const NAME: Code = Code::error("check/rule", "summary")`; `warning`
/// and `note` likewise, and doc comments before an entry go to its const. One entry a line, so a
/// registry reads as the table `cargo xtask codes` prints.
#[macro_export]
macro_rules! codes {
    ($($(#[$attr:meta])* $name:ident = $severity:ident($code:literal, $summary:literal);)*) => {
        $($(#[$attr])* pub const $name: $crate::Code = $crate::Code::$severity($code, $summary);)*
        /// Every code above, in the order listed.
        pub const ALL: &[$crate::Code] = &[$($name),*];
    };
}

/// The check of a code name written as text (`config/C2` → `config`).
pub fn check_of(name: &str) -> &str {
    name.split('/').next().unwrap_or(name)
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl Serialize for Code {
    /// As the bare name, so JSON output is what it was when codes were strings.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name)
    }
}

/// Whether text has the shape of a code name, `check/rule`: ASCII letters, digits, `-`, `_`,
/// `.`, with a `/` that neither starts nor ends it.
pub fn is_code_name(c: &str) -> bool {
    c.contains('/')
        && !c.starts_with('/')
        && !c.ends_with('/')
        && c.chars()
            .all(|ch| ch.is_ascii_alphanumeric() || "-_./".contains(ch))
}

#[cfg(test)]
mod tests {
    use super::*;

    const C2: Code = Code::error("config/C2", "concurrency given twice");

    /// A registry as the crates declare theirs (the macro's consts are `pub`, for the crates).
    #[allow(unreachable_pub)]
    mod declared {
        crate::codes! {
            /// The first code.
            FIRST = error("t/first", "first summary");
            SECOND = warning("t/second", "second summary");
            THIRD = note("t/third", "third summary");
        }
    }

    #[test]
    fn the_codes_macro_declares_each_code_and_all_in_the_order_listed() {
        use declared::*;
        assert_eq!(FIRST, Code::error("t/first", "first summary"));
        assert_eq!(SECOND, Code::warning("t/second", "second summary"));
        assert_eq!(THIRD, Code::note("t/third", "third summary"));
        assert_eq!(ALL, [FIRST, SECOND, THIRD]);
    }

    #[test]
    fn parts_and_text() {
        assert_eq!(C2.as_str(), "config/C2"); // not a code: its text
        assert_eq!(C2.check(), "config");
        assert_eq!(C2.rule(), "C2");
        assert_eq!(C2.to_string(), "config/C2"); // not a code: its text
        assert_eq!(serde_json::to_string(&C2).unwrap(), "\"config/C2\"");
        assert!(C2.is_named("config/C2") && !C2.is_named("config/C3")); // not a code: text
    }
}
