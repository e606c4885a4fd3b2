//! The changelog entry schema (`ChangelogEntry` upstream), validated from a YAML node with
//! pydantic's lax coercions reproduced, and YAML 1.1 traps explained.

use crate::codes;
pub use infx_config::Dialect;
use infx_matrix::ScenarioType;
use infx_yaml::{Mapping, Node, ScalarStyle, Span, Value};

/// Whether the entry schema of `dialect` has `no-evals`: October's generations do, August's
/// (`utils/`) calls it an unknown key (docs/changelog.md, "Diagnostic codes (`changelog/<rule>`,
/// with the line)", its entry schema; the dialects: docs/config.md, "Dialects").
fn has_no_evals(dialect: Dialect) -> bool {
    dialect != Dialect::Aug
}

/// A validated entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub config_keys: Vec<String>,
    pub description: Vec<String>,
    pub pr_link: String,
    pub evals_only: bool,
    pub all_evals: bool,
    pub append_only: bool,
    pub no_evals: bool,
    pub eval_min_prefill_ep: Option<i64>,
    /// `None` = both scenario types.
    pub scenario_type: Option<Vec<ScenarioType>>,
    /// Where the entry was written.
    pub span: Span,
}

impl Entry {
    /// The scenario types this entry selects (its `scenario-type`, or both).
    pub fn scenarios(&self) -> Vec<ScenarioType> {
        self.scenario_type
            .clone()
            .unwrap_or_else(|| ScenarioType::ALL.to_vec())
    }

    /// The entry as upstream re-serialises it in plan metadata (by alias, defaults included,
    /// nulls dropped).
    pub fn to_json(&self, dialect: Dialect) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("config-keys".into(), self.config_keys.clone().into());
        m.insert("description".into(), self.description.clone().into());
        m.insert("pr-link".into(), self.pr_link.clone().into());
        m.insert("evals-only".into(), self.evals_only.into());
        m.insert("all-evals".into(), self.all_evals.into());
        m.insert("append-only".into(), self.append_only.into());
        if has_no_evals(dialect) {
            m.insert("no-evals".into(), self.no_evals.into());
        }
        if let Some(ep) = self.eval_min_prefill_ep {
            m.insert("eval-min-prefill-ep".into(), ep.into());
        }
        if let Some(st) = &self.scenario_type {
            m.insert(
                "scenario-type".into(),
                st.iter()
                    .map(|s| s.as_str().to_string())
                    .collect::<Vec<_>>()
                    .into(),
            );
        }
        serde_json::Value::Object(m)
    }
}

/// One schema violation, located at the offending node.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryError {
    /// `changelog/entry-schema`, `changelog/yaml11-trap`, `changelog/entry-exclusive`.
    pub code: infx_report::Code,
    pub field: String,
    pub message: String,
    pub span: Span,
    pub help: Option<String>,
}

const FIELDS: &[(&str, &str)] = &[
    ("config-keys", "config_keys"),
    ("description", "description"),
    ("pr-link", "pr_link"),
    ("evals-only", "evals_only"),
    ("all-evals", "all_evals"),
    ("append-only", "append_only"),
    ("eval-min-prefill-ep", "eval_min_prefill_ep"),
    ("scenario-type", "scenario_type"),
    ("no-evals", "no_evals"),
];

struct Ctx<'a> {
    errors: Vec<EntryError>,
    text: Option<&'a str>,
}

impl Ctx<'_> {
    /// The one place an entry's error is built.
    fn push(
        &mut self,
        code: infx_report::Code,
        field: &str,
        span: Span,
        message: String,
        help: Option<String>,
    ) {
        self.errors.push(EntryError {
            code,
            field: field.to_string(),
            message,
            span,
            help,
        });
    }

    fn err(&mut self, field: &str, node: &Node, message: impl Into<String>) {
        let (code, help) = match trap_hint(node, self.text) {
            Some(h) => (codes::YAML11_TRAP, Some(h)),
            None => (codes::ENTRY_SCHEMA, None),
        };
        let message = format!("{field}: {}", message.into());
        self.push(code, field, node.span, message, help);
    }
}

/// A plain scalar that YAML 1.1 reads as a non-string (a date, yes/no, a number, `~`,
/// sexagesimal `1:30`): the fix is to quote it.
fn trap_hint(node: &Node, text: Option<&str>) -> Option<String> {
    if node.style != ScalarStyle::Plain {
        return None;
    }
    let what = match &node.value {
        Value::Timestamp(_) => "a date",
        Value::Bool(_) => "a boolean (YAML 1.1 reads yes/no/on/off as booleans)",
        Value::Int(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Null => "null",
        _ => return None,
    };
    let src = text
        .and_then(|t| t.get(node.span.byte_range()))
        .unwrap_or("")
        .trim();
    if src.is_empty() {
        return Some(format!("this value is read as {what}; write a string here"));
    }
    Some(format!(
        "YAML 1.1 reads `{src}` as {what}; quote it: \"{}\"",
        src.replace('"', "\\\"")
    ))
}

/// Validates one entry node. `text` (the source the node was parsed from) improves help texts.
pub fn validate_entry(
    node: &Node,
    dialect: Dialect,
    text: Option<&str>,
) -> Result<Entry, Vec<EntryError>> {
    let mut cx = Ctx {
        errors: Vec::new(),
        text,
    };
    let Some(map) = node.as_map() else {
        cx.push(
            codes::ENTRY_SCHEMA,
            "",
            node.span,
            format!(
                "an entry must be a mapping, found {}",
                node.value.type_name()
            ),
            Some("each entry is `- config-keys: [...]` followed by description and pr-link".into()),
        );
        return Err(cx.errors);
    };
    unknown_keys(&mut cx, map, dialect);
    let get = |alias: &str| -> Option<&Node> {
        let name = FIELDS
            .iter()
            .find(|(a, _)| *a == alias)
            .map(|(_, n)| *n)
            .unwrap_or(alias);
        map.get(alias).or_else(|| map.get(name))
    };

    let config_keys = str_list(&mut cx, "config-keys", get("config-keys"), node, true);
    let description = str_list(&mut cx, "description", get("description"), node, true);
    let pr_link = pr_link_field(&mut cx, get("pr-link"), node);
    let evals_only = lax_bool(&mut cx, "evals-only", get("evals-only"));
    let all_evals = lax_bool(&mut cx, "all-evals", get("all-evals"));
    let append_only = lax_bool(&mut cx, "append-only", get("append-only"));
    let no_evals = if has_no_evals(dialect) {
        lax_bool(&mut cx, "no-evals", get("no-evals"))
    } else {
        Some(false)
    };
    let eval_min_prefill_ep = eval_min_prefill_ep_field(&mut cx, get("eval-min-prefill-ep"));
    let scenario_type = scenario_type_field(&mut cx, get("scenario-type"));

    if !cx.errors.is_empty() {
        return Err(cx.errors);
    }
    let assembled = (|| {
        Some(Entry {
            config_keys: config_keys?,
            description: description?,
            pr_link: pr_link?,
            evals_only: evals_only?,
            all_evals: all_evals?,
            append_only: append_only?,
            no_evals: no_evals?,
            eval_min_prefill_ep: eval_min_prefill_ep?,
            scenario_type: scenario_type?,
            span: node.span,
        })
    })();
    let Some(entry) = assembled else {
        // Every None above pushed an error; unreachable in practice, but never panic.
        return Err(cx.errors);
    };
    exclusive_fields(&mut cx, &entry);
    if cx.errors.is_empty() {
        Ok(entry)
    } else {
        Err(cx.errors)
    }
}

/// Unknown keys (extra='forbid'); both spellings of a field are accepted (populate_by_name).
fn unknown_keys(cx: &mut Ctx<'_>, map: &infx_yaml::Mapping, dialect: Dialect) {
    for (k, _) in map.iter_nodes() {
        let known = match k.as_str() {
            Some(s) => FIELDS
                .iter()
                .any(|(a, n)| (*a == s || *n == s) && (has_no_evals(dialect) || *a != "no-evals")),
            None => false,
        };
        if known {
            continue;
        }
        let shown = k
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("{:?}", k.value));
        let allowed: Vec<&str> = FIELDS
            .iter()
            .filter(|(a, _)| has_no_evals(dialect) || *a != "no-evals")
            .map(|(a, _)| *a)
            .collect();
        cx.push(
            codes::ENTRY_SCHEMA,
            &shown,
            k.span,
            format!("unknown key `{shown}` (extra inputs are not permitted)"),
            Some(format!("allowed keys: {}", allowed.join(", "))),
        );
    }
}

/// `pr-link`: a required string.
fn pr_link_field(cx: &mut Ctx<'_>, value: Option<&Node>, entry: &Node) -> Option<String> {
    let Some(n) = value else {
        cx.err_missing("pr-link", entry);
        return None;
    };
    match &n.value {
        Value::Str(s) => Some(s.clone()),
        _ => {
            cx.err(
                "pr-link",
                n,
                format!("must be a string, found {}", n.value.type_name()),
            );
            None
        }
    }
}

/// `eval-min-prefill-ep`: absent or `null`, or an integer of at least 1. The outer `None` is
/// an error already reported.
fn eval_min_prefill_ep_field(cx: &mut Ctx<'_>, value: Option<&Node>) -> Option<Option<i64>> {
    let Some(n) = value.filter(|n| !n.is_null()) else {
        return Some(None);
    };
    match lax_int(n) {
        Some(v) if v >= 1 => Some(Some(v)),
        Some(_) => {
            cx.err(
                "eval-min-prefill-ep",
                n,
                "must be greater than or equal to 1",
            );
            None
        }
        None => {
            cx.err(
                "eval-min-prefill-ep",
                n,
                format!("must be an integer, found {}", n.value.type_name()),
            );
            None
        }
    }
}

/// `scenario-type`: absent or `null`, or a non-empty list of scenario types. The outer `None`
/// is an error already reported.
fn scenario_type_field(
    cx: &mut Ctx<'_>,
    value: Option<&Node>,
) -> Option<Option<Vec<ScenarioType>>> {
    let Some(n) = value.filter(|n| !n.is_null()) else {
        return Some(None);
    };
    let items = match n.as_seq() {
        None => {
            cx.err(
                "scenario-type",
                n,
                format!("must be a list, found {}", n.value.type_name()),
            );
            return None;
        }
        Some([]) => {
            cx.err("scenario-type", n, "must list at least one scenario type");
            return None;
        }
        Some(items) => items,
    };
    let mut out = Vec::new();
    let mut ok = true;
    for it in items {
        match it.as_str().and_then(ScenarioType::parse) {
            Some(s) => out.push(s),
            None => {
                ok = false;
                cx.err(
                    "scenario-type",
                    it,
                    "must be 'fixed-seq-len' or 'agentic-coding'",
                );
            }
        }
    }
    ok.then_some(Some(out))
}

/// `append-only` and `no-evals` each exclude the eval selection fields.
fn exclusive_fields(cx: &mut Ctx<'_>, entry: &Entry) {
    let eval_fields = entry.evals_only || entry.all_evals || entry.eval_min_prefill_ep.is_some();
    if !eval_fields {
        return;
    }
    for (field, set) in [
        ("append-only", entry.append_only),
        ("no-evals", entry.no_evals),
    ] {
        if set {
            cx.push(
                codes::ENTRY_EXCLUSIVE,
                field,
                entry.span,
                format!("{field} cannot be combined with eval selection fields"),
                Some(format!(
                    "drop evals-only / all-evals / eval-min-prefill-ep, or drop {field}"
                )),
            );
        }
    }
}

impl Ctx<'_> {
    fn err_missing(&mut self, field: &str, entry: &Node) {
        self.push(
            codes::ENTRY_SCHEMA,
            field,
            entry.span,
            format!("{field}: field required"),
            Some(format!("add `{field}:` to the entry")),
        );
    }
}

fn str_list(
    cx: &mut Ctx<'_>,
    field: &str,
    n: Option<&Node>,
    entry: &Node,
    required: bool,
) -> Option<Vec<String>> {
    let Some(n) = n else {
        if required {
            cx.err_missing(field, entry);
        }
        return None;
    };
    let Some(items) = n.as_seq() else {
        cx.err(
            field,
            n,
            format!("must be a list of strings, found {}", n.value.type_name()),
        );
        if let Value::Str(_) = n.value
            && let Some(last) = cx.errors.last_mut()
        {
            last.help = Some(format!("write it as a list:\n  {field}:\n    - \"…\""));
        }
        return None;
    };
    if items.is_empty() {
        cx.err(field, n, "must have at least one item");
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for it in items {
        match &it.value {
            Value::Str(s) => out.push(s.clone()),
            other => {
                ok = false;
                cx.err(
                    field,
                    it,
                    format!("items must be strings, found {}", other.type_name()),
                );
            }
        }
    }
    ok.then_some(out)
}

/// pydantic's lax bool: booleans, 0/1, and the usual words.
fn lax_bool(cx: &mut Ctx<'_>, field: &str, n: Option<&Node>) -> Option<bool> {
    let Some(n) = n else { return Some(false) };
    let v = match &n.value {
        Value::Bool(b) => Some(*b),
        Value::Int(0) => Some(false),
        Value::Int(1) => Some(true),
        Value::Float(f) if f.value == 0.0 => Some(false),
        Value::Float(f) if f.value == 1.0 => Some(true),
        Value::Str(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
            _ => None,
        },
        _ => None,
    };
    if v.is_none() {
        cx.push(
            codes::ENTRY_SCHEMA,
            field,
            n.span,
            format!("{field}: must be a boolean, found {}", n.value.type_name()),
            Some(format!("write `{field}: true` or `{field}: false`")),
        );
    }
    v
}

/// pydantic's lax int: ints, bools, integral floats, numeric strings.
fn lax_int(n: &Node) -> Option<i64> {
    match &n.value {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Float(f) if f.value.fract() == 0.0 && f.value.abs() < 9.0e15 => Some(f.value as i64),
        Value::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Python `str(x or "")` for a scalar node (how upstream reads `pr-link` for comparisons).
pub(crate) fn py_str_or_empty(n: Option<&Node>) -> String {
    match n.map(|n| &n.value) {
        None | Some(Value::Null) => String::new(),
        Some(Value::Str(s)) => s.clone(),
        Some(Value::Bool(false)) | Some(Value::Int(0)) => String::new(),
        Some(Value::Bool(true)) => "True".into(),
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::Float(f)) if f.value == 0.0 => String::new(),
        Some(Value::Float(f)) => f.text.to_string(),
        Some(Value::Timestamp(t)) => t.clone(),
        Some(Value::Seq(s)) if s.is_empty() => String::new(),
        Some(Value::Map(m)) if m.is_empty() => String::new(),
        Some(other) => format!("{other:?}"),
    }
}

/// Mapping equality ignoring one key (Python `{k: v for … if k != key}` comparison).
pub(crate) fn eq_without(a: &Mapping, b: &Mapping, skip: &str) -> bool {
    let count = |m: &Mapping| {
        m.iter_nodes()
            .filter(|(k, _)| k.as_str() != Some(skip))
            .count()
    };
    if count(a) != count(b) {
        return false;
    }
    a.iter_nodes()
        .filter(|(k, _)| k.as_str() != Some(skip))
        .all(|(k, v)| b.iter_nodes().any(|(k2, v2)| k2 == k && v2 == v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn entry(src: &str) -> Result<Entry, Vec<EntryError>> {
        let root = infx_yaml::parse_str(Path::new("t.yaml"), src).unwrap();
        validate_entry(&root, Dialect::Oct, Some(src))
    }

    #[test]
    fn valid_entry_with_defaults() {
        let e = entry("config-keys: [a, b-*]\ndescription: [x]\npr-link: XXX\n").unwrap();
        assert_eq!(e.config_keys, ["a", "b-*"]);
        assert!(!e.evals_only && !e.append_only);
        assert_eq!(e.scenarios(), ScenarioType::ALL.to_vec());
    }

    #[test]
    fn yaml11_traps_are_errors_with_quote_hint() {
        for (v, what) in [
            ("2026-08-01", "date"),
            ("no", "boolean"),
            ("1:30", "integer"),
            ("1.5", "float"),
            ("~", "null"),
        ] {
            let errs = entry(&format!(
                "config-keys: [a]\ndescription:\n  - {v}\npr-link: XXX\n"
            ))
            .unwrap_err();
            assert_eq!(errs.len(), 1, "{v}");
            assert_eq!(errs[0].code, codes::YAML11_TRAP);
            let help = errs[0].help.clone().unwrap();
            assert!(help.contains(what), "{help}");
            if v != "~" {
                assert!(help.contains(&format!("\"{v}\"")), "{help}");
            }
        }
        // Quoted, it is a string.
        assert!(
            entry("config-keys: [\"no\"]\ndescription: ['2026-08-01']\npr-link: XXX\n").is_ok()
        );
    }

    #[test]
    fn field_rules() {
        assert!(entry("config-keys: []\ndescription: [x]\npr-link: X\n").is_err());
        assert!(entry("config-keys: [a]\ndescription: x\npr-link: X\n").is_err());
        assert!(entry("config-keys: [a]\ndescription: [x]\n").is_err());
        assert!(entry("config-keys: [a]\ndescription: [x]\npr-link: 1234\n").is_err());
        assert!(entry("config-keys: [a]\ndescription: [x]\npr-link:\n").is_err());
        assert!(entry("config-keys: [a]\ndescription: [x]\npr-link: X\nbogus: 1\n").is_err());
        assert!(
            entry("config-keys: [a]\ndescription: ['']\npr-link: X\nscenario-type: []\n").is_err()
        );
        assert!(
            entry(
                "config-keys: [a]\ndescription: [x]\npr-link: X\nscenario-type: agentic-coding\n"
            )
            .is_err()
        );
        let e = entry("config_keys: [a]\ndescription: [x]\npr-link: X\nscenario_type: [agentic-coding]\nevals-only: yes\nall-evals: \"true\"\neval-min-prefill-ep: \"2\"\n").unwrap();
        assert!(e.evals_only && e.all_evals);
        assert_eq!(e.eval_min_prefill_ep, Some(2));
        assert!(
            entry("config-keys: [a]\ndescription: [x]\npr-link: X\neval-min-prefill-ep: 0\n")
                .is_err()
        );
    }

    #[test]
    fn exclusions() {
        let errs = entry(
            "config-keys: [a]\ndescription: [x]\npr-link: X\nappend-only: true\nevals-only: true\n",
        )
        .unwrap_err();
        assert!(errs[0].message.contains("append-only cannot be combined"));
        let errs = entry(
            "config-keys: [a]\ndescription: [x]\npr-link: X\nno-evals: true\nall-evals: true\n",
        )
        .unwrap_err();
        assert!(errs[0].message.contains("no-evals cannot be combined"));
        assert!(entry("config-keys: [a]\ndescription: [x]\npr-link: X\nevals-only: true\nall-evals: true\n").is_ok());
        let root = infx_yaml::parse_str(
            Path::new("t"),
            "config-keys: [a]\ndescription: [x]\npr-link: X\nno-evals: true\n",
        )
        .unwrap();
        assert!(validate_entry(&root, Dialect::Aug, None).is_err());
    }
}
