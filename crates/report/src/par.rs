//! The one parallel map of the workspace: image look-ups (`infx_image::verify`) and validate's
//! standalone recipe checks (xtask's `steps::check_standalone`) both take items one at a time
//! from a shared index, so uneven items keep every thread busy to the end.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `f` over `items` on at most `jobs` threads, the calling thread one of them; results
/// keep the input order. `done` is called after each item (for a progress bar). A panic in
/// `f` reaches the caller once every thread has stopped.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
    done: &(dyn Fn(usize) + Sync),
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let workers = jobs.clamp(1, items.len().max(1));
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            let r = f(item);
            if let Ok(mut v) = slots.lock() {
                v[i] = Some(r);
            }
            done(finished.fetch_add(1, Ordering::Relaxed) + 1);
        }
    };
    std::thread::scope(|s| {
        // Every thread costs a fresh allocator heap: the caller, which would only wait, works.
        for _ in 1..workers {
            s.spawn(work);
        }
        work();
    });
    slots
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_map_keeps_order() {
        let items: Vec<u32> = (0..100).collect();
        let seen = AtomicUsize::new(0);
        let out = parallel_map(&items, 7, |x| x * 2, &|_| {
            seen.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(out, (0..100).map(|x| x * 2).collect::<Vec<_>>());
        assert_eq!(seen.into_inner(), 100);
        let empty: Vec<u32> = parallel_map(&[], 4, |x: &u32| *x, &|_| {});
        assert!(empty.is_empty());
    }

    #[test]
    fn the_calling_thread_works_and_a_panic_reaches_it() {
        let caller = std::thread::current().id();
        let on_caller = AtomicUsize::new(0);
        // Slow items, so the calling thread takes some before the other thread ends.
        let items: Vec<u32> = (0..8).collect();
        parallel_map(
            &items,
            2,
            |_| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                if std::thread::current().id() == caller {
                    on_caller.fetch_add(1, Ordering::Relaxed);
                }
            },
            &|_| {},
        );
        assert!(on_caller.into_inner() > 0);
        let panicked = std::panic::catch_unwind(|| {
            parallel_map(&items, 2, |x| assert!(*x != 5, "item 5"), &|_| {})
        });
        assert!(panicked.is_err());
    }
}
