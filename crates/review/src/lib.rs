//! infx-review
