//! infx-git
