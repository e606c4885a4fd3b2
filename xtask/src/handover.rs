//! Commands this binary hands to another binary of the workspace, arguments verbatim (README,
//! "What builds when").
//!
//! `cargo xtask` builds the `xtask` binary without the `registry` feature: no HTTP client, TLS
//! or OCI model, most of a fresh clone's build time. The commands that talk to a registry
//! (`pin`, `validate --online`) are handed to the `xtask-registry` binary of the same package
//! built with the feature ([`REGISTRY`]). A default build (tests, Nix, `cargo install`) has the
//! feature and hands nothing over.
//!
//! The developer commands, `test` (the CI runner) and `conformance` (the harness against
//! upstream's tools), are not in this binary at all: every build hands them to the `xtask-dev`
//! binary of the `xtask-dev` crate ([`DEV`]; issue #40 item 6).
//!
//! Either binary is built through the cargo that ran this one (`$CARGO`) on first use, then
//! reused; its own name keeps the builds from overwriting each other's binary.

use crate::cli::Command;
use std::ffi::{OsStr, OsString};
use std::process::ExitCode;

/// A binary commands are handed to, and how cargo builds it.
#[derive(Debug)]
pub struct Binary {
    /// The binary's name, also the file name looked for beside this one.
    pub name: &'static str,
    /// The manifest of its package.
    pub manifest: &'static str,
    /// Its package.
    pub package: &'static str,
    /// The features it is built with (`--features`), if any.
    pub features: Option<&'static str>,
    /// Built in the profile of this binary (`--release` when this one was): the harness's
    /// speed is the profile's, as it was when it ran inside this binary.
    pub same_profile: bool,
    /// What this binary lacks that the other has, for the messages.
    pub has: &'static str,
    /// The other build, as the message of a failed start names it.
    pub build: &'static str,
    /// How long its first build takes, for the note.
    pub first_build: &'static str,
    /// The remedy besides a clone and a copied binary, if there is one.
    pub otherwise: Option<&'static str>,
}

/// The registry build of this package, for `pin` and `validate --online`.
pub const REGISTRY: Binary = Binary {
    name: "xtask-registry",
    manifest: concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
    package: "xtask",
    features: Some("registry"),
    same_profile: false,
    has: "the registry client",
    build: "the registry build of xtask",
    first_build: "about a minute on a fresh clone",
    otherwise: Some("build xtask with its default features"),
};

/// The developer commands' binary, for `test` and `conformance`.
pub const DEV: Binary = Binary {
    name: "xtask-dev",
    manifest: concat!(env!("CARGO_MANIFEST_DIR"), "/../xtask-dev/Cargo.toml"),
    package: "xtask-dev",
    features: None,
    same_profile: true,
    has: "the developer commands (test, conformance)",
    build: "the `xtask-dev` binary",
    first_build: "its crate on top of xtask's library",
    otherwise: None,
};

/// Whether `cmd` talks to a registry, so a build without the feature must hand it over.
pub fn needs_registry(cmd: &Command) -> bool {
    match cmd {
        Command::Pin(_) => true,
        Command::Validate(a) => a.online,
        _ => false,
    }
}

/// Whether `cmd` is a developer command, which every build hands to [`DEV`].
pub fn is_dev_command(cmd: &Command) -> bool {
    matches!(cmd, Command::Test(_) | Command::Conformance(_))
}

/// `cargo xtask help pin`: clap would print the help of [`crate::forwarded::Forwarded`]; the registry binary
/// prints the real one. `args` includes the program name.
pub fn asks_help_for_pin(args: &[OsString]) -> bool {
    asks_help_for(args, &["pin"])
}

/// `cargo xtask help test` or `help conformance`: as [`asks_help_for_pin`], for [`DEV`].
pub fn asks_help_for_dev(args: &[OsString]) -> bool {
    asks_help_for(args, &["test", "conformance"])
}

fn asks_help_for(args: &[OsString], commands: &[&str]) -> bool {
    matches!(args, [_, help, cmd, ..] if help == "help" && commands.iter().any(|c| cmd == c))
}

/// The command that runs `args` (program name first, dropped) in `to`.
pub fn handover_command(to: &Binary, cargo: &OsStr, args: &[OsString]) -> std::process::Command {
    let mut c = std::process::Command::new(cargo);
    c.arg("run")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(to.manifest)
        .args(["--package", to.package, "--bin", to.name]);
    if to.same_profile && !cfg!(debug_assertions) {
        c.arg("--release");
    }
    if let Some(features) = to.features {
        c.args(["--features", features]);
    }
    c.arg("--").args(args.iter().skip(1));
    c
}

/// Runs `args` in `to` through `cargo` (`None`: this binary was not started by cargo, so there
/// is nothing to build it with) and returns its exit code.
pub fn hand_over_with(to: &Binary, cargo: Option<&OsStr>, args: &[OsString]) -> ExitCode {
    let what = args
        .get(1)
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(cargo) = cargo else {
        let copy = format!("copy the `{}` binary beside this one", to.name);
        let remedies = match to.otherwise {
            Some(otherwise) => format!("{copy}, or {otherwise}"),
            None => format!("or {copy}"),
        };
        eprintln!(
            "error: `{what}` needs {}, which this xtask binary was built without: run it as `cargo xtask {what} …` in a clone, {remedies}",
            to.has
        );
        return ExitCode::from(1);
    };
    match handover_command(to, cargo, args).status() {
        Ok(status) => exit_of(status),
        Err(e) => {
            eprintln!(
                "error: `{what}` needs the {}; running {} failed: {e}",
                to.build,
                crate::hygiene::escape_line(&cargo.to_string_lossy())
            );
            ExitCode::from(1)
        }
    }
}

/// [`hand_over_with`] the cargo that ran this binary. The first time, `to` is still to be
/// compiled, and `--quiet` hides cargo's progress: say why the wait.
pub fn hand_over(to: &Binary, args: &[OsString]) -> ExitCode {
    let sibling = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join(to.name)))
        .filter(|p| p.is_file());
    let cargo = std::env::var_os("CARGO");
    // A copied or installed binary (no cargo ran it) uses the binary beside it when there is
    // one; the note about building is for a build that will happen.
    if cargo.is_none()
        && let Some(other) = sibling
    {
        return run_sibling(&other, args);
    }
    if cargo.is_some() && sibling.is_none() {
        eprintln!(
            "note: building {} for this command once (the `{}` binary, {})",
            to.has, to.name, to.first_build
        );
    }
    hand_over_with(to, cargo.as_deref(), args)
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

/// Runs the binary `other` found beside this one with `args` (program name dropped).
fn run_sibling(other: &std::path::Path, args: &[OsString]) -> ExitCode {
    match std::process::Command::new(other)
        .args(args.iter().skip(1))
        .status()
    {
        Ok(status) => exit_of(status),
        Err(e) => {
            eprintln!(
                "error: running {} failed: {e}",
                crate::hygiene::escape_line(&other.display().to_string())
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
    fn developer_commands_are_handed_over_by_every_build() {
        assert!(is_dev_command(&parse(&["x", "test", "--quick"])));
        assert!(is_dev_command(&parse(&["x", "test", "--help"])));
        assert!(is_dev_command(&parse(&["x", "conformance", "matrix"])));
        assert!(!is_dev_command(&parse(&["x", "validate"])));
        assert!(!is_dev_command(&parse(&["x", "codes"])));
        assert!(asks_help_for_dev(&os(&["x", "help", "test"])));
        assert!(asks_help_for_dev(&os(&["x", "help", "conformance"])));
        assert!(!asks_help_for_dev(&os(&["x", "help", "pin"])));
        assert!(!asks_help_for_dev(&os(&["x", "test", "help"])));
    }

    #[test]
    fn the_handover_names_the_dev_binary_and_keeps_the_arguments() {
        let c = handover_command(
            &DEV,
            OsStr::new("/bin/cargo"),
            &os(&["x", "test", "--help"]),
        );
        let args: Vec<&OsStr> = c.get_args().collect();
        let tail = ["--bin", "xtask-dev", "--", "test", "--help"];
        let profile: &[&str] = if cfg!(debug_assertions) {
            &[]
        } else {
            &["--release"]
        };
        let mut want: Vec<&str> = tail[..2].to_vec();
        want.extend(profile);
        want.extend(&tail[2..]);
        assert!(
            args.ends_with(&want.iter().map(OsStr::new).collect::<Vec<_>>()),
            "{args:?}"
        );
        let manifest = Path::new(args[3]);
        assert!(
            manifest.ends_with("xtask-dev/Cargo.toml") && manifest.is_file(),
            "{args:?}"
        );
    }

    #[test]
    fn the_handover_names_the_registry_binary_and_keeps_the_arguments() {
        let c = handover_command(
            &REGISTRY,
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
        let code = hand_over_with(
            &REGISTRY,
            Some(fake.as_os_str()),
            &os(&["x", "pin", "--check"]),
        );
        assert_eq!(code, ExitCode::from(3));
        let argv = std::fs::read_to_string(&record).unwrap();
        assert!(
            argv.starts_with("run\n--quiet\n") && argv.ends_with("--\npin\n--check\n"),
            "{argv}"
        );
        // Not started by cargo: a clear failure, not a silent pass.
        assert_eq!(
            hand_over_with(&REGISTRY, None, &os(&["x", "pin"])),
            ExitCode::from(1)
        );
    }
}
