//! Running things over SSH on real OpenSSH servers, where a test needs
//! files or fixtures of its own: uploads with run-as, uploads and downloads
//! (large and many files, with and without SFTP), scripts, faults that hit
//! one target (killed mid-command, unreachable) while the others carry on,
//! a run over more than 100 targets, and `--rerun`. The plain rows
//! (inventory, arguments, exit status, output) are case files in
//! `tests/cases/cli/`, run by `tests/cases.rs`.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::ferry::{Scratch, key_line, one_target};
use common::sshd::{self, Fleet, KeyType, NOPW_USER, Sshd, client_keys};
use sha2::{Digest, Sha256};

fn root_target(sshd: &Sshd, name: &str) -> String {
    one_target(
        sshd,
        name,
        "root",
        &key_line(&client_keys().path(KeyType::Ed25519)),
    )
}

fn args<'a>(inv: &'a Path, rest: &[&'a str]) -> Vec<&'a str> {
    let mut v = rest.to_vec();
    v.extend(["-i", inv.to_str().unwrap(), "--format", "json"]);
    v
}

#[test]
fn uploads_with_run_as_land_owned_by_that_user() {
    let sshd = sshd::shared();
    let key = key_line(&client_keys().path(KeyType::Ed25519));
    let s = Scratch::new();
    // The scratch dir is root's and 0700: the login user cannot write there.
    let dest = s.path().join("root-only.txt");
    let src = s.path().join("src.txt");
    std::fs::write(&src, "elevated upload\n").unwrap();
    let inv = s.inventory(&one_target(
        sshd,
        "t",
        NOPW_USER,
        &format!("{key}        run-as: root\n"),
    ));
    let run = s.ferry(&args(
        &inv,
        &[
            "file",
            "upload",
            src.to_str().unwrap(),
            dest.to_str().unwrap(),
            "-t",
            "t",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "elevated upload\n");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&dest).unwrap().uid(), 0);
    // Without run-as the same upload is refused.
    let inv = s.inventory(&one_target(sshd, "t", NOPW_USER, &key));
    let run = s.ferry(&args(
        &inv,
        &[
            "file",
            "upload",
            src.to_str().unwrap(),
            s.path().join("again.txt").to_str().unwrap(),
            "-t",
            "t",
        ],
    ));
    assert_eq!(run.code, 2, "{run:?}");
}

fn sha256_file(p: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(p).unwrap()))
}

fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn transfer_round_trip(sshd: &Sshd) {
    let s = Scratch::new();
    let inv = s.inventory(&root_target(sshd, "t"));
    // One large file.
    let big = s.path().join("big.bin");
    std::fs::write(&big, pseudo_random(24 << 20, 7)).unwrap();
    let remote = s.path().join("remote");
    std::fs::create_dir_all(&remote).unwrap();
    let dest = remote.join("big.bin");
    let run = s.ferry(&args(
        &inv,
        &[
            "file",
            "upload",
            big.to_str().unwrap(),
            dest.to_str().unwrap(),
            "-t",
            "t",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(sha256_file(&big), sha256_file(&dest));
    // A tree of many files, with modes.
    let tree = s.path().join("tree");
    for i in 0..150 {
        let dir = tree.join(format!("d{}", i % 7));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("f{i}")),
            pseudo_random(1000 + i * 37, i as u64),
        )
        .unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(tree.join("d0/f0"), std::fs::Permissions::from_mode(0o751)).unwrap();
    let up = remote.join("tree");
    let run = s.ferry(&args(
        &inv,
        &[
            "file",
            "upload",
            tree.to_str().unwrap(),
            up.to_str().unwrap(),
            "-t",
            "t",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    let down = s.path().join("down");
    let run = s.ferry(&args(
        &inv,
        &[
            "file",
            "download",
            up.to_str().unwrap(),
            down.to_str().unwrap(),
            "-t",
            "t",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    let got = down.join("t/tree");
    for i in 0..150 {
        let rel = format!("d{}/f{i}", i % 7);
        assert_eq!(
            sha256_file(&tree.join(&rel)),
            sha256_file(&got.join(&rel)),
            "{rel}"
        );
    }
    let mode = std::fs::metadata(got.join("d0/f0"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o751);
    // The large file comes back whole too.
    let run = s.ferry(&args(
        &inv,
        &[
            "file",
            "download",
            dest.to_str().unwrap(),
            down.to_str().unwrap(),
            "-t",
            "t",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(sha256_file(&big), sha256_file(&down.join("t/big.bin")));
}

#[test]
fn uploads_and_downloads_over_sftp() {
    transfer_round_trip(sshd::shared());
}

#[test]
fn uploads_and_downloads_without_sftp() {
    let sshd = Sshd::builder().sftp(false).start();
    let s = Scratch::new();
    let inv = s.inventory(&root_target(&sshd, "t"));
    let src = s.path().join("a.txt");
    std::fs::write(&src, "no sftp here\n").unwrap();
    let dest = s.path().join("copied.txt");
    let run = s.ferry(&args(
        &inv,
        &[
            "file",
            "upload",
            src.to_str().unwrap(),
            dest.to_str().unwrap(),
            "-t",
            "t",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "no sftp here\n");
    let down = s.path().join("down");
    let run = s.ferry(&args(
        &inv,
        &[
            "file",
            "download",
            dest.to_str().unwrap(),
            down.to_str().unwrap(),
            "-t",
            "t",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_to_string(down.join("t/copied.txt")).unwrap(),
        "no sftp here\n"
    );
}

#[test]
fn scripts_run_with_their_arguments_and_are_removed() {
    let sshd = sshd::shared();
    let s = Scratch::new();
    let inv = s.inventory(&root_target(sshd, "t"));
    let script = s.path().join("show.sh");
    std::fs::write(&script, "#!/bin/sh\nprintf '%s|' \"$@\"\necho \"$0\"\n").unwrap();
    let run = s.ferry(&args(
        &inv,
        &[
            "script",
            "run",
            script.to_str().unwrap(),
            "a b",
            "$HOME",
            "it's",
            "-t",
            "t",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.only()["value"]["stdout"].as_str().unwrap().to_string();
    assert!(out.starts_with("a b|$HOME|it's|"), "{out}");
    let remote_path = out.trim().rsplit('|').next().unwrap().to_string();
    assert!(
        !Path::new(&remote_path).exists(),
        "{remote_path} was left behind"
    );
}

#[test]
fn one_target_killed_mid_command_fails_alone() {
    let doomed = Sshd::builder().start();
    let healthy = sshd::shared();
    let s = Scratch::new();
    let key = client_keys().path(KeyType::Ed25519);
    let yaml = format!(
        "config:\n  ssh:\n    user: root\n    private-key: {}\n    load-config: false\n    connect-timeout: 3\ntargets:\n  - name: doomed\n    uri: {}:{}\n    config: {{ssh: {{known-hosts-file: {}}}}}\n  - name: healthy\n    uri: {}:{}\n    config: {{ssh: {{known-hosts-file: {}}}}}\n  - name: unreachable\n    uri: 127.0.0.1:1\n",
        key.display(),
        doomed.host(),
        doomed.port(),
        doomed.known_hosts_path().display(),
        healthy.host(),
        healthy.port(),
        healthy.known_hosts_path().display()
    );
    let inv = s.inventory(&yaml);
    // The doomed daemon dies once its command is running (not mid-login,
    // which would make the failure a connection error instead).
    let marker = s.path().join(format!("started-{}", doomed.port()));
    let killer = std::thread::spawn({
        let marker = marker.clone();
        move || {
            let deadline = Instant::now() + Duration::from_secs(30);
            while !marker.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    });
    let command = format!(
        "touch {}/started-${{SSH_CONNECTION##* }}; sleep 2; echo finished",
        s.path().display()
    );
    let started = Instant::now();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args(&inv, &["command", "run", &command, "-t", "all"]))
        .env("HOME", s.home())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    killer.join().unwrap();
    assert!(marker.exists(), "the doomed target's command never started");
    doomed.kill();
    let out = child.wait_with_output().unwrap();
    let run = common::ferry::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::new(),
    };
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "a dead target must not hang the run"
    );
    assert_eq!(run.code, 2);
    assert_eq!(
        run.item("doomed")["value"]["_error"]["kind"],
        "ferry/command-error",
        "{run:?}"
    );
    assert_eq!(
        run.item("healthy")["value"]["stdout"],
        "finished\n",
        "{run:?}"
    );
    assert_eq!(
        run.item("unreachable")["value"]["_error"]["issue_code"],
        "CONNECT_ERROR",
        "{run:?}"
    );
}

#[test]
fn a_run_over_120_targets_and_rerun_of_failures() {
    let fleet = Fleet::start(120);
    let s = Scratch::new();
    let mut yaml = format!(
        "config:\n  ssh:\n    user: root\n    private-key: {}\n    known-hosts-file: {}\n    load-config: false\n    connect-timeout: 5\ntargets:\n",
        client_keys().path(KeyType::Ed25519).display(),
        fleet.known_hosts_path().display()
    );
    for (host, port) in fleet.targets() {
        yaml.push_str(&format!("  - ssh://{host}:{port}\n"));
    }
    yaml.push_str("  - name: down\n    uri: 127.0.0.1:1\n");
    let inv = s.inventory(&yaml);
    let run = s.ferry(&args(
        &inv,
        &[
            "command",
            "run",
            "echo ok",
            "-t",
            "all",
            "--concurrency",
            "50",
        ],
    ));
    let doc = run.json();
    assert_eq!(doc["target_count"], 121, "{}", run.stderr);
    let ok = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["status"] == "success")
        .count();
    assert_eq!(ok, 120, "{doc}");
    assert_eq!(run.code, 2);

    let rerun = s.ferry(&[
        "command",
        "run",
        "echo again",
        "--rerun",
        "failure",
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(rerun.only()["target"], "down", "{rerun:?}");
    let rerun = s.ferry(&[
        "command",
        "run",
        "true",
        "--rerun",
        "failure",
        "-t",
        "all",
        "-i",
        inv.to_str().unwrap(),
    ]);
    assert_eq!(
        rerun.code, 1,
        "--rerun and --targets together is a usage error"
    );
}
