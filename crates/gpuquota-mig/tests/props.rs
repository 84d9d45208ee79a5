//! props tests.
