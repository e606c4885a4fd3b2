//! infx-diff: the change set of a contribution and its whitespace errors.
//!
//! - [`changed_files`]: paths changed between a base (default: the merge-base of HEAD with the
//!   upstream branch) and the working tree — committed, staged, unstaged and untracked — with
//!   renames followed; [`last_commit_touching`] for the "nothing changed" fallback.
//! - [`load_change`] + [`whitespace_errors`]: the errors `git diff --check <base>` reports
//!   (trailing whitespace, space before tab, indent rules, blank lines at EOF, conflict markers),
//!   honouring `core.whitespace` and `.gitattributes`, as diagnostics `diff/<kind>`.
//!
//! Loading (git) lives in `change`; the check itself is pure (`check`, `ws`).

// The shared `Diagnostic` is this crate's error type; errors are rare and end the run, so
// their size does not matter.
#![allow(clippy::result_large_err)]

mod change;
mod check;
pub mod codes;
mod ws;

pub use change::{
    Base, BaseSource, Change, ChangeOptions, ChangeSet, ChangedFile, DEFAULT_UPSTREAMS, EMPTY_TREE,
    FileText, Status, Target, changed_files, diffs_computed, last_commit_touching,
    last_commit_touching_in, load_change, load_change_in, open_repository,
    worktree_bytes_to_commit,
};
pub use check::{Finding, file_findings, findings, to_diagnostic, whitespace_errors};
pub use ws::{WsKind, WsRule};
