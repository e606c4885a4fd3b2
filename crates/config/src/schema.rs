//! Small typed accessors over YAML mappings that report `config/unknown-key`,
//! `config/missing-field`, `config/type` and `config/value` diagnostics at the offending node.

use crate::{Dialect, codes};
use infx_report::{Code, Diagnostic, Span};
use infx_yaml::{Mapping, Node, Value};
use std::path::Path;

/// Where findings go while one entry (or the runner file) is checked.
pub(crate) struct Ctx<'a> {
    pub path: &'a Path,
    /// Entry key; empty for file-level findings (runners.yaml).
    pub key: &'a str,
    pub dialect: Dialect,
    /// [`crate::LoadedConfigs::kv_metadata`].
    pub kv_metadata: bool,
    pub diags: &'a mut Vec<Diagnostic>,
}

/// A YAML path like `scenarios.fixed-seq-len[0].search-space[1]`, for messages.
pub(crate) fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

pub(crate) fn idx(at: &str, i: usize) -> String {
    format!("{at}[{i}]")
}

impl Ctx<'_> {
    /// Records an error. Messages read "Master config entry '<key>' failed validation: <at>: <msg>"
    /// (rules L6/SR5), so they stay recognisable next to upstream's.
    pub(crate) fn error(
        &mut self,
        code: Code,
        span: Span,
        at: &str,
        msg: impl AsRef<str>,
    ) -> &mut Diagnostic {
        let mut text = String::new();
        if !self.key.is_empty() {
            text.push_str(&format!(
                "Master config entry '{}' failed validation: ",
                self.key
            ));
        }
        if !at.is_empty() {
            text.push_str(at);
            text.push_str(": ");
        }
        text.push_str(msg.as_ref());
        self.diags
            .push(Diagnostic::error(code, text).at(self.path, span));
        let last = self.diags.len() - 1;
        &mut self.diags[last]
    }

    pub(crate) fn error_help(
        &mut self,
        code: Code,
        span: Span,
        at: &str,
        msg: impl AsRef<str>,
        help: impl Into<String>,
    ) {
        let d = self.error(code, span, at, msg);
        d.help = Some(help.into());
    }

    /// Every key not in `allowed` is a `config/unknown-key` error at the key, naming the allowed keys.
    /// Returns false when something was rejected.
    pub(crate) fn unknown_keys(&mut self, m: &Mapping, allowed: &[&str], at: &str) -> bool {
        let mut ok = true;
        for (k, _) in m.iter_nodes() {
            let name = match &k.value {
                Value::Str(s) if allowed.contains(&s.as_str()) => continue,
                Value::Str(s) => s.clone(),
                other => format!("{other:?}"),
            };
            ok = false;
            self.error_help(
                codes::UNKNOWN_KEY,
                k.span,
                at,
                format!("unknown field '{name}' (extra fields are not permitted)"),
                format!(
                    "{}allowed fields here: {}",
                    infx_report::did_you_mean(&name, allowed.iter().copied()),
                    allowed.join(", ")
                ),
            );
        }
        ok
    }

    /// A mapping value, or a `config/type` error.
    pub(crate) fn map<'n>(&mut self, node: &'n Node, at: &str) -> Option<&'n Mapping> {
        match node.as_map() {
            Some(m) => Some(m),
            None => {
                self.type_error(node, at, "a mapping");
                None
            }
        }
    }

    pub(crate) fn seq<'n>(&mut self, node: &'n Node, at: &str) -> Option<&'n [Node]> {
        match node.as_seq() {
            Some(s) => Some(s),
            None => {
                self.type_error(node, at, "a list");
                None
            }
        }
    }

    pub(crate) fn type_error(&mut self, node: &Node, at: &str, want: &str) {
        let got = describe(node);
        let help = match &node.value {
            Value::Str(s) if s.parse::<i64>().is_ok() && want.contains("integer") => {
                format!("write the number without quotes: {s}")
            }
            _ => format!("write {want} here"),
        };
        self.error_help(
            codes::TYPE,
            node.span,
            at,
            format!("expected {want}, found {got}"),
            help,
        );
    }

    pub(crate) fn missing(&mut self, anchor: Span, at: &str, field: &str) {
        self.error_help(
            codes::MISSING_FIELD,
            anchor,
            at,
            format!("required field '{field}' is missing"),
            format!("add '{field}:'"),
        );
    }

    /// Required string (`non_empty`: at least one character).
    pub(crate) fn req_str<'n>(
        &mut self,
        m: &'n Mapping,
        field: &str,
        anchor: Span,
        at: &str,
        non_empty: bool,
    ) -> Option<&'n str> {
        match m.get(field) {
            None => {
                self.missing(anchor, at, field);
                None
            }
            Some(n) => match n.as_str() {
                Some(v) if !(non_empty && v.is_empty()) => Some(v),
                _ => self.str_value(n, &join(at, field), non_empty),
            },
        }
    }

    /// Optional string; `null` counts as absent.
    pub(crate) fn opt_str<'n>(
        &mut self,
        m: &'n Mapping,
        field: &str,
        at: &str,
        non_empty: bool,
    ) -> Result<Option<&'n str>, ()> {
        match m.get(field) {
            None => Ok(None),
            Some(n) if n.is_null() => Ok(None),
            Some(n) => match n.as_str() {
                Some(v) if !(non_empty && v.is_empty()) => Ok(Some(v)),
                _ => self
                    .str_value(n, &join(at, field), non_empty)
                    .map(Some)
                    .ok_or(()),
            },
        }
    }

    pub(crate) fn str_value<'n>(
        &mut self,
        n: &'n Node,
        at: &str,
        non_empty: bool,
    ) -> Option<&'n str> {
        match n.as_str() {
            Some("") if non_empty => {
                self.error_help(
                    codes::VALUE,
                    n.span,
                    at,
                    "must not be empty",
                    "write a non-empty string",
                );
                None
            }
            Some(s) => Some(s),
            None => {
                self.type_error(n, at, "a string");
                None
            }
        }
    }

    /// Integer field. Native YAML ints only: upstream's lax mode would read `"4"` as 4 for some
    /// fields; we are deliberately stricter (a quoted number is a typo that ends up as a string
    /// in generated rows).
    pub(crate) fn int_value(&mut self, n: &Node, at: &str, positive: bool) -> Option<i64> {
        match n.as_i64() {
            Some(v) if positive && v <= 0 => {
                self.error_help(
                    codes::VALUE,
                    n.span,
                    at,
                    format!("must be greater than 0, found {v}"),
                    "use a positive integer",
                );
                None
            }
            Some(v) => Some(v),
            None => {
                self.type_error(
                    n,
                    at,
                    if positive {
                        "a positive integer"
                    } else {
                        "an integer"
                    },
                );
                None
            }
        }
    }

    pub(crate) fn req_int(
        &mut self,
        m: &Mapping,
        field: &str,
        anchor: Span,
        at: &str,
        positive: bool,
    ) -> Option<i64> {
        match m.get(field) {
            None => {
                self.missing(anchor, at, field);
                None
            }
            Some(n) => match n.as_i64() {
                Some(v) if !(positive && v <= 0) => Some(v),
                _ => self.int_value(n, &join(at, field), positive),
            },
        }
    }

    /// Optional int; `null` counts as absent (pydantic `Optional[int] = None`).
    pub(crate) fn opt_int(
        &mut self,
        m: &Mapping,
        field: &str,
        at: &str,
        positive: bool,
    ) -> Result<Option<i64>, ()> {
        match m.get(field) {
            None => Ok(None),
            Some(n) if n.is_null() => Ok(None),
            Some(n) => match n.as_i64() {
                Some(v) if !(positive && v <= 0) => Ok(Some(v)),
                _ => self
                    .int_value(n, &join(at, field), positive)
                    .map(Some)
                    .ok_or(()),
            },
        }
    }

    /// Strict positive int with a default (`pp`, `dcp-size`, `pcp-size`, …): `null` is an error.
    pub(crate) fn strict_pos_int(
        &mut self,
        m: &Mapping,
        field: &str,
        at: &str,
        default: i64,
    ) -> Result<i64, ()> {
        match m.get(field) {
            None => Ok(default),
            Some(n) => match n.as_i64() {
                Some(v) if v > 0 => Ok(v),
                _ => self.int_value(n, &join(at, field), true).ok_or(()),
            },
        }
    }

    pub(crate) fn bool_value(&mut self, n: &Node, at: &str) -> Option<bool> {
        match n.as_bool() {
            Some(b) => Some(b),
            None => {
                self.type_error(n, at, "a boolean (true or false)");
                None
            }
        }
    }

    pub(crate) fn opt_bool(
        &mut self,
        m: &Mapping,
        field: &str,
        at: &str,
    ) -> Result<Option<bool>, ()> {
        match m.get(field) {
            None => Ok(None),
            Some(n) if n.is_null() => Ok(None),
            Some(n) => match n.as_bool() {
                Some(b) => Ok(Some(b)),
                None => self.bool_value(n, &join(at, field)).map(Some).ok_or(()),
            },
        }
    }

    /// A bool with a default where `null` is an error (pydantic `bool = False`).
    pub(crate) fn bool_default(
        &mut self,
        m: &Mapping,
        field: &str,
        at: &str,
        default: bool,
    ) -> Result<bool, ()> {
        match m.get(field) {
            None => Ok(default),
            Some(n) => match n.as_bool() {
                Some(b) => Ok(b),
                None => self.bool_value(n, &join(at, field)).ok_or(()),
            },
        }
    }

    /// One of a fixed set of strings.
    pub(crate) fn choice<'n>(
        &mut self,
        n: &'n Node,
        at: &str,
        allowed: &[&str],
    ) -> Option<&'n str> {
        match n.as_str() {
            Some(s) if allowed.contains(&s) => Some(s),
            _ => {
                let quoted: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
                self.error_help(
                    codes::VALUE,
                    n.span,
                    at,
                    format!(
                        "must be one of {}, found {}",
                        quoted.join(", "),
                        describe(n)
                    ),
                    format!("use one of: {}", allowed.join(", ")),
                );
                None
            }
        }
    }
}

/// `'abc'`, `12345 (int)`, … for messages.
pub(crate) fn describe(n: &Node) -> String {
    match &n.value {
        Value::Str(s) => format!("string '{s}'"),
        Value::Int(i) => format!("integer {i}"),
        Value::Float(f) => format!("float {}", f.text),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Null => "null".to_string(),
        Value::Timestamp(t) => format!("date {t}"),
        Value::Seq(_) => "a list".to_string(),
        Value::Map(_) => "a mapping".to_string(),
    }
}

/// The span of a key inside a mapping (falls back to the mapping's own span).
pub(crate) fn key_span(m: &Mapping, field: &str, fallback: Span) -> Span {
    m.get_entry(field).map(|(k, _)| k.span).unwrap_or(fallback)
}

/// Whether a field is written with a non-null value.
pub(crate) fn present(m: &Mapping, field: &str) -> bool {
    m.get(field).is_some_and(|n| !n.is_null())
}
