//! infx-image
