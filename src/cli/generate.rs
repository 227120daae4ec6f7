//! What is generated from the command line's own definition, for packages
//! and users: shell completion scripts (`ferry completions SHELL`, through
//! clap_complete) and man pages (`ferry man`, through clap_mangen).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;

/// Prints the completion script for `shell` to stdout.
pub(super) fn completions(shell: Shell) -> Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut cmd, "ferry", &mut out);
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Prints ferry(1) to stdout, or, with `dir`, writes it and a page for
/// every subcommand (`ferry-task-run.1`, ...) there.
pub(super) fn man(dir: Option<&Path>) -> Result<ExitCode> {
    let cmd = Cli::command();
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir).with_context(|| format!("{}", dir.display()))?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
