//! The diagnostic codes of the git check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const DIFF: Code = Code::error("git/diff", "git could not compute the diff");
pub const OBJECT: Code = Code::error("git/object", "a git object could not be read");
pub const OPEN: Code = Code::error("git/open", "the path is not inside a git repository");
pub const REVISION: Code = Code::error("git/revision", "a revision does not resolve");
pub const UNREGISTERED: Code = Code::error(
    "git/unregistered",
    "a git failure whose kind has no registered code (a bug in infx; the message tells what failed)",
);

// The base of a change (base.rs) is resolved here for infx-diff and the changelog commands; its
// faults keep the `diff/` names that `validate` and `diff-check` always printed (docs/diff.md,
// "Base"), and infx-diff re-exports them.
pub const BASE_NOT_FOUND: Code = Code::error(
    "diff/base-not-found",
    "the base revision does not resolve and no upstream branch exists",
);
pub const NO_MERGE_BASE: Code =
    Code::error("diff/no-merge-base", "HEAD and the base share no history");
pub const SHALLOW: Code = Code::error("diff/shallow", "the clone is too shallow to reach the base");
pub const LIBGIT2: Code = Code::error("diff/git", "a libgit2 operation failed");

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    BASE_NOT_FOUND,
    LIBGIT2,
    NO_MERGE_BASE,
    SHALLOW,
    DIFF,
    OBJECT,
    OPEN,
    REVISION,
    UNREGISTERED,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind GitError is built with (crates/git/src/lib.rs) has its code.
    #[test]
    fn every_error_kind_has_a_registered_code() {
        for kind in ["open", "revision", "object", "diff"] {
            let e = crate::GitError {
                kind,
                message: String::new(),
                help: None,
            };
            assert_ne!(e.code(), UNREGISTERED, "{kind}");
            assert_eq!(e.code().rule(), kind);
        }
    }
}
