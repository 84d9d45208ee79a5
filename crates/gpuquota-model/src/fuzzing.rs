//! Checks shared by the fuzz targets and the arbtest smoke tests (feature `fuzzing`).
//!
//! Each function takes arbitrary input, runs a public entry point and asserts the properties
//! that must hold for every input: no panic, and a typed error or a well-formed result.

use crate::Quantity;

/// Parsing never panics; a parsed quantity prints in a form that parses back to the same value.
pub fn check_quantity(input: &str) {
    if let Ok(q) = Quantity::parse(input) {
        let printed = q.to_string();
        match Quantity::parse(&printed) {
            Ok(back) => assert_eq!(back, q, "{input:?} printed as {printed:?}"),
            Err(e) => panic!("{input:?} printed as {printed:?}, which does not parse: {e}"),
        }
    }
}
