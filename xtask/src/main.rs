//! `cargo xtask`: the one command line of infx. Thin: parses arguments and hands over to the
//! subcommand modules of the `xtask` library.

use std::process::ExitCode;

fn main() -> ExitCode {
    xtask::main_with_args(std::env::args_os())
}
