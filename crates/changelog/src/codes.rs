//! The diagnostic codes of the changelog check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const ADDED_YAML: Code = Code::error(
    "changelog/added-yaml",
    "the added lines do not parse as YAML entries",
);
pub const APPEND_ONLY_MIX: Code = Code::error(
    "changelog/append-only-mix",
    "an append-only entry is mixed with other changes",
);
pub const BASE_READ: Code = Code::error(
    "changelog/base-read",
    "the changelog cannot be read at the base revision",
);
pub const CONFIG_KEY: Code = Code::error(
    "changelog/config-key",
    "a config-key of a new entry resolves to no master config",
);
pub const CR: Code = Code::error("changelog/cr", "a line contains a CR character");
pub const DELETED_LINE: Code = Code::error(
    "changelog/deleted-line",
    "a line of the changelog was deleted (append-only)",
);
pub const EMPTY_PLAN: Code = Code::error(
    "changelog/empty-plan",
    "an appended entry plans no benchmark row",
);
pub const ENCODING: Code = Code::error(
    "changelog/encoding",
    "perf-changelog.yaml is not UTF-8 text",
);
pub const ENTRIES_DELETED: Code = Code::error(
    "changelog/entries-deleted",
    "entries present at the base are missing from the head",
);
pub const ENTRY_CHANGED: Code = Code::error(
    "changelog/entry-changed",
    "an existing changelog entry was edited (append-only)",
);
pub const ENTRY_EXCLUSIVE: Code = Code::error(
    "changelog/entry-exclusive",
    "an entry sets two fields that exclude each other",
);
pub const ENTRY_REORDERED: Code = Code::error(
    "changelog/entry-reordered",
    "existing changelog entries were swapped or moved (append-only)",
);
pub const ENTRY_REQUIRED: Code = Code::error(
    "changelog/entry-required",
    "a changed config can benchmark differently, but no appended entry plans it",
);
pub const ENTRY_SCHEMA: Code = Code::error(
    "changelog/entry-schema",
    "a changelog entry does not match the entry schema",
);
pub const ENTRY_START: Code = Code::error(
    "changelog/entry-start",
    "an added entry does not start its own list item",
);
pub const FINAL_NEWLINE: Code = Code::error(
    "changelog/final-newline",
    "perf-changelog.yaml does not end in exactly one newline",
);
pub const HEAD_READ: Code = Code::error(
    "changelog/head-read",
    "the changelog cannot be read at the head revision",
);
pub const HISTORY_BYTES: Code = Code::error(
    "changelog/history-bytes",
    "the bytes before the added entries differ from the base",
);
pub const IO: Code = Code::error("changelog/io", "perf-changelog.yaml could not be read");
pub const MASTER_CONFIGS: Code = Code::error(
    "changelog/master-configs",
    "the master configs needed to resolve config-keys could not be loaded",
);
pub const MIXED_CORRECTIONS: Code = Code::error(
    "changelog/mixed-corrections",
    "a change both corrects earlier entries and adds new ones",
);
pub const NO_ADDITIONS: Code = Code::error(
    "changelog/no-additions",
    "the change adds no changelog entry",
);
pub const NO_HISTORY: Code = Code::note(
    "changelog/no-history",
    "no git history: entries checked one by one, without the append-only and config-key checks",
);
pub const NUL: Code = Code::error("changelog/nul", "a line contains a NUL byte");
pub const PLAN: Code = Code::error(
    "changelog/plan",
    "the sweep plan of the appended entries fails",
);
pub const PLAN_APPEND_ONLY: Code = Code::error(
    "changelog/plan-append-only",
    "the plan's append-only stage rejected the change",
);
pub const PLAN_CONFIG_KEY: Code = Code::error(
    "changelog/plan-config-key",
    "the plan could not resolve a config-key",
);
pub const PLAN_DELETION: Code = Code::error(
    "changelog/plan-deletion",
    "the plan found deleted changelog lines",
);
pub const PLAN_GENERATOR: Code = Code::error(
    "changelog/plan-generator",
    "the plan's matrix generation failed",
);
pub const PLAN_READ: Code =
    Code::error("changelog/plan-read", "the plan could not read its inputs");
pub const PR_LINK: Code = Code::error(
    "changelog/pr-link",
    "an entry's pr-link is not a link to an InferenceX pull request",
);
pub const PR_LINK_LINES: Code = Code::error(
    "changelog/pr-link-lines",
    "a pr-link spans more than one line",
);
pub const ROOT: Code = Code::error("changelog/root", "the changelog's top level is not a list");
pub const SEPARATOR: Code = Code::error(
    "changelog/separator",
    "added entries are not separated the way the file's history is",
);
pub const TAB: Code = Code::error("changelog/tab", "a line contains a tab");
pub const TRAILING_BLANK: Code =
    Code::error("changelog/trailing-blank", "the file ends in blank lines");
pub const UNREGISTERED: Code = Code::error(
    "changelog/unregistered",
    "a changelog rule with no registered code (a bug in infx; the message tells what failed)",
);
pub const YAML: Code = Code::error("changelog/yaml", "perf-changelog.yaml is not valid YAML");
pub const YAML11_TRAP: Code = Code::error(
    "changelog/yaml11-trap",
    "a value YAML 1.1 reads differently than it looks",
);
pub const PR_LABELS: Code = Code::error(
    "pr/labels",
    "the pull request's labels do not match what its changelog entries need",
);

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    ADDED_YAML,
    APPEND_ONLY_MIX,
    BASE_READ,
    CONFIG_KEY,
    CR,
    DELETED_LINE,
    EMPTY_PLAN,
    ENCODING,
    ENTRIES_DELETED,
    ENTRY_CHANGED,
    ENTRY_EXCLUSIVE,
    ENTRY_REORDERED,
    ENTRY_REQUIRED,
    ENTRY_SCHEMA,
    ENTRY_START,
    FINAL_NEWLINE,
    HEAD_READ,
    HISTORY_BYTES,
    IO,
    MASTER_CONFIGS,
    MIXED_CORRECTIONS,
    NO_ADDITIONS,
    NO_HISTORY,
    NUL,
    PLAN,
    PLAN_APPEND_ONLY,
    PLAN_CONFIG_KEY,
    PLAN_DELETION,
    PLAN_GENERATOR,
    PLAN_READ,
    PR_LINK,
    PR_LINK_LINES,
    ROOT,
    SEPARATOR,
    TAB,
    TRAILING_BLANK,
    UNREGISTERED,
    YAML,
    YAML11_TRAP,
    PR_LABELS,
];

/// The code of a rule the changelog checks name by its short form (`tab` → [`TAB`]).
pub fn of_rule(rule: &str) -> Code {
    infx_report::by_rule(ALL, rule).unwrap_or(UNREGISTERED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::GateStage;

    /// The rules the changelog names as text (gate stages, forbidden bytes, plan stages of
    /// `--plan-out`) all have their own code; only a typo would reach UNREGISTERED.
    #[test]
    fn every_rule_named_as_text_has_a_registered_code() {
        let stages = [
            GateStage::Newline,
            GateStage::Deletion,
            GateStage::NoAdditions,
            GateStage::Yaml,
            GateStage::NoEntries,
            GateStage::EntrySchema,
            GateStage::AppendOnly,
        ];
        let plan = ["read", "deletion", "append-only", "config-key", "generator"];
        let rules = stages
            .iter()
            .map(|s| s.rule().to_string())
            .chain(
                [
                    "tab",
                    "cr",
                    "nul",
                    "master-configs",
                    "base-read",
                    "head-read",
                ]
                .map(String::from),
            )
            .chain(plan.iter().map(|s| format!("plan-{s}")));
        for rule in rules {
            assert_ne!(of_rule(&rule), UNREGISTERED, "{rule}");
            assert_eq!(of_rule(&rule).rule(), rule);
        }
        assert_eq!(of_rule("no-such-rule"), UNREGISTERED);
    }
}
