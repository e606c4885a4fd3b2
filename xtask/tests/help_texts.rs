//! Every flag and argument of every `cargo xtask` subcommand has help text (issue 15, item 7):
//! walks clap's command tree, so a flag added without a doc comment fails here.

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
fn every_flag_of_every_subcommand_has_help_text() {
    let mut cli = xtask::Cli::command();
    // Subcommands are built when they run (xtask/src/lazy.rs); build them all for the walk.
    cli.build();
    let flags = cli
        .find_subcommand("diff-check")
        .map_or(0, |c| c.get_arguments().count());
    assert!(
        flags > 3,
        "diff-check's flags are built for the walk ({flags})"
    );
    let mut missing = Vec::new();
    missing_help(&cli, "cargo xtask", &mut missing);
    assert!(
        missing.is_empty(),
        "flags without help text (add a doc comment):\n  {}",
        missing.join("\n  ")
    );
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
