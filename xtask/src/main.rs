//! `cargo xtask`: the one command line of infx. Thin: parses arguments and hands over to the
//! subcommand modules of the `xtask` library.

use std::process::ExitCode;

/// Rust's allocations go to mimalloc rather than glibc's malloc: a run allocates millions of
/// small nodes and strings (the YAML trees), and mimalloc cut a run's CPU by 5-10 %, for more
/// peak memory (docs/performance.md, "The allocator: mimalloc"). libgit2's C keeps glibc's
/// malloc.
///
/// Wrapped so that an allocation the system refuses (an address-space limit, `ulimit -v`)
/// ends the run with a finding and exit 1 instead of SIGABRT (exit 134) and no word
/// (docs/security.md, "Memory").
#[global_allocator]
static ALLOCATOR: Guarded = Guarded(mimalloc::MiMalloc);

/// [`mimalloc::MiMalloc`], with [`out_of_memory`] where it returns null.
struct Guarded(mimalloc::MiMalloc);

// SAFETY: every call is forwarded unchanged to mimalloc's allocator; only a null result is
// acted on, by ending the process (nothing is returned to the caller then).
unsafe impl std::alloc::GlobalAlloc for Guarded {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as is.
        let p = unsafe { self.0.alloc(layout) };
        if p.is_null() && !infx_fs::reserving_fallibly() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if p.is_null() && !infx_fs::reserving_fallibly() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as for `alloc`.
        unsafe { self.0.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if p.is_null() && !infx_fs::reserving_fallibly() {
            out_of_memory(new_size);
        }
        p
    }
}

/// Says which allocation failed, with the code `process/out-of-memory`, on stderr without
/// allocating, and ends the process with exit 1: the run did not reach its verdict, so it is
/// not a pass. A fallible reservation never gets here (`infx_fs::try_reserve`): large buffers
/// whose size an input decides (a file read) report their own finding.
fn out_of_memory(size: usize) -> ! {
    let mut buf = [0u8; 320];
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        let k = bytes.len().min(buf.len() - n);
        buf[n..n + k].copy_from_slice(&bytes[..k]);
        n += k;
    };
    put(b"error[process/out-of-memory]: out of memory: an allocation of ");
    put(decimal(size as u64).as_slice());
    put(b" bytes failed");
    if let Some(limit) = address_space_limit() {
        put(b" (address-space limit, ulimit -v: ");
        put(decimal(limit).as_slice());
        put(b" bytes)");
    }
    put(b"; the run stopped before its verdict\n");
    #[cfg(unix)]
    // SAFETY: writes `n` initialised bytes of a stack buffer to fd 2, then ends the process
    // without running anything that could allocate.
    unsafe {
        libc::write(2, buf.as_ptr().cast(), n);
        libc::_exit(1);
    }
    #[cfg(not(unix))]
    std::process::abort();
}

/// `v` in decimal digits, in a fixed buffer (no allocation).
struct Decimal {
    digits: [u8; 20],
    start: usize,
}

impl Decimal {
    fn as_slice(&self) -> &[u8] {
        &self.digits[self.start..]
    }
}

fn decimal(mut v: u64) -> Decimal {
    let mut d = Decimal {
        digits: [b'0'; 20],
        start: 19,
    };
    let mut i = 20;
    loop {
        i -= 1;
        d.digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    d.start = i;
    d
}

/// The process's address-space limit (`ulimit -v`) in bytes, if it has one.
fn address_space_limit() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one `rlimit` into the struct passed.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0;
        if ok && lim.rlim_cur != libc::RLIM_INFINITY {
            return Some(lim.rlim_cur);
        }
    }
    None
}

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
///
/// Under an address-space limit (`ulimit -v`) glibc's malloc keeps one arena: each thread's
/// own arena reserves 64 MiB of address space, which made the August tree, 63 MB at its peak,
/// fail at 256 MiB (docs/security.md, "Memory").
fn grow_heaps_in_large_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const TOP_PAD: libc::c_int = 32 << 20;
        // SAFETY: mallopt only sets a tuning parameter of glibc's allocator; it is called
        // before any other thread exists, and a value it refuses leaves the default in place.
        unsafe {
            libc::mallopt(libc::M_TOP_PAD, TOP_PAD);
            if address_space_limit().is_some() {
                libc::mallopt(libc::M_ARENA_MAX, 1);
            }
        }
    }
}
