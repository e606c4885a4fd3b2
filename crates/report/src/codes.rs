//! One-line descriptions of diagnostic codes, for SARIF rule tables (and anything else that
//! lists rules). Until the code registry exists this table is the single place: [`describe`]
//! is the interface a registry will replace, so keep callers on it.

/// A one-line description of a diagnostic code: the code's own line when the table has one,
/// else its check's line. Never empty.
pub fn describe(code: &str) -> &'static str {
    if let Some((_, d)) = CODES.iter().find(|(c, _)| *c == code) {
        return d;
    }
    let check = code.split('/').next().unwrap_or(code);
    CHECKS
        .iter()
        .find(|(c, _)| *c == check)
        .map(|(_, d)| *d)
        .unwrap_or("a finding of infx validate")
}

/// The check a code belongs to (`config/C2` → `config`).
pub fn check_of(code: &str) -> &str {
    code.split('/').next().unwrap_or(code)
}

const CHECKS: &[(&str, &str)] = &[
    (
        "change",
        "the change set under review could not be determined",
    ),
    (
        "yaml",
        "a YAML file does not load the way PyYAML safe_load reads it",
    ),
    (
        "config",
        "a master config or runners.yaml breaks a config schema rule (docs/config.md)",
    ),
    (
        "changelog",
        "the perf changelog is not a valid append-only change (docs/changelog.md)",
    ),
    (
        "matrix",
        "the sweep matrix or its binding to recipe variants is wrong (docs/matrix.md)",
    ),
    (
        "recipe",
        "a srt-slurm recipe variant fails validation (docs/recipe.md)",
    ),
    (
        "image",
        "an image reference is not pinned to its multi-arch index (docs/image.md)",
    ),
    (
        "diff",
        "the change has whitespace errors git diff --check reports (docs/diff.md)",
    ),
    (
        "review",
        "a reviewer check decidable from the repository fails (docs/review.md)",
    ),
    (
        "allow",
        "an `# infx: allow(...)` comment is malformed or acknowledges nothing (README)",
    ),
];

const CODES: &[(&str, &str)] = &[
    ("yaml/syntax", "the file is not valid YAML"),
    (
        "yaml/duplicate-key",
        "a mapping has the same key twice; PyYAML keeps only the last",
    ),
    (
        "yaml/alias-budget",
        "alias expansion exceeds the budget (billion-laughs guard)",
    ),
    ("yaml/encoding", "the file is not UTF-8 text"),
    ("yaml/int-range", "an integer is out of the supported range"),
    ("yaml/merge", "a `<<` merge key does not merge a mapping"),
    (
        "yaml/multi-document",
        "the file holds more than one YAML document",
    ),
    ("yaml/tag", "a YAML tag safe_load does not accept"),
    (
        "yaml/unhashable-key",
        "a mapping key is a list or mapping, which safe_load rejects",
    ),
    ("yaml/io", "the file could not be read"),
    (
        "config/unknown-key",
        "a key the config schema does not define",
    ),
    ("config/missing-field", "a required config field is missing"),
    ("config/type", "a config field has the wrong type"),
    (
        "config/value",
        "a config field has a value outside its allowed set",
    ),
    ("config/runners", "runners.yaml is malformed"),
    (
        "changelog/entry-schema",
        "a changelog entry does not match the entry schema",
    ),
    (
        "changelog/entry-changed",
        "an existing changelog entry was edited (append-only)",
    ),
    (
        "changelog/entry-reordered",
        "existing changelog entries were swapped or moved (append-only)",
    ),
    (
        "changelog/deleted-line",
        "a line of the changelog was deleted (append-only)",
    ),
    (
        "changelog/config-key",
        "a config-key of a new entry resolves to no master config",
    ),
    (
        "changelog/yaml11-trap",
        "a value YAML 1.1 reads differently than it looks",
    ),
    (
        "matrix/binding-none",
        "a sweep point selects no recipe variant",
    ),
    (
        "matrix/binding-ambiguous",
        "a sweep point selects more than one recipe variant",
    ),
    (
        "matrix/variant-without-conc",
        "a recipe override pins no CONC and matches its siblings' points",
    ),
    (
        "matrix/duplicate-conc",
        "two recipe overrides pin the same CONC",
    ),
    (
        "matrix/unused-variant",
        "a recipe variant no sweep point uses",
    ),
    (
        "matrix/recipe-missing",
        "a config names a recipe file that does not exist",
    ),
    (
        "recipe/unknown-field",
        "a recipe field the schema does not define",
    ),
    ("recipe/missing-field", "a required recipe field is missing"),
    (
        "recipe/binder-owned",
        "a fragment sets a key the launcher binds itself",
    ),
    ("recipe/root-escape", "a recipe path leaves the repository"),
    ("image/unpinned", "an image reference has no @sha256 digest"),
    ("image/malformed", "an image reference does not parse"),
    (
        "image/not-multi-arch",
        "the pinned digest is a single-platform manifest, not an index",
    ),
    (
        "image/missing-platform",
        "the index lacks a required platform",
    ),
    (
        "image/digest-missing",
        "the pinned digest no longer exists in the registry",
    ),
    (
        "image/digest-mismatch",
        "the registry served content whose digest differs",
    ),
    (
        "image/tag-moved",
        "the tag now points at a different index than the pin",
    ),
    (
        "image/tag-not-found",
        "the tag does not exist in the registry",
    ),
    ("image/registry", "the registry could not be asked"),
    (
        "diff/trailing-whitespace",
        "a changed line ends in whitespace",
    ),
    (
        "diff/space-before-tab",
        "a space before a tab in the indent",
    ),
    (
        "diff/blank-at-eof",
        "blank lines added at the end of a file",
    ),
    (
        "diff/conflict-marker",
        "a merge conflict marker left in a changed line",
    ),
    (
        "review/upstream-image",
        "an image not from the engine's upstream registry",
    ),
    (
        "review/codeowners-signer",
        "the change needs a CODEOWNERS sign-off",
    ),
    (
        "review/golden-al",
        "the golden acceptance length is missing or wrong",
    ),
    (
        "review/dp-cuda-graph",
        "DP attention without cuda-graph coverage of its batch sizes",
    ),
    ("review/engine-patch", "the recipe patches the engine"),
    (
        "allow/no-reason",
        "an allow comment gives no reason for acknowledging the warning",
    ),
    ("allow/syntax", "an `# infx:` comment does not parse"),
    (
        "allow/not-a-warning",
        "an allow comment names an error or note; only warnings can be acknowledged",
    ),
    ("allow/unused", "an allow comment matches no finding"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specific_then_check_then_generic() {
        assert_eq!(
            describe("image/unpinned"),
            "an image reference has no @sha256 digest"
        );
        assert!(describe("config/C2").contains("config schema rule"));
        assert_eq!(describe("nonsense"), "a finding of infx validate");
        assert_eq!(check_of("config/C2"), "config");
    }

    #[test]
    fn table_has_no_duplicates_and_every_code_has_a_known_check() {
        let mut seen = std::collections::HashSet::new();
        for (c, d) in CODES {
            assert!(seen.insert(c), "{c} twice");
            assert!(!d.is_empty());
            assert!(CHECKS.iter().any(|(k, _)| *k == check_of(c)), "{c}");
        }
    }
}
