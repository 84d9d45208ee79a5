//! The built-in seed platform of `mission.md`: three servers, 24 cards, five departments.
//!
//! `gpuquota` with no arguments prints one section per engine for this platform.

use std::process::ExitCode;

use crate::common::CliError;

/// Each section prints one engine's view of the seed platform. Engines add theirs here.
const SECTIONS: &[(&str, fn() -> Result<String, CliError>)] = &[];

pub(crate) fn run() -> Result<ExitCode, CliError> {
    println!(
        "gpuquota: the seed platform (rtx-a, rtx-b: 8 x RTX PRO 6000 each; h200: 8 x H200 NVL)"
    );
    for (title, section) in SECTIONS {
        println!("\n== {title} ==");
        print!("{}", section()?);
    }
    Ok(ExitCode::SUCCESS)
}
