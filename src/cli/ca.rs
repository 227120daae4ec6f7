//! `ferry ca setup|list|sign|revoke|clean`: the Puppet CA that `ferry
//! serve` runs, worked on directly in its directory (the server's config
//! names it as `ca.dir`, or `--dir` gives it; a Puppet Server `cadir`
//! works too). The server reads the CRL again when it changes, so a
//! revocation takes effect at the revoked node's next connection. The CA
//! key is never printed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

use ferry::server::ServerConfig;
use ferry::server::ca::{self, Ca, State};

#[derive(Subcommand, Debug)]
pub enum CaAction {
    /// Make the CA (a new ECDSA key and certificate) in its directory,
    /// and with --config the server's certificate too when it has none;
    /// nothing changes when the CA exists.
    Setup {
        #[command(flatten)]
        dir: CaDir,
    },
    /// Show pending certificate requests (with --all, signed and revoked
    /// certificates too).
    List {
        /// Signed and revoked certificates too.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        dir: CaDir,
    },
    /// Sign pending certificate requests.
    Sign {
        /// The certnames.
        #[arg(required = true)]
        names: Vec<String>,
        /// Sign requests that ask for subject alternative names (an
        /// agent's dns_alt_names), copying the names into the
        /// certificates; without it such requests are refused.
        #[arg(long)]
        allow_dns_alt_names: bool,
        #[command(flatten)]
        dir: CaDir,
    },
    /// Revoke certificates: their serials go on the CRL, and the server
    /// refuses their next connection.
    Revoke {
        /// The certnames.
        #[arg(required = true)]
        names: Vec<String>,
        #[command(flatten)]
        dir: CaDir,
    },
    /// Revoke a certificate (when not yet revoked) and remove its files
    /// and any pending request, so the node may ask again.
    Clean {
        /// The certnames.
        #[arg(required = true)]
        names: Vec<String>,
        #[command(flatten)]
        dir: CaDir,
    },
}

/// Where the CA is.
#[derive(Args, Debug)]
pub struct CaDir {
    /// The server's configuration file (its `ca.dir`).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "dir",
        conflicts_with = "dir"
    )]
    config: Option<PathBuf>,
    /// The CA directory.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

impl CaDir {
    fn config(&self) -> Result<Option<ServerConfig>> {
        match &self.config {
            Some(path) => Ok(Some(ServerConfig::load(path)?)),
            None => Ok(None),
        }
    }

    /// The CA directory and how long the certificates it signs are valid
    /// (the config's `ca.cert-ttl`; Puppet's default with `--dir`).
    fn settings(&self) -> Result<(PathBuf, i64)> {
        if let Some(dir) = &self.dir {
            return Ok((dir.clone(), ferry::server::ca::CERT_TTL_SECS));
        }
        let config = self.config()?;
        match config.and_then(|c| c.ca) {
            Some(ca) => Ok((ca.dir, ca.cert_ttl)),
            None => bail!(
                "{}: no `ca` in this server configuration",
                self.config.as_deref().unwrap_or(Path::new("?")).display()
            ),
        }
    }

    fn open(&self) -> Result<Ca> {
        let (dir, cert_ttl) = self.settings()?;
        Ok(Ca::open(&dir)?.with_cert_ttl(cert_ttl))
    }
}

pub fn execute(action: CaAction) -> Result<ExitCode> {
    match action {
        CaAction::Setup { dir } => setup(&dir),
        CaAction::List { all, dir } => list(&dir.open()?, all),
        CaAction::Sign {
            names,
            allow_dns_alt_names,
            dir,
        } => each(&dir.open()?, &names, |ca, name| {
            ca.sign(name, allow_dns_alt_names)?;
            println!("Successfully signed certificate request for {name}");
            Ok(())
        }),
        CaAction::Revoke { names, dir } => each(&dir.open()?, &names, |ca, name| {
            ca.revoke(name)?;
            println!("Certificate for {name} has been revoked");
            Ok(())
        }),
        CaAction::Clean { names, dir } => each(&dir.open()?, &names, |ca, name| {
            if ca.clean(name)? {
                println!("Cleaned files related to {name}");
            } else {
                println!("Nothing to clean for {name}");
            }
            Ok(())
        }),
    }
}

/// Runs `work` for every name; one failing does not stop the others,
/// and makes the exit status 1.
fn each(
    ca: &Ca,
    names: &[String],
    work: impl Fn(&Ca, &str) -> Result<(), ca::CaError>,
) -> Result<ExitCode> {
    let mut failed = false;
    for name in names {
        if let Err(e) = work(ca, name) {
            eprintln!("ferry: {e}");
            failed = true;
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn setup(dir: &CaDir) -> Result<ExitCode> {
    let (path, _) = dir.settings()?;
    match dir.config()? {
        Some(config) => {
            let settings = config.ca.context("no `ca` in the server configuration")?;
            let existed = Ca::exists(&settings.dir);
            ca::bootstrap(&settings, &config.ssl_cert, &config.ssl_key)?;
            report(&path, existed);
        }
        None => {
            let existed = Ca::exists(&path);
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_ascii_lowercase())
                .unwrap_or_default();
            let host = if host.is_empty() {
                "localhost".into()
            } else {
                host
            };
            Ca::setup(&path, &format!("ferry CA: {host}"))?;
            report(&path, existed);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn report(path: &Path, existed: bool) {
    if existed {
        println!("The CA in {} exists; nothing changed", path.display());
    } else {
        println!("Made a CA in {}", path.display());
    }
}

fn list(ca: &Ca, all: bool) -> Result<ExitCode> {
    let entries = ca.list(all)?;
    if entries.is_empty() {
        println!("No certificates to list");
        return Ok(ExitCode::SUCCESS);
    }
    let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let section = |title: &str, state: State| {
        let these: Vec<_> = entries.iter().filter(|e| e.state == state).collect();
        if these.is_empty() {
            return;
        }
        println!("{title}:");
        for e in these {
            let until = e
                .issued
                .as_ref()
                .and_then(|i| chrono::DateTime::from_timestamp(i.not_after, 0))
                .map(|d| format!("  (expires {})", d.format("%Y-%m-%d")))
                .unwrap_or_default();
            let alt = if e.alt_names.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = e.alt_names.iter().map(|n| format!("\"{n}\"")).collect();
                format!("  (alt names: {})", names.join(", "))
            };
            println!(
                "    {:width$}  (SHA256)  {}{alt}{until}",
                e.name, e.fingerprint
            );
        }
    };
    section("Requested Certificates", State::Requested);
    if all {
        section("Signed Certificates", State::Signed);
        section("Revoked Certificates", State::Revoked);
    }
    Ok(ExitCode::SUCCESS)
}
