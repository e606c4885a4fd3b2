//! The diagnostic codes of the matrix check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

infx_report::codes! {
    AGENTIC_DRAM = error("matrix/agentic-dram", "an agentic point's CPU-DRAM size cannot be computed from the runner and dram-utilization");
    BINDING_AMBIGUOUS = error("matrix/binding-ambiguous", "a sweep point selects more than one recipe variant");
    BINDING_MULTINODE = error("matrix/binding-multinode", "a multinode reference selects no or several variants");
    BINDING_NONE = error("matrix/binding-none", "a sweep point selects no recipe variant");
    CONFIG_NOT_MAPPING = error("matrix/config-not-mapping", "a master config file's top level is not a mapping");
    DUPLICATE_CONC = error("matrix/duplicate-conc", "two recipe overrides pin the same CONC");
    DUPLICATE_CONFIG_KEY = error("matrix/duplicate-config-key", "a config key is defined in more than one master file");
    KV_OFFLOAD_BACKEND = error("matrix/kv-offload-backend", "kv-offloading is set without a named kv-offload-backend");
    LANE_BLOCK_VALUE = error("matrix/lane-block-value", "a value the lane block sets makes points match no recipe variant");
    LANE_BLOCK_MISSING = error("matrix/lane-block-missing", "the lane's shared block cannot be loaded");
    MALFORMED_ENTRY = error("matrix/malformed-entry", "a master entry cannot be expanded into sweep points");
    MISSING_FILE = error("matrix/missing-file", "an input file (--config-files, --runner-config) does not exist");
    NODE_COUNT = error("matrix/node-count", "a multinode point's node count cannot be computed");
    NOT_JSON = error("matrix/not-json", "a master config value cannot be carried into the JSON matrix");
    PATTERN_MATCHES_NOTHING = error("matrix/pattern-matches-nothing", "a config-key pattern matches no master entry");
    RECIPE_MISSING = error("matrix/recipe-missing", "a config names a recipe file that does not exist");
    RECIPE_VARIANTS = error("matrix/recipe-variants", "the selector names no variant or the zip blocks are malformed");
    REQUIRE_POWER = error("matrix/require-power", "require-power on a point that is not fixed-sequence 8192/1024");
    ROW = error("matrix/row", "a generated matrix row is invalid");
    TOO_MANY_POINTS = error("matrix/too-many-points", "a config or the run expands into more sweep points than the budget (docs/security.md)");
    UNKNOWN_CONFIG_KEY = error("matrix/unknown-config-key", "a --config-keys name is not in the master configs");
    UNKNOWN_RUNNER_TYPE = error("matrix/unknown-runner-type", "the runner type is not in runners.yaml");
    UNUSED_VARIANT = warning("matrix/unused-variant", "a recipe variant no sweep point uses");
    USAGE = error("matrix/usage", "the sweep options are contradictory (step size, min/max concurrency)");
    VARIANT_WITHOUT_CONC = error("matrix/variant-without-conc", "a recipe override pins no CONC and matches its siblings' points");
    WILDCARD_KEY = error("matrix/wildcard-key", "a master config key contains `*`");
}
