//! Python's `str()` / `repr()` of loaded YAML values, which srtctl uses to build names and
//! command lines.

use infx_yaml::{Mapping, Node, Value};

/// `str(value)` as Python prints it.
pub fn py_str(node: &Node) -> String {
    match &node.value {
        Value::Str(s) => s.clone(),
        _ => py_repr(node),
    }
}

/// Python's type of a safe-loaded value as its error messages name it (`'list' object has no
/// attribute 'get'`): the C type name, which for PyYAML's timestamps carries the module
/// (`datetime.date` for a date alone, `datetime.datetime` for any other).
pub(crate) fn py_type_name(node: &Node) -> &'static str {
    match &node.value {
        Value::Null => "NoneType",
        Value::Timestamp(t) if t.len() == "2001-12-14".len() => "datetime.date",
        Value::Timestamp(_) => "datetime.datetime",
        v => v.type_name(),
    }
}

/// `type(value).__name__`: [`py_type_name`] without its module (`date`, `datetime`).
pub(crate) fn py_type_short_name(node: &Node) -> &'static str {
    let name = py_type_name(node);
    name.rsplit_once('.').map_or(name, |(_, short)| short)
}

/// `repr(value)` as Python prints it (dicts and lists use this for their items).
pub(crate) fn py_repr(node: &Node) -> String {
    match &node.value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => py_float(f.value),
        Value::Str(s) => py_str_repr(s),
        Value::Timestamp(t) => format!("'{t}'"),
        Value::Seq(items) => py_list(items, py_repr),
        Value::Map(m) => py_dict(m, py_repr, py_repr),
    }
}

/// A list the way `repr` and `json.dumps` both lay it out: `[a, b]`, items written by `item`.
fn py_list(items: &[Node], item: fn(&Node) -> String) -> String {
    let inner: Vec<String> = items.iter().map(item).collect();
    format!("[{}]", inner.join(", "))
}

/// A dict the way `repr` and `json.dumps` both lay it out: `{k: v, …}`.
fn py_dict(m: &Mapping, key: fn(&Node) -> String, value: fn(&Node) -> String) -> String {
    let inner: Vec<String> = m
        .iter_nodes()
        .map(|(k, v)| format!("{}: {}", key(k), value(v)))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

/// Python's string repr: single quotes unless the text holds a single quote and no double one.
pub fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's float repr: shortest round-trip digits, scientific below 1e-4 and from 1e16.
pub fn py_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // `{:e}` gives the shortest round-trip digits: "1.5e-5", "1e16".
    let sci = format!("{v:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if neg { "-" } else { "" };
    if !(-4..16).contains(&exp) {
        let mut m = digits[..1].to_string();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let es = if exp < 0 {
            format!("-{:02}", -exp)
        } else {
            format!("+{exp:02}")
        };
        return format!("{sign}{m}e{es}");
    }
    let point = exp + 1; // digits before the decimal point
    let s = if point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else if point as usize >= digits.len() {
        format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
    } else {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    };
    format!("{sign}{s}")
}

/// Python's `json.dumps(value)` with its defaults: `", "` and `": "` separators, non-ASCII
/// escaped as `\\uXXXX`, floats as Python prints them.
pub(crate) fn py_json(node: &Node) -> String {
    match &node.value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) if f.value.is_nan() => "NaN".into(),
        Value::Float(f) if f.value.is_infinite() => if f.value > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }
        .into(),
        Value::Float(f) => py_float(f.value),
        Value::Str(s) | Value::Timestamp(s) => json_str(s),
        Value::Seq(items) => py_list(items, py_json),
        Value::Map(m) => py_dict(m, |k| json_str(&py_str(k)), py_json),
    }
}

/// A JSON string literal with Python's `ensure_ascii` escaping.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Type names as Python's messages print them: `'datetime.date' object has no attribute`
    /// and `type(x).__name__` (`date`), for every kind of value safe loading makes.
    #[test]
    fn type_names_as_python_prints_them() {
        let node = infx_yaml::parse_str(
            std::path::Path::new("t.yaml"),
            "[null, true, 1, 0.5, s, [], {}, 2001-12-14, 2001-12-14 21:59:43.10]\n",
        )
        .expect("parses");
        let items = match &node.value {
            Value::Seq(items) => items,
            other => panic!("{other:?}"),
        };
        let names: Vec<(&str, &str)> = items
            .iter()
            .map(|n| (py_type_name(n), py_type_short_name(n)))
            .collect();
        assert_eq!(
            names,
            [
                ("NoneType", "NoneType"),
                ("bool", "bool"),
                ("int", "int"),
                ("float", "float"),
                ("str", "str"),
                ("list", "list"),
                ("dict", "dict"),
                ("datetime.date", "date"),
                ("datetime.datetime", "datetime"),
            ]
        );
    }

    #[test]
    fn json_like_python() {
        let node = infx_yaml::parse_str(
            std::path::Path::new("t.yaml"),
            "a: [1, 2.0, true, null]\nb: {c: \"d\\u00e9\\n\"}\n",
        )
        .expect("parses");
        assert_eq!(
            py_json(&node),
            r#"{"a": [1, 2.0, true, null], "b": {"c": "d\u00e9\n"}}"#
        );
    }

    #[test]
    fn floats_like_python() {
        assert_eq!(py_float(0.8), "0.8");
        assert_eq!(py_float(1.0), "1.0");
        assert_eq!(py_float(1e-5), "1e-05");
        assert_eq!(py_float(0.0001), "0.0001");
        assert_eq!(py_float(1e16), "1e+16");
        assert_eq!(py_float(123456.5), "123456.5");
        assert_eq!(py_float(-2.5), "-2.5");
        assert_eq!(py_float(100.0), "100.0");
    }

    #[test]
    fn string_repr() {
        assert_eq!(py_str_repr("a"), "'a'");
        assert_eq!(py_str_repr("it's"), "\"it's\"");
    }
}
