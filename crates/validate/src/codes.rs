//! The diagnostic codes the validate pipeline raises itself (the pull-request event, a check
//! that failed, a listing cut short): every other finding is its check crate's code (README,
//! "Diagnostic codes").

infx_report::codes! {
    PR_EVENT = error("pr/event", "the pull-request event payload could not be read");
    TRUNCATED = note("validate/truncated", "more findings of one code than the report lists (the verdict counts them all)");
    INTERNAL = error("validate/internal", "a check failed unexpectedly (a bug in infx; the other checks still ran)");
}
