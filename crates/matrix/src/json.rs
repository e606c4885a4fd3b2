//! A small ordered JSON value and a writer that prints exactly what Python's `json.dumps`
//! prints with its default arguments (`", "` / `": "` separators, `ensure_ascii`, float `repr`).
//!
//! Rows are dicts in the upstream generator and their key order is visible in the output, so an
//! [`Object`] behaves like a Python dict: setting an existing key keeps its position, a new key
//! goes to the end, removing a key keeps the order of the others.

use infx_yaml::{Node, Value};
use std::borrow::Cow;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Json>),
    Object(Object),
}

/// An insertion-ordered string-keyed map with Python dict update semantics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Object(Vec<(Cow<'static, str>, Json)>);

impl Object {
    pub fn new() -> Self {
        Object(Vec::new())
    }
    /// An empty object with room for `n` keys.
    pub fn with_capacity(n: usize) -> Self {
        Object(Vec::with_capacity(n))
    }
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    pub fn contains(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }
    /// `d[key] = value`: replaces in place, or appends.
    pub fn set(&mut self, key: &str, value: Json) {
        match self.get_mut(key) {
            Some(slot) => *slot = value,
            None => self.0.push((Cow::Owned(key.to_string()), value)),
        }
    }
    /// [`Object::set`] for a literal key (no allocation for the key).
    pub fn put(&mut self, key: &'static str, value: Json) {
        match self.get_mut(key) {
            Some(slot) => *slot = value,
            None => self.0.push((Cow::Borrowed(key), value)),
        }
    }
    /// `d.pop(key, None)`.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_ref())
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn get_str(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Json::Str(s)) => Some(s),
            _ => None,
        }
    }
    pub fn get_i64(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(Json::as_i64)
    }
}

impl FromIterator<(String, Json)> for Object {
    fn from_iter<T: IntoIterator<Item = (String, Json)>>(iter: T) -> Self {
        let mut o = Object::new();
        for (k, v) in iter {
            o.set(&k, v);
        }
        o
    }
}

impl Json {
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }
    pub fn as_list(&self) -> Option<&[Json]> {
        match self {
            Json::List(l) => Some(l),
            _ => None,
        }
    }
    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Json::Null => false,
            Json::Bool(b) => *b,
            Json::Int(i) => *i != 0,
            Json::Float(f) => *f != 0.0,
            Json::Str(s) => !s.is_empty(),
            Json::List(l) => !l.is_empty(),
            Json::Object(o) => !o.is_empty(),
        }
    }

    /// The value PyYAML would have produced, as JSON. Dates are not JSON-serialisable in
    /// Python either (`json.dumps` raises), so they are an error here.
    pub fn from_node(node: &Node) -> Result<Json, String> {
        Ok(match &node.value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::Int(*i),
            Value::Float(f) => Json::Float(f.value),
            Value::Str(s) => Json::Str(s.clone()),
            Value::Timestamp(t) => {
                return Err(format!(
                    "Object of type date is not JSON serializable ({t})"
                ));
            }
            Value::Seq(items) => Json::List(
                items
                    .iter()
                    .map(Json::from_node)
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(m) => {
                let mut o = Object::new();
                for (k, v) in m.iter_nodes() {
                    let key = match &k.value {
                        Value::Str(s) => s.clone(),
                        // json.dumps converts these key types to strings.
                        Value::Int(i) => i.to_string(),
                        Value::Bool(true) => "true".into(),
                        Value::Bool(false) => "false".into(),
                        Value::Null => "null".into(),
                        Value::Float(f) => py_float_repr(f.value),
                        other => {
                            return Err(format!(
                                "keys must be str, int, float, bool or None, not {}",
                                other.type_name()
                            ));
                        }
                    };
                    o.set(&key, Json::from_node(v)?);
                }
                Json::Object(o)
            }
        })
    }

    /// `json.dumps(self)` with default arguments.
    pub fn to_python(&self) -> String {
        let mut out = String::new();
        write_value(self, &mut out, false);
        out
    }

    /// `json.dumps(self, sort_keys=True, separators=(",", ":"))` (ensure_ascii stays on).
    pub fn to_python_compact_sorted(&self) -> String {
        let mut out = String::new();
        write_value(self, &mut out, true);
        out
    }
}

/// Python `json.dumps(rows)` of a list of row objects.
pub fn dumps_rows(rows: &[Object]) -> String {
    let mut out = String::with_capacity(rows.len() * 600);
    out.push('[');
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_object(row, &mut out, false);
    }
    out.push(']');
    out
}

fn write_value(v: &Json, out: &mut String, compact_sorted: bool) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        Json::Int(i) => {
            use std::fmt::Write;
            let _ = write!(out, "{i}");
        }
        Json::Float(f) => out.push_str(&json_float(*f)),
        Json::Str(s) => write_str(s, out),
        Json::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(if compact_sorted { "," } else { ", " });
                }
                write_value(item, out, compact_sorted);
            }
            out.push(']');
        }
        Json::Object(o) => write_object(o, out, compact_sorted),
    }
}

fn write_object(o: &Object, out: &mut String, compact_sorted: bool) {
    out.push('{');
    let mut entries: Vec<&(Cow<'static, str>, Json)> = o.0.iter().collect();
    if compact_sorted {
        // Python sorts str keys by code point, which is UTF-8 byte order.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
    }
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push_str(if compact_sorted { "," } else { ", " });
        }
        write_str(k, out);
        out.push_str(if compact_sorted { ":" } else { ": " });
        write_value(v, out, compact_sorted);
    }
    out.push('}');
}

/// `ensure_ascii` string escaping: everything outside `' '..='~'` is escaped, non-BMP
/// characters as UTF-16 surrogate pairs (one implementation for the workspace, in infx-recipe).
pub fn write_str(s: &str, out: &mut String) {
    out.push_str(&infx_recipe::json_str(s));
}

/// A float as Python's `json.dumps` writes it: `repr(float)`, with JSON's spellings of the
/// non-finite values.
pub fn json_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        py_float_repr(f)
    }
}

/// Python's `repr(float)` (one implementation for the workspace, in infx-recipe).
pub(crate) fn py_float_repr(f: f64) -> String {
    infx_recipe::py_float(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (3.84, "3.84"),
            (1.0, "1.0"),
            (0.8, "0.8"),
            (100.0, "100.0"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (123456789012345.6, "123456789012345.6"),
            (0.1 + 0.2, "0.30000000000000004"),
        ];
        for (f, want) in cases {
            assert_eq!(py_float_repr(f), want, "{f}");
        }
        assert_eq!(json_float(f64::INFINITY), "Infinity");
        assert_eq!(json_float(f64::NAN), "NaN");
    }

    #[test]
    fn strings_are_escaped_like_ensure_ascii() {
        let v = Json::str("a\"b\\c\n\u{7f}é😀");
        assert_eq!(v.to_python(), r#""a\"b\\c\n\u007f\u00e9\ud83d\ude00""#);
    }

    #[test]
    fn object_keeps_python_dict_order() {
        let mut o = Object::new();
        o.set("a", Json::Int(1));
        o.set("b", Json::Int(2));
        o.set("a", Json::Int(3));
        o.set("c", Json::List(vec![Json::Bool(true), Json::Null]));
        assert_eq!(
            Json::Object(o.clone()).to_python(),
            r#"{"a": 3, "b": 2, "c": [true, null]}"#
        );
        assert_eq!(
            Json::Object(o.clone()).to_python_compact_sorted(),
            r#"{"a":3,"b":2,"c":[true,null]}"#
        );
        o.remove("a");
        assert_eq!(o.keys().collect::<Vec<_>>(), ["b", "c"]);
        assert_eq!(dumps_rows(&[]), "[]");
    }
}
