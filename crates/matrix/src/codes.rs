//! The diagnostic codes of the matrix check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const AGENTIC_DRAM: Code = Code::error(
    "matrix/agentic-dram",
    "an agentic point's CPU-DRAM size cannot be computed from the runner and dram-utilization",
);
pub const BINDING_AMBIGUOUS: Code = Code::error(
    "matrix/binding-ambiguous",
    "a sweep point selects more than one recipe variant",
);
pub const BINDING_MULTINODE: Code = Code::error(
    "matrix/binding-multinode",
    "a multinode reference selects no or several variants",
);
pub const BINDING_NONE: Code = Code::error(
    "matrix/binding-none",
    "a sweep point selects no recipe variant",
);
pub const CONFIG_NOT_MAPPING: Code = Code::error(
    "matrix/config-not-mapping",
    "a master config file's top level is not a mapping",
);
pub const DUPLICATE_CONC: Code = Code::error(
    "matrix/duplicate-conc",
    "two recipe overrides pin the same CONC",
);
pub const DUPLICATE_CONFIG_KEY: Code = Code::error(
    "matrix/duplicate-config-key",
    "a config key is defined in more than one master file",
);
pub const KV_OFFLOAD_BACKEND: Code = Code::error(
    "matrix/kv-offload-backend",
    "kv-offloading is set without a named kv-offload-backend",
);
pub const LANE_BLOCK_MISSING: Code = Code::error(
    "matrix/lane-block-missing",
    "the lane's shared block cannot be loaded",
);
pub const MALFORMED_ENTRY: Code = Code::error(
    "matrix/malformed-entry",
    "a master entry cannot be expanded into sweep points",
);
pub const MISSING_FILE: Code = Code::error(
    "matrix/missing-file",
    "an input file (--config-files, --runner-config) does not exist",
);
pub const NODE_COUNT: Code = Code::error(
    "matrix/node-count",
    "a multinode point's node count cannot be computed",
);
pub const NOT_JSON: Code = Code::error(
    "matrix/not-json",
    "a master config value cannot be carried into the JSON matrix",
);
pub const PATTERN_MATCHES_NOTHING: Code = Code::error(
    "matrix/pattern-matches-nothing",
    "a config-key pattern matches no master entry",
);
pub const RECIPE_MISSING: Code = Code::error(
    "matrix/recipe-missing",
    "a config names a recipe file that does not exist",
);
pub const RECIPE_VARIANTS: Code = Code::error(
    "matrix/recipe-variants",
    "the selector names no variant or the zip blocks are malformed",
);
pub const REQUIRE_POWER: Code = Code::error(
    "matrix/require-power",
    "require-power on a point that is not fixed-sequence 8192/1024",
);
pub const ROW: Code = Code::error("matrix/row", "a generated matrix row is invalid");
pub const UNKNOWN_CONFIG_KEY: Code = Code::error(
    "matrix/unknown-config-key",
    "a --config-keys name is not in the master configs",
);
pub const UNKNOWN_RUNNER_TYPE: Code = Code::error(
    "matrix/unknown-runner-type",
    "the runner type is not in runners.yaml",
);
pub const UNUSED_VARIANT: Code = Code::warning(
    "matrix/unused-variant",
    "a recipe variant no sweep point uses",
);
pub const USAGE: Code = Code::error(
    "matrix/usage",
    "the sweep options are contradictory (step size, min/max concurrency)",
);
pub const VARIANT_WITHOUT_CONC: Code = Code::error(
    "matrix/variant-without-conc",
    "a recipe override pins no CONC and matches its siblings' points",
);
pub const WILDCARD_KEY: Code =
    Code::error("matrix/wildcard-key", "a master config key contains `*`");

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    AGENTIC_DRAM,
    BINDING_AMBIGUOUS,
    BINDING_MULTINODE,
    BINDING_NONE,
    CONFIG_NOT_MAPPING,
    DUPLICATE_CONC,
    DUPLICATE_CONFIG_KEY,
    KV_OFFLOAD_BACKEND,
    LANE_BLOCK_MISSING,
    MALFORMED_ENTRY,
    MISSING_FILE,
    NODE_COUNT,
    NOT_JSON,
    PATTERN_MATCHES_NOTHING,
    RECIPE_MISSING,
    RECIPE_VARIANTS,
    REQUIRE_POWER,
    ROW,
    UNKNOWN_CONFIG_KEY,
    UNKNOWN_RUNNER_TYPE,
    UNUSED_VARIANT,
    USAGE,
    VARIANT_WITHOUT_CONC,
    WILDCARD_KEY,
];
