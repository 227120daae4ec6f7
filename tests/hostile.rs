//! What a hostile target or a careless local setup must not be able to do
//! to the controller, end to end with the real binary and real OpenSSH:
//! a lying SFTP server (names that leave the destination, set-id modes, a
//! directory inside itself), a hostile `tar` on a target without SFTP,
//! large downloads (streamed, not held in memory), targets named `.` and
//! `..`, a planted link at the rerun record's temporary name, a command cut
//! off by its timeout (nothing left running on the target), options that
//! would reach a command as an option, out-of-range numbers, and API
//! requests that try to log in with the server's own SSH identity.

mod common;
#[path = "common/jobs.rs"]
mod jobs;
#[path = "common/tls.rs"]
mod tls;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ferry::{Run, Scratch, key_line, one_target};
use common::procs::{gone_within, unique_seconds};
use common::sshd::{self, KeyType, Sshd, client_keys};
use serde_json::json;

fn root_target(sshd: &Sshd, name: &str) -> String {
    one_target(
        sshd,
        name,
        "root",
        &key_line(&client_keys().path(KeyType::Ed25519)),
    )
}

fn download(s: &Scratch, inv: &Path, src: &str, dest: &Path) -> Run {
    s.ferry(&[
        "file",
        "download",
        src,
        dest.to_str().unwrap(),
        "-t",
        "all",
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ])
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn python3() -> String {
    let out = Command::new("sh")
        .args(["-c", "command -v python3"])
        .output()
        .expect("sh");
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        !path.is_empty(),
        "python3 is needed for the hostile SFTP server"
    );
    path
}

#[test]
fn sftp_download_refuses_names_that_leave_the_destination() {
    let s = Scratch::new();
    // Where a name in the listing would land if it were joined as given.
    let outside = s.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let absolute = outside.join("absolute-evil");
    let file = |data: &str, mode: u32| json!({"kind": "file", "mode": mode, "data": data});
    let mut paths = serde_json::Map::new();
    let children = [
        "good",
        "../ESCAPED",
        &format!("/{}", absolute.display()),
        "set\u{0}uid",
        "a/b",
        "setuid",
        "sub",
        "loop",
    ];
    paths.insert(
        "/h".into(),
        json!({"kind": "dir", "mode": 0o755, "children": children}),
    );
    for name in children {
        paths.insert(format!("/h/{name}"), file("hostile\n", 0o644));
    }
    paths.insert("/h/good".into(), file("good\n", 0o640));
    paths.insert("/h/setuid".into(), file("suid\n", 0o6755));
    paths.insert(
        "/h/sub".into(),
        json!({"kind": "dir", "mode": 0o3777, "children": ["inner"]}),
    );
    paths.insert("/h/sub/inner".into(), file("inner\n", 0o600));
    let spec = s.path().join("sftp.json");
    std::fs::write(
        &spec,
        json!({"paths": paths, "loop": "/h/loop"}).to_string(),
    )
    .unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/sftp_server.py");
    let sshd = Sshd::builder()
        .sftp_server(&format!(
            "{} {} {}",
            python3(),
            script.display(),
            spec.display()
        ))
        .start();
    let inv = s.inventory(&root_target(&sshd, "t"));
    let dest = s.path().join("down");
    let started = Instant::now();
    let run = download(&s, &inv, "/h", &dest);
    assert!(started.elapsed() < Duration::from_secs(60), "{run:?}");
    // The download fails, naming what it refused...
    assert_eq!(run.code, 2, "{run:?}");
    let item = run.only();
    assert_eq!(item["status"], "failure", "{item}");
    let msg = item["value"]["_error"]["msg"].as_str().unwrap_or_default();
    assert!(msg.contains("refused") && msg.contains("ESCAPED"), "{msg}");
    // ...but the rest of the tree came, without set-id or sticky bits.
    let got = dest.join("t/h");
    assert_eq!(std::fs::read_to_string(got.join("good")).unwrap(), "good\n");
    assert_eq!(mode(&got.join("good")), 0o640);
    assert_eq!(
        std::fs::read_to_string(got.join("sub/inner")).unwrap(),
        "inner\n"
    );
    assert_eq!(mode(&got.join("setuid")), 0o755);
    assert_eq!(mode(&got.join("sub")), 0o777);
    // Nothing outside the destination, nothing from a bad name.
    assert!(!dest.join("t/ESCAPED").exists());
    assert!(!dest.join("ESCAPED").exists());
    assert!(!absolute.exists());
    assert!(!got.join("a").exists());
    let names: Vec<String> = std::fs::read_dir(&got)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains('\0')), "{names:?}");
    // The directory inside itself stops at the depth limit.
    let mut deepest = got.join("loop");
    let mut depth = 0;
    while deepest.join("loop").is_dir() {
        deepest = deepest.join("loop");
        depth += 1;
    }
    assert!((30..100).contains(&depth), "{depth}");
}

/// A tar archive with entries a real `tar -c` of a directory never holds.
fn hostile_tar(outside: &Path) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let mut add = |raw_name: &[u8], kind: tar::EntryType, mode: u32, data: &[u8], link: &str| {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..raw_name.len()].copy_from_slice(raw_name);
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_size(data.len() as u64);
        if !link.is_empty() {
            h.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
        }
        h.set_cksum();
        b.append(&h, data).unwrap();
    };
    add(b"./good", tar::EntryType::Regular, 0o640, b"good\n", "");
    add(b"./setuid", tar::EntryType::Regular, 0o4755, b"suid\n", "");
    add(b"./sub/", tar::EntryType::Directory, 0o2755, b"", "");
    add(
        b"./sub/inner",
        tar::EntryType::Regular,
        0o600,
        b"inner\n",
        "",
    );
    add(b"../escaped", tar::EntryType::Regular, 0o644, b"x\n", "");
    let absolute = outside.join("absolute-evil");
    add(
        absolute.to_str().unwrap().as_bytes(),
        tar::EntryType::Regular,
        0o644,
        b"x\n",
        "",
    );
    add(
        b"./link",
        tar::EntryType::Symlink,
        0o777,
        b"",
        outside.to_str().unwrap(),
    );
    add(
        b"./link/through",
        tar::EntryType::Regular,
        0o644,
        b"x\n",
        "",
    );
    add(b"./hard", tar::EntryType::Link, 0o644, b"", "/etc/passwd");
    b.into_inner().unwrap()
}

#[test]
fn exec_download_refuses_links_and_set_id_bits_from_a_hostile_tar() {
    let s = Scratch::new();
    let outside = s.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let archive = s.path().join("hostile.tar");
    std::fs::write(&archive, hostile_tar(&outside)).unwrap();
    // The target's `tar` is the hostile one: first on the PATH sshd sets.
    let bin = s.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(
        bin.join("tar"),
        format!("#!/bin/sh\ncat {}\n", archive.display()),
    )
    .unwrap();
    std::fs::set_permissions(bin.join("tar"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let sshd = Sshd::builder()
        .sftp(false)
        .config(format!(
            "SetEnv PATH={}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            bin.display()
        ))
        .start();
    let remote = s.path().join("remote-dir");
    std::fs::create_dir(&remote).unwrap();
    let inv = s.inventory(&root_target(&sshd, "t"));
    let dest = s.path().join("down");
    let run = download(&s, &inv, remote.to_str().unwrap(), &dest);
    assert_eq!(run.code, 2, "{run:?}");
    let msg = run.only()["value"]["_error"]["msg"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(msg.contains("refused"), "{msg}");
    let got = dest.join("t/remote-dir");
    assert_eq!(std::fs::read_to_string(got.join("good")).unwrap(), "good\n");
    assert_eq!(mode(&got.join("good")), 0o640);
    assert_eq!(mode(&got.join("setuid")), 0o755);
    assert_eq!(mode(&got.join("sub")), 0o755);
    assert_eq!(
        std::fs::read_to_string(got.join("sub/inner")).unwrap(),
        "inner\n"
    );
    // No link came through: `link/through` made a plain directory.
    assert!(
        !std::fs::symlink_metadata(got.join("link"))
            .unwrap()
            .is_symlink()
    );
    assert!(std::fs::symlink_metadata(got.join("hard")).is_err());
    assert!(!dest.join("t/escaped").exists());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

/// Runs the real ferry and returns its run and its peak resident memory
/// in KiB: the kernel's high-water mark (`VmHWM`), read while it runs.
/// (wait4's maxrss would count the test process's own memory: the child
/// shares it until exec.)
fn ferry_peak(s: &Scratch, args: &[&str]) -> (Run, u64) {
    let child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .current_dir(s.path())
        .env("HOME", s.home())
        .env_remove("SSH_AUTH_SOCK")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ferry");
    let status = format!("/proc/{}/status", child.id());
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let done = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            let mut peak = 0u64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let text = std::fs::read_to_string(&status).unwrap_or_default();
                let hwm = text
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
                peak = peak.max(hwm.unwrap_or(0));
                std::thread::sleep(Duration::from_millis(5));
            }
            peak
        })
    };
    let out = child.wait_with_output().expect("ferry");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak = watcher.join().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    (run, peak)
}

fn large_download_stays_small(sshd: &Sshd) {
    const SIZE: u64 = 256 << 20;
    let s = Scratch::new();
    let inv = s.inventory(&root_target(sshd, "t"));
    let big = s.path().join("big.bin");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(SIZE).unwrap();
    let dest = s.path().join("down");
    let (run, peak_kib) = ferry_peak(
        &s,
        &[
            "file",
            "download",
            big.to_str().unwrap(),
            dest.to_str().unwrap(),
            "-t",
            "t",
            "-i",
            inv.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::metadata(dest.join("t/big.bin")).unwrap().len(),
        SIZE
    );
    assert!(
        peak_kib < 96 * 1024,
        "ferry peaked at {} MiB for a {} MiB download",
        peak_kib / 1024,
        SIZE >> 20
    );
}

#[test]
fn large_sftp_downloads_stream_to_disk() {
    large_download_stays_small(sshd::shared());
}

#[test]
fn large_exec_downloads_stream_to_disk() {
    large_download_stays_small(&Sshd::builder().sftp(false).start());
}

#[test]
fn targets_named_dot_and_dot_dot_download_into_their_own_directories() {
    let s = Scratch::new();
    let src = s.path().join("data.txt");
    std::fs::write(&src, "mine\n").unwrap();
    let inv = s.inventory(
        "config:\n  transport: local\ntargets:\n  - name: '.'\n  - name: '..'\n  - name: '%2E'\n",
    );
    let dest = s.path().join("down");
    let run = download(&s, &inv, src.to_str().unwrap(), &dest);
    assert_eq!(run.code, 0, "{run:?}");
    let mut dirs: Vec<String> = std::fs::read_dir(&dest)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 3, "{dirs:?}");
    for d in &dirs {
        assert_eq!(
            std::fs::read_to_string(dest.join(d).join("data.txt")).unwrap(),
            "mine\n"
        );
    }
    assert!(!dest.join("data.txt").exists());
    assert!(!s.path().join("data.txt.1").exists());
}

#[test]
fn the_rerun_record_never_writes_through_a_planted_link() {
    let s = Scratch::new();
    let victim = s.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::create_dir(s.path().join(".ferry")).unwrap();
    for name in ["rerun.json.tmp", "rerun.tmp"] {
        std::os::unix::fs::symlink(&victim, s.path().join(".ferry").join(name)).unwrap();
    }
    let inv = s.inventory("targets:\n  - localhost\n");
    let run = s.ferry(&[
        "command",
        "run",
        "true",
        "-t",
        "all",
        "-i",
        inv.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let record = std::fs::read_to_string(s.path().join(".ferry/rerun.json")).unwrap();
    assert!(record.contains("localhost"), "{record}");
    let left: Vec<_> = std::fs::read_dir(s.path().join(".ferry"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 3, "no temporary file is left: {left:?}");
}

#[test]
fn a_timed_out_command_leaves_nothing_running_on_the_target() {
    let sshd = sshd::shared();
    let s = Scratch::new();
    let extra = format!(
        "{}        command-timeout: 1\n",
        key_line(&client_keys().path(KeyType::Ed25519))
    );
    let inv = s.inventory(&one_target(sshd, "t", "root", &extra));
    // A child of the shell, not the shell itself: the whole group must go.
    let secs = unique_seconds();
    let line = format!("sleep {secs}; echo never");
    let run = s.ferry(&[
        "command",
        "run",
        &line,
        "-t",
        "t",
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        run.only()["value"]["_error"]["kind"],
        "ferry/timeout",
        "{run:?}"
    );
    assert!(
        gone_within(&secs, Duration::from_secs(5)),
        "`sleep {secs}` still runs on the target after its timeout"
    );
    // An ordinary command's stderr does not show ferry's bookkeeping.
    let run = s.ferry(&[
        "command",
        "run",
        "echo to-err >&2",
        "-t",
        "t",
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(run.only()["value"]["stderr"], "to-err\n", "{run:?}");
}

#[test]
fn a_timed_out_task_leaves_nothing_running_on_the_target() {
    // Tasks run in the connection's long-lived shell: its whole group goes.
    let sshd = sshd::shared();
    let s = Scratch::new();
    let tasks = s.path().join("modules/slow/tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    std::fs::write(
        tasks.join("init.sh"),
        "#!/bin/sh\nsleep \"$PT_secs\"\necho never\n",
    )
    .unwrap();
    std::fs::write(
        tasks.join("init.json"),
        r#"{"parameters": {"secs": {"type": "Integer"}}}"#,
    )
    .unwrap();
    let extra = format!(
        "{}        command-timeout: 2\n",
        key_line(&client_keys().path(KeyType::Ed25519))
    );
    let inv = s.inventory(&one_target(sshd, "t", "root", &extra));
    let secs = unique_seconds();
    let modulepath = s.path().join("modules");
    let run = s.ferry(&[
        "task",
        "run",
        "slow",
        &format!("secs={secs}"),
        "-t",
        "t",
        "-i",
        inv.to_str().unwrap(),
        "--modulepath",
        modulepath.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        run.only()["value"]["_error"]["kind"],
        "ferry/timeout",
        "{run:?}"
    );
    assert!(
        gone_within(&secs, Duration::from_secs(5)),
        "the task's `sleep {secs}` still runs on the target after its timeout"
    );
}

#[test]
fn a_tmpdir_that_reads_as_an_option_is_refused() {
    let sshd = sshd::shared();
    let s = Scratch::new();
    let extra = format!(
        "{}        tmpdir: -rf\n",
        key_line(&client_keys().path(KeyType::Ed25519))
    );
    let inv = s.inventory(&one_target(sshd, "t", "root", &extra));
    let run = s.ferry(&[
        "script",
        "run",
        inv.to_str().unwrap(),
        "-t",
        "t",
        "-i",
        inv.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("inventory.yaml:") && run.stderr.contains("ssh.tmpdir"),
        "{run:?}"
    );
}

#[test]
fn out_of_range_numbers_on_the_command_line_are_usage_errors() {
    let s = Scratch::new();
    let inv = s.inventory("targets:\n  - localhost\n");
    for (flag, value) in [
        ("--concurrency", "18446744073709551615"),
        ("--concurrency", "2305843009213693952"),
        ("--concurrency", "0"),
        ("--command-timeout", "18446744073709551615"),
        ("--connect-timeout", "0"),
    ] {
        let run = s.ferry(&[
            "command",
            "run",
            "true",
            "-t",
            "all",
            "-i",
            inv.to_str().unwrap(),
            flag,
            value,
        ]);
        assert!(
            run.code != 0 && run.code != 101 && run.stderr.contains(flag),
            "{flag} {value}: {run:?}"
        );
        assert!(!run.stderr.contains("panicked"), "{run:?}");
    }
}

/// An ssh-agent holding one key, stopped when dropped.
struct Agent {
    child: std::process::Child,
    sock: PathBuf,
}

impl Agent {
    fn with_key(dir: &Path, key: &Path) -> Agent {
        let sock = dir.join("agent.sock");
        let child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&sock)
            .stdout(Stdio::null())
            .spawn()
            .expect("ssh-agent");
        for _ in 0..100 {
            if sock.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let added = Command::new("ssh-add")
            .arg(key)
            .env("SSH_AUTH_SOCK", &sock)
            .output()
            .expect("ssh-add");
        assert!(added.status.success(), "{added:?}");
        Agent { child, sock }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_requests_never_log_in_with_the_servers_own_identity() {
    let sshd = tokio::task::spawn_blocking(sshd::shared).await.unwrap();
    let pki = tls::Pki::new();
    let s = Scratch::new();
    // The server user's own keys: an agent and ~/.ssh/id_ed25519, both
    // authorized for root on the target.
    let key = client_keys().path(KeyType::Ed25519);
    std::fs::copy(&key, s.home().join(".ssh/id_ed25519")).unwrap();
    std::fs::set_permissions(
        s.home().join(".ssh/id_ed25519"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let agent = Agent::with_key(s.path(), &client_keys().path(KeyType::Ecdsa));
    let home = s.home();
    let server = jobs::Serve::start_with_env(
        &pki,
        s.path(),
        "server",
        "",
        &[("HOME", &home), ("SSH_AUTH_SOCK", &agent.sock)],
    )
    .await;
    let client = tls::Client::new(&pki, Some(&pki.client));
    let target = json!({
        "hostname": sshd.host(), "port": sshd.port(), "user": "root",
        "password": "not-the-password",
        "known-hosts-content": std::fs::read_to_string(sshd.known_hosts_path()).unwrap(),
    });
    let r = client
        .post(
            server.addr,
            "/ssh/run_command",
            &json!({"command": "id -un", "target": target}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(r["status"], "failure", "{r}");
    assert_eq!(r["value"]["_error"]["issue_code"], "AUTH_ERROR", "{r}");
    // The same keys do work for the CLI user, which they belong to.
    let inv = s.inventory(&one_target(sshd, "t", "root", ""));
    let run = s.ferry_env(
        &[
            "command",
            "run",
            "id -un",
            "-t",
            "t",
            "-i",
            inv.to_str().unwrap(),
        ],
        &[("SSH_AUTH_SOCK", agent.sock.to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{run:?}");
}
