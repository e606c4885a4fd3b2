//! `xtask-dev`: the developer commands `cargo xtask test` and `cargo xtask conformance`, which
//! the `xtask` binary hands over to this one. Thin: parses arguments and runs the library.

use std::process::ExitCode;

/// mimalloc, as in the `xtask` binary: the harness runs validate and the YAML loader over
/// whole corpus trees (docs/performance.md, "The allocator: mimalloc").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit code of a run whose stdout closed under it before it could finish (`| head -1`), as
/// the `xtask` binary's.
const STDOUT_CLOSED: u8 = 1;

fn main() -> ExitCode {
    // `print!` panics when the reader of stdout has gone; that is no crash to report.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !xtask::hygiene::is_broken_pipe_panic(info.payload()) {
            default_hook(info);
        }
    }));
    match std::panic::catch_unwind(|| xtask_dev::main_with_args(std::env::args_os())) {
        Ok(code) => code,
        Err(payload) if xtask::hygiene::is_broken_pipe_panic(payload.as_ref()) => {
            ExitCode::from(STDOUT_CLOSED)
        }
        Err(payload) => std::panic::resume_unwind(payload),
    }
}
