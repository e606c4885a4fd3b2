//! Every flag and argument of every `cargo xtask` subcommand has help text (issue 15, item 7):
//! walks clap's command tree, so a flag added without a doc comment fails here.

use clap::CommandFactory;

#[path = "support/help_walk.rs"]
mod help_walk;
use help_walk::{assert_every_flag_has_help, missing_help};

#[test]
fn every_flag_of_every_subcommand_has_help_text() {
    assert_every_flag_has_help(xtask::Cli::command(), "diff-check");
}

#[test]
fn the_walk_finds_a_flag_without_help() {
    // The check itself can fail: a command with one undocumented flag is reported.
    let cmd = clap::Command::new("t")
        .arg(
            clap::Arg::new("documented")
                .long("documented")
                .help("has text"),
        )
        .arg(clap::Arg::new("bare").long("bare"));
    let mut missing = Vec::new();
    missing_help(&cmd, "t", &mut missing);
    assert_eq!(missing, ["t --bare"]);
}
