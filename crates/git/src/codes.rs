//! The diagnostic codes of the git check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const BASE: Code = Code::error("git/base", "no upstream branch to compare against");
pub const DIFF: Code = Code::error("git/diff", "git could not compute the diff");
pub const MERGE_BASE: Code = Code::error(
    "git/merge-base",
    "the two revisions have no common ancestor",
);
pub const OBJECT: Code = Code::error("git/object", "a git object could not be read");
pub const OPEN: Code = Code::error("git/open", "the path is not inside a git repository");
pub const REVISION: Code = Code::error("git/revision", "a revision does not resolve");
pub const SHALLOW: Code = Code::error(
    "git/shallow",
    "the clone is shallow and lacks the needed history",
);
pub const UNREGISTERED: Code = Code::error(
    "git/unregistered",
    "a git failure whose kind has no registered code (a bug in infx; the message tells what failed)",
);

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    BASE,
    DIFF,
    MERGE_BASE,
    OBJECT,
    OPEN,
    REVISION,
    SHALLOW,
    UNREGISTERED,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind GitError is built with (crates/git/src/lib.rs) has its code.
    #[test]
    fn every_error_kind_has_a_registered_code() {
        for kind in [
            "open",
            "shallow",
            "revision",
            "merge-base",
            "base",
            "object",
            "diff",
        ] {
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
