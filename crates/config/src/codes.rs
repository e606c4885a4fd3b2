//! The diagnostic codes of the config check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

infx_report::codes! {
    A1 = error("config/A1", "an agentic row does not set exactly one of tp, worker, prefill+decode");
    A2 = error("config/A2", "an agentic row with tp lacks kv-offloading");
    A3 = error("config/A3", "an agentic single-node row sets power (only multinode entries measure it)");
    A4 = error("config/A4", "a multinode agentic row sets pp, dcp-size or pcp-size");
    A5 = error("config/A5", "hardware is set on only one of prefill and decode (agentic row)");
    C2 = error("config/C2", "a row gives both conc-list and a conc-start/conc-end range");
    C3 = error("config/C3", "a row gives neither a non-empty conc-list nor both conc-start and conc-end");
    C4 = error("config/C4", "a concurrency range is not positive or starts after its end");
    C5 = error("config/C5", "a concurrency list holds a value that is not positive");
    H1 = error("config/H1", "hardware is set on only one of prefill and decode (fixed-seq-len row)");
    K1 = error("config/K1", "the KV-offload backend settings disagree");
    K2 = error("config/K2", "the dram backend lacks the block's dram-utilization");
    L1 = error("config/L1", "a master config file is missing or its top level is not a mapping");
    L2 = error("config/L2", "a top-level key is not a string");
    L3 = error("config/L3", "a top-level key contains `*`");
    L4 = error("config/L4", "a top-level key is already defined in an earlier master file");
    L7 = error("config/L7", "master files come from different project roots");
    M1 = error("config/M1", "router or kv-p2p-transfer is set at more than one scope");
    M2 = error("config/M2", "a row sets kv-p2p-transfer but is not multinode");
    M3 = error("config/M3", "a disaggregated config lacks kv-p2p-transfer somewhere");
    R0 = error("config/R0", "additional-settings select a recipe the CONFIG_FILE= way");
    SR1 = error("config/SR1", "srt-recipe-dir is not a normalized relative path");
    SR2 = error("config/SR2", "a srt-recipe reference breaks the `<file>[:<selector>]` grammar");
    SR3 = error("config/SR3", "a recipe reference does not resolve inside the project");
    SR4 = error("config/SR4", "a referenced recipe file or variant does not exist");
    T1 = error("config/T1", "tp is not divisible by dcp-size");
    W1 = error("config/W1", "a multinode row has neither exactly worker nor both prefill and decode");
    X1 = error("config/X1", "a single-node config is disaggregated");
    X2 = error("config/X2", "an agentic config does not run on a cluster: runner");
    X3 = error("config/X3", "topology is set at the wrong scope for the row");
    X4 = error("config/X4", "srt-recipe-dir / srt-recipe missing, or eval-srt-recipe / srt-recipe-dir where not allowed");
    X5 = error("config/X5", "the runner label does not exist in runners.yaml");
    COMPONENT_VERSION = error("config/component-version", "a router or backend version starts with image:");
    MISSING_FIELD = error("config/missing-field", "a required config field is missing");
    REQUIRE_POWER = error("config/require-power", "require-power is set on a block that is not 8192/1024");
    RUNNERS = error("config/runners", "runners.yaml is malformed");
    RUNNERS_INVENTORY = error("config/runners-inventory", "the cluster inventory of runners.yaml is inconsistent");
    SCENARIOS = error("config/scenarios", "a config has no non-empty fixed-seq-len or agentic-coding scenario");
    TYPE = error("config/type", "a config field has the wrong type");
    UNKNOWN_KEY = error("config/unknown-key", "a key the config schema does not define");
    VALUE = error("config/value", "a config field has a value outside its allowed set");
}
