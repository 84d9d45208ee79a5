//! smoke tests.
