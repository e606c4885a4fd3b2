//! The diagnostic codes of the diff check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

// The base resolution's faults are infx-git's (it resolves the base for infx-diff); their names
// stay `diff/…` (docs/diff.md, "Base").
pub use infx_git::codes::{BASE_NOT_FOUND, LIBGIT2 as GIT, NO_MERGE_BASE, SHALLOW};

pub const BARE_REPO: Code = Code::error(
    "diff/bare-repo",
    "a bare repository has no working tree to check",
);
pub const BLANK_AT_EOF: Code = Code::error(
    "diff/blank-at-eof",
    "blank lines added at the end of a file",
);
pub const CONFLICT_MARKER: Code = Code::error(
    "diff/conflict-marker",
    "a merge conflict marker left in a changed line",
);
pub const INDENT_WITH_NON_TAB: Code = Code::error(
    "diff/indent-with-non-tab",
    "an added line indents with spaces where a tab is wanted",
);
pub const IO: Code = Code::error("diff/io", "a changed file could not be read");
pub const NOT_A_REPO: Code = Code::error(
    "diff/not-a-repo",
    "the directory is not inside a git repository",
);
pub const SPACE_BEFORE_TAB: Code = Code::error(
    "diff/space-before-tab",
    "a space before a tab in the indent",
);
pub const TAB_IN_INDENT: Code =
    Code::error("diff/tab-in-indent", "an added line indents with a tab");
pub const TRAILING_WHITESPACE: Code = Code::error(
    "diff/trailing-whitespace",
    "a changed line ends in whitespace",
);
pub const WHITESPACE_RULE: Code = Code::error(
    "diff/whitespace-rule",
    "the whitespace configuration contradicts itself",
);

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    BARE_REPO,
    BLANK_AT_EOF,
    CONFLICT_MARKER,
    INDENT_WITH_NON_TAB,
    IO,
    NOT_A_REPO,
    SPACE_BEFORE_TAB,
    TAB_IN_INDENT,
    TRAILING_WHITESPACE,
    WHITESPACE_RULE,
];
