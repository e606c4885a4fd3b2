//! Typed reads of one sweep-matrix row (a point of the benchmark matrix), for every consumer:
//! the generator's own [`Object`] rows and the changelog plan's serde_json copies of them. The
//! row itself stays an ordered JSON object, so the output stays byte-identical to upstream's
//! generator (docs/matrix.md, "Row kinds and names"); only the reads are typed.

use crate::json::{Json, Object};
pub use infx_config::ScenarioType;
use infx_recipe::Lane;

/// The row keys the typed getters read.
pub(crate) mod key {
    pub(crate) const SCENARIO_TYPE: &str = "scenario-type";
    /// Present (and non-null) on multinode rows only: the prefill worker pool.
    pub(crate) const PREFILL: &str = "prefill";
    pub(crate) const SRT_RECIPE: &str = "srt-recipe";
    pub(crate) const EVAL_ONLY: &str = "eval-only";
    pub(crate) const CONC: &str = "conc";
    pub(crate) const EXP_NAME: &str = "exp-name";
}

/// A sweep row read by field: the two primitive reads, and the typed getters every consumer
/// uses (borrowing: no row is cloned to be read).
pub trait SweepRow {
    /// The value of `key` when it is a string.
    fn str_field(&self, key: &str) -> Option<&str>;
    /// Whether `key` is present with a non-null value.
    fn has_value(&self, key: &str) -> bool;
    /// The value of `key` when it is an integer.
    fn i64_field(&self, key: &str) -> Option<i64>;
    /// Python truthiness of `key`'s value (absent is false).
    fn truthy(&self, key: &str) -> bool;

    /// `scenario-type`, when it is one of the known types (only agentic rows carry it).
    fn scenario_type(&self) -> Option<ScenarioType> {
        self.str_field(key::SCENARIO_TYPE)
            .and_then(ScenarioType::parse)
    }
    /// An agentic-coding row (`scenario-type: agentic-coding`).
    fn is_agentic(&self) -> bool {
        self.str_field(key::SCENARIO_TYPE) == Some(ScenarioType::AgenticCoding.as_str())
    }
    /// A multinode row (it has a `prefill` pool). Non-null, as upstream's `is not None`; the
    /// generator writes `prefill` only as an object, so on its rows presence is the same test.
    fn is_multinode(&self) -> bool {
        self.has_value(key::PREFILL)
    }
    /// The recipe lane the row runs in (agentic or not, single- or multinode).
    fn lane(&self) -> Lane {
        Lane::of(self.is_agentic(), self.is_multinode())
    }
    /// The row's `srt-recipe` reference, as written.
    fn srt_recipe(&self) -> Option<&str> {
        self.str_field(key::SRT_RECIPE)
    }
    /// The row's `exp-name`.
    fn exp_name(&self) -> Option<&str> {
        self.str_field(key::EXP_NAME)
    }
    /// An eval-only row (`eval-only` truthy).
    fn is_eval_only(&self) -> bool {
        self.truthy(key::EVAL_ONLY)
    }
    /// An integer `conc` (single-node rows; multinode rows carry a list).
    fn conc(&self) -> Option<i64> {
        self.i64_field(key::CONC)
    }
}

impl SweepRow for Object {
    fn str_field(&self, key: &str) -> Option<&str> {
        self.get_str(key)
    }
    fn has_value(&self, key: &str) -> bool {
        self.get(key).is_some_and(|v| *v != Json::Null)
    }
    fn i64_field(&self, key: &str) -> Option<i64> {
        self.get_i64(key)
    }
    fn truthy(&self, key: &str) -> bool {
        self.get(key).is_some_and(Json::truthy)
    }
}

impl SweepRow for serde_json::Map<String, serde_json::Value> {
    fn str_field(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(serde_json::Value::as_str)
    }
    fn has_value(&self, key: &str) -> bool {
        self.get(key).is_some_and(|v| !v.is_null())
    }
    fn i64_field(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(serde_json::Value::as_i64)
    }
    fn truthy(&self, key: &str) -> bool {
        self.get(key).is_some_and(infx_recipe::schema1::truthy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_row_forms_read_alike() {
        let mut o = Object::new();
        o.put(key::SCENARIO_TYPE, Json::str("agentic-coding"));
        o.put(key::PREFILL, Json::Object(Object::new()));
        o.put(key::SRT_RECIPE, Json::str("r.yaml"));
        let s: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
            r#"{"scenario-type": "agentic-coding", "prefill": {}, "srt-recipe": "r.yaml"}"#,
        )
        .unwrap_or_default();
        for r in [&o as &dyn SweepRow, &s] {
            assert_eq!(r.scenario_type(), Some(ScenarioType::AgenticCoding));
            assert!(r.is_agentic() && r.is_multinode());
            assert_eq!(r.lane(), Lane::AgenticMulti);
            assert_eq!(r.srt_recipe(), Some("r.yaml"));
            assert!(!r.is_eval_only() && r.conc().is_none());
        }
        let mut fixed = Object::new();
        fixed.put(key::PREFILL, Json::Null);
        assert!(!fixed.is_agentic() && !fixed.is_multinode());
        assert_eq!(fixed.scenario_type(), None);
    }
}
