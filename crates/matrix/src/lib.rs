//! infx-matrix
