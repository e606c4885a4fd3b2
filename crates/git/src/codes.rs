//! The diagnostic codes of the git check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

infx_report::codes! {
    // The base of a change (base.rs) is resolved here for infx-diff and the changelog commands;
    // its faults keep the `diff/` names that `validate` and `diff-check` always printed
    // (docs/diff.md, "Base"), and infx-diff re-exports them.
    BASE_NOT_FOUND = error("diff/base-not-found", "the base revision does not resolve and no upstream branch exists");
    LIBGIT2 = error("diff/git", "a libgit2 operation failed");
    NO_MERGE_BASE = error("diff/no-merge-base", "HEAD and the base share no history");
    SHALLOW = error("diff/shallow", "the clone is too shallow to reach the base");

    DIFF = error("git/diff", "git could not compute the diff");
    OBJECT = error("git/object", "a git object could not be read");
    OPEN = error("git/open", "the path is not inside a git repository");
    REVISION = error("git/revision", "a revision does not resolve");
    SPARSE_CHECKOUT = error("git/sparse-checkout", "the sparse checkout leaves out a folder the checks read");
}
