//! Deep merge with provenance.

use crate::pystr::py_str;
use crate::source::{Origin, Origins, join_key};
use infx_yaml::{Mapping, Node, Value};

/// What a `null` in the overriding tree does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NullMode {
    /// `null` deletes the key (srtctl `deep_merge`, `override_*` variants).
    Delete,
    /// `null` leaves the base value in place (what srtctl c88ef731 actually validates for
    /// `zip_override_*` variants; docs/recipe.md, "Zip variants").
    KeepBase,
    /// `null` is an ordinary value that replaces (lane composition: no null deletion).
    Replace,
}

/// Merges `over` into `dst` in place: mappings merge recursively, anything else replaces
/// (lists included), `null` per `nulls`. Base keys keep their positions; new keys are appended
/// in `over`'s order. Every value written is recorded in `origins` under its path.
pub(crate) fn merge_into(
    dst: &mut Node,
    over: &Node,
    path: &str,
    origins: &mut Origins,
    origin: &Origin,
    nulls: NullMode,
) {
    match (&mut dst.value, &over.value) {
        (Value::Map(d), Value::Map(o)) => merge_map(d, o, path, origins, origin, nulls),
        _ => {
            *dst = over.clone();
            origins.set(path, origin.clone());
        }
    }
}

fn merge_map(
    dst: &mut Mapping,
    over: &Mapping,
    path: &str,
    origins: &mut Origins,
    origin: &Origin,
    nulls: NullMode,
) {
    for (k, v) in over.iter_nodes() {
        let key = py_str(k);
        let p = join_key(path, &key);
        if v.is_null() {
            match nulls {
                NullMode::Delete => {
                    if k.as_str().is_some() && dst.shift_remove(&key).is_some() {
                        origins.remove_below(&p);
                    }
                    continue;
                }
                NullMode::KeepBase => continue,
                NullMode::Replace => {}
            }
        }
        if let (Some(existing), Value::Map(om)) =
            (k.as_str().and_then(|s| dst.get_mut(s)), &v.value)
            && let Value::Map(em) = &mut existing.value
        {
            merge_map(em, om, &p, origins, origin, nulls);
            continue;
        }
        dst.insert(k.clone(), v.clone());
        origins.set(&p, origin.clone());
    }
}

/// Removes every null-valued mapping entry, recursively (InferenceX's expander does this for
/// zip variants).
pub(crate) fn drop_nulls(node: &mut Node, path: &str, origins: &mut Origins) {
    match &mut node.value {
        Value::Map(m) => {
            let doomed: Vec<String> = m
                .iter()
                .filter(|(_, _, v)| v.is_null())
                .map(|(k, _, _)| k.to_string())
                .collect();
            for k in doomed {
                m.shift_remove(&k);
                origins.remove_below(&join_key(path, &k));
            }
            let keys: Vec<String> = m.keys().map(str::to_string).collect();
            for k in keys {
                if let Some(v) = m.get_mut(&k) {
                    drop_nulls(v, &join_key(path, &k), origins);
                }
            }
        }
        Value::Seq(items) => {
            for (i, it) in items.iter_mut().enumerate() {
                drop_nulls(it, &crate::source::join_index(path, i), origins);
            }
        }
        _ => {}
    }
}

/// srtctl c88ef731 builds a zip variant as a plain-dict merge of base and slice, merges that
/// back into the comment-preserving base, dumps it and re-reads the text with PyYAML (see
/// docs/recipe.md, "Zip variants"). Two things change on the way, and this applies both to
/// `tree` (the base with the slice merged in, slice nulls keeping the base value):
/// - a `null` the base wrote and the slice did not touch is deleted, so the default returns;
/// - every string scalar outside the subtrees kept verbatim (keys the slice set to `null`) is
///   written unquoted when it is a plain string in YAML 1.2 and read back by YAML 1.1, so
///   `'yes'`/`'off'` become booleans and `'8:00:00'` the sexagesimal integer 28800.
pub(crate) fn srtctl_zip_reread(
    tree: &mut Node,
    base: &Node,
    slice: Option<&Node>,
    path: &str,
    origins: &mut Origins,
) {
    let (Value::Map(t), Value::Map(b)) = (&mut tree.value, &base.value) else {
        retype_strings(tree);
        return;
    };
    let slice_map = slice.and_then(Node::as_map);
    for (k, kn, bv) in b.iter() {
        let p = join_key(path, k);
        let touched = slice_map.and_then(|s| s.get(k));
        match touched {
            // The plain merge popped the key, so the base's own node survives untouched.
            Some(sv) if sv.is_null() => {}
            None if bv.is_null() => {
                if kn.as_str().is_some() && t.shift_remove(k).is_some() {
                    origins.remove_below(&p);
                }
            }
            _ => {
                if let Some(tv) = t.get_mut(k) {
                    if bv.as_map().is_some() && touched.is_none_or(|s| s.as_map().is_some()) {
                        srtctl_zip_reread(tv, bv, touched, &p, origins);
                    } else {
                        retype_strings(tv);
                    }
                }
            }
        }
    }
    let new_keys: Vec<String> = t
        .keys()
        .filter(|k| !b.contains_key(k))
        .map(str::to_string)
        .collect();
    for k in new_keys {
        if let Some(tv) = t.get_mut(&k) {
            retype_strings(tv);
        }
    }
}

/// Re-types every string scalar below `n` as a YAML 1.2 dump read back by YAML 1.1 would.
fn retype_strings(n: &mut Node) {
    match &mut n.value {
        Value::Str(s) => {
            if let Some(v) = reread_plain_string(s) {
                n.value = v;
                n.style = infx_yaml::ScalarStyle::Plain;
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(retype_strings),
        Value::Map(m) => {
            let keys: Vec<String> = m.keys().map(str::to_string).collect();
            for k in keys {
                if let Some(v) = m.get_mut(&k) {
                    retype_strings(v);
                }
            }
        }
        _ => {}
    }
}

/// The value a string gets when a YAML 1.2 emitter writes it plain and a YAML 1.1 reader reads
/// it back, when that differs from the string: the 1.1-only booleans (`yes`, `No`, `on`, `OFF`,
/// …) and sexagesimal numbers (`8:00:00`, `1:20.5`). Every other 1.1 non-string (`true`, `~`,
/// `017`, `1_000`, dates) is also a non-string in 1.2, so the emitter quotes it and it stays a
/// string.
pub(crate) fn reread_plain_string(s: &str) -> Option<Value> {
    let candidate = s.contains(':')
        || matches!(
            s,
            "yes" | "Yes" | "YES" | "no" | "No" | "NO" | "on" | "On" | "ON" | "off" | "Off" | "OFF"
        );
    if !candidate || s.trim() != s || s.contains('\n') {
        return None;
    }
    let node = infx_yaml::parse_str(std::path::Path::new("<zip value>"), s).ok()?;
    match node.value {
        Value::Bool(_) => Some(node.value),
        Value::Int(_) | Value::Float(_) if s.contains(':') => Some(node.value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::sync::Arc;

    fn n(s: &str) -> Node {
        infx_yaml::parse_str(Path::new("t.yaml"), s).unwrap()
    }
    fn o(i: usize) -> Origin {
        Origin {
            source: i,
            block: Arc::from("b"),
        }
    }

    #[test]
    fn merge_rules() {
        let mut base = n("a: {x: 1, y: [1, 2]}\nb: 2\nc: 3\n");
        let over = n("a: {y: [9], z: 4}\nb: null\nd: {e: null}\n");
        let mut org = Origins::new(o(0));
        merge_into(&mut base, &over, "", &mut org, &o(1), NullMode::Delete);
        assert_eq!(base, n("a: {x: 1, y: [9], z: 4}\nc: 3\nd: {e: null}\n"));
        let keys: Vec<&str> = base.as_map().unwrap().keys().collect();
        assert_eq!(keys, ["a", "c", "d"]);
        assert_eq!(org.get("a.x").unwrap().source, 0);
        assert_eq!(org.get("a.y").unwrap().source, 1);
        assert_eq!(org.get("a.y[0]").unwrap().source, 1);
        assert_eq!(org.get("d.e").unwrap().source, 1);
    }

    #[test]
    fn keep_base_and_replace() {
        let base = n("a: 1\nb: {c: 2}\n");
        let over = n("a: null\nb: {c: null}\n");
        let mut x = base.clone();
        let mut org = Origins::new(o(0));
        merge_into(&mut x, &over, "", &mut org, &o(1), NullMode::KeepBase);
        assert_eq!(x, base);
        merge_into(&mut x, &over, "", &mut org, &o(1), NullMode::Replace);
        assert_eq!(x, n("a: null\nb: {c: null}\n"));
    }
}
