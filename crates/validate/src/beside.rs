//! Work that runs beside the caller's on a thread of a scope, or in place when a thread would
//! not pay for its fresh allocator heap (docs/performance.md, "Threads cost pages"). Either way
//! a panic comes back as the thread's result, for the caller to turn into a finding.

use std::thread::{Result, Scope, ScopedJoinHandle};

pub(crate) enum Beside<'scope, T> {
    Thread(ScopedJoinHandle<'scope, T>),
    Done(Result<T>),
}

impl<'scope, T: Send + 'scope> Beside<'scope, T> {
    /// Starts `work` on a thread of `scope` when `on_thread`, else runs it here.
    pub(crate) fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        on_thread: bool,
        work: impl FnOnce() -> T + Send + 'scope,
    ) -> Self {
        if on_thread {
            Beside::Thread(scope.spawn(work))
        } else {
            Beside::Done(std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)))
        }
    }

    /// The work's result, waiting for its thread.
    pub(crate) fn join(self) -> Result<T> {
        match self {
            Beside::Thread(handle) => handle.join(),
            Beside::Done(done) => done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Beside;

    #[test]
    fn in_place_and_on_a_thread_give_the_same_result_and_a_panic_comes_back() {
        std::thread::scope(|s| {
            for on_thread in [false, true] {
                assert_eq!(Beside::start(s, on_thread, || 6 * 7).join().ok(), Some(42));
                let panicked = Beside::start(s, on_thread, || -> u8 { panic!("a bug") });
                assert!(panicked.join().is_err(), "on_thread = {on_thread}");
            }
        });
    }
}
