//! The diagnostic codes of the `# infx: allow(...)` comments: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use crate::Code;

pub const NO_REASON: Code = Code::error(
    "allow/no-reason",
    "an allow comment gives no reason for acknowledging the warning",
);
pub const NOT_A_WARNING: Code = Code::error(
    "allow/not-a-warning",
    "an allow comment names an error or note; only warnings can be acknowledged",
);
pub const SYNTAX: Code = Code::error("allow/syntax", "an `# infx:` comment does not parse");
pub const UNUSED: Code = Code::warning("allow/unused", "an allow comment matches no finding");

/// Every code above, in name order.
pub const ALL: &[Code] = &[NO_REASON, NOT_A_WARNING, SYNTAX, UNUSED];
