//! `gpuquota man`: manual pages in roff, generated from the command definition by
//! `clap_mangen`, so they always match the installed binary.

use std::path::PathBuf;

use clap::CommandFactory;

use crate::common::CliError;

/// Arguments of `gpuquota man`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota man | man -l -                    read gpuquota(1)
  gpuquota man kueue schedule | man -l -     read gpuquota-kueue-schedule(1)
  gpuquota man --out-dir ~/.local/share/man/man1   install every page (--force: replace)")]
pub(crate) struct ManArgs {
    /// The subcommand whose page to print, e.g. `kueue schedule`; none: gpuquota(1).
    #[arg(value_name = "COMMAND", conflicts_with = "out_dir")]
    command: Vec<String>,
    /// Write every page (gpuquota.1, gpuquota-kueue.1, gpuquota-kueue-schedule.1, ...) into
    /// this directory (created if missing) instead of printing one.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// With `--out-dir`: replace pages already in DIR (else refused).
    #[arg(long, requires = "out_dir")]
    force: bool,
}

/// The command tree as the pages show it: built, so that subcommands carry their full names
/// (`gpuquota-kueue-schedule`) and the inherited `--strict`; without the `help` subcommand.
fn command() -> clap::Command {
    let mut cmd = crate::Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The roff page of `gpuquota` or of the subcommand at `path`.
pub(crate) fn page(path: &[String]) -> Result<Vec<u8>, CliError> {
    let mut cmd = command();
    for name in path {
        cmd = cmd
            .find_subcommand(name)
            .cloned()
            .ok_or_else(|| CliError::usage(format!("man: no such command: {}", path.join(" "))))?;
    }
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out)?;
    Ok(out)
}

/// Every page as (file name, roff): `gpuquota.1`, then each subcommand's
/// (`gpuquota-kueue-schedule.1`), depth first in the order of the help; the pages and names
/// of `clap_mangen::generate_to`, written through the one file writer instead.
fn pages() -> Result<Vec<(String, Vec<u8>)>, CliError> {
    fn walk(cmd: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> Result<(), CliError> {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        pages.push((man.get_filename(), roff));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, pages)?;
        }
        Ok(())
    }
    let mut pages = Vec::new();
    walk(&command(), &mut pages)?;
    Ok(pages)
}

pub(crate) fn run(args: ManArgs) -> Result<(), CliError> {
    if let Some(dir) = args.out_dir {
        let pages = pages()?;
        for (name, _) in &pages {
            gpuquota::model::write::check_target(&dir.join(name), args.force)?;
        }
        gpuquota::model::write::create_dir(&dir)?;
        for (name, roff) in &pages {
            gpuquota::model::write::file(&dir.join(name), roff, args.force)?;
        }
        return Ok(());
    }
    crate::common::write_stdout(&page(&args.command)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(path: &[&str]) -> String {
        let path: Vec<String> = path.iter().map(ToString::to_string).collect();
        String::from_utf8(page(&path).unwrap()).unwrap()
    }

    #[test]
    fn root_page_has_title_subcommands_and_version() {
        let page = text(&[]);
        assert!(page.starts_with(".ie \\n(.g .ds Aq \\(aq"), "{page}");
        assert!(page.contains(".TH gpuquota 1"), "{page}");
        assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
        assert!(page.contains("gpuquota\\-kueue(1)"), "{page}");
        assert!(
            page.contains(&format!("v{}", env!("CARGO_PKG_VERSION"))),
            "{page}"
        );
        assert!(page.contains("Exit status:"), "{page}");
    }

    #[test]
    fn subcommand_pages_carry_their_full_name_and_flags() {
        let page = text(&["kueue", "schedule"]);
        assert!(page.contains(".TH gpuquota-kueue-schedule 1"), "{page}");
        assert!(page.contains("\\-\\-cycles"), "{page}");
        assert!(page.contains("\\-\\-strict"), "{page}");
    }

    #[test]
    fn unknown_subcommand_is_an_error() {
        let err = page(&["kueue".into(), "nope".into()]).unwrap_err();
        assert_eq!(err.to_string(), "error: man: no such command: kueue nope");
    }
}
