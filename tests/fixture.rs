//! Self-test of the sshd fixture (tests/common/sshd/), driven by the real
//! OpenSSH client: key authentication with every key type and user, password
//! and keyboard-interactive authentication (when `sshpass` is installed), the
//! sudo rules, host key checking, the SFTP switch, killing and restarting a
//! daemon, a fleet of 100 targets and the ProxyJump namespace pair.

mod common;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::sshd::{
    self, Fleet, INNER_PORT, JumpPair, KEY_PASSPHRASE, KeyType, LOGIN_USERS, NOPW_USER, PW_USER,
    Sshd, USER_PASSWORD, client_keys,
};

/// Options every OpenSSH client invocation here uses (no user or system config).
fn client_options(known_hosts: &Path) -> Vec<String> {
    [
        "-F",
        "/dev/null",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "GlobalKnownHostsFile=/dev/null",
        "-o",
        "ConnectTimeout=10",
        "-o",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("UserKnownHostsFile={}", known_hosts.display())])
    .collect()
}

/// `ssh` with key authentication in batch mode.
fn ssh_key(sshd: &Sshd, user: &str, key: &Path, known_hosts: &Path, remote: &str) -> Output {
    sshd::openssh_command(sshd.host(), sshd.port(), user, key, known_hosts)
        .arg(remote)
        .output()
        .expect("run ssh")
}

/// `ssh` through sshpass, answering the first prompt matching `prompt` with `secret`.
fn ssh_sshpass(sshd: &Sshd, prompt: &str, secret: &str, options: &[&str], target: &str) -> Output {
    Command::new("sshpass")
        .args(["-P", prompt, "-p", secret, "ssh"])
        .args(client_options(sshd.known_hosts_path()))
        .args(["-o", "BatchMode=no", "-o", "NumberOfPasswordPrompts=1"])
        .args(options)
        .args(["-p", &sshd.port().to_string(), target, "true"])
        .stdin(Stdio::null())
        .output()
        .expect("run sshpass")
}

fn have_sshpass() -> bool {
    Command::new("sshpass")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[track_caller]
fn assert_success(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[track_caller]
fn assert_failure(output: &Output, what: &str, stderr_contains: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{what} unexpectedly succeeded");
    assert!(
        stderr.contains(stderr_contains),
        "{what}: expected {stderr_contains:?} in stderr, got: {stderr}"
    );
}

#[test]
fn key_auth_works_for_every_key_type_and_user() {
    let sshd = sshd::shared();
    let keys = client_keys();
    thread::scope(|scope| {
        for kind in KeyType::ALL {
            for user in LOGIN_USERS {
                scope.spawn(move || {
                    let output = ssh_key(
                        sshd,
                        user,
                        &keys.path(kind),
                        sshd.known_hosts_path(),
                        "id -un",
                    );
                    assert_success(&output, &format!("{user} with {kind:?} key"));
                    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), user);
                });
            }
        }
    });
}

#[test]
fn encrypted_key_opens_with_the_passphrase_only() {
    let keys = client_keys();
    let derive = |passphrase: &str| {
        Command::new("ssh-keygen")
            .args(["-y", "-P", passphrase, "-f"])
            .arg(keys.encrypted_path())
            .output()
            .expect("run ssh-keygen")
    };
    let output = derive(KEY_PASSPHRASE);
    assert_success(&output, "decrypting the key");
    assert!(String::from_utf8_lossy(&output.stdout).starts_with(keys.encrypted_public_key()));
    assert!(!derive("wrong").status.success());
    assert!(!derive("").status.success());

    if have_sshpass() {
        let sshd = sshd::shared();
        let key = keys.encrypted_path();
        let options = ["-o", "IdentitiesOnly=yes", "-i", key.to_str().unwrap()];
        let output = ssh_sshpass(
            sshd,
            "passphrase",
            KEY_PASSPHRASE,
            &options,
            "root@127.0.0.1",
        );
        assert_success(&output, "login with the encrypted key");
    }
}

#[test]
fn host_key_checking_uses_the_generated_files() {
    let sshd = sshd::shared();
    let known_hosts = std::fs::read_to_string(sshd.known_hosts_path()).unwrap();
    assert_eq!(
        known_hosts,
        format!("[127.0.0.1]:{} {}\n", sshd.port(), sshd.host_public_key())
    );
    let key = sshd.key_path(KeyType::Ed25519);
    let output = ssh_key(sshd, "root", &key, sshd.wrong_known_hosts_path(), "true");
    assert_failure(
        &output,
        "wrong known_hosts",
        "REMOTE HOST IDENTIFICATION HAS CHANGED",
    );
    let output = ssh_key(sshd, "root", &key, sshd.empty_known_hosts_path(), "true");
    assert_failure(&output, "empty known_hosts", "Host key verification failed");
}

#[test]
fn sudo_rules_of_the_test_users() {
    let sshd = sshd::shared();
    let run = |user: &str, remote: &str| {
        ssh_key(
            sshd,
            user,
            &sshd.key_path(KeyType::Ed25519),
            sshd.known_hosts_path(),
            remote,
        )
    };
    let output = run(NOPW_USER, "sudo -n id -un");
    assert_success(&output, "passwordless sudo");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "root");
    assert_failure(
        &run(PW_USER, "sudo -n true"),
        "sudo -n as ferry-pw",
        "password is required",
    );
    let with_password = format!("echo {USER_PASSWORD} | sudo -S -p '' id -un");
    let output = run(PW_USER, &with_password);
    assert_success(&output, "sudo with password");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "root");
    assert_eq!(sshd.password(PW_USER), Some(USER_PASSWORD));
    assert_eq!(sshd.password("root"), None);
}

#[test]
fn password_auth() {
    if !have_sshpass() {
        eprintln!("sshpass is not installed: skipping password authentication");
        return;
    }
    let sshd = sshd::shared();
    let options = [
        "-o",
        "PubkeyAuthentication=no",
        "-o",
        "PreferredAuthentications=password",
    ];
    for user in [NOPW_USER, PW_USER] {
        let target = format!("{user}@127.0.0.1");
        let output = ssh_sshpass(sshd, "assword", USER_PASSWORD, &options, &target);
        assert_success(&output, &format!("password login as {user}"));
    }
    let output = ssh_sshpass(sshd, "assword", "wrong", &options, "ferry-pw@127.0.0.1");
    assert_failure(&output, "wrong password", "Permission denied");
}

#[test]
fn keyboard_interactive_through_pam_without_sftp() {
    let sshd = Sshd::builder()
        .password_auth(false)
        .kbd_interactive_auth(true)
        .sftp(false)
        .all_host_keys()
        .start();
    let config = std::fs::read_to_string(sshd.config_path()).unwrap();
    assert!(config.contains("UsePAM yes\n") && !config.contains("Subsystem"));
    assert!(sshd.host_public_key_of(KeyType::Rsa).is_some());
    assert_eq!(
        std::fs::read_to_string(sshd.known_hosts_path())
            .unwrap()
            .lines()
            .count(),
        3
    );

    // Key login also goes through PAM's account and session stacks here.
    let key = sshd.key_path(KeyType::Rsa);
    assert_success(
        &ssh_key(&sshd, PW_USER, &key, sshd.known_hosts_path(), "true"),
        "key login with PAM",
    );

    let sftp = Command::new("sftp")
        .args(client_options(sshd.known_hosts_path()))
        .args(["-o", "BatchMode=yes", "-i"])
        .arg(sshd.key_path(KeyType::Ed25519))
        .args([
            "-P",
            &sshd.port().to_string(),
            "-b",
            "/dev/null",
            "root@127.0.0.1",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run sftp");
    assert_failure(&sftp, "sftp without the subsystem", "Connection closed");

    if have_sshpass() {
        let options = [
            "-o",
            "PubkeyAuthentication=no",
            "-o",
            "PreferredAuthentications=keyboard-interactive",
        ];
        let target = format!("{PW_USER}@127.0.0.1");
        let output = ssh_sshpass(&sshd, "assword", USER_PASSWORD, &options, &target);
        assert_success(&output, "keyboard-interactive login");
    }
}

#[test]
fn sftp_subsystem_on_the_shared_daemon() {
    let sshd = sshd::shared();
    let output = Command::new("sftp")
        .args(client_options(sshd.known_hosts_path()))
        .args(["-o", "BatchMode=yes", "-i"])
        .arg(sshd.key_path(KeyType::Ed25519))
        .args([
            "-P",
            &sshd.port().to_string(),
            "-b",
            "/dev/null",
            "root@127.0.0.1",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run sftp");
    assert_success(&output, "sftp");
}

#[test]
fn kill_drops_sessions_and_restart_brings_the_target_back() {
    let sshd = Sshd::builder().start();
    let first_pid = sshd.pid();
    // A distinctive sleep (other test processes may run this test too), to
    // look for the remote process afterwards.
    let sleep = format!("sleep 61.{}", std::process::id());
    let mut client = sshd
        .openssh_command("root")
        .arg(format!("echo started; exec {sleep}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ssh");
    let mut line = String::new();
    BufReader::new(client.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "started");

    sshd.kill();
    assert!(!sshd.is_running());
    assert!(
        !Path::new(&format!("/proc/{first_pid}")).exists(),
        "daemon not reaped"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    let status = loop {
        if let Some(status) = client.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "ssh client still connected after kill()"
        );
        thread::sleep(Duration::from_millis(20));
    };
    assert!(!status.success());
    let leftovers = Command::new("pgrep").args(["-f", &sleep]).output().unwrap();
    assert!(
        leftovers.stdout.is_empty(),
        "remote command survived kill()"
    );

    sshd.restart();
    assert!(sshd.is_running());
    assert_ne!(sshd.pid(), first_pid);
    let key = sshd.key_path(KeyType::Ecdsa);
    assert_success(
        &ssh_key(&sshd, "root", &key, sshd.known_hosts_path(), "true"),
        "after restart",
    );

    sshd.stop();
    sshd.stop();
    assert!(
        TcpStream::connect(sshd.addr()).is_err(),
        "port still open after stop()"
    );
    let (dir, pid) = (sshd.dir().to_owned(), sshd.pid());
    drop(sshd);
    assert!(!dir.exists(), "temp dir left behind");
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
}

#[test]
#[should_panic(expected = "shared daemon")]
fn the_shared_daemon_cannot_be_killed() {
    sshd::shared().kill();
}

#[test]
fn fleet_of_100_targets() {
    let fleet = Fleet::start(100);
    assert_eq!(fleet.len(), 100);
    assert_eq!(fleet.sshds().len(), 7);
    let mut distinct = fleet.targets().to_vec();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 100);
    let known_hosts = std::fs::read_to_string(fleet.known_hosts_path()).unwrap();
    assert_eq!(known_hosts.lines().count(), 100);

    // Every daemon listens on its 16 addresses; log in once per daemon (and to
    // the last target) with strict host key checking.
    for sshd in fleet.sshds() {
        for addr in sshd.listen_addrs() {
            let line = format!("Server listening on {addr} port {}.", sshd.port());
            assert!(sshd.log().contains(&line), "missing {line:?}");
        }
    }
    let key = client_keys().path(KeyType::Ed25519);
    let mut sample: Vec<&(String, u16)> = fleet.targets().iter().step_by(16).collect();
    sample.push(fleet.targets().last().unwrap());
    let known_hosts = fleet.known_hosts_path();
    thread::scope(|scope| {
        for (host, port) in sample {
            let key = &key;
            scope.spawn(move || {
                let output = sshd::openssh_command(host, *port, "root", key, known_hosts)
                    .arg("true")
                    .output()
                    .unwrap();
                assert_success(&output, &format!("login to {host}:{port}"));
            });
        }
    });
}

#[test]
fn jump_pair_reaches_the_inner_host_only_through_the_jump_host() {
    let pair = JumpPair::start();
    let (jump_host, jump_port) = pair.jump();
    let (inner_host, inner_port) = pair.inner();
    assert_eq!((inner_host, inner_port), ("127.0.0.1", INNER_PORT));

    // `ssh -J` passes -F, but not -o or -i, to the jump connection.
    let config = pair.jump_sshd().dir().join("ssh_config_test");
    std::fs::write(
        &config,
        format!(
            "Host *\n  BatchMode yes\n  StrictHostKeyChecking yes\n  IdentitiesOnly yes\n  \
             IdentityFile {}\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n  \
             ConnectTimeout 10\n",
            client_keys().path(KeyType::Ed25519).display(),
            pair.known_hosts_path().display()
        ),
    )
    .unwrap();
    let output = Command::new("ssh")
        .arg("-F")
        .arg(&config)
        .args(["-J", &format!("root@{jump_host}:{jump_port}")])
        .args([
            "-p",
            &inner_port.to_string(),
            &format!("{NOPW_USER}@{inner_host}"),
            "id -un",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_success(&output, "ssh -J");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), NOPW_USER);
    assert!(
        pair.inner_sshd()
            .log()
            .contains(&format!("Accepted publickey for {NOPW_USER}"))
    );

    // Not reachable directly: not on the root namespace's loopback, and the
    // inner daemon does not listen on the veth address either.
    let direct = Command::new("ssh")
        .arg("-F")
        .arg(&config)
        .args([
            "-o",
            "ConnectTimeout=2",
            "-p",
            &inner_port.to_string(),
            "root@127.0.0.1",
            "true",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        !direct.status.success(),
        "inner host reachable without the jump host"
    );
    assert!(TcpStream::connect((jump_host, inner_port)).is_err());

    let netns = pair.netns().to_owned();
    let (veth, _) = pair.host_side();
    let veth = veth.to_owned();
    drop(pair);
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains(&netns),
        "namespace left behind"
    );
    assert!(
        !Path::new("/sys/class/net").join(&veth).exists(),
        "veth left behind"
    );
}
