//! Every flag and argument of `cargo xtask test` and `cargo xtask conformance` has help text,
//! as xtask/tests/help_texts.rs holds for the commands of the `xtask` binary: since issue #40
//! item 6 these two are parsed here, in the `xtask-dev` binary xtask hands them to.

use clap::CommandFactory;

#[path = "../../xtask/tests/support/help_walk.rs"]
mod help_walk;
use help_walk::assert_every_flag_has_help;

#[test]
fn every_flag_of_every_developer_command_has_help_text() {
    assert_every_flag_has_help(xtask_dev::Cli::command(), "conformance");
}

/// `cargo xtask --help` lists the developer commands with the text of xtask's own command
/// line; their help, printed here, says the same.
#[test]
fn each_developer_command_reads_as_in_cargo_xtask_help() {
    let xtask = xtask::Cli::command();
    let dev = xtask_dev::Cli::command();
    let mut names = Vec::new();
    for sub in dev.get_subcommands() {
        let name = sub.get_name();
        names.push(name);
        let theirs = xtask
            .find_subcommand(name)
            .unwrap_or_else(|| panic!("`cargo xtask {name}` is no xtask command"));
        assert_eq!(
            sub.get_about().map(ToString::to_string),
            theirs.get_about().map(ToString::to_string),
            "{name}"
        );
    }
    assert_eq!(names, ["conformance", "test"]);
}
