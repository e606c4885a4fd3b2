//! The walk over clap's command tree that lists every flag and argument without help text, for
//! the help-text tests of xtask (xtask/tests/help_texts.rs) and xtask-dev
//! (xtask-dev/tests/help_texts.rs).

/// Adds `path flag` to `out` for each argument of `cmd` and its subcommands without help text.
pub(crate) fn missing_help(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        // clap's own --help / --version carry their own text.
        if matches!(id, "help" | "version") {
            continue;
        }
        let has_help = arg
            .get_help()
            .or_else(|| arg.get_long_help())
            .is_some_and(|h| !h.to_string().trim().is_empty());
        if !has_help {
            let name = arg
                .get_long()
                .map(|l| format!("--{l}"))
                .unwrap_or_else(|| format!("<{id}>"));
            out.push(format!("{path} {name}"));
        }
    }
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        missing_help(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

/// Fails, listing them, when a flag or argument of `cli` or its subcommands has no help text.
/// `probe`, a subcommand with more than three flags, shows the lazily built subcommands were
/// built for the walk.
pub(crate) fn assert_every_flag_has_help(mut cli: clap::Command, probe: &str) {
    // Subcommands are built when they run (xtask/src/lazy.rs); build them all for the walk.
    cli.build();
    let flags = cli
        .find_subcommand(probe)
        .map_or(0, |c| c.get_arguments().count());
    assert!(
        flags > 3,
        "{probe}'s flags are built for the walk ({flags})"
    );
    let mut missing = Vec::new();
    missing_help(&cli, "cargo xtask", &mut missing);
    assert!(
        missing.is_empty(),
        "flags without help text (add a doc comment):\n  {}",
        missing.join("\n  ")
    );
}
