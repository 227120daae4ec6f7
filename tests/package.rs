//! The Debian package (dist/deb.sh) built from this build's binary and
//! installed with dpkg into a throwaway root: the binary runs, and the
//! systemd unit for `ferry serve`, the man pages and the shell completions
//! are where Debian puts them.

use std::path::Path;
use std::process::Command;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_debian_package_installs_binary_unit_man_pages_and_completions() {
    let scratch = tempfile::Builder::new()
        .prefix("ferry-package-")
        .tempdir()
        .expect("temp dir");
    let out = scratch.path().join("out");
    let deb = run(Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("dist/deb.sh"))
        .arg(env!("CARGO_BIN_EXE_ferry"))
        .arg(&out)
        .env("DEB_COMPRESSION", "none"));
    let deb = deb.trim();
    let fields = run(Command::new("dpkg-deb").args(["--field", deb, "Package", "Version"]));
    assert!(fields.contains("Package: ferry"), "{fields}");
    assert!(
        fields.contains(&format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{fields}"
    );

    // A root of its own with an empty dpkg database.
    let root = scratch.path().join("root");
    std::fs::create_dir_all(root.join("var/lib/dpkg/info")).expect("dpkg dirs");
    std::fs::create_dir_all(root.join("var/lib/dpkg/updates")).expect("dpkg dirs");
    std::fs::write(root.join("var/lib/dpkg/status"), "").expect("status");
    run(Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        .args([
            "--force-depends",
            "--force-script-chrootless",
            "--force-not-root",
            "--log=/dev/null",
            "--install",
            deb,
        ]));
    let status = std::fs::read_to_string(root.join("var/lib/dpkg/status")).expect("status");
    assert!(
        status.contains("Package: ferry\n") && status.contains("Status: install ok installed"),
        "{status}"
    );

    let binary = root.join("usr/bin/ferry");
    let version = run(Command::new(&binary).arg("--version"));
    assert!(version.starts_with("ferry "), "{version}");
    let unit =
        std::fs::read_to_string(root.join("lib/systemd/system/ferry.service")).expect("unit");
    assert!(
        unit.contains("ExecStart=/usr/bin/ferry serve --config /etc/ferry/serve.yaml"),
        "{unit}"
    );
    assert!(unit.contains("WantedBy=multi-user.target"), "{unit}");
    for page in ["ferry.1.gz", "ferry-serve.1.gz", "ferry-task-run.1.gz"] {
        let p = root.join("usr/share/man/man1").join(page);
        assert!(p.is_file(), "{} missing", p.display());
    }
    let man = run(Command::new("gzip")
        .arg("-dc")
        .arg(root.join("usr/share/man/man1/ferry.1.gz")));
    assert!(man.contains(".TH ferry 1"), "{man}");
    for (file, marker) in [
        ("usr/share/bash-completion/completions/ferry", "_ferry()"),
        ("usr/share/zsh/vendor-completions/_ferry", "#compdef ferry"),
        (
            "usr/share/fish/vendor_completions.d/ferry.fish",
            "complete -c ferry",
        ),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        assert!(text.contains(marker), "{file}: no {marker:?}");
    }
}
