//! The diagnostic codes of the recipe check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const BENCHMARK: Code = Code::error(
    "recipe/benchmark",
    "the benchmark section breaks a schema-2 rule",
);
pub const BINDER_OWNED: Code = Code::error(
    "recipe/binder-owned",
    "a fragment sets a key the launcher binds itself",
);
pub const BUNDLE: Code = Code::error(
    "recipe/bundle",
    "a bundle's base or override is not a mapping",
);
pub const DRAM_REF: Code = Code::error(
    "recipe/dram-ref",
    "a host-DRAM size is not a whole '@dram.<name>' reference",
);
pub const EMPTY: Code = Code::error("recipe/empty", "the recipe document is empty");
pub const ENGINE: Code = Code::error("recipe/engine", "the engine section breaks a schema-2 rule");
pub const FRONTEND: Code = Code::error(
    "recipe/frontend",
    "the frontend section breaks a schema-2 rule",
);
pub const IO: Code = Code::error("recipe/io", "a recipe path cannot be resolved or read");
pub const MISSING_FIELD: Code =
    Code::error("recipe/missing-field", "a required recipe field is missing");
pub const MISSING_FILE: Code = Code::error("recipe/missing-file", "the recipe path does not exist");
pub const NO_VARIANT: Code = Code::error(
    "recipe/no-variant",
    "the selector names no override, zip group or index",
);
pub const NOT_MAPPING: Code = Code::error(
    "recipe/not-mapping",
    "the recipe's top level is not a mapping",
);
pub const OVERRIDE_NOT_MAPPING: Code = Code::error(
    "recipe/override-not-mapping",
    "an override_ block is not a mapping",
);
pub const REFERENCE: Code = Code::error("recipe/reference", "a recipe reference is malformed");
pub const ROLE: Code = Code::error(
    "recipe/role",
    "a role breaks a schema-2 rule (names, nodes, fit)",
);
pub const ROOT_ESCAPE: Code =
    Code::error("recipe/root-escape", "a recipe path leaves the repository");
pub const RULE: Code = Code::error("recipe/rule", "a schema-1 post-init rule fails");
pub const SCHEMA_GATE: Code = Code::error(
    "recipe/schema-gate",
    "the schema field is missing, invalid, or a pre-2.0 key is used",
);
pub const SELECTOR: Code = Code::error(
    "recipe/selector",
    "a selector is malformed or used on a plain recipe",
);
pub const SELECTOR_IGNORED: Code = Code::warning(
    "recipe/selector-ignored",
    "a selector on a plain recipe, which srtctl ignores",
);
pub const TYPE: Code = Code::error("recipe/type", "a recipe field has the wrong type");
pub const UNKNOWN_FIELD: Code = Code::error(
    "recipe/unknown-field",
    "a recipe field the schema does not define",
);
pub const ZIP_EMPTY: Code = Code::error("recipe/zip-empty", "a zip list is empty");
pub const ZIP_LENGTH: Code = Code::error("recipe/zip-length", "zip lists have different lengths");
pub const ZIP_NO_LIST: Code = Code::error("recipe/zip-no-list", "a zip block holds no list");

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    BENCHMARK,
    BINDER_OWNED,
    BUNDLE,
    DRAM_REF,
    EMPTY,
    ENGINE,
    FRONTEND,
    IO,
    MISSING_FIELD,
    MISSING_FILE,
    NO_VARIANT,
    NOT_MAPPING,
    OVERRIDE_NOT_MAPPING,
    REFERENCE,
    ROLE,
    ROOT_ESCAPE,
    RULE,
    SCHEMA_GATE,
    SELECTOR,
    SELECTOR_IGNORED,
    TYPE,
    UNKNOWN_FIELD,
    ZIP_EMPTY,
    ZIP_LENGTH,
    ZIP_NO_LIST,
];
