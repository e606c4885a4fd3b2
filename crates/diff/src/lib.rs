//! infx-diff
