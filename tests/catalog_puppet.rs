//! ferry's compiler against the real Puppet 7 compiler, live: runs
//! tests/catalog/compare.py, which compiles every corpus case with
//! `puppet catalog compile` and with this build of ferry and compares the
//! normalized catalogs. Every case must agree except those listed, with
//! their reason, in tests/catalog/known_failures.txt. scripts/test.sh
//! installs Debian's puppet and module packages; without puppet the test
//! says so and checks nothing else.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

#[test]
fn ferry_agrees_with_puppet_7_on_the_corpus() {
    if Command::new("puppet").arg("--version").output().is_err() {
        eprintln!(
            "puppet is not installed: the live comparison did not run (scripts/test.sh installs it)"
        );
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ferry = env!("CARGO_BIN_EXE_ferry");
    let cmd = format!(
        "{ferry} catalog compile --manifest {{manifest}} --modulepath {{modulepath}} --facts {{facts}} --node {{node}} --environment {{env}} --format json"
    );
    let out = Command::new("python3")
        .arg(root.join("tests/catalog/compare.py"))
        .arg("--ferry-cmd")
        .arg(&cmd)
        .output()
        .expect("run compare.py");
    let text = String::from_utf8_lossy(&out.stdout);
    let differ: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("DIFFER"))
        .map(|l| l.trim().to_string())
        .collect();
    let known: BTreeSet<String> =
        std::fs::read_to_string(root.join("tests/catalog/known_failures.txt"))
            .unwrap()
            .lines()
            .filter_map(|l| l.split('#').next())
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
    let agreed = text.lines().filter(|l| l.starts_with("agree ")).count();
    assert!(
        agreed >= 100,
        "too few cases agree ({agreed}):\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let unexpected: Vec<&String> = differ.difference(&known).collect();
    assert!(
        unexpected.is_empty(),
        "cases that differ from Puppet 7 and are not known failures: {unexpected:?}\n{text}"
    );
    eprintln!("{}", text.lines().last().unwrap_or_default());
}
