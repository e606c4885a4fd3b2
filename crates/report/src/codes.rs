//! The diagnostic codes of the `# infx: allow(...)` comments: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

crate::codes! {
    NO_REASON = error("allow/no-reason", "an allow comment gives no reason for acknowledging the warning");
    NOT_A_WARNING = error("allow/not-a-warning", "an allow comment names an error or note; only warnings can be acknowledged");
    SYNTAX = error("allow/syntax", "an `# infx:` comment does not parse");
    UNUSED = warning("allow/unused", "an allow comment matches no finding");
}
