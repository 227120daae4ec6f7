//! Network devices against real FRR routers (tests/common/sshd/routers.rs):
//! two routers, each FRR in its own network namespace behind an sshd whose
//! logins run vtysh, joined by two veth pairs. One pair serves every test
//! of this binary. Remote tasks (tests/network/modules) run on ferry's host
//! and on a run-on target; ACE's `/run_task` and `/execute_catalog` run
//! them and device catalogs (tests/network/environments) on the routers'
//! second link, so that the catalogs and `device configure` do not see
//! each other's lines.

mod common;
#[path = "common/jobs.rs"]
mod jobs;
#[path = "common/tls.rs"]
mod tls;

use std::io::Write;
use std::process::Stdio;
use std::sync::{OnceLock, RwLock, RwLockReadGuard};

use common::ferry::Scratch;
use common::sshd::{self, ENABLE_PASSWORD, KeyType, LINK_IFACE, RouterPair, VTY_USER, client_keys};

/// The routers every test of this binary shares.
fn routers() -> &'static RouterPair {
    static PAIR: OnceLock<RouterPair> = OnceLock::new();
    PAIR.get_or_init(RouterPair::start)
}

/// Taken for reading by every test that talks to the routers, and for
/// writing by the one that makes a router stop answering.
static ANSWERING: RwLock<()> = RwLock::new(());

fn answering() -> RwLockReadGuard<'static, ()> {
    ANSWERING.read().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn fixture_logins_drop_into_vtysh_on_each_router() {
    let _answering = answering();
    let pair = routers();
    for r in pair.routers() {
        let brief = r.vtysh(&["show interface brief"]);
        assert!(
            brief
                .lines()
                .any(|l| l.starts_with(LINK_IFACE) && l.contains(" up ")),
            "{}: {brief}",
            r.name()
        );
        let mut ssh = sshd::openssh_command(
            &r.host().to_string(),
            r.port(),
            "root",
            &client_keys().path(KeyType::Ed25519),
            pair.known_hosts_path(),
        )
        .arg("-tt")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh");
        ssh.stdin
            .take()
            .expect("stdin")
            .write_all(b"show version\nexit\n")
            .expect("write");
        let out = ssh.wait_with_output().expect("ssh output");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("{}# ", r.name())) && text.contains("FRRouting"),
            "{}: {text}\n{}",
            r.name(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// An inventory of both routers in group `routers` (platform frr, root,
/// the ed25519 key, the pair's known_hosts), with `extra` lines under
/// `network:`.
fn inventory(s: &Scratch, extra: &str) -> std::path::PathBuf {
    inventory_on(s, "frr", "root", extra)
}

/// [`inventory`] with another `platform` and login `user`.
fn inventory_on(s: &Scratch, platform: &str, user: &str, extra: &str) -> std::path::PathBuf {
    let pair = routers();
    let mut yaml = String::from("groups:\n  - name: routers\n    targets:\n");
    for r in pair.routers() {
        yaml += &format!("      - name: {}\n        uri: {}\n", r.name(), r.host());
    }
    yaml += &format!(
        "    config:\n      transport: network\n      network:\n        platform: {platform}\n        user: {user}\n        private-key: {}\n        known-hosts-file: {}\n        load-config: false\n{extra}",
        client_keys().path(KeyType::Ed25519).display(),
        pair.known_hosts_path().display()
    );
    s.inventory(&yaml)
}

fn json_args<'a>(inv: &'a std::path::Path, rest: &[&'a str]) -> Vec<&'a str> {
    let mut v = rest.to_vec();
    v.extend(["-i", inv.to_str().expect("utf-8 path"), "--format", "json"]);
    v
}

#[test]
fn command_run_sends_each_line_to_the_cli_and_reports_bolts_json() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let run = s.ferry(&json_args(
        &inv,
        &[
            "command",
            "run",
            "show version\nshow interface brief",
            "-t",
            "routers",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    for name in ["r1", "r2"] {
        let item = run.item(name);
        assert_eq!(item["status"], "success", "{item}");
        assert_eq!(item["action"], "command", "{item}");
        let stdout = item["value"]["stdout"].as_str().expect("stdout");
        assert!(stdout.starts_with("FRRouting 8"), "{stdout}");
        assert!(
            stdout.contains(&format!("({name})")) && stdout.contains(LINK_IFACE),
            "{stdout}"
        );
        // No echo, no prompt.
        assert!(!stdout.contains("show interface brief"), "{stdout}");
        assert!(!stdout.contains(&format!("{name}#")), "{stdout}");
        assert_eq!(item["value"]["exit_code"], 0, "{item}");
    }
}

#[test]
fn a_line_the_device_rejects_fails_that_target_with_its_message() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let run = s.ferry(&json_args(
        &inv,
        &["command", "run", "show foo\nshow version", "-t", "r1"],
    ));
    assert_eq!(run.code, 2, "{run:?}");
    let item = run.only();
    assert_eq!(item["status"], "failure", "{item}");
    assert_eq!(
        item["value"]["stderr"], "% Unknown command: show foo\n",
        "{item}"
    );
    // The lines after the rejected one are not sent.
    assert_eq!(item["value"]["stdout"], "", "{item}");
}

#[test]
fn scripts_tasks_and_uploads_fail_clearly_on_a_device() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let file = s.path().join("f.sh");
    std::fs::write(&file, "echo hi\n").expect("write");
    let f = file.to_str().expect("utf-8 path");
    for args in [
        vec!["script", "run", f, "-t", "r1"],
        vec!["file", "upload", f, "/tmp/f", "-t", "r1"],
        vec![
            "task",
            "run",
            "ferry::package",
            "action=status",
            "name=x",
            "-t",
            "r1",
        ],
    ] {
        let run = s.ferry(&json_args(&inv, &args));
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        let item = run.only();
        let msg = item["value"]["_error"]["msg"].as_str().unwrap_or_default();
        assert!(
            msg.contains("r1: a ") && msg.contains("is not available on a network device"),
            "{args:?}: {item}"
        );
    }
}

#[test]
fn network_options_are_checked_with_their_position() {
    let s = Scratch::new();
    let inv = inventory_on(&s, "nokia", "root", "");
    let run = s.ferry(&json_args(
        &inv,
        &["command", "run", "show version", "-t", "r1"],
    ));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("unknown platform 'nokia'") && run.stderr.contains("inventory.yaml:"),
        "{run:?}"
    );
    let inv = inventory(&s, "        enable-pasword: x\n");
    let run = s.ferry(&json_args(
        &inv,
        &["command", "run", "show version", "-t", "r1"],
    ));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("unknown option network.enable-pasword"),
        "{run:?}"
    );
}

#[test]
fn a_device_that_stops_answering_times_out_alone() {
    let _alone = ANSWERING.write().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let inv = inventory(&s, "        command-timeout: 2\n");
    let paused = routers().routers()[0].pause("bgpd");
    let started = std::time::Instant::now();
    // The session opens and its first line is answered (zebra alone); the
    // second needs bgpd, and r1 stops answering mid-session.
    let run = s.ferry(&json_args(
        &inv,
        &[
            "command",
            "run",
            "show interface brief\nshow running-config",
            "-t",
            "routers",
        ],
    ));
    drop(paused);
    assert_eq!(run.code, 2, "{run:?}");
    let r1 = run.item("r1");
    assert_eq!(r1["status"], "failure", "{r1}");
    assert_eq!(r1["value"]["_error"]["kind"], "ferry/timeout", "{r1}");
    let r2 = run.item("r2");
    assert_eq!(r2["status"], "success", "{r2}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{run:?}"
    );
}

/// Each router's interface on the link and its BGP session to the other.
fn bgp_config(me: usize) -> String {
    let (addr, peer, asn, peer_asn) = match me {
        0 => ("10.0.12.1", "10.0.12.2", 65001, 65002),
        _ => ("10.0.12.2", "10.0.12.1", 65002, 65001),
    };
    format!(
        "interface {LINK_IFACE}\n ip address {addr}/30\n!\nrouter bgp {asn}\n bgp router-id {addr}\n no bgp ebgp-requires-policy\n neighbor {peer} remote-as {peer_asn}\n !\n address-family ipv4 unicast\n  network 10.{}.0.0/24\n exit-address-family\nexit\n",
        100 + me
    )
}

#[test]
fn configure_brings_up_bgp_between_the_routers_and_a_rerun_changes_nothing() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    for (i, r) in routers().routers().iter().enumerate() {
        let file = s.path().join(format!("{}.conf", r.name()));
        std::fs::write(&file, bgp_config(i)).expect("write");
        let f = file.to_str().expect("utf-8 path");
        // r1 saves its configuration to startup as well.
        let mut args = vec!["device", "configure", f, "-t", r.name()];
        if i == 0 {
            args.push("--save");
        }
        let run = s.ferry(&json_args(&inv, &args));
        assert_eq!(run.code, 0, "{run:?}");
        let value = &run.only()["value"];
        assert_eq!(value["changed"], true, "{value}");
        assert_eq!(value["saved"], i == 0, "{value}");
        let startup = r.startup_config().unwrap_or_default();
        assert_eq!(
            startup.contains(" neighbor 10.0.12.2 remote-as 65002\n"),
            i == 0,
            "{}: {startup}",
            r.name()
        );
        let diff = value["diff"].as_str().expect("diff");
        assert!(
            diff.contains("+ interface eth1\n+  ip address 10.0.12.")
                && diff.contains("+  neighbor 10.0.12."),
            "{diff}"
        );
        // The second run finds nothing to do.
        let again = s.ferry(&json_args(
            &inv,
            &["device", "configure", f, "-t", r.name()],
        ));
        assert_eq!(again.code, 0, "{again:?}");
        let value = &again.only()["value"];
        assert_eq!(
            (&value["changed"], &value["diff"]),
            (&false.into(), &"".into()),
            "{value}"
        );
    }
    // The session comes up over the link ferry configured.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let run = s.ferry(&json_args(
            &inv,
            &[
                "command",
                "run",
                "show bgp summary\nshow bgp neighbors",
                "-t",
                "routers",
            ],
        ));
        assert_eq!(run.code, 0, "{run:?}");
        // Each router's session to its peer on this link (the catalog
        // tests bring up another, on the second link).
        let up = [("r1", "10.0.12.2"), ("r2", "10.0.12.1")]
            .iter()
            .all(|(name, peer)| {
                run.item(name)["value"]["stdout"]
                    .as_str()
                    .is_some_and(|out| {
                        out.split("BGP neighbor is ").any(|block| {
                            block.starts_with(&format!("{peer},"))
                                && block.contains("BGP state = Established")
                        })
                    })
            });
        if up {
            let summary = run.item("r1")["value"]["stdout"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let peer = summary
                .lines()
                .find(|l| l.starts_with("10.0.12.2 "))
                .unwrap_or_else(|| panic!("{summary}"));
            // An established peer shows its prefix count, not a state name.
            let state = peer.split_whitespace().nth(9).unwrap_or_default();
            assert!(state.parse::<u32>().is_ok(), "{peer}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "BGP never came up: {run:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

#[test]
fn noop_shows_the_diff_and_changes_nothing() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let run = s.ferry(&json_args(
        &inv,
        &[
            "device",
            "configure",
            "--lines",
            "ip route 10.77.0.0/24 10.0.12.2",
            "--noop",
            "-t",
            "r1",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    let value = &run.only()["value"];
    assert_eq!(value["changed"], false, "{value}");
    assert_eq!(value["noop"], true, "{value}");
    assert_eq!(
        value["diff"], "+ ip route 10.77.0.0/24 10.0.12.2\n",
        "{value}"
    );
    // The terminal shows the diff as text.
    let human = s.ferry(&[
        "device",
        "configure",
        "--lines",
        "ip route 10.77.0.0/24 10.0.12.2",
        "--noop",
        "-t",
        "r1",
        "-i",
        inv.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(human.code, 0, "{human:?}");
    assert!(
        human
            .stdout
            .contains("would push 1 line(s):\n    + ip route 10.77.0.0/24 10.0.12.2\n"),
        "{human:?}"
    );
    let running = routers().routers()[0].vtysh(&["show running-config"]);
    assert!(
        running.contains("hostname r1") && !running.contains("10.77.0.0"),
        "{running}"
    );
}

#[test]
fn a_rejected_line_fails_that_device_with_its_message() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let run = s.ferry(&json_args(
        &inv,
        &[
            "device",
            "configure",
            "--lines",
            "router bgp 65001",
            "--lines",
            " neighbor bogus",
            "-t",
            "r1",
        ],
    ));
    assert_eq!(run.code, 2, "{run:?}");
    let item = run.only();
    assert_eq!(item["status"], "failure", "{item}");
    assert_eq!(
        item["value"]["_error"]["kind"], "ferry/device-error",
        "{item}"
    );
    assert_eq!(
        item["value"]["_error"]["msg"],
        "the device rejected 'neighbor bogus': % Command incomplete: neighbor bogus",
        "{item}"
    );
    // The line the device took before it is there; nothing is left half-open.
    let running = routers().routers()[0].vtysh(&["show running-config"]);
    assert!(running.contains("router bgp 65001"), "{running}");
}

#[test]
fn backup_writes_each_running_configuration() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let dir = s.path().join("backup");
    std::fs::create_dir(&dir).expect("mkdir");
    let d = dir.to_str().expect("utf-8 path");
    let run = s.ferry(&json_args(&inv, &["device", "backup", d, "-t", "routers"]));
    assert_eq!(run.code, 0, "{run:?}");
    for name in ["r1", "r2"] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.conf"))).expect("backup");
        assert!(text.starts_with("!\nfrr version"), "{text}");
        assert!(
            text.contains(&format!("\nhostname {name}\n")) && text.ends_with("end\n"),
            "{text}"
        );
    }
}

#[test]
fn enable_with_the_enable_password_reaches_privileged_mode() {
    let _answering = answering();
    let s = Scratch::new();
    // VTY_USER's CLI is zebra's own vty: it starts in user mode, where
    // `configure terminal` is unknown.
    let privileged = "configure terminal\nend\nshow version";
    let enabled = inventory_on(
        &s,
        "frr",
        VTY_USER,
        &format!("        enable-password: {ENABLE_PASSWORD}\n"),
    );
    let run = s.ferry(&json_args(
        &enabled,
        &[
            "command",
            "run",
            privileged,
            "-t",
            "routers",
            "--log-level",
            "trace",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    for name in ["r1", "r2"] {
        let out = run.item(name)["value"]["stdout"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(out.starts_with("FRRouting 8"), "{out}");
    }
    assert!(!run.all_text().contains(ENABLE_PASSWORD), "{run:?}");

    let user_mode = inventory_on(&s, "frr", VTY_USER, "");
    let run = s.ferry(&json_args(
        &user_mode,
        &["command", "run", privileged, "-t", "r1"],
    ));
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.only()["value"]["stderr"],
        "% [ZEBRA] Unknown command: configure terminal\n",
        "{run:?}"
    );

    let wrong = inventory_on(&s, "frr", VTY_USER, "        enable-password: not-it\n");
    let run = s.ferry(&json_args(
        &wrong,
        &["command", "run", "show version", "-t", "r1"],
    ));
    assert_eq!(run.code, 2, "{run:?}");
    let error = &run.only()["value"]["_error"];
    assert_eq!(error["issue_code"], "AUTH_ERROR", "{error}");
    assert_eq!(
        error["msg"], "the device refused the enable password",
        "{error}"
    );
    assert!(!run.all_text().contains("not-it"), "{run:?}");
}

#[test]
fn secrets_never_reach_output_or_logs() {
    let _answering = answering();
    let s = Scratch::new();
    let (enable, password) = (ENABLE_PASSWORD, "pw-Secret-0815");
    let inv = inventory_on(
        &s,
        "frr",
        VTY_USER,
        &format!("        enable-password: {enable}\n        password: {password}\n"),
    );
    let runs = [
        s.ferry(&json_args(
            &inv,
            &[
                "command",
                "run",
                "show version\nshow foo",
                "-t",
                "routers",
                "--log-level",
                "trace",
            ],
        )),
        s.ferry(&json_args(
            &inv,
            &[
                "device",
                "configure",
                "--lines",
                "hostname r9",
                "--noop",
                "-t",
                "routers",
                "--log-level",
                "trace",
            ],
        )),
        s.ferry(&[
            "inventory",
            "show",
            "--detail",
            "-t",
            "routers",
            "-i",
            inv.to_str().expect("utf-8 path"),
        ]),
    ];
    for run in runs {
        let text = run.all_text();
        assert!(!text.contains(enable) && !text.contains(password), "{text}");
    }
}

#[test]
fn a_plan_reuses_one_cli_session_per_device_across_its_steps() {
    // Alone: the routers' sshd logs count every session.
    let _alone = ANSWERING.write().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let plans = s.path().join("modules/net/plans");
    std::fs::create_dir_all(&plans).expect("mkdir");
    std::fs::write(
        plans.join("twice.yaml"),
        "parameters:\n  targets:\n    type: TargetSpec\nsteps:\n  - command: show version\n    targets: $targets\n  - command: show interface brief\n    targets: $targets\n  - command: show bgp summary\n    targets: $targets\n    catch_errors: true\n",
    )
    .expect("plan");
    let shells = |r: &common::sshd::Router| {
        r.sshd()
            .log()
            .matches("Starting session: forced-command")
            .count()
    };
    let before: Vec<usize> = routers().routers().iter().map(shells).collect();
    let modules = s.path().join("modules");
    let run = s.ferry(&[
        "plan",
        "run",
        "net::twice",
        "targets=routers",
        "-i",
        inv.to_str().expect("utf-8 path"),
        "--modulepath",
        modules.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    for (r, before) in routers().routers().iter().zip(before) {
        assert_eq!(
            shells(r) - before,
            1,
            "{}: {}",
            r.name(),
            r.sshd().log_tail(20)
        );
    }
}

#[test]
fn a_device_is_reached_through_a_jump_host() {
    let _answering = answering();
    let jump = sshd::shared();
    let s = Scratch::new();
    // One known_hosts for the jump host and the routers: every hop is checked.
    let known = s.path().join("known_hosts");
    std::fs::write(
        &known,
        std::fs::read_to_string(jump.known_hosts_path()).expect("jump keys")
            + &std::fs::read_to_string(routers().known_hosts_path()).expect("router keys"),
    )
    .expect("known_hosts");
    let inv = inventory(
        &s,
        &format!("        proxyjump: root@{}:{}\n", jump.host(), jump.port()),
    );
    let text = std::fs::read_to_string(&inv).expect("inventory").replace(
        &routers().known_hosts_path().display().to_string(),
        &known.display().to_string(),
    );
    std::fs::write(&inv, text).expect("inventory");
    let logins = || jump.log().matches("Accepted publickey for root").count();
    let before = logins();
    let run = s.ferry(&json_args(
        &inv,
        &["command", "run", "show version", "-t", "r2"],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.only()["value"]["stdout"]
            .as_str()
            .is_some_and(|o| o.contains("(r2)")),
        "{run:?}"
    );
    // ferry logged in to the jump host on its way.
    assert!(logins() > before, "{}", jump.log_tail(20));
}

#[test]
fn facts_give_each_device_its_platform_version_and_interfaces() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let run = s.ferry(&json_args(&inv, &["device", "facts", "-t", "routers"]));
    assert_eq!(run.code, 0, "{run:?}");
    // The facts task on a device gives the same facts.
    let task = s.ferry(&json_args(
        &inv,
        &["task", "run", "ferry::facts", "-t", "routers"],
    ));
    assert_eq!(task.code, 0, "{task:?}");
    for name in ["r1", "r2"] {
        assert_eq!(
            task.item(name)["value"]["hostname"],
            run.item(name)["value"]["hostname"],
            "{task:?}"
        );
        assert_eq!(task.item(name)["value"]["platform"], "frr", "{task:?}");
    }
    for name in ["r1", "r2"] {
        let value = &run.item(name)["value"];
        assert_eq!(value["platform"], "frr", "{value}");
        assert_eq!(value["hostname"], name, "{value}");
        assert!(
            value["version"]
                .as_str()
                .is_some_and(|v| v.starts_with('8')),
            "{value}"
        );
        let interfaces = value["interfaces"].as_array().expect("interfaces");
        let link = interfaces
            .iter()
            .find(|i| i["name"] == LINK_IFACE)
            .unwrap_or_else(|| panic!("{value}"));
        assert_eq!(link["status"], "up", "{value}");
    }
}

/// The fixture modules and environments of the device task and catalog
/// tests (tests/network/modules, tests/network/environments).
fn fixture_dir(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/network")
        .join(name)
}

/// `ferry ARGS --modulepath <the device fixture modules> -i INV --format
/// json`: a task or plan of tests/network/modules.
fn with_modules(s: &Scratch, inv: &std::path::Path, args: &[&str]) -> common::ferry::Run {
    let modules = fixture_dir("modules");
    let mut all = args.to_vec();
    all.extend(["--modulepath", modules.to_str().expect("utf-8 path")]);
    s.ferry(&json_args(inv, &all))
}

/// What the remote task `netdev::show_version` reported for `name`.
fn remote_value(run: &common::ferry::Run, name: &str) -> serde_json::Value {
    let item = run.item(name);
    assert_eq!(item["status"], "success", "{item}");
    assert_eq!(item["action"], "task", "{item}");
    item["value"].clone()
}

#[test]
fn a_remote_task_runs_on_ferrys_host_with_the_devices_settings_in_target() {
    let _answering = answering();
    let s = Scratch::new();
    let password = "pw-Remote-0815";
    let inv = inventory(
        &s,
        &format!("        enable-password: {ENABLE_PASSWORD}\n        password: {password}\n"),
    );
    let run = with_modules(
        &s,
        &inv,
        &[
            "task",
            "run",
            "netdev::show_version",
            "-t",
            "routers",
            "--log-level",
            "trace",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    for r in routers().routers() {
        let value = remote_value(&run, r.name());
        // The task reached the device itself, through the CLI, from here.
        assert!(
            value["first_line"].as_str().is_some_and(
                |l| l.starts_with("FRRouting") && l.contains(&format!("({})", r.name()))
            ),
            "{value}"
        );
        assert_eq!(value["over_ssh"], false, "{value}");
        let target = &value["target"];
        assert_eq!(target["name"], r.name(), "{target}");
        assert_eq!(target["host"], r.host().to_string(), "{target}");
        assert_eq!(target["user"], "root", "{target}");
        assert_eq!(target["protocol"], "network", "{target}");
        assert_eq!(target["platform"], "frr", "{target}");
        // Secrets reach the task, and are hidden in what it prints.
        assert_eq!(target["password"], "[redacted]", "{target}");
        assert_eq!(target["enable-password"], "[redacted]", "{target}");
    }
    let text = run.all_text();
    assert!(
        !text.contains(password) && !text.contains(ENABLE_PASSWORD),
        "{text}"
    );
}

#[test]
fn a_remote_task_runs_on_the_run_on_target_over_ssh() {
    let _answering = answering();
    let proxy = sshd::shared();
    let s = Scratch::new();
    let inv = inventory(&s, "        run-on: proxy\n");
    let text = std::fs::read_to_string(&inv).expect("inventory")
        + &format!(
            "targets:\n  - name: proxy\n    uri: ssh://root@{}:{}\n    config:\n      transport: ssh\n      ssh:\n        private-key: {}\n        known-hosts-file: {}\n        load-config: false\n",
            proxy.host(),
            proxy.port(),
            client_keys().path(KeyType::Ed25519).display(),
            proxy.known_hosts_path().display()
        );
    std::fs::write(&inv, text).expect("inventory");
    let logins = || proxy.log().matches("Accepted publickey for root").count();
    let before = logins();
    let run = with_modules(
        &s,
        &inv,
        &["task", "run", "netdev::show_version", "-t", "r2"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let value = remote_value(&run, "r2");
    assert_eq!(value["over_ssh"], true, "{value}");
    assert!(
        value["first_line"]
            .as_str()
            .is_some_and(|l| l.contains("(r2)")),
        "{value}"
    );
    assert_eq!(value["target"]["run-on"], "proxy", "{value}");
    assert!(logins() > before, "{}", proxy.log_tail(20));

    // The same from a Puppet-language plan.
    let before = logins();
    let run = with_modules(
        &s,
        &inv,
        &["plan", "run", "netdev::remote_version", "targets=r2"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let value: serde_json::Value = serde_json::from_str(&run.stdout).expect("plan output");
    assert_eq!(value["over_ssh"], true, "{value}");
    assert_eq!(value["target"]["run-on"], "proxy", "{value}");
    assert!(logins() > before, "{}", proxy.log_tail(20));

    // A run-on that names a device is refused, as Bolt refuses it.
    let inv = inventory(&s, "        run-on: r1\n");
    let run = with_modules(
        &s,
        &inv,
        &["task", "run", "netdev::show_version", "-t", "r2"],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("r1 is not a valid run-on target for r2 since it is a network device too"),
        "{run:?}"
    );
}

/// ACE's target for router `r` (`remote-transport: network`), with the
/// enable password.
fn ace_target(r: &common::sshd::Router) -> serde_json::Value {
    serde_json::json!({
        "remote-transport": "network",
        "host": r.host().to_string(),
        "user": "root",
        "platform": "frr",
        "enable-password": ENABLE_PASSWORD,
        "private-key-content": std::fs::read_to_string(client_keys().path(KeyType::Ed25519)).expect("key"),
        "known-hosts-content": std::fs::read_to_string(routers().known_hosts_path()).expect("known_hosts"),
    })
}

/// A runtime for a test of the server's API (the test holds the routers
/// for reading outside it).
fn ace_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A server whose modulepath and environmentpath are the device fixtures.
async fn ace_server(dir: &std::path::Path, pki: &tls::Pki) -> tls::TestServer {
    tls::TestServer::start(
        pki,
        dir,
        &format!(
            "modulepath: [{}]\nenvironmentpath: {}\n",
            fixture_dir("modules").display(),
            fixture_dir("environments").display()
        ),
    )
    .await
}

#[test]
fn ace_runs_a_remote_task_for_a_device_on_the_server() {
    let _answering = answering();
    ace_runtime().block_on(ace_runs_a_remote_task_for_a_device_on_the_server_steps());
}

async fn ace_runs_a_remote_task_for_a_device_on_the_server_steps() {
    let s = Scratch::new();
    let pki = tls::Pki::new();
    let server = ace_server(s.path(), &pki).await;
    let client = tls::Client::new(&pki, Some(&pki.client));
    let r = &routers().routers()[0];
    let body = serde_json::json!({
        "target": ace_target(r),
        "task": {"name": "netdev::show_version", "metadata": {}, "files": []},
        "parameters": {"command": "show version"},
    });
    let answer = client.post(server.addr, "/run_task", &body).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    let result = answer.json();
    assert_eq!(result["status"], "success", "{result}");
    assert_eq!(result["target"], r.host().to_string(), "{result}");
    let value = &result["value"];
    assert!(
        value["first_line"]
            .as_str()
            .is_some_and(|l| l.contains("(r1)")),
        "{value}"
    );
    assert_eq!(value["target"]["enable-password"], "[redacted]", "{value}");
    assert_eq!(
        value["target"]["private-key"]["key-data"], "[redacted]",
        "{value}"
    );
    let jobs = client
        .get(server.addr, "/orchestrator/v1/jobs")
        .await
        .text();
    assert!(
        !answer.text().contains(ENABLE_PASSWORD) && !jobs.contains(ENABLE_PASSWORD),
        "{jobs}"
    );

    // The server is the device's proxy: ACE's request carries no inventory
    // that could name another one, so a run-on other than localhost is
    // refused, naming the field.
    let mut elsewhere = body.clone();
    elsewhere["target"]["run-on"] = "proxy1.example.com".into();
    let answer = client.post(server.addr, "/run_task", &elsewhere).await;
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert!(
        answer.text().contains("\"field\":\"target.run-on\"")
            && answer.text().contains("run-on may only be localhost"),
        "{}",
        answer.text()
    );
    let mut local = body.clone();
    local["target"]["run-on"] = "localhost".into();
    let answer = client.post(server.addr, "/run_task", &local).await;
    assert_eq!(answer.status, 200, "{}", answer.text());

    // A task that is not remote is refused for a device, naming the field.
    let mut plain = body.clone();
    plain["task"]["name"] = "ferry::package".into();
    plain["parameters"] = serde_json::json!({"action": "status", "name": "x"});
    let answer = client.post(server.addr, "/run_task", &plain).await;
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert!(
        answer.text().contains("task.name") && answer.text().contains("not a remote task"),
        "{}",
        answer.text()
    );
    server.stop().await;
}

/// A deploy job (PE's orchestrator) on a router of the server's
/// inventory takes the agent's path as a host does: the device's facts,
/// its classification (plain: the job's environment), its catalog compiled
/// by the server with the device types built in, the apply through its
/// CLI (noop here, so the other tests' configurations stay), and its
/// report in the job and saved through the report indirection.
#[test]
fn a_deploy_job_applies_a_device_catalog() {
    let _answering = answering();
    ace_runtime().block_on(a_deploy_job_applies_a_device_catalog_steps());
}

async fn a_deploy_job_applies_a_device_catalog_steps() {
    let s = Scratch::new();
    let pki = tls::Pki::new();
    let inv = inventory(&s, "");
    let server = tls::TestServer::start(
        &pki,
        s.path(),
        &format!(
            "inventory: {}\nmodulepath: [{}]\nenvironmentpath: {}\nroutes:\n  facts: {{terminus: yaml}}\n  report: {{terminus: yaml}}\n",
            inv.display(),
            fixture_dir("modules").display(),
            fixture_dir("environments").display()
        ),
    )
    .await;
    let client = tls::Client::new(&pki, Some(&pki.client));
    let [r1, _] = routers().routers();
    let answer = client
        .post(
            server.addr,
            "/orchestrator/v1/command/deploy",
            &serde_json::json!({"environment": "devices", "noop": true,
                "scope": {"nodes": [r1.name()]}}),
        )
        .await;
    assert_eq!(answer.status, 202, "{}", answer.text());
    let job = answer.json()["job"]["name"]
        .as_str()
        .expect("job name")
        .to_string();
    let events = jobs::stream(&client, server.addr, &job).await;
    let kinds = jobs::kinds(&events);
    assert_eq!(kinds.last(), Some(&"job_finished"), "{events:?}");
    assert!(kinds.contains(&"node_finished"), "{events:?}");
    let report = client
        .get(server.addr, &format!("/orchestrator/v1/jobs/{job}/report"))
        .await
        .json();
    let node = &report["report"][0];
    assert_eq!(node["node"], r1.name(), "{report}");
    assert_eq!(node["state"], "finished", "{report}");
    let puppet = &node["report"];
    assert_eq!(puppet["environment"], "devices", "{puppet}");
    assert_eq!(puppet["noop"], true, "{puppet}");
    assert!(
        puppet["resource_statuses"]
            .get("Network_route[10.201.0.0/24]")
            .is_some(),
        "{puppet}"
    );
    // Saved through the report indirection (the store by default).
    let stored = client
        .get(server.addr, &format!("/orchestrator/v1/jobs/{job}/nodes"))
        .await;
    assert_eq!(stored.status, 200, "{}", stored.text());
    server.stop().await;
}

/// `/execute_catalog` for router `r` in `environment`.
fn catalog_request(r: &common::sshd::Router, environment: &str, noop: bool) -> serde_json::Value {
    serde_json::json!({
        "target": ace_target(r),
        "compiler": {
            "certname": r.name(), "environment": environment, "enforce_environment": true,
            "transaction_uuid": "0b5d2a44-7f3e-4c1a-9d6b-2f8e1c3a5b7d", "job_id": "7",
            "noop": noop, "debug": false, "trace": false, "evaltrace": false,
        },
    })
}

/// The Puppet report of the newest `ace/execute_catalog` job.
async fn last_report(client: &tls::Client, server: &tls::TestServer) -> serde_json::Value {
    let jobs = client
        .get(server.addr, "/orchestrator/v1/jobs")
        .await
        .json();
    let name = jobs["items"][0]["name"]
        .as_str()
        .expect("job name")
        .to_string();
    let nodes = client
        .get(server.addr, &format!("/orchestrator/v1/jobs/{name}/nodes"))
        .await;
    assert!(!nodes.text().contains(ENABLE_PASSWORD), "{}", nodes.text());
    nodes.json()["items"][0]["result"]["report"].clone()
}

#[test]
fn ace_execute_catalog_converges_devices_and_bgp_comes_up() {
    let _answering = answering();
    ace_runtime().block_on(ace_execute_catalog_converges_devices_and_bgp_comes_up_steps());
}

async fn ace_execute_catalog_converges_devices_and_bgp_comes_up_steps() {
    let s = Scratch::new();
    let pki = tls::Pki::new();
    let server = ace_server(s.path(), &pki).await;
    let client = tls::Client::new(&pki, Some(&pki.client));
    let [r1, r2] = routers().routers();

    // noop: the changes are reported, none is made.
    let answer = client
        .post(
            server.addr,
            "/execute_catalog",
            &catalog_request(r1, "devices", true),
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    let a = answer.json();
    assert_eq!(a["status"], "unchanged", "{a}");
    assert_eq!(a["result"]["metrics"]["out_of_sync"], 4, "{a}");
    let report = last_report(&client, &server).await;
    assert_eq!(report["noop_pending"], true, "{report}");
    let route = &report["resource_statuses"]["Network_route[10.201.0.0/24]"];
    assert_eq!(route["events"][0]["status"], "noop", "{route}");
    assert!(!r1.vtysh(&["show running-config"]).contains("10.201.0.0"));

    for r in [r1, r2] {
        let a = client
            .post(
                server.addr,
                "/execute_catalog",
                &catalog_request(r, "devices", false),
            )
            .await
            .json();
        assert_eq!(a["certname"], r.name(), "{a}");
        assert_eq!(a["status"], "changed", "{a}");
        assert_eq!(a["result"]["metrics"]["changed"], 4, "{a}");
        assert_eq!(a["result"]["metrics"]["failed"], 0, "{a}");
        assert_eq!(a["result"]["job_id"], "7", "{a}");
        let report = last_report(&client, &server).await;
        assert_eq!(report["host"], r.name(), "{report}");
        assert_eq!(report["report_format"], 12, "{report}");
        let neighbor = report["resource_statuses"]
            .as_object()
            .and_then(|m| m.iter().find(|(k, _)| k.starts_with("Bgp_neighbor[")))
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        assert_eq!(neighbor["changed"], true, "{report}");
        let message = neighbor["events"][0]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(message.contains("+  neighbor 10.0.21."), "{message}");
        // A second run changes nothing.
        let again = client
            .post(
                server.addr,
                "/execute_catalog",
                &catalog_request(r, "devices", false),
            )
            .await
            .json();
        assert_eq!(again["status"], "unchanged", "{again}");
        assert_eq!(again["result"]["metrics"]["changed"], 0, "{again}");
    }
    let running = r1.vtysh(&["show running-config"]);
    assert!(
        running.contains("ip route 10.201.0.0/24 10.0.21.2 20")
            && running.contains(" description ferry catalog: link to 10.0.21.2")
            && running.contains(" neighbor 10.0.21.2 description from a catalog"),
        "{running}"
    );
    // The session on the link the catalogs configured comes up.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let up = r1.vtysh(&["show bgp neighbors 10.0.21.2"]);
        if up.contains("BGP state = Established") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "BGP never came up: {up}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    server.stop().await;
}

#[test]
fn ace_execute_catalog_fails_a_rejected_line_with_the_devices_message_and_skips_its_dependents() {
    let _answering = answering();
    ace_runtime()
        .block_on(ace_execute_catalog_fails_a_rejected_line_with_the_devices_message_and_skips_its_dependents_steps());
}

async fn ace_execute_catalog_fails_a_rejected_line_with_the_devices_message_and_skips_its_dependents_steps()
 {
    let s = Scratch::new();
    let pki = tls::Pki::new();
    let server = ace_server(s.path(), &pki).await;
    let client = tls::Client::new(&pki, Some(&pki.client));
    let r1 = &routers().routers()[0];
    let answer = client
        .post(
            server.addr,
            "/execute_catalog",
            &catalog_request(r1, "rejected", false),
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    let a = answer.json();
    assert_eq!(a["status"], "failed", "{a}");
    assert_eq!(a["result"]["metrics"]["failed"], 1, "{a}");
    let report = last_report(&client, &server).await;
    let bad = &report["resource_statuses"]["Device_config[bogus neighbor]"];
    assert_eq!(bad["failed"], true, "{report}");
    assert_eq!(
        bad["events"][0]["message"],
        "the device rejected 'neighbor bogus': % Command incomplete: neighbor bogus",
        "{bad}"
    );
    assert!(
        report["logs"]
            .as_array()
            .is_some_and(|l| l.iter().any(|l| l["level"] == "err"
                && l["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("% Command incomplete")))),
        "{report}"
    );
    // The resource that does not depend on it converged all the same; the
    // one that requires it is skipped.
    let route = &report["resource_statuses"]["Network_route[10.99.0.0/24]"];
    assert_eq!(route["failed"], false, "{route}");
    let skipped = &report["resource_statuses"]["Network_route[10.98.0.0/24]"];
    assert_eq!(skipped["skipped"], true, "{skipped}");
    assert_eq!(a["result"]["metrics"]["skipped"], 1, "{a}");
    assert!(
        report["logs"]
            .as_array()
            .is_some_and(|l| l.iter().any(|l| l["message"]
                == "Skipping because of failed dependencies"
                && l["source"] == "/Stage[main]/Main/Network_route[10.98.0.0/24]")),
        "{report}"
    );
    assert!(!r1.vtysh(&["show running-config"]).contains("10.98.0.0"));
    assert!(
        r1.vtysh(&["show running-config"])
            .contains("ip route 10.99.0.0/24 10.0.21.2")
    );
    server.stop().await;
}

#[test]
fn ferry_apply_converges_device_resources_and_a_rerun_changes_nothing() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, &format!("        enable-password: {ENABLE_PASSWORD}\n"));
    let env = fixture_dir("environments").join("devices");
    let code = "network_route { '10.203.0.0/24': gateway => '10.0.21.1', metric => 30 }";
    let apply = |extra: &[&str]| {
        let mut args = vec![
            "apply",
            "-e",
            code,
            "--environment",
            env.to_str().expect("utf-8 path"),
            "-t",
            "r2",
            "--log-level",
            "trace",
        ];
        args.extend(extra);
        s.ferry(&json_args(&inv, &args))
    };
    let noop = apply(&["--noop"]);
    assert_eq!(noop.code, 0, "{noop:?}");
    let report = &noop.only()["value"]["report"];
    assert_eq!(report["noop_pending"], true, "{report}");
    let run = apply(&[]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = &run.only()["value"]["report"];
    assert_eq!(report["status"], "changed", "{report}");
    let route = &report["resource_statuses"]["Network_route[10.203.0.0/24]"];
    assert_eq!(
        route["events"][0]["message"],
        "configuration changed:\n+ ip route 10.203.0.0/24 10.0.21.1 30",
        "{route}"
    );
    let again = apply(&[]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(
        again.only()["value"]["report"]["status"],
        "unchanged",
        "{again:?}"
    );
    for r in [&noop, &run, &again] {
        assert!(!r.all_text().contains(ENABLE_PASSWORD), "{r:?}");
    }
    assert!(
        routers().routers()[1]
            .vtysh(&["show running-config"])
            .contains("ip route 10.203.0.0/24 10.0.21.1 30")
    );
}

#[test]
fn ferry_apply_on_a_device_takes_tags_and_refuses_an_unknown_attribute_at_its_position() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let r2 = &routers().routers()[1];
    // A bare manifest: the device types are built in.
    let manifest = s.path().join("routes.pp");
    std::fs::write(
        &manifest,
        "network_route { '10.204.0.0/24':\n  gateway => '10.0.21.1',\n  tag     => ['wanted'],\n}\n\
         network_route { '10.205.0.0/24':\n  gateway => '10.0.21.1',\n}\n",
    )
    .expect("manifest");
    let apply = |pp: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["apply", pp.to_str().expect("utf-8 path"), "-t", "r2"];
        args.extend(extra);
        s.ferry(&json_args(&inv, &args))
    };
    let run = apply(&manifest, &["--tags", "Wanted"]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = &run.only()["value"]["report"];
    assert_eq!(report["status"], "changed", "{report}");
    let statuses = &report["resource_statuses"];
    assert_eq!(
        statuses["Network_route[10.204.0.0/24]"]["changed"], true,
        "{report}"
    );
    let untagged = &statuses["Network_route[10.205.0.0/24]"];
    assert_eq!(untagged["skipped"], true, "{untagged}");
    assert_eq!(untagged["events"], serde_json::json!([]), "{untagged}");
    let running = r2.vtysh(&["show running-config"]);
    assert!(
        running.contains("ip route 10.204.0.0/24 10.0.21.1"),
        "{running}"
    );
    assert!(!running.contains("10.205.0.0"), "{running}");

    // An attribute the type does not have: the compile fails, at its place,
    // and nothing reaches the device.
    let bad = s.path().join("bad.pp");
    std::fs::write(
        &bad,
        "network_route { '10.206.0.0/24':\n  gateway   => '10.0.21.1',\n  distance  => 5,\n}\n",
    )
    .expect("manifest");
    let run = apply(&bad, &[]);
    assert_eq!(run.code, 2, "{run:?}");
    let error = &run.only()["value"]["_error"];
    let msg = error["msg"].as_str().unwrap_or_default();
    assert!(
        msg.contains("Network_route[10.206.0.0/24]: no parameter named 'distance'")
            && msg.contains(&format!("(file: {}, line: 3, column: 3)", bad.display())),
        "{error}"
    );
    assert!(!r2.vtysh(&["show running-config"]).contains("10.206.0.0"));
}

#[test]
fn a_plans_apply_block_on_a_device_has_the_device_types_built_in() {
    let _answering = answering();
    let s = Scratch::new();
    let inv = inventory(&s, "");
    let run = with_modules(
        &s,
        &inv,
        &["plan", "run", "netdev::apply_route", "targets=r2"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let status: serde_json::Value = serde_json::from_str(&run.stdout).expect("plan output");
    assert_eq!(status, "changed", "{run:?}");
    assert!(
        routers().routers()[1]
            .vtysh(&["show running-config"])
            .contains("ip route 10.207.0.0/24 10.0.21.1 40")
    );
}
