//! The diagnostic codes of the yaml check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const ALIAS_BUDGET: Code = Code::error(
    "yaml/alias-budget",
    "alias expansion exceeds the budget (billion-laughs guard)",
);
pub const DUPLICATE_KEY: Code = Code::error(
    "yaml/duplicate-key",
    "a mapping has the same key twice; PyYAML keeps only the last",
);
pub const ENCODING: Code = Code::error("yaml/encoding", "the file is not UTF-8 text");
pub const INT_RANGE: Code =
    Code::error("yaml/int-range", "an integer is out of the supported range");
pub const INTERNAL: Code = Code::error(
    "yaml/internal",
    "the YAML step failed unexpectedly (a bug in infx)",
);
pub const IO: Code = Code::error("yaml/io", "the file could not be read");
pub const MERGE: Code = Code::error("yaml/merge", "a `<<` merge key does not merge a mapping");
pub const MULTI_DOCUMENT: Code = Code::error(
    "yaml/multi-document",
    "the file holds more than one YAML document",
);
pub const SYNTAX: Code = Code::error("yaml/syntax", "the file is not valid YAML");
pub const TAG: Code = Code::error("yaml/tag", "a YAML tag safe_load does not accept");
pub const TOO_DEEP: Code = Code::error("yaml/too-deep", "nesting exceeds the depth limit");
pub const UNHASHABLE_KEY: Code = Code::error(
    "yaml/unhashable-key",
    "a mapping key is a list or mapping, which safe_load rejects",
);

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    ALIAS_BUDGET,
    DUPLICATE_KEY,
    ENCODING,
    INT_RANGE,
    INTERNAL,
    IO,
    MERGE,
    MULTI_DOCUMENT,
    SYNTAX,
    TAG,
    TOO_DEEP,
    UNHASHABLE_KEY,
];
