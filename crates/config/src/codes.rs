//! The diagnostic codes of the config check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const A1: Code = Code::error(
    "config/A1",
    "an agentic row does not set exactly one of tp, worker, prefill+decode",
);
pub const A2: Code = Code::error("config/A2", "an agentic row with tp lacks kv-offloading");
pub const A3: Code = Code::error(
    "config/A3",
    "an agentic single-node row sets power (only multinode entries measure it)",
);
pub const A4: Code = Code::error(
    "config/A4",
    "a multinode agentic row sets pp, dcp-size or pcp-size",
);
pub const A5: Code = Code::error(
    "config/A5",
    "hardware is set on only one of prefill and decode (agentic row)",
);
pub const C2: Code = Code::error(
    "config/C2",
    "a row gives both conc-list and a conc-start/conc-end range",
);
pub const C3: Code = Code::error(
    "config/C3",
    "a row gives neither a non-empty conc-list nor both conc-start and conc-end",
);
pub const C4: Code = Code::error(
    "config/C4",
    "a concurrency range is not positive or starts after its end",
);
pub const C5: Code = Code::error(
    "config/C5",
    "a concurrency list holds a value that is not positive",
);
pub const H1: Code = Code::error(
    "config/H1",
    "hardware is set on only one of prefill and decode (fixed-seq-len row)",
);
pub const K1: Code = Code::error("config/K1", "the KV-offload backend settings disagree");
pub const K2: Code = Code::error(
    "config/K2",
    "the dram backend lacks the block's dram-utilization",
);
pub const L1: Code = Code::error(
    "config/L1",
    "a master config file is missing or its top level is not a mapping",
);
pub const L2: Code = Code::error("config/L2", "a top-level key is not a string");
pub const L3: Code = Code::error("config/L3", "a top-level key contains `*`");
pub const L4: Code = Code::error(
    "config/L4",
    "a top-level key is already defined in an earlier master file",
);
pub const L7: Code = Code::error(
    "config/L7",
    "master files come from different project roots",
);
pub const M1: Code = Code::error(
    "config/M1",
    "router or kv-p2p-transfer is set at more than one scope",
);
pub const M2: Code = Code::error(
    "config/M2",
    "a row sets kv-p2p-transfer but is not multinode",
);
pub const M3: Code = Code::error(
    "config/M3",
    "a disaggregated config lacks kv-p2p-transfer somewhere",
);
pub const R0: Code = Code::error(
    "config/R0",
    "additional-settings select a recipe the CONFIG_FILE= way",
);
pub const SR1: Code = Code::error(
    "config/SR1",
    "srt-recipe-dir is not a normalized relative path",
);
pub const SR2: Code = Code::error(
    "config/SR2",
    "a srt-recipe reference breaks the `<file>[:<selector>]` grammar",
);
pub const SR3: Code = Code::error(
    "config/SR3",
    "a recipe reference does not resolve inside the project",
);
pub const SR4: Code = Code::error(
    "config/SR4",
    "a referenced recipe file or variant does not exist",
);
pub const T1: Code = Code::error("config/T1", "tp is not divisible by dcp-size");
pub const W1: Code = Code::error(
    "config/W1",
    "a multinode row has neither exactly worker nor both prefill and decode",
);
pub const X1: Code = Code::error("config/X1", "a single-node config is disaggregated");
pub const X2: Code = Code::error(
    "config/X2",
    "an agentic config does not run on a cluster: runner",
);
pub const X3: Code = Code::error(
    "config/X3",
    "topology is set at the wrong scope for the row",
);
pub const X4: Code = Code::error(
    "config/X4",
    "srt-recipe-dir / srt-recipe missing, or eval-srt-recipe / srt-recipe-dir where not allowed",
);
pub const X5: Code = Code::error(
    "config/X5",
    "the runner label does not exist in runners.yaml",
);
pub const COMPONENT_VERSION: Code = Code::error(
    "config/component-version",
    "a router or backend version starts with image:",
);
pub const MISSING_FIELD: Code =
    Code::error("config/missing-field", "a required config field is missing");
pub const REQUIRE_POWER: Code = Code::error(
    "config/require-power",
    "require-power is set on a block that is not 8192/1024",
);
pub const RUNNERS: Code = Code::error("config/runners", "runners.yaml is malformed");
pub const RUNNERS_INVENTORY: Code = Code::error(
    "config/runners-inventory",
    "the cluster inventory of runners.yaml is inconsistent",
);
pub const SCENARIOS: Code = Code::error(
    "config/scenarios",
    "a config has no non-empty fixed-seq-len or agentic-coding scenario",
);
pub const TYPE: Code = Code::error("config/type", "a config field has the wrong type");
pub const UNKNOWN_KEY: Code = Code::error(
    "config/unknown-key",
    "a key the config schema does not define",
);
pub const UNREGISTERED: Code = Code::error(
    "config/unregistered",
    "a config rule with no registered code (a bug in infx; the message tells what failed)",
);
pub const VALUE: Code = Code::error(
    "config/value",
    "a config field has a value outside its allowed set",
);

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    A1,
    A2,
    A3,
    A4,
    A5,
    C2,
    C3,
    C4,
    C5,
    H1,
    K1,
    K2,
    L1,
    L2,
    L3,
    L4,
    L7,
    M1,
    M2,
    M3,
    R0,
    SR1,
    SR2,
    SR3,
    SR4,
    T1,
    W1,
    X1,
    X2,
    X3,
    X4,
    X5,
    COMPONENT_VERSION,
    MISSING_FIELD,
    REQUIRE_POWER,
    RUNNERS,
    RUNNERS_INVENTORY,
    SCENARIOS,
    TYPE,
    UNKNOWN_KEY,
    UNREGISTERED,
    VALUE,
];

/// The code of a rule the schema checks name by its short form (`X5` → [`X5`]).
pub fn of_rule(rule: &str) -> Code {
    infx_report::by_rule(ALL, rule).unwrap_or(UNREGISTERED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_rules_map_to_their_codes_and_unknown_ones_say_so() {
        assert_eq!(of_rule("X5"), X5);
        assert_eq!(of_rule("runners-inventory"), RUNNERS_INVENTORY);
        assert_eq!(of_rule("Z9"), UNREGISTERED);
    }
}
