//! Deep merge with provenance.

use crate::pystr::py_str;
use crate::source::{Origin, Origins, join_key};
use infx_yaml::{Mapping, Node, Value};

/// What a `null` in the overriding tree does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullMode {
    /// `null` deletes the key (srtctl `deep_merge`, `override_*` variants).
    Delete,
    /// `null` leaves the base value in place (what srtctl c88ef731 actually validates for
    /// `zip_override_*` variants, recipes-schema1.md §6.6).
    KeepBase,
    /// `null` is an ordinary value that replaces (lane composition: no null deletion).
    Replace,
}

/// Merges `over` into `dst` in place: mappings merge recursively, anything else replaces
/// (lists included), `null` per `nulls`. Base keys keep their positions; new keys are appended
/// in `over`'s order. Every value written is recorded in `origins` under its path.
pub fn merge_into(
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
pub fn drop_nulls(node: &mut Node, path: &str, origins: &mut Origins) {
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
