//! The diagnostic codes of the yaml check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

infx_report::codes! {
    ALIAS_BUDGET = error("yaml/alias-budget", "alias expansion exceeds the budget (billion-laughs guard)");
    CHARACTER = error("yaml/character", "a character PyYAML's reader refuses (a control character, DEL, a C1 control)");
    DUPLICATE_ANCHOR = error("yaml/duplicate-anchor", "an anchor name is defined twice, which PyYAML refuses");
    DUPLICATE_KEY = error("yaml/duplicate-key", "a mapping has the same key twice; PyYAML keeps only the last");
    ENCODING = error("yaml/encoding", "the file is not UTF-8 text");
    INT_RANGE = error("yaml/int-range", "an integer is out of the supported range");
    INTERNAL = error("yaml/internal", "the YAML step failed unexpectedly (a bug in infx)");
    IO = error("yaml/io", "the file could not be read");
    MERGE = error("yaml/merge", "a `<<` merge key does not merge a mapping");
    MULTI_DOCUMENT = error("yaml/multi-document", "the file holds more than one YAML document");
    SYNTAX = error("yaml/syntax", "the file is not valid YAML");
    TAB = error("yaml/tab", "a tab where PyYAML's scanner refuses one (outside quoted or block scalars and comments)");
    TAG = error("yaml/tag", "a YAML tag safe_load does not accept");
    TOO_DEEP = error("yaml/too-deep", "nesting exceeds the depth limit");
    UNHASHABLE_KEY = error("yaml/unhashable-key", "a mapping key is a list or mapping, which safe_load rejects");
}
