//! marshmallow 4 (non-strict) coercion of loaded YAML values, shared by schema 1 and 2
//! (docs/recipe.md, "Value coercion (both schemas)"). Each function returns the JSON value
//! marshmallow would dump, or marshmallow's message.

use crate::pystr::py_str;
use infx_yaml::{Node, Value};
use serde_json::{Map, Value as J, json};

pub(crate) const NOT_STR: &str = "Not a valid string.";
pub(crate) const NOT_INT: &str = "Not a valid integer.";
pub(crate) const NOT_NUM: &str = "Not a valid number.";
pub(crate) const NOT_BOOL: &str = "Not a valid boolean.";
pub(crate) const NOT_MAP: &str = "Not a valid mapping type.";
pub(crate) const NOT_LIST: &str = "Not a valid list.";
pub(crate) const NULL: &str = "Field may not be null.";
pub(crate) const MISSING: &str = "Missing data for required field.";
pub(crate) const UNKNOWN: &str = "Unknown field.";

pub(crate) fn to_str(n: &Node) -> Result<J, &'static str> {
    match &n.value {
        Value::Str(s) => Ok(J::String(s.clone())),
        _ => Err(NOT_STR),
    }
}

pub fn to_int(n: &Node) -> Result<J, &'static str> {
    match &n.value {
        Value::Int(i) => Ok(json!(i)),
        Value::Float(f) if f.value.is_finite() => Ok(json!(f.value.trunc() as i64)),
        Value::Str(s) => parse_py_int(s).map(|i| json!(i)).ok_or(NOT_INT),
        _ => Err(NOT_INT),
    }
}

/// Python `int(str)`: surrounding whitespace, a sign, decimal digits with single underscores.
fn parse_py_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    if !digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    let v: i64 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -v } else { v })
}

pub(crate) fn to_float(n: &Node) -> Result<J, &'static str> {
    let v = match &n.value {
        Value::Int(i) => *i as f64,
        Value::Float(f) => f.value,
        Value::Str(s) => {
            let t = s.trim().replace('_', "");
            let low = t.to_ascii_lowercase();
            if matches!(
                low.trim_start_matches(['+', '-']),
                "inf" | "infinity" | "nan"
            ) {
                return Err("Special numeric values (nan or infinity) are not permitted.");
            }
            t.parse::<f64>().map_err(|_| NOT_NUM)?
        }
        _ => return Err(NOT_NUM),
    };
    if !v.is_finite() {
        return Err("Special numeric values (nan or infinity) are not permitted.");
    }
    Ok(json!(v))
}

pub(crate) fn to_bool(n: &Node) -> Result<J, &'static str> {
    match &n.value {
        Value::Bool(b) => Ok(J::Bool(*b)),
        Value::Int(1) => Ok(J::Bool(true)),
        Value::Int(0) => Ok(J::Bool(false)),
        Value::Float(f) if f.value == 1.0 => Ok(J::Bool(true)),
        Value::Float(f) if f.value == 0.0 => Ok(J::Bool(false)),
        Value::Str(s) => match s.as_str() {
            "t" | "T" | "true" | "True" | "TRUE" | "on" | "On" | "ON" | "y" | "Y" | "yes"
            | "Yes" | "YES" | "1" => Ok(J::Bool(true)),
            "f" | "F" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" | "n" | "N" | "no"
            | "No" | "NO" | "0" => Ok(J::Bool(false)),
            _ => Err(NOT_BOOL),
        },
        _ => Err(NOT_BOOL),
    }
}

/// A raw (`Any`) value as JSON: what marshmallow's `Raw` dumps.
pub(crate) fn raw(n: &Node) -> J {
    match &n.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => json!(i),
        Value::Float(f) => json!(f.value),
        Value::Str(s) => J::String(s.clone()),
        Value::Timestamp(t) => J::String(t.clone()),
        Value::Seq(items) => J::Array(items.iter().map(raw).collect()),
        Value::Map(m) => {
            let mut o = Map::with_capacity(m.len());
            for (k, v) in m.iter_nodes() {
                o.insert(py_str(k), raw(v));
            }
            J::Object(o)
        }
    }
}
