//! The diagnostic codes of the diff check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

// The base resolution's faults are infx-git's (it resolves the base for infx-diff); their names
// stay `diff/…` (docs/diff.md, "Base").
pub use infx_git::codes::{BASE_NOT_FOUND, LIBGIT2 as GIT, NO_MERGE_BASE, SHALLOW};

infx_report::codes! {
    BARE_REPO = error("diff/bare-repo", "a bare repository has no working tree to check");
    BLANK_AT_EOF = error("diff/blank-at-eof", "blank lines added at the end of a file");
    CONFLICT_MARKER = error("diff/conflict-marker", "a merge conflict marker left in a changed line");
    INDENT_WITH_NON_TAB = error("diff/indent-with-non-tab", "an added line indents with spaces where a tab is wanted");
    IO = error("diff/io", "a changed file could not be read");
    NOT_A_REPO = error("diff/not-a-repo", "the directory is not inside a git repository");
    SPACE_BEFORE_TAB = error("diff/space-before-tab", "a space before a tab in the indent");
    TAB_IN_INDENT = error("diff/tab-in-indent", "an added line indents with a tab");
    TRAILING_WHITESPACE = error("diff/trailing-whitespace", "a changed line ends in whitespace");
    WHITESPACE_RULE = error("diff/whitespace-rule", "the whitespace configuration contradicts itself");
}
