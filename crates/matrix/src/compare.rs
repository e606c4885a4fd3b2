//! Whether two sweep rows run the same benchmark: the row comparison the changelog's impact
//! rests on (docs/changelog.md, "Impact is about rows").
//!
//! Rows are compared field by field, key order aside. Across upstream #2096's metadata change
//! (a base tree without KV metadata, a head tree with it; docs/config.md, "Rules carry their
//! day") the fields that change describe the same run in the new words, so they are compared
//! in the old words or left out (docs/changelog.md, "Across the KV metadata change").

use crate::json::Json;
use crate::sweep_row::SweepRow;
use crate::{MasterConfigs, Row};

/// Fields that #2096 added (`router`, `kv-p2p-transfer`: records of what already ran) or
/// renamed (`kv-offload-backend`: before it a free string each launcher read in its own way —
/// minimaxm3-fp8-mi325x's ran Mooncake under `native` — so old and new names cannot be matched),
/// and `exp-name`, built from the backend's name: not compared across the change. What a
/// launcher does with the new names is a launcher edit, a cause of its own.
const KV_METADATA_ONLY: [&str; 4] = [
    "router",
    "kv-p2p-transfer",
    "kv-offload-backend",
    "exp-name",
];

/// How two revisions' rows are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowComparison {
    /// The base states no KV metadata and the head does (#2096's change itself).
    pub across_kv_metadata: bool,
}

impl RowComparison {
    /// The comparison of `base`'s rows with `head`'s.
    pub fn of(base: &MasterConfigs<'_>, head: &MasterConfigs<'_>) -> Self {
        RowComparison {
            across_kv_metadata: !base.kv_metadata && head.kv_metadata,
        }
    }

    /// The fields in which `head` differs from `base` (head's order, then fields only the base
    /// has); empty when both run the same benchmark.
    pub fn differing_fields<'r>(&self, base: &'r Row, head: &'r Row) -> Vec<&'r str> {
        let skipped = |k: &str| self.across_kv_metadata && KV_METADATA_ONLY.contains(&k);
        let mut out: Vec<&str> = head
            .iter()
            .filter(|(k, _)| !skipped(k))
            .filter(|(k, v)| match base.get(k) {
                Some(b) => b != *v,
                None => true,
            })
            .map(|(k, _)| k)
            .collect();
        out.extend(base.keys().filter(|k| !skipped(k) && !head.contains(k)));
        out
    }

    /// Whether `head` runs the same benchmark as `base` ([`Self::differing_fields`] is empty),
    /// without allocating.
    fn same(&self, base: &Row, head: &Row) -> bool {
        let skipped = |k: &str| self.across_kv_metadata && KV_METADATA_ONLY.contains(&k);
        head.iter()
            .filter(|(k, _)| !skipped(k))
            .all(|(k, v)| base.get(k) == Some(v))
            && base.keys().all(|k| skipped(k) || head.contains(k))
    }

    /// What makes the first head row without a base counterpart new, in words: "a new row"
    /// when the base has none, else the fields by which it differs from its nearest base row
    /// (with both values when one field differs). `None` when every head row has one (a
    /// multiset: each base row answers for one head row), so the head runs nothing new.
    pub fn first_difference(&self, base: &[Row], head: &[Row]) -> Option<String> {
        let mut left: Vec<&Row> = base.iter().collect();
        for h in head {
            // The common case, an identical row, is found without building field lists; the
            // nearest row is looked for only to word the first difference.
            if let Some(i) = left.iter().position(|b| self.same(b, h)) {
                left.swap_remove(i);
                continue;
            }
            let nearest = left
                .iter()
                .enumerate()
                .map(|(i, b)| (i, self.differing_fields(b, h)))
                .min_by_key(|(_, d)| d.len());
            match nearest {
                Some((i, d)) => {
                    let b = left[i];
                    return Some(match d.as_slice() {
                        [one] => format!(
                            "a row's `{one}` is {}, was {}",
                            shown(h.get(one)),
                            shown(b.get(one))
                        ),
                        many => format!(
                            "a row differs from the base's in {}",
                            many.iter()
                                .take(4)
                                .map(|f| format!("`{f}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                }
                None => {
                    // The point's coordinates say which row it is (`exp-name` alone often
                    // names a whole curve).
                    let at: Vec<String> = ["tp", "ep", "conc"]
                        .iter()
                        .filter_map(|f| Some(format!("{f} {}", h.get(f)?.to_python())))
                        .collect();
                    let name = h
                        .exp_name()
                        .map_or_else(|| "a new row".to_string(), |n| format!("a new row `{n}`"));
                    return Some(if at.is_empty() {
                        name
                    } else {
                        format!("{name} ({})", at.join(", "))
                    });
                }
            }
        }
        None
    }
}

/// A field's value as a message shows it (JSON), cut at 200 characters (an image reference
/// with its digest is ~150: the digit that differs must show).
fn shown(v: Option<&Json>) -> String {
    let Some(v) = v else {
        return "absent".to_string();
    };
    let text = v.to_python();
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(fields: &[(&str, Json)]) -> Row {
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn backend(name: &str) -> Json {
        Json::Object(row(&[("name", Json::str(name))]))
    }

    const SAME_DAY: RowComparison = RowComparison {
        across_kv_metadata: false,
    };
    const ACROSS: RowComparison = RowComparison {
        across_kv_metadata: true,
    };

    #[test]
    fn key_order_does_not_matter() {
        let a = row(&[("tp", Json::Int(4)), ("conc", Json::Int(8))]);
        let b = row(&[("conc", Json::Int(8)), ("tp", Json::Int(4))]);
        assert!(SAME_DAY.differing_fields(&a, &b).is_empty());
    }

    #[test]
    fn a_changed_field_is_named_with_both_values() {
        let base = vec![row(&[("image", Json::str("a:1")), ("tp", Json::Int(4))])];
        let head = vec![row(&[("image", Json::str("a:2")), ("tp", Json::Int(4))])];
        assert_eq!(
            SAME_DAY.first_difference(&base, &head).as_deref(),
            Some("a row's `image` is \"a:2\", was \"a:1\"")
        );
    }

    #[test]
    fn the_kv_metadata_change_itself_runs_the_same_rows() {
        let base = vec![row(&[
            ("exp-name", Json::str("k_tp8_kvdram-native")),
            ("kv-offload-backend", Json::str("native")),
            ("tp", Json::Int(8)),
        ])];
        let head = vec![row(&[
            ("exp-name", Json::str("k_tp8_kvdram-vllm-native")),
            ("kv-offload-backend", backend("vllm-native")),
            ("tp", Json::Int(8)),
            ("kv-p2p-transfer", Json::str("mori")),
        ])];
        assert_eq!(ACROSS.first_difference(&base, &head), None);
        // Within one day, the same edit is a different row.
        assert!(SAME_DAY.first_difference(&base, &head).is_some());
    }

    #[test]
    fn other_fields_still_count_across_the_change() {
        let base = vec![row(&[
            ("kv-offload-backend", Json::str("native")),
            ("tp", Json::Int(4)),
        ])];
        let head = vec![row(&[
            ("kv-offload-backend", backend("mooncake")),
            ("tp", Json::Int(8)),
        ])];
        assert_eq!(
            ACROSS.first_difference(&base, &head).as_deref(),
            Some("a row's `tp` is 8, was 4")
        );
    }

    #[test]
    fn a_row_the_base_lacks_is_new() {
        let head = vec![row(&[
            ("exp-name", Json::str("x_tp2")),
            ("tp", Json::Int(2)),
        ])];
        assert_eq!(
            SAME_DAY.first_difference(&[], &head).as_deref(),
            Some("a new row `x_tp2` (tp 2)")
        );
    }
}
