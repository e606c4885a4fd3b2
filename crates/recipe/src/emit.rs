//! A block-style YAML writer for resolved variants (`dry-run --resolved`): what a variant
//! resolves to, readable and re-loadable with the same meaning (every string that a YAML 1.1
//! reader would not read back as that same string is double-quoted).

use infx_yaml::{Node, Value};

/// The tree as block YAML, ending with a newline.
pub fn to_yaml(node: &Node) -> String {
    let mut out = String::new();
    match &node.value {
        Value::Map(m) if !m.is_empty() => write_map(node, 0, &mut out),
        Value::Seq(s) if !s.is_empty() => write_seq(node, 0, &mut out),
        _ => {
            out.push_str(&scalar(node));
            out.push('\n');
        }
    }
    out
}

fn is_block(n: &Node) -> bool {
    match &n.value {
        Value::Map(m) => !m.is_empty(),
        Value::Seq(s) => !s.is_empty(),
        _ => false,
    }
}

fn write_map(n: &Node, indent: usize, out: &mut String) {
    let Value::Map(m) = &n.value else { return };
    for (k, v) in m.iter_nodes() {
        out.push_str(&" ".repeat(indent));
        out.push_str(&key(k));
        out.push(':');
        if is_block(v) {
            out.push('\n');
            match &v.value {
                Value::Map(_) => write_map(v, indent + 2, out),
                _ => write_seq(v, indent + 2, out),
            }
        } else {
            out.push(' ');
            out.push_str(&scalar(v));
            out.push('\n');
        }
    }
}

fn write_seq(n: &Node, indent: usize, out: &mut String) {
    let Value::Seq(items) = &n.value else { return };
    for it in items {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        if is_block(it) {
            // The first line of the nested block goes after the dash; the rest line up under it.
            let mut nested = String::new();
            match &it.value {
                Value::Map(_) => write_map(it, indent + 2, &mut nested),
                _ => write_seq(it, indent + 2, &mut nested),
            }
            out.push(' ');
            out.push_str(nested.trim_start_matches(' '));
        } else {
            out.push(' ');
            out.push_str(&scalar(it));
            out.push('\n');
        }
    }
}

fn key(k: &Node) -> String {
    match &k.value {
        Value::Str(s) => string(s),
        _ => scalar(k),
    }
}

fn scalar(n: &Node) -> String {
    match &n.value {
        Value::Null => "null".into(),
        Value::Bool(b) => if *b { "true" } else { "false" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.text.to_string(),
        Value::Str(s) => string(s),
        Value::Timestamp(t) => t.clone(),
        Value::Seq(_) => "[]".into(),
        Value::Map(_) => "{}".into(),
    }
}

/// Plain when it is a simple word that reads back as the same string, else double-quoted
/// (JSON escapes are valid YAML double-quoted escapes).
fn string(s: &str) -> String {
    let simple = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '/' || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./@+-".contains(c));
    let reads_back = simple
        && infx_yaml::parse_str(std::path::Path::new("<value>"), s)
            .is_ok_and(|n| matches!(&n.value, Value::Str(t) if t == s));
    if reads_back {
        s.to_string()
    } else {
        // Serializing a str cannot fail; Rust's debug quoting is the (also valid) fallback.
        serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn round_trips() {
        let text = "\
name: x
slurm: {time_limit: '8:00:00', account: 'yes', n: 3, f: 0.80}
env: {A: 'on', B: \"a: b\", C: '', D: null, E: '017'}
list: [1, {a: [x, 'true'], b: {}}, [2, 3], []]
empty: {}
";
        let n = infx_yaml::parse_str(Path::new("t"), text).unwrap();
        let out = to_yaml(&n);
        let back = infx_yaml::parse_str(Path::new("t2"), &out).unwrap();
        assert_eq!(back, n, "{out}");
        assert!(out.contains("time_limit: \"8:00:00\"\n"), "{out}");
        assert!(out.contains("name: x\n"), "{out}");
        assert!(out.contains("f: 0.80\n"), "{out}");
    }
}
