//! Checks shared by the fuzz targets and the arbtest smoke tests (feature `fuzzing`).
//!
//! Each function takes arbitrary input, runs a public entry point and asserts the properties
//! that must hold for every input: no panic, and a typed error or a well-formed result.

use crate::quantity::Quantity;

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

/// Import and validation never panic on any bytes; the fast typed import and the exact import
/// give the same result (model and warnings, or the same errors); on an imported model
/// [`crate::validate()`] agrees with [`crate::validate::problems`], every problem names a
/// field, and the reference quota tree answers every query of every root.
pub fn check_import(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let mut importer = crate::import::Importer::new();
    importer.add_str("fuzz.yaml", &text);
    let result = importer.finish();
    let mut exact = crate::import::Importer::exact();
    exact.add_str("fuzz.yaml", &text);
    assert_eq!(
        result,
        exact.finish(),
        "fast and exact import differ on {text:?}"
    );
    let Ok(imported) = result else {
        return;
    };
    let problems = crate::validate::problems(&imported.model);
    assert_eq!(
        crate::validate(&imported.model).is_ok(),
        problems.is_empty()
    );
    for p in &problems {
        assert!(!p.field.is_empty(), "{p}");
        let _ = p.to_string();
    }
}
