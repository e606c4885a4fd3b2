//! infx-changelog
