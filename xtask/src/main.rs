//! `cargo xtask`: the one command line of infx. Thin: parses arguments and hands over to the
//! subcommand modules of the `xtask` library.

use std::process::ExitCode;

/// Rust's allocations go to mimalloc rather than glibc's malloc: a run allocates millions of
/// small nodes and strings (the YAML trees), and mimalloc cut a run's CPU by 5-10 %, for more
/// peak memory (docs/performance.md, "The allocator: mimalloc"). libgit2's C keeps glibc's
/// malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit code of a run whose stdout closed under it before it could finish (`| head -1`): not
/// a pass, since the run did not complete (docs/security.md, "Output").
const STDOUT_CLOSED: u8 = 1;

fn main() -> ExitCode {
    grow_heaps_in_large_steps();
    // `print!` panics when the reader of stdout has gone; that is no crash to report.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !xtask::hygiene::is_broken_pipe_panic(info.payload()) {
            default_hook(info);
        }
    }));
    let code = match std::panic::catch_unwind(|| xtask::main_with_args(std::env::args_os())) {
        Ok(code) => code,
        Err(payload) if xtask::hygiene::is_broken_pipe_panic(payload.as_ref()) => {
            ExitCode::from(STDOUT_CLOSED)
        }
        Err(payload) => std::panic::resume_unwind(payload),
    };
    exit_without_teardown(code)
}

/// Ends the process once its output is flushed, without the exit handlers: they only give
/// back memory the kernel reclaims anyway (mimalloc collects every heap, libgit2 frees its
/// caches), about 2 % of a one-config `validate` (docs/performance.md, "Exit without
/// teardown"). Files are closed as their handles drop, before `main_with_args` returns; a
/// thread still running would end here as it would in `exit`.
fn exit_without_teardown(code: ExitCode) -> ExitCode {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::io::Write;
        // `ExitCode` does not expose its status; it is one of the 256 it can be made from.
        let status = (0..=u8::MAX).find(|n| ExitCode::from(*n) == code);
        // Output that cannot be flushed (a closed pipe) is left to the runtime's exit.
        let flushed = std::io::stdout().flush().is_ok() && std::io::stderr().flush().is_ok();
        if let Some(status) = status
            && flushed
        {
            // SAFETY: `_exit` takes no pointers and only ends the process, as `exit` would
            // after its handlers; the output buffers were flushed above.
            unsafe { libc::_exit(libc::c_int::from(status)) }
        }
    }
    code
}

/// For libgit2's allocations, which stay with glibc's malloc (see [`ALLOCATOR`]).
/// glibc grows a thread's heap a few pages at a time, one `mprotect` each: a one-config
/// `validate` made ~1,300 of them, serialised on the process's memory-map lock while the parse
/// threads allocate. A 32 MiB pad makes each growth one call; untouched pages cost no memory
/// (docs/performance.md, "The allocator's heap growth").
fn grow_heaps_in_large_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const TOP_PAD: libc::c_int = 32 << 20;
        // SAFETY: mallopt only sets a tuning parameter of glibc's allocator; it is called
        // before any other thread exists, and a value it refuses leaves the default in place.
        unsafe {
            libc::mallopt(libc::M_TOP_PAD, TOP_PAD);
        }
    }
}
