//! ferry's compiler against the real Puppet 7 compiler, live: runs
//! tests/catalog/compare.py, which compiles corpus cases with `puppet
//! catalog compile` and with this build of ferry and compares the
//! normalized catalogs. Every case must agree except those listed, with
//! their reason, in tests/catalog/known_failures.txt. scripts/test.sh
//! installs Debian's puppet and module packages; without puppet the test
//! says so and checks nothing else.
//!
//! `cargo test` runs a slice: every fourth case in name order (Puppet
//! takes about two seconds a case, and every case is already checked
//! against its recorded Puppet result by tests/catalog.rs; the slice
//! catches a recording drifting from the installed Puppet). The whole
//! corpus runs outside CI with `cargo test --test catalog_puppet --
//! --ignored`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Every `SLICE`th case (in name order) runs in the default test.
const SLICE: usize = 4;

#[test]
fn ferry_agrees_with_puppet_7_on_a_slice_of_the_corpus() {
    let names = case_names();
    let slice: Vec<String> = names.into_iter().step_by(SLICE).collect();
    compare(&slice, 25);
}

#[test]
#[ignore = "about 20 minutes: run outside CI with --ignored"]
fn ferry_agrees_with_puppet_7_on_the_whole_corpus() {
    compare(&case_names(), 100);
}

/// The corpus cases, sorted by name.
fn case_names() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/catalog/cases");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("read tests/catalog/cases")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".pp").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// Runs compare.py on `names`; at least `min_agree` must agree and none
/// may differ unless known.
fn compare(names: &[String], min_agree: usize) {
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
        .args(names)
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
        agreed >= min_agree,
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
