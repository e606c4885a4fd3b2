//! The diagnostic codes of the fs check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

infx_report::codes! {
    BUDGET = error("fs/budget", "the walk reached its file budget");
    NOT_REGULAR = error("fs/not-regular", "the path is not a regular file");
    OUT_OF_MEMORY = error("fs/out-of-memory", "the buffer for a file's bytes could not be allocated");
    OUTSIDE_ROOT = error("fs/outside-root", "the path resolves outside the checked root");
    SYMLINK_LOOP = error("fs/symlink-loop", "a symlink chain loops");
    TOO_LARGE = error("fs/too-large", "the file exceeds the size limit");
    UNREADABLE = error("fs/unreadable", "the file or directory could not be read");
}
