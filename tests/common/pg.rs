//! A throwaway PostgreSQL cluster for store tests: Debian's binaries
//! (`/usr/lib/postgresql/<version>/bin`), `initdb` and `pg_ctl` run as the
//! `postgres` user on a temporary directory, listening on a free loopback
//! port with trust authentication. Stopped (immediately) when dropped.
//! Include with `#[path = "common/pg.rs"] mod pg;`.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

pub struct Pg {
    dir: TempDir,
    bin: PathBuf,
    pub port: u16,
}

fn bin_dir() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed (apt-get install postgresql; scripts/test.sh does it)")
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("pg_ctl").is_file())
        .collect();
    versions.sort();
    versions.pop().expect("no /usr/lib/postgresql/*/bin/pg_ctl")
}

fn as_postgres(bin: &Path, tool: &str, args: &[&str]) {
    let out = Command::new("runuser")
        .args(["-u", "postgres", "--"])
        .arg(bin.join(tool))
        .args(args)
        .output()
        .expect("runuser");
    assert!(
        out.status.success(),
        "{tool} {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Pg {
    /// Starts a cluster; panics with the tool's output when it cannot.
    pub fn start() -> Pg {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("ferry-pg-")
            .tempdir()
            .expect("temp dir");
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir.path())
            .status()
            .expect("chown");
        assert!(status.success(), "chown to postgres failed");
        let data = dir.path().join("data");
        let data_s = data.display().to_string();
        as_postgres(
            &bin,
            "initdb",
            &[
                "-D",
                &data_s,
                "-A",
                "trust",
                "-U",
                "ferry",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            dir.path().display()
        );
        let log = dir.path().join("log").display().to_string();
        as_postgres(
            &bin,
            "pg_ctl",
            &[
                "-D", &data_s, "-l", &log, "-w", "-t", "30", "-o", &options, "start",
            ],
        );
        Pg { dir, bin, port }
    }

    /// Creates a database and returns its URL.
    pub fn database(&self, name: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "ferry",
            ])
            .args(["-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c"])
            .arg(format!("CREATE DATABASE {name}"))
            .output()
            .expect("psql");
        assert!(
            out.status.success(),
            "CREATE DATABASE failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        format!(
            "postgres://ferry@127.0.0.1:{}/{name}?sslmode=disable",
            self.port
        )
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let data = self.dir.path().join("data").display().to_string();
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .output();
    }
}
