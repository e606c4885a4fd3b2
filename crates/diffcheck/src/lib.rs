//! infx-diffcheck
