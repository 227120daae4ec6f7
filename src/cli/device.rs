//! `ferry device configure`, `backup` and `facts`: network devices'
//! configuration and facts through their CLI (targets with `transport:
//! network`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Subcommand;

use super::RunArgs;
use super::commands;
use ferry::run::Action;
use ferry::run::actions::device::DeviceJob;

#[derive(Subcommand, Debug)]
pub enum DeviceAction {
    /// Bring each device's running configuration to FILE (or --lines):
    /// hierarchical text, indented as `show running-config` prints it. Only
    /// the lines the device lacks are pushed, each under its parents; the
    /// result is read back and checked.
    Configure {
        /// The desired configuration.
        #[arg(required_unless_present = "lines", conflicts_with = "lines")]
        file: Option<PathBuf>,
        /// Desired configuration lines instead of FILE (repeat the flag;
        /// indent a line to put it under the one before).
        #[arg(long = "lines", value_name = "LINE", num_args = 1..)]
        lines: Vec<String>,
        /// Show what would be pushed, and push nothing.
        #[arg(long)]
        noop: bool,
        /// Save the running configuration to startup afterwards (`write memory`).
        #[arg(long)]
        save: bool,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Show each device's facts: platform, host name, version, interfaces.
    Facts {
        #[command(flatten)]
        run: RunArgs,
    },
    /// Write each device's running configuration to DIR/<target>.conf.
    Backup {
        /// An existing directory.
        dir: PathBuf,
        #[command(flatten)]
        run: RunArgs,
    },
}

pub async fn execute(action: DeviceAction) -> Result<ExitCode> {
    match action {
        DeviceAction::Configure {
            file,
            lines,
            noop,
            save,
            run,
        } => {
            let (desired, source) = match file {
                Some(f) => (
                    std::fs::read_to_string(&f)
                        .with_context(|| format!("{}: cannot read", f.display()))?,
                    f.display().to_string(),
                ),
                None => (lines.join("\n"), "lines".to_string()),
            };
            let job = DeviceJob::Configure {
                desired,
                source,
                noop,
                save,
            };
            commands::execute(Action::Device(Arc::new(job)), &run).await
        }
        DeviceAction::Facts { run } => {
            commands::execute(Action::Device(Arc::new(DeviceJob::Facts)), &run).await
        }
        DeviceAction::Backup { dir, run } => {
            if !dir.is_dir() {
                bail!("{}: no such directory", dir.display());
            }
            commands::execute(Action::Device(Arc::new(DeviceJob::Backup { dir })), &run).await
        }
    }
}
