//! The arguments of a subcommand this binary hands to another one, kept verbatim (README,
//! "What builds when"). Its own module: [`crate::cli`] names it, and the handover that
//! imports `cli` must not be below it (docs/architecture.md, "Module graph").

use std::ffi::OsString;

/// The arguments of a command this binary hands over, kept verbatim: `--help` included, so
/// the registry binary prints the real help of `pin`, and the `xtask-dev` binary that of `test`
/// and `conformance`.
#[derive(clap::Args, Debug)]
#[command(disable_help_flag = true)]
pub struct Forwarded {
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    /// The command's arguments, passed on as they are to the binary that runs it.
    pub args: Vec<OsString>,
}
