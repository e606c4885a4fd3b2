//! Every flag and argument of `cargo xtask test` and `cargo xtask conformance` has help text,
//! as xtask/tests/help_texts.rs holds for the commands of the `xtask` binary: since issue #40
//! item 6 these two are parsed here, in the `xtask-dev` binary xtask hands them to.

use clap::CommandFactory;

fn missing_help(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
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

#[test]
fn every_flag_of_every_developer_command_has_help_text() {
    let mut cli = xtask_dev::Cli::command();
    // Subcommands are built when they run (xtask/src/lazy.rs); build them all for the walk.
    cli.build();
    let flags = cli
        .find_subcommand("conformance")
        .map_or(0, |c| c.get_arguments().count());
    assert!(
        flags > 3,
        "conformance's flags are built for the walk ({flags})"
    );
    let mut missing = Vec::new();
    missing_help(&cli, "cargo xtask", &mut missing);
    assert!(
        missing.is_empty(),
        "flags without help text (add a doc comment):\n  {}",
        missing.join("\n  ")
    );
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
