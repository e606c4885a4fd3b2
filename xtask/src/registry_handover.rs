//! The lean `cargo xtask` binary and the registry commands (README, "What builds when").
//!
//! `cargo xtask` builds the `xtask` binary without the `registry` feature: no HTTP client, TLS
//! or OCI model, most of a fresh clone's build time. The commands that talk to a registry
//! (`pin`, `validate --online`) are handed, arguments verbatim, to the `xtask-registry` binary
//! of the same package built with the feature, through the cargo that ran this one (`$CARGO`):
//! built on first use, then reused. Its own name keeps the two builds from overwriting each
//! other's binary. A default build (tests, Nix, `cargo install`) has the feature and hands
//! nothing over.

use crate::cli::Command;
use std::ffi::{OsStr, OsString};
use std::process::ExitCode;

/// Whether `cmd` talks to a registry, so a build without the feature must hand it over.
pub fn needs_registry(cmd: &Command) -> bool {
    match cmd {
        Command::Pin(_) => true,
        Command::Validate(a) => a.online,
        _ => false,
    }
}

/// `cargo xtask help pin`: clap would print the help of [`crate::forwarded::Forwarded`]; the registry binary
/// prints the real one. `args` includes the program name.
pub fn asks_help_for_pin(args: &[OsString]) -> bool {
    matches!(args, [_, help, pin, ..] if help == "help" && pin == "pin")
}

/// The command that runs `args` (program name first, dropped) in the registry binary.
pub fn handover_command(cargo: &OsStr, args: &[OsString]) -> std::process::Command {
    let mut c = std::process::Command::new(cargo);
    c.arg("run")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .args(["--package", "xtask", "--bin", "xtask-registry"])
        .args(["--features", "registry", "--"])
        .args(args.iter().skip(1));
    c
}

/// Runs `args` in the registry binary through `cargo` (`None`: this binary was not started by
/// cargo, so there is nothing to build it with) and returns its exit code.
pub fn hand_over_with(cargo: Option<&OsStr>, args: &[OsString]) -> ExitCode {
    let what = args
        .get(1)
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(cargo) = cargo else {
        eprintln!(
            "error: `{what}` needs the registry client, which this xtask binary was built without: run it as `cargo xtask {what} …` in a clone, copy the `xtask-registry` binary beside this one, or build xtask with its default features"
        );
        return ExitCode::from(1);
    };
    match handover_command(cargo, args).status() {
        Ok(status) => exit_of(status),
        Err(e) => {
            eprintln!(
                "error: `{what}` needs the registry build of xtask; running {} failed: {e}",
                crate::hygiene::escape_line(&cargo.to_string_lossy())
            );
            ExitCode::from(1)
        }
    }
}

/// [`hand_over_with`] the cargo that ran this binary. The first time, the registry binary is
/// still to be compiled, and `--quiet` hides cargo's progress: say why the wait.
pub fn hand_over(args: &[OsString]) -> ExitCode {
    let sibling = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("xtask-registry")))
        .filter(|p| p.is_file());
    let cargo = std::env::var_os("CARGO");
    // A copied or installed binary (no cargo ran it) uses the registry binary beside it when
    // there is one; the note about building is for a build that will happen.
    if cargo.is_none()
        && let Some(registry) = sibling
    {
        return run_sibling(&registry, args);
    }
    if cargo.is_some() && sibling.is_none() {
        eprintln!(
            "note: building the registry client for this command once (the `xtask-registry` binary, about a minute on a fresh clone)"
        );
    }
    hand_over_with(cargo.as_deref(), args)
}

/// The exit code of the handed-over run. A signal (no code) is a failed run; codes above 255
/// do not occur on the platforms cargo runs on, and would be a failure too.
fn exit_of(status: std::process::ExitStatus) -> ExitCode {
    ExitCode::from(
        status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            .unwrap_or(1),
    )
}

/// Runs the `xtask-registry` binary found beside this one with `args` (program name dropped).
fn run_sibling(registry: &std::path::Path, args: &[OsString]) -> ExitCode {
    match std::process::Command::new(registry)
        .args(args.iter().skip(1))
        .status()
    {
        Ok(status) => exit_of(status),
        Err(e) => {
            eprintln!(
                "error: running {} failed: {e}",
                crate::hygiene::escape_line(&registry.display().to_string())
            );
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn parse(args: &[&str]) -> Command {
        match crate::cli::Cli::try_parse_from(os(args)) {
            Ok(cli) => cli.command,
            Err(e) => panic!("{args:?} does not parse: {e}"),
        }
    }

    #[test]
    fn only_registry_commands_are_handed_over() {
        assert!(needs_registry(&parse(&["x", "pin", "--check"])));
        assert!(needs_registry(&parse(&["x", "validate", "--online"])));
        assert!(!needs_registry(&parse(&["x", "validate"])));
        assert!(!needs_registry(&parse(&["x", "diff-check"])));
        assert!(asks_help_for_pin(&os(&["x", "help", "pin"])));
        assert!(!asks_help_for_pin(&os(&["x", "help", "validate"])));
        assert!(!asks_help_for_pin(&os(&["x", "pin", "help"])));
    }

    #[test]
    fn the_handover_names_the_registry_binary_and_keeps_the_arguments() {
        let c = handover_command(
            OsStr::new("/bin/cargo"),
            &os(&["x", "pin", "--help", "a b"]),
        );
        assert_eq!(c.get_program(), "/bin/cargo");
        let args: Vec<&OsStr> = c.get_args().collect();
        let tail = [
            "--bin",
            "xtask-registry",
            "--features",
            "registry",
            "--",
            "pin",
            "--help",
            "a b",
        ];
        assert!(args.ends_with(&tail.map(OsStr::new)), "{args:?}");
        let manifest = Path::new(args[3]);
        assert!(
            manifest.ends_with("xtask/Cargo.toml") && manifest.is_file(),
            "{args:?}"
        );
    }

    use std::path::Path;

    #[cfg(unix)]
    #[test]
    fn the_exit_code_of_the_registry_run_is_the_exit_code() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("cargo");
        let record = dir.path().join("argv");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nexit 3\n",
                record.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let code = hand_over_with(Some(fake.as_os_str()), &os(&["x", "pin", "--check"]));
        assert_eq!(code, ExitCode::from(3));
        let argv = std::fs::read_to_string(&record).unwrap();
        assert!(
            argv.starts_with("run\n--quiet\n") && argv.ends_with("--\npin\n--check\n"),
            "{argv}"
        );
        // Not started by cargo: a clear failure, not a silent pass.
        assert_eq!(hand_over_with(None, &os(&["x", "pin"])), ExitCode::from(1));
    }
}
