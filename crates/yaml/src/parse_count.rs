//! Parses per path, counted only while a test asks (the check that `validate` parses each file
//! once, docs/architecture.md). Off, it costs one relaxed atomic load per parse.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static COUNTING: AtomicBool = AtomicBool::new(false);
static COUNTS: Mutex<BTreeMap<PathBuf, usize>> = Mutex::new(BTreeMap::new());

/// Starts counting (process-wide) from zero.
pub fn start() {
    take();
    COUNTING.store(true, Ordering::Relaxed);
}

/// Stops counting and returns how often each path was parsed since [`start`].
pub fn take() -> BTreeMap<PathBuf, usize> {
    COUNTING.store(false, Ordering::Relaxed);
    let mut counts = COUNTS.lock().unwrap_or_else(|e| e.into_inner());
    std::mem::take(&mut *counts)
}

pub(crate) fn record(path: &Path) {
    if COUNTING.load(Ordering::Relaxed) {
        let mut counts = COUNTS.lock().unwrap_or_else(|e| e.into_inner());
        *counts.entry(path.to_path_buf()).or_insert(0) += 1;
    }
}
