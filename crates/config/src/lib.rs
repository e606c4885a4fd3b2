//! infx-config
