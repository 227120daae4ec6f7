//! Bolt's `run_container` in a `.pp` plan, run by the real `podman` on
//! this machine: an image imported from a busybox root file system (no
//! registry is needed), Bolt's options (`cmd`, `env_vars`, `volumes`,
//! `workdir`, `rm`, `_catch_errors`), the `ContainerResult` (`stdout`,
//! `stderr`, `exit_code`, `to_data`), a failing container as Bolt's
//! `bolt/container-failure`, and a bad option as a validation error.
//! Containers here run with the `runc` runtime and explicit ulimits
//! (`CONTAINERS_CONF`): the sandbox's cgroups and limits refuse podman's
//! defaults.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

const PLAN: &str = r#"plan c::box(String $image, String $dir) {
  $r = run_container($image, { 'cmd' => 'sh -c "echo $FOO; pwd; cat f; echo oops >&2"', 'env_vars' => { 'FOO' => 'a b', 'DATA' => [1, 2] }, 'workdir' => '/data', 'volumes' => { $dir => '/data' }, 'rm' => true })
  $bad = run_container($image, { 'cmd' => 'sh -c "echo no >&2; exit 3"', 'rm' => true, '_catch_errors' => true })
  $raised = catch_errors() || { run_container($image, { 'cmd' => 'false', 'rm' => true }) }
  $invalid = catch_errors() || { run_container($image, { 'cmd' => ['ls'] }) }
  return {
    'ok' => $r.to_data,
    'stdout' => $r.stdout,
    'stderr' => $r.stderr,
    'is_container_result' => $r =~ ContainerResult,
    'bad' => $bad.to_data,
    'bad_ok' => $bad.ok,
    'raised' => [$raised.kind, $raised.message],
    'invalid' => [$invalid.kind, $invalid.message],
  }
}
"#;

fn sh(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A busybox image, imported into podman's store under a name of this run.
fn import_busybox(dir: &Path) -> String {
    let root = dir.join("rootfs");
    std::fs::create_dir_all(root.join("bin")).expect("mkdir");
    std::fs::copy("/bin/busybox", root.join("bin/busybox")).expect("busybox-static");
    for applet in ["sh", "echo", "cat", "pwd", "false", "ls"] {
        std::os::unix::fs::symlink("busybox", root.join("bin").join(applet)).expect("symlink");
    }
    let tar = dir.join("rootfs.tar");
    sh(Command::new("tar")
        .arg("-C")
        .arg(&root)
        .arg("-cf")
        .arg(&tar)
        .arg("."));
    let image = format!("localhost/ferry-test-busybox:{}", std::process::id());
    sh(Command::new("podman").arg("import").arg(&tar).arg(&image));
    image
}

#[test]
fn run_container_with_podman() {
    let dir = tempfile::Builder::new()
        .prefix("ferry-container-")
        .tempdir()
        .expect("temp dir");
    let d = dir.path();
    let image = import_busybox(d);
    let conf = d.join("containers.conf");
    std::fs::write(
        &conf,
        "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1000:1000\"]\n\n[engine]\nruntime = \"runc\"\n",
    )
    .expect("containers.conf");
    let project = d.join("project");
    std::fs::create_dir_all(project.join("modules/c/plans")).expect("mkdir");
    std::fs::write(project.join("bolt-project.yaml"), "name: boxes\n").expect("project");
    std::fs::write(project.join("modules/c/plans/box.pp"), PLAN).expect("plan");
    let data = d.join("data");
    std::fs::create_dir_all(&data).expect("mkdir");
    std::fs::write(data.join("f"), "from the host\n").expect("file");
    let out = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["plan", "run", "c::box", "--format", "json", "--project"])
        .arg(&project)
        .arg(format!("image={image}"))
        .arg(format!("dir={}", data.display()))
        .env("CONTAINERS_CONF", &conf)
        .output()
        .expect("ferry");
    let _ = Command::new("podman").args(["rmi", "-f", &image]).output();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&text).expect("JSON");
    let stdout = "a b\n/data\nfrom the host\n";
    assert_eq!(
        v["ok"],
        json!({"object": image, "status": "success", "value": {"stdout": stdout, "stderr": "oops\n", "exit_code": 0}}),
        "{v}"
    );
    assert_eq!(v["stdout"], stdout);
    assert_eq!(v["stderr"], "oops\n");
    assert_eq!(v["is_container_result"], true);
    assert_eq!(v["bad_ok"], false);
    assert_eq!(
        v["bad"],
        json!({"object": image, "status": "failure", "value": {"_error": {
            "kind": "puppetlabs.tasks/container-error",
            "issue_code": "CONTAINER_ERROR",
            "msg": format!("Error running container '{image}': no\n"),
            "details": {"exit_code": 3},
        }}}),
        "{v}"
    );
    assert_eq!(
        v["raised"],
        json!([
            "bolt/container-failure",
            format!("Running container '{image}' failed.")
        ])
    );
    assert_eq!(
        v["invalid"],
        json!([
            "bolt/validation-error",
            "Option 'cmd' must be a string. Received a Array"
        ])
    );
}
