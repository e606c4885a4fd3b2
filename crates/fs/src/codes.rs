//! The diagnostic codes of the fs check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const BUDGET: Code = Code::error("fs/budget", "the walk reached its file budget");
pub const NOT_REGULAR: Code = Code::error("fs/not-regular", "the path is not a regular file");
pub const OUTSIDE_ROOT: Code = Code::error(
    "fs/outside-root",
    "the path resolves outside the checked root",
);
pub const SYMLINK_LOOP: Code = Code::error("fs/symlink-loop", "a symlink chain loops");
pub const TOO_LARGE: Code = Code::error("fs/too-large", "the file exceeds the size limit");
pub const UNREADABLE: Code =
    Code::error("fs/unreadable", "the file or directory could not be read");

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    BUDGET,
    NOT_REGULAR,
    OUTSIDE_ROOT,
    SYMLINK_LOOP,
    TOO_LARGE,
    UNREADABLE,
];
