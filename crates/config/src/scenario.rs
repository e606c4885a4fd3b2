//! The two scenario types: the keys of a master-config entry's `scenarios`, the `scenario-type`
//! of an agentic sweep row, the values of `--scenario-type` and of a changelog entry's
//! `scenario-type` (docs/matrix.md, "Row kinds and names"). Owned here, the lowest crate that
//! reads them (the master-config schema); `infx-matrix` re-exports it with the typed row API.

/// A scenario type, in upstream's canonical order (`SCENARIO_TYPES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScenarioType {
    FixedSeqLen,
    AgenticCoding,
}

impl ScenarioType {
    /// Canonical order, as upstream's `SCENARIO_TYPES`.
    pub const ALL: [ScenarioType; 2] = [ScenarioType::FixedSeqLen, ScenarioType::AgenticCoding];
    /// The spellings of [`ScenarioType::ALL`], in the same order.
    pub const NAMES: [&'static str; 2] = [
        ScenarioType::FixedSeqLen.as_str(),
        ScenarioType::AgenticCoding.as_str(),
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            ScenarioType::FixedSeqLen => "fixed-seq-len",
            ScenarioType::AgenticCoding => "agentic-coding",
        }
    }

    pub fn parse(s: &str) -> Option<ScenarioType> {
        ScenarioType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in ScenarioType::ALL {
            assert_eq!(ScenarioType::parse(t.as_str()), Some(t));
        }
        assert_eq!(ScenarioType::NAMES, ["fixed-seq-len", "agentic-coding"]);
        assert_eq!(ScenarioType::parse("agentic"), None);
    }
}
