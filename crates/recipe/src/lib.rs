//! infx-recipe
