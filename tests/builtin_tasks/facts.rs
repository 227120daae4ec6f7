//! The facts task (tasks/facts.sh): its output against this machine under
//! every shell and awk, the ifconfig fallback (busybox's, and both ifconfig
//! output formats fed by a stand-in command), the fixture trees in
//! tests/builtin_tasks/facts/, sources that are missing, and how few
//! commands it runs (it runs before every apply).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::{
    Shell, assert_subset, busybox_shell, have, os_release, repo, run_task, sh_out, shells,
    shells_and_awks, which,
};

#[test]
fn facts_match_this_machine_under_every_shell() {
    let id = os_release("ID").expect("/etc/os-release has an ID");
    let os_name = {
        let mut c = id.chars();
        c.next()
            .unwrap()
            .to_uppercase()
            .chain(c)
            .collect::<String>()
    };
    let version_id = os_release("VERSION_ID").expect("VERSION_ID");
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let mem_total_kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let cpus = cpuinfo
        .lines()
        .filter(|l| l.split(':').next().unwrap().trim() == "processor")
        .count() as u64;
    let mut sys_ifaces: Vec<String> = std::fs::read_dir("/sys/class/net")
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    sys_ifaces.sort();
    let node = sh_out("uname -n");

    let mut networks = Vec::new();
    for shell in shells_and_awks() {
        let run = run_task(&shell, "facts.sh", json!({}), &[]);
        let f = run.ok();
        let who = shell.name;
        assert!(run.elapsed < Duration::from_secs(10), "{who}: slow facts");
        assert_eq!(f["os"]["name"], os_name.as_str(), "{who}");
        if id == "debian" {
            assert_eq!(f["os"]["family"], "Debian", "{who}");
            let dv = std::fs::read_to_string("/etc/debian_version").unwrap();
            assert_eq!(f["os"]["release"]["full"], dv.trim(), "{who}");
        }
        assert_eq!(f["os"]["release"]["major"], version_id.as_str(), "{who}");
        assert_eq!(f["kernel"], sh_out("uname -s").as_str(), "{who}");
        assert_eq!(f["kernelrelease"], sh_out("uname -r").as_str(), "{who}");
        assert_eq!(f["os"]["hardware"], sh_out("uname -m").as_str(), "{who}");
        assert_eq!(f["hardwaremodel"], f["os"]["hardware"], "{who}");
        assert_eq!(f["architecture"], f["os"]["architecture"], "{who}");
        if sh_out("uname -m") == "x86_64" && id == "debian" {
            assert_eq!(f["architecture"], "amd64", "{who}");
        }
        let host = node.split('.').next().unwrap();
        assert_eq!(f["hostname"], host, "{who}");
        assert_eq!(f["networking"]["hostname"], host, "{who}");
        assert!(
            f["fqdn"].as_str().unwrap().starts_with(host),
            "{who}: {}",
            f["fqdn"]
        );
        let lo = &f["networking"]["interfaces"]["lo"];
        assert_eq!(lo["ip"], "127.0.0.1", "{who}");
        assert_eq!(lo["netmask"], "255.0.0.0", "{who}");
        assert_eq!(lo["network"], "127.0.0.0", "{who}");
        assert_eq!(
            lo["bindings"][0],
            json!({"address": "127.0.0.1", "netmask": "255.0.0.0", "network": "127.0.0.0"}),
            "{who}"
        );
        let mut ifaces: Vec<String> = f["networking"]["interfaces"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        ifaces.sort();
        assert_eq!(ifaces, sys_ifaces, "{who}");
        let system = &f["memory"]["system"];
        assert_eq!(system["total_bytes"], mem_total_kb * 1024, "{who}");
        let (total, avail, used) = (
            system["total_bytes"].as_u64().unwrap(),
            system["available_bytes"].as_u64().unwrap(),
            system["used_bytes"].as_u64().unwrap(),
        );
        assert_eq!(total, avail + used, "{who}");
        assert!(system["capacity"].as_str().unwrap().ends_with('%'), "{who}");
        assert_eq!(f["processors"]["count"], cpus, "{who}");
        assert_eq!(
            f["processors"]["models"].as_array().map(|m| m.len() as u64),
            Some(cpus),
            "{who}"
        );
        let uid: u64 = sh_out("id -u").parse().unwrap();
        assert_eq!(f["identity"]["uid"], uid, "{who}");
        assert_eq!(f["identity"]["privileged"], uid == 0, "{who}");
        assert_eq!(f["identity"]["user"], sh_out("id -un").as_str(), "{who}");
        assert_eq!(f["identity"]["group"], sh_out("id -gn").as_str(), "{who}");
        let gid: u64 = sh_out("id -g").parse().unwrap();
        assert_eq!(f["identity"]["gid"], gid, "{who}");
        networks.push((who, f["networking"].clone()));
    }
    // Every shell and userland must see the same network.
    for (who, net) in &networks[1..] {
        assert_eq!(net, &networks[0].1, "{who} vs {}", networks[0].0);
    }
}

/// Without `ip` (busybox userland minus its `ip` applet) the task falls back
/// to ifconfig; the addresses must come out the same.
#[test]
fn facts_ifconfig_fallback_matches_ip() {
    if !have("busybox") {
        eprintln!("NOTICE: busybox is not installed; skipping the ifconfig fallback test");
        return;
    }
    let dash = &shells()[0];
    let with_ip = run_task(dash, "facts.sh", json!({}), &[]).ok();
    let no_ip = busybox_shell(&["ip"], false);
    let without_ip = run_task(&no_ip, "facts.sh", json!({}), &[]).ok();
    assert_eq!(without_ip["networking"], with_ip["networking"]);
}

#[test]
fn facts_fixtures_map_os_release_meminfo_cpuinfo() {
    let dir = repo().join("tests/builtin_tasks/facts");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").exists())
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "fixtures missing in {}", dir.display());
    for shell in shells_and_awks() {
        for case in &cases {
            let expected: Value =
                serde_json::from_str(&std::fs::read_to_string(case.join("expected.json")).unwrap())
                    .unwrap();
            let root = case.display().to_string();
            let got = run_task(
                &shell,
                "facts.sh",
                json!({}),
                &[("FERRY_FACTS_ROOT", &root)],
            )
            .ok();
            let label = format!(
                "{} {}",
                shell.name,
                case.file_name().unwrap().to_string_lossy()
            );
            assert_subset(&expected, &got, &label);
        }
    }
}

#[test]
fn facts_missing_sources_are_omitted_not_fatal() {
    let empty = tempfile::tempdir().unwrap();
    for shell in shells_and_awks() {
        let root = empty.path().display().to_string();
        let f = run_task(
            &shell,
            "facts.sh",
            json!({}),
            &[("FERRY_FACTS_ROOT", &root)],
        )
        .ok();
        let who = shell.name;
        assert!(f.get("memory").is_none(), "{who}: {f}");
        assert!(f["processors"].get("count").is_none(), "{who}: {f}");
        for absent in ["name", "family", "release", "distro"] {
            assert!(f["os"].get(absent).is_none(), "{who}: os.{absent}: {f}");
        }
        // Facts from commands are still there.
        assert_eq!(f["kernel"], sh_out("uname -s").as_str());
    }
}

/// A directory for PATH holding `fakes` (name, sh script body) and symlinks
/// to this machine's `tools`, and nothing else.
fn bin_dir(fakes: &[(&str, String)], tools: &[&str]) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in fakes {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for tool in tools {
        if have(tool) {
            std::os::unix::fs::symlink(which(tool), dir.path().join(tool)).unwrap();
        }
    }
    dir
}

fn dash_with_path(dir: &tempfile::TempDir) -> Shell {
    Shell {
        name: "dash",
        argv: vec![which("dash").display().to_string()],
        path: Some(dir.path().display().to_string()),
        _dir: None,
    }
}

/// Without `ip`, addresses come from `ifconfig -a` in either format:
/// net-tools ("inet A  netmask M") and busybox / old net-tools
/// ("inet addr:A  Mask:M"). A stand-in ifconfig prints both.
#[test]
fn facts_read_both_ifconfig_formats() {
    let out = "\
ferry0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1400
        inet 10.1.2.3  netmask 255.255.240.0  broadcast 10.1.15.255
        inet 300.1.1.1  netmask 255.0.0.0
        ether 02:01:02:03:04:05  txqueuelen 1000  (Ethernet)

ferry1    Link encap:Ethernet  HWaddr 52:54:00:AB:CD:EF
          inet addr:192.168.100.10  Bcast:192.168.100.255  Mask:255.255.255.0
          inet6 addr: fe80::5054:ff:feab:cdef/64 Scope:Link
          UP BROADCAST RUNNING MULTICAST  MTU:1500  Metric:1
";
    let fake = format!("printf '%s' '{out}'\n");
    let dir = bin_dir(
        &[("ifconfig", fake)],
        &["awk", "uname", "id", "date", "hostname"],
    );
    let f = run_task(&dash_with_path(&dir), "facts.sh", json!({}), &[]).ok();
    let ifaces = &f["networking"]["interfaces"];
    let expected = json!({
        "ferry0": {
            "bindings": [{"address": "10.1.2.3", "netmask": "255.255.240.0", "network": "10.1.0.0"}],
            "ip": "10.1.2.3", "netmask": "255.255.240.0", "network": "10.1.0.0",
        },
        "ferry1": {
            "bindings": [
                {"address": "192.168.100.10", "netmask": "255.255.255.0", "network": "192.168.100.0"}
            ],
            "ip": "192.168.100.10", "netmask": "255.255.255.0", "network": "192.168.100.0",
        },
    });
    assert_subset(&expected, ifaces, "networking.interfaces");
}

/// The task runs before every apply, so it must stay cheap: at most one
/// awk and the commands whose answers no file holds (uname, id, ip or
/// ifconfig, date, hostname -f). Every command it may run is a logging
/// stand-in for the real one, and PATH has nothing else.
#[test]
fn facts_runs_few_commands() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let candidates = [
        "awk", "uname", "hostname", "id", "ip", "ifconfig", "date", "getconf", "cat", "sort", "tr",
        "cut", "grep", "sed", "head", "tail", "wc", "expr", "tee",
    ];
    let fakes: Vec<(&str, String)> = candidates
        .iter()
        .filter(|c| have(c))
        .map(|c| {
            let real = which(c).display().to_string();
            (
                *c,
                format!("echo {c} >>\"$FERRY_TEST_LOG\"\nexec {real} \"$@\"\n"),
            )
        })
        .collect();
    let dir = bin_dir(&fakes, &[]);
    let log_path = log.path().display().to_string();
    let f = run_task(
        &dash_with_path(&dir),
        "facts.sh",
        json!({}),
        &[("FERRY_TEST_LOG", &log_path)],
    )
    .ok();
    let plain = run_task(&shells()[0], "facts.sh", json!({}), &[]).ok();
    for key in [
        "os",
        "kernel",
        "networking",
        "processors",
        "identity",
        "timezone",
    ] {
        assert_eq!(f[key], plain[key], "{key} differs with logged commands");
    }
    let ran = std::fs::read_to_string(log.path()).unwrap();
    let ran: Vec<&str> = ran.lines().collect();
    assert!(
        ran.len() <= 6,
        "the facts task ran {} commands: {ran:?}",
        ran.len()
    );
    for cmd in &ran {
        assert!(
            ["awk", "uname", "hostname", "id", "ip", "ifconfig", "date"].contains(cmd),
            "the facts task ran {cmd}: {ran:?}"
        );
    }
    assert_eq!(ran.iter().filter(|c| **c == "awk").count(), 1, "{ran:?}");
}

/// awk is the one thing the task cannot do without: without it the task
/// says so (a Bolt-style error) rather than printing a broken document.
#[test]
fn facts_without_awk_fail_clearly() {
    let dir = bin_dir(&[], &["uname", "id", "date"]);
    let run = run_task(&dash_with_path(&dir), "facts.sh", json!({}), &[]);
    run.error("ferry/facts-no-awk");
}

/// In a target's long-lived shell ferry reads a task that cannot tell the
/// difference into its wrapper's subshell instead of starting a new shell:
/// one process less before every apply. The facts task must stay so (its
/// awk reads stdin with getline, never through field variables).
#[test]
fn facts_task_is_read_into_the_wrapper_shell() {
    let bytes = std::fs::read(repo().join("tasks/facts.sh")).unwrap();
    assert!(ferry::task::wrapper::sourceable(&bytes));
}
