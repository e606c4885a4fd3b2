//! The diagnostic codes of the recipe check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

infx_report::codes! {
    BENCHMARK = error("recipe/benchmark", "the benchmark section breaks a schema-2 rule");
    BINDER_OWNED = error("recipe/binder-owned", "a fragment sets a key the launcher binds itself");
    BUNDLE = error("recipe/bundle", "a bundle's base or override is not a mapping");
    DRAM_REF = error("recipe/dram-ref", "a host-DRAM size is not a whole '@dram.<name>' reference");
    EMPTY = error("recipe/empty", "the recipe document is empty");
    ENGINE = error("recipe/engine", "the engine section breaks a schema-2 rule");
    FRONTEND = error("recipe/frontend", "the frontend section breaks a schema-2 rule");
    IO = error("recipe/io", "a recipe path cannot be resolved or read");
    MISSING_FIELD = error("recipe/missing-field", "a required recipe field is missing");
    MISSING_FILE = error("recipe/missing-file", "the recipe path does not exist");
    NO_VARIANT = error("recipe/no-variant", "the selector names no override, zip group or index");
    NOT_MAPPING = error("recipe/not-mapping", "the recipe's top level is not a mapping");
    OVERRIDE_NOT_MAPPING = error("recipe/override-not-mapping", "an override_ block is not a mapping");
    REFERENCE = error("recipe/reference", "a recipe reference is malformed");
    ROLE = error("recipe/role", "a role breaks a schema-2 rule (names, nodes, fit)");
    TOO_MANY_VARIANTS = error("recipe/too-many-variants", "the recipe expands into more variants than the budget (docs/security.md)");
    ROOT_ESCAPE = error("recipe/root-escape", "a recipe path leaves the repository");
    RULE = error("recipe/rule", "a schema-1 post-init rule fails");
    RUNTIME_GPUS = warning("recipe/runtime-gpus", "a vLLM data-parallel role's sizes need another GPU count than its workers have; srtctl's runtime refuses it");
    RUNTIME_SIZE_TYPE = warning("recipe/runtime-size-type", "a vLLM parallel size written as a string or fraction; srtctl's runtime fails on it");
    SCHEMA_GATE = error("recipe/schema-gate", "the schema field is missing, invalid, or a pre-2.0 key is used");
    SELECTOR = error("recipe/selector", "a selector is malformed or used on a plain recipe");
    SELECTOR_IGNORED = warning("recipe/selector-ignored", "a selector on a plain recipe, which srtctl ignores");
    TYPE = error("recipe/type", "a recipe field has the wrong type");
    UNKNOWN_FIELD = error("recipe/unknown-field", "a recipe field the schema does not define");
    ZIP_EMPTY = error("recipe/zip-empty", "a zip list is empty");
    ZIP_LENGTH = error("recipe/zip-length", "zip lists have different lengths");
    ZIP_NO_LIST = error("recipe/zip-no-list", "a zip block holds no list");
}
