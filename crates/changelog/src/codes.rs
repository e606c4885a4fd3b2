//! The diagnostic codes of the changelog check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

infx_report::codes! {
    ADDED_YAML = error("changelog/added-yaml", "the added lines do not parse as YAML entries");
    APPEND_ONLY_MIX = error("changelog/append-only-mix", "an append-only entry is mixed with other changes");
    BASE_READ = error("changelog/base-read", "the changelog cannot be read at the base revision");
    CONFIG_KEY = error("changelog/config-key", "a config-key of a new entry resolves to no master config");
    CR = error("changelog/cr", "a line contains a CR character");
    DELETED_LINE = error("changelog/deleted-line", "a line of the changelog was deleted (append-only)");
    EMPTY_PLAN = error("changelog/empty-plan", "an appended entry plans no benchmark row");
    ENCODING = error("changelog/encoding", "perf-changelog.yaml is not UTF-8 text");
    ENTRIES_DELETED = error("changelog/entries-deleted", "entries present at the base are missing from the head");
    ENTRY_CHANGED = error("changelog/entry-changed", "an existing changelog entry was edited (append-only)");
    ENTRY_EXCLUSIVE = error("changelog/entry-exclusive", "an entry sets two fields that exclude each other");
    ENTRY_INSERTED = error("changelog/entry-inserted", "a new entry is inserted before the end of the changelog (append-only)");
    ENTRY_REORDERED = error("changelog/entry-reordered", "existing changelog entries were swapped or moved (append-only)");
    ENTRY_REQUIRED = error("changelog/entry-required", "a changed config can benchmark differently, but no appended entry plans it");
    ENTRY_SCHEMA = error("changelog/entry-schema", "a changelog entry does not match the entry schema");
    ENTRY_START = error("changelog/entry-start", "an added entry does not start its own list item");
    FINAL_NEWLINE = error("changelog/final-newline", "perf-changelog.yaml does not end in exactly one newline");
    HEAD_READ = error("changelog/head-read", "the changelog cannot be read at the head revision");
    HISTORY_BYTES = error("changelog/history-bytes", "the bytes before the added entries differ from the base");
    IO = error("changelog/io", "perf-changelog.yaml could not be read");
    MASTER_CONFIGS = error("changelog/master-configs", "the master configs needed to resolve config-keys could not be loaded");
    MISSING = error("changelog/missing", "the base has perf-changelog.yaml; the change deleted, replaced or unreadably changed it");
    MIXED_CORRECTIONS = error("changelog/mixed-corrections", "a change both corrects earlier entries and adds new ones");
    NO_ADDITIONS = error("changelog/no-additions", "the change adds no changelog entry");
    NO_HISTORY = note("changelog/no-history", "no git history: entries checked one by one, without the append-only and config-key checks");
    NUL = error("changelog/nul", "a line contains a NUL byte");
    PLAN = error("changelog/plan", "the sweep plan of the appended entries fails");
    PLAN_APPEND_ONLY = error("changelog/plan-append-only", "the plan's append-only stage rejected the change");
    PLAN_CONFIG_KEY = error("changelog/plan-config-key", "the plan could not resolve a config-key");
    PLAN_DELETION = error("changelog/plan-deletion", "the plan found deleted changelog lines");
    PLAN_GENERATOR = error("changelog/plan-generator", "the plan's matrix generation failed");
    PLAN_READ = error("changelog/plan-read", "the plan could not read its inputs");
    PR_LINK = error("changelog/pr-link", "an entry's pr-link is not a link to an InferenceX pull request");
    PR_LINK_LINES = error("changelog/pr-link-lines", "a pr-link spans more than one line");
    ROOT = error("changelog/root", "the changelog's top level is not a list");
    SEPARATOR = error("changelog/separator", "added entries are not separated the way the file's history is");
    TAB = error("changelog/tab", "a line contains a tab");
    TOO_MANY_ENTRIES = error("changelog/too-many-entries", "the change appends more entries than the budget (docs/security.md)");
    TRAILING_BLANK = error("changelog/trailing-blank", "the file ends in blank lines");
    YAML = error("changelog/yaml", "perf-changelog.yaml is not valid YAML");
    YAML11_TRAP = error("changelog/yaml11-trap", "a value YAML 1.1 reads differently than it looks");
    PR_LABELS = error("pr/labels", "the pull request's labels do not match what its changelog entries need");
}
