//! The CI slice of the Debian module corpus (tests/debian/): about ninety
//! classes and defined types of Debian's puppet-module-* packages, over the
//! three fact sets, replayed with this build of ferry against the
//! normalized catalogs and errors Puppet 7 produced for them (recorded in
//! tests/debian/slice/, so CI runs no Puppet). `tests/debian/run.py replay`
//! does the work; this fails when a case recorded as agreeing regresses
//! and when a case recorded as known-differing starts to agree (mark it
//! `agree` in tests/debian/slice.txt then). scripts/test.sh installs the
//! module packages; without /usr/share/puppet/modules the test says so and
//! checks nothing else.

use std::path::Path;
use std::process::Command;

#[test]
fn debian_corpus_slice_matches_puppet_7() {
    let modules = Path::new("/usr/share/puppet/modules");
    if !modules.is_dir() {
        eprintln!(
            "{} is absent: the Debian corpus slice did not run (scripts/test.sh installs the modules)",
            modules.display()
        );
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("tests/debian/run.py"))
        .arg("replay")
        .arg("--ferry")
        .arg(env!("CARGO_BIN_EXE_ferry"))
        .output()
        .expect("run tests/debian/run.py replay");
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = text.lines().last().unwrap_or_default();
    let replayed: usize = summary
        .strip_prefix("replayed ")
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        replayed >= 40,
        "too few slice cases replayed ({summary}): are the puppet-module-* packages installed?\n{text}\n{stderr}"
    );
    let wrong: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("REGRESSED") || l.starts_with("NOW-AGREES"))
        .collect();
    assert!(
        wrong.is_empty() && out.status.success(),
        "the Debian corpus slice no longer matches tests/debian/slice.txt:\n{}\n{stderr}",
        wrong.join("\n")
    );
    eprintln!("{summary}");
}
