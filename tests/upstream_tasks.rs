//! Task modules as their authors publish them, run unchanged by the real
//! `ferry` binary on the shared sshd: Puppet's puppetlabs-facts, -package,
//! -service, -puppet_agent and -exec, and the fixture modules of Bolt's own
//! spec suite (puppetlabs/bolt, `spec/fixtures/modules`).
//!
//! Nothing of theirs is in this repository. At test time each module is
//! exported (`git archive HEAD`) from its git mirror under `/work/.mirror`
//! (the `fetch` tool's; `FERRY_MIRRORS` names another folder holding
//! `<owner>+<name>/repo`) into a scratch modulepath. When a mirror is
//! absent, the tests that need it are listed as ignored, their names saying
//! which `fetch github:OWNER/NAME` brings it: never a silent pass.
//!
//! Every test checks the shape of what Bolt's docs and spec say the task
//! returns: `facts` gives `os.family`; `package` the state of an installed
//! package; `service` a status or the task's own error; `exec` a command's
//! output; and every task metadata of every module loads (`task show`), as
//! Bolt's loader reads it, or fails as Bolt's spec says it must.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use common::ferry::{Run, Scratch, key_line, one_target};
use common::sshd::{self, KeyType, client_keys};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

/// The Puppet task modules, and the helper module facts' Ruby
/// implementation names a file of: (repository, module name).
const PUPPET_MODULES: [(&str, &str); 6] = [
    ("puppetlabs/puppetlabs-facts", "facts"),
    ("puppetlabs/puppetlabs-ruby_task_helper", "ruby_task_helper"),
    ("puppetlabs/puppetlabs-package", "package"),
    ("puppetlabs/puppetlabs-service", "service"),
    ("puppetlabs/puppetlabs-puppet_agent", "puppet_agent"),
    ("puppetlabs/puppetlabs-exec", "exec"),
];

/// Bolt's repository and the folder of its fixture modules.
const BOLT: &str = "puppetlabs/bolt";
const BOLT_FIXTURES: &str = "spec/fixtures/modules";

fn mirrors() -> PathBuf {
    std::env::var_os("FERRY_MIRRORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/.mirror"))
}

/// The bare git dir of a repository's mirror, when there is one.
fn mirror(repo: &str) -> Option<PathBuf> {
    let dir = mirrors().join(repo.replace('/', "+")).join("repo");
    dir.join("HEAD").is_file().then_some(dir)
}

/// Writes `git archive HEAD [folder]` of `git_dir` into `dest`, dropping
/// the folder's own path components.
fn export(git_dir: &Path, folder: Option<&str>, dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let mut git = Command::new("git");
    git.arg("--git-dir")
        .arg(git_dir)
        .args(["archive", "--format=tar", "HEAD"]);
    if let Some(f) = folder {
        git.arg(f);
    }
    let mut git = git
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git archive: {e}"))?;
    let strip = folder.map_or(0, |f| f.split('/').count());
    let tar = Command::new("tar")
        .arg("-x")
        .arg(format!("--strip-components={strip}"))
        .arg("-C")
        .arg(dest)
        .stdin(git.stdout.take().ok_or("no git stdout")?)
        .output()
        .map_err(|e| format!("tar: {e}"))?;
    let git = git.wait().map_err(|e| format!("git archive: {e}"))?;
    if !git.success() || !tar.status.success() {
        return Err(format!(
            "exporting {}: git {git}, tar {}: {}",
            git_dir.display(),
            tar.status,
            String::from_utf8_lossy(&tar.stderr)
        ));
    }
    Ok(())
}

/// Scratch modulepaths, made once per test process: the Puppet modules
/// whose mirrors are here side by side, and Bolt's fixture modules.
struct Modulepaths {
    _dir: tempfile::TempDir,
    puppet: PathBuf,
    bolt: PathBuf,
}

fn modulepaths() -> Result<&'static Modulepaths, Failed> {
    static PATHS: OnceLock<Result<Modulepaths, String>> = OnceLock::new();
    PATHS
        .get_or_init(|| {
            let dir = tempfile::Builder::new()
                .prefix("ferry-upstream-")
                .tempdir()
                .map_err(|e| e.to_string())?;
            let puppet = dir.path().join("puppet");
            let bolt = dir.path().join("bolt");
            std::fs::create_dir_all(&puppet).map_err(|e| e.to_string())?;
            for (repo, module) in PUPPET_MODULES {
                if let Some(git) = mirror(repo) {
                    export(&git, None, &puppet.join(module))?;
                }
            }
            if let Some(git) = mirror(BOLT) {
                export(&git, Some(BOLT_FIXTURES), &bolt)?;
            }
            Ok(Modulepaths {
                _dir: dir,
                puppet,
                bolt,
            })
        })
        .as_ref()
        .map_err(|e| Failed::from(e.clone()))
}

/// A scratch dir with an inventory of the shared sshd (as root, with a
/// task cache of its own).
fn target() -> (Scratch, PathBuf) {
    let s = Scratch::new();
    let extra = format!(
        "{}        cache-dir: {}\n",
        key_line(&client_keys().path(KeyType::Ed25519)),
        s.path().join("cache").display()
    );
    let inv = s.inventory(&one_target(sshd::shared(), "t", "root", &extra));
    (s, inv)
}

/// `ferry task run NAME PARAMS -t t` on `modulepath`, JSON output.
fn run_task(modulepath: &Path, name: &str, params: &[&str], more: &[&str]) -> Run {
    let (s, inv) = target();
    let mp = modulepath.display().to_string();
    let inv = inv.display().to_string();
    let mut args = vec!["task", "run", name];
    args.extend(params);
    args.extend([
        "-t",
        "t",
        "-i",
        &inv,
        "--modulepath",
        &mp,
        "--format",
        "json",
    ]);
    args.extend(more);
    s.ferry(&args)
}

/// The only result of a run, with the run shown on failure.
fn only(run: &Run) -> Result<Value, Failed> {
    let doc: Value = serde_json::from_str(&run.stdout)
        .map_err(|e| format!("stdout is not JSON ({e}): {run:?}"))?;
    match doc["items"].as_array().map(Vec::as_slice) {
        Some([item]) => Ok(item.clone()),
        _ => Err(format!("want one result item: {run:?}").into()),
    }
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(what().into()) }
}

/// The task names a module's `tasks` folder holds, as Bolt names them.
fn task_names(module_dir: &Path) -> Vec<String> {
    let module = module_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut names: Vec<String> = std::fs::read_dir(module_dir.join("tasks"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            let stem = file.split('.').next()?.to_string();
            (!file.ends_with(".md") && !stem.is_empty()).then(|| {
                if stem == "init" {
                    module.clone()
                } else {
                    format!("{module}::{stem}")
                }
            })
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// `task show NAME --format json` for every task of `modules`; `expected`
/// lists the tasks that must fail, with a part of their error.
fn every_task_loads(
    modulepath: &Path,
    modules: &[&str],
    expected: &[(&str, &str)],
) -> Result<(), Failed> {
    let s = Scratch::new();
    let mp = modulepath.display().to_string();
    let mut problems = Vec::new();
    let mut shown = 0;
    for module in modules {
        for name in task_names(&modulepath.join(module)) {
            let run = s.ferry(&[
                "task",
                "show",
                &name,
                "--modulepath",
                &mp,
                "--format",
                "json",
            ]);
            match expected.iter().find(|(n, _)| *n == name) {
                Some((_, want)) => {
                    if run.code == 0 || !run.stderr.contains(want) {
                        problems.push(format!("{name} should fail with {want:?}: {run:?}"));
                    }
                }
                None => {
                    let doc: Option<Value> = serde_json::from_str(&run.stdout).ok();
                    if run.code != 0
                        || doc.as_ref().map(|d| &d["name"]) != Some(&name.clone().into())
                    {
                        problems.push(format!("{name}: {run:?}"));
                    }
                }
            }
            shown += 1;
        }
    }
    ensure(shown > 0, || format!("no tasks found in {modules:?}"))?;
    ensure(problems.is_empty(), || problems.join("\n"))
}

fn facts_gathers_os_facts() -> Result<(), Failed> {
    let run = run_task(&modulepaths()?.puppet, "facts", &[], &[]);
    let item = only(&run)?;
    ensure(item["status"] == "success", || format!("{run:?}"))?;
    ensure(item["object"] == "facts", || format!("object: {run:?}"))?;
    let v = &item["value"];
    ensure(v["os"]["family"].is_string(), || {
        format!("os.family: {run:?}")
    })?;
    ensure(v["os"]["name"].is_string(), || format!("os.name: {run:?}"))
}

fn package_status_of_an_installed_package() -> Result<(), Failed> {
    let run = run_task(
        &modulepaths()?.puppet,
        "package",
        &["action=status", "name=bash"],
        &[],
    );
    let item = only(&run)?;
    ensure(item["status"] == "success", || format!("{run:?}"))?;
    let v = &item["value"];
    ensure(v["status"] == "installed", || format!("status: {run:?}"))?;
    ensure(v["version"].as_str().is_some_and(|s| !s.is_empty()), || {
        format!("version: {run:?}")
    })?;
    // The linux implementation's files came from the module's files folder.
    let run = run_task(
        &modulepaths()?.puppet,
        "package",
        &["action=status", "name=ferry-no-such-package"],
        &[],
    );
    let v = only(&run)?["value"].clone();
    ensure(v["status"] == "uninstalled", || format!("{run:?}"))
}

fn service_status_or_its_own_error() -> Result<(), Failed> {
    let run = run_task(
        &modulepaths()?.puppet,
        "service",
        &["action=status", "name=cron"],
        &[],
    );
    let item = only(&run)?;
    let v = &item["value"];
    // Where no service manager answers (a container), the task reports its
    // own error; either way the linux implementation ran with its files.
    let status_shape = item["status"] == "success" && v["status"].is_string();
    let error_shape = item["status"] == "failure"
        && v["_error"]["msg"].is_string()
        && v["_error"]["kind"].is_string();
    ensure(status_shape || error_shape, || format!("{run:?}"))?;
    ensure(!run.stdout.contains("common.sh: No such file"), || {
        format!("common.sh was not sent: {run:?}")
    })
}

fn exec_runs_a_command() -> Result<(), Failed> {
    let mp = &modulepaths()?.puppet;
    let run = run_task(mp, "exec", &["command=echo upstream exec"], &[]);
    let item = only(&run)?;
    ensure(item["status"] == "success", || format!("{run:?}"))?;
    ensure(item["value"]["_output"] == "upstream exec\n", || {
        format!("{run:?}")
    })?;
    // A failing command: the task's own error, kept as it wrote it.
    let run = run_task(mp, "exec", &["command=exit 3"], &[]);
    let item = only(&run)?;
    ensure(item["status"] == "failure", || format!("{run:?}"))?;
    ensure(
        item["value"]["_error"]["kind"] == "puppetlabs.tasks/task-error",
        || format!("{run:?}"),
    )
}

fn puppet_agent_version() -> Result<(), Failed> {
    let run = run_task(&modulepaths()?.puppet, "puppet_agent::version", &[], &[]);
    let item = only(&run)?;
    ensure(item["status"] == "success", || format!("{run:?}"))?;
    let v = item["value"].as_object().cloned().unwrap_or_default();
    ensure(
        v.contains_key("version") && v.contains_key("source"),
        || format!("{run:?}"),
    )
}

/// install_shell types its password `Optional[Sensitive[String[1]]]`: a
/// plain JSON value passes the check (kept secret) and the run goes on to
/// connect (here to a port nothing listens on, so nothing is installed).
fn puppet_agent_sensitive_typed_parameter() -> Result<(), Failed> {
    let s = Scratch::new();
    let inv = s.inventory("targets: ['127.0.0.1:1']\n");
    let mp = modulepaths()?.puppet.display().to_string();
    let inv = inv.display().to_string();
    let run = s.ferry(&[
        "task",
        "run",
        "puppet_agent::install_shell",
        "password=not-shown-9",
        "username=u",
        "-t",
        "all",
        "-i",
        &inv,
        "--modulepath",
        &mp,
        "--format",
        "json",
    ]);
    ensure(run.code == 2, || format!("{run:?}"))?;
    let item = only(&run)?;
    ensure(
        item["value"]["_error"]["issue_code"] == "CONNECT_ERROR",
        || format!("{run:?}"),
    )?;
    ensure(!run.all_text().contains("not-shown-9"), || {
        format!("{run:?}")
    })
}

/// Bolt's spec: the shareable task gets its own file, a folder of another
/// module's `lib` and a file of a third module's `tasks`.
fn bolt_shareable_task_gets_files_from_other_modules() -> Result<(), Failed> {
    let mp = &modulepaths()?.bolt;
    let run = run_task(mp, "shareable", &[], &[]);
    let item = only(&run)?;
    ensure(item["status"] == "success", || format!("{run:?}"))?;
    let out = item["value"]["_output"].as_str().unwrap_or_default();
    let mut lines: Vec<&str> = out.lines().map(str::trim).collect();
    lines.sort();
    ensure(lines.len() == 4, || format!("four files: {run:?}"))?;
    for (i, rel) in [
        "shareable/tasks/unknown_file.json",
        "shareable/tasks/list.sh",
        "results/lib/puppet/functions/results/make_result.rb",
        "error/tasks/fail.sh",
    ]
    .iter()
    .enumerate()
    {
        let size = std::fs::metadata(mp.join(rel))
            .map(|m| m.len())
            .unwrap_or(0);
        let line = lines
            .iter()
            .find(|l| l.ends_with(&format!("/{rel}")))
            .copied();
        ensure(
            line.is_some_and(|l| l.starts_with(&format!("{size} "))),
            || format!("file {i} ({rel}, {size} bytes) in {lines:?}"),
        )?;
    }
    Ok(())
}

/// Results of Bolt's fixture tasks as Bolt's spec (ssh_spec, cli_spec)
/// and lib/bolt/result.rb show them.
fn bolt_fixture_results_as_bolts_spec_shows_them() -> Result<(), Failed> {
    let mp = &modulepaths()?.bolt;
    let run = run_task(mp, "results", &["fail=true"], &[]);
    let item = only(&run)?;
    ensure(item["object"] == "results", || format!("{run:?}"))?;
    let e = &item["value"]["_error"];
    ensure(
        e["kind"] == "puppetlabs.tasks/task-error"
            && e["issue_code"] == "TASK_ERROR"
            && e["msg"] == "The task failed with exit code 1 and no output",
        || format!("{run:?}"),
    )?;
    let run = run_task(mp, "error::fail", &[], &[]);
    let v = only(&run)?["value"].clone();
    ensure(
        v["_error"]["issue_code"] == "TASK_ERROR"
            && v["_output"].as_str().is_some_and(|o| o.contains("failing")),
        || format!("{run:?}"),
    )?;
    let run = run_task(mp, "sample::noop", &["message=somemessage"], &["--noop"]);
    let v = only(&run)?["value"].clone();
    ensure(
        v["_output"].as_str().map(str::trim) == Some("somemessage with noop true"),
        || format!("{run:?}"),
    )?;
    let run = run_task(mp, "sample::noop", &["message=somemessage"], &[]);
    let v = only(&run)?["value"].clone();
    ensure(
        v["_output"].as_str().map(str::trim) == Some("somemessage with noop"),
        || format!("{run:?}"),
    )?;
    let run = run_task(
        mp,
        "sample::sensitive_task_output",
        &["include_sensitive=true"],
        &[],
    );
    let v = only(&run)?["value"].clone();
    ensure(
        v["_sensitive"] == "Sensitive [value redacted]" && v["user"] == "someone",
        || format!("{run:?}"),
    )?;
    ensure(!run.stdout.contains("secretpassword"), || {
        format!("{run:?}")
    })?;
    // identity's init.json: implementations only, input on stdin.
    let run = run_task(mp, "identity", &["word=echoed"], &[]);
    let item = only(&run)?;
    ensure(
        item["object"] == "identity" && item["value"]["word"] == "echoed",
        || format!("{run:?}"),
    )
}

/// Bolt's spec for the shareable tasks whose files are wrong; and `list`,
/// two executables and no metadata to choose between them.
const BOLT_FIXTURE_FAILURES: [(&str, &str); 6] = [
    ("shareable::list", "several executables were found"),
    ("shareable::unknown_file", "shareable/lib/nope on disk"),
    (
        "shareable::unknown_module",
        "could not find module not_a_module containing task file meh",
    ),
    ("shareable::invalid_path", "files, lib, scripts, tasks"),
    (
        "shareable::not_a_directory",
        "results/lib/puppet/functions/results/make_result.rb/ on disk",
    ),
    (
        "shareable::not_a_file",
        "must end in '/': results/lib/puppet",
    ),
];

fn bolt_every_fixture_task_loads() -> Result<(), Failed> {
    let mp = &modulepaths()?.bolt;
    let mut modules: Vec<String> = std::fs::read_dir(mp)
        .map_err(|e| e.to_string())?
        .flatten()
        .filter(|e| e.path().join("tasks").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    modules.sort();
    let modules: Vec<&str> = modules.iter().map(String::as_str).collect();
    every_task_loads(mp, &modules, &BOLT_FIXTURE_FAILURES)
}

/// One test: its name, the repositories it needs, and its body.
type Body = fn() -> Result<(), Failed>;

fn trial(name: &str, needs: &[&str], body: Body) -> Trial {
    let missing: Vec<&&str> = needs.iter().filter(|r| mirror(r).is_none()).collect();
    if missing.is_empty() {
        return Trial::test(name, body);
    }
    let fetches: Vec<String> = missing
        .iter()
        .map(|r| format!("fetch github:{r}"))
        .collect();
    let needs = format!("needs `{}`", fetches.join("`, `"));
    let why = format!("no mirror under {}: {needs}", mirrors().display());
    // Run anyway (--include-ignored), it fails saying what is missing.
    Trial::test(format!("{name} ({needs})"), move || Err(why.into())).with_ignored_flag(true)
}

fn main() {
    let args = Arguments::from_args();
    let repo = |module: &str| {
        PUPPET_MODULES
            .iter()
            .find(|(_, m)| *m == module)
            .map(|(r, _)| *r)
            .unwrap_or_default()
    };
    let mut trials = vec![
        trial(
            "facts::init_gathers_os_facts",
            &[repo("facts")],
            facts_gathers_os_facts,
        ),
        trial(
            "package::status_of_installed_and_absent_packages",
            &[repo("package")],
            package_status_of_an_installed_package,
        ),
        trial(
            "service::status_or_the_tasks_own_error",
            &[repo("service")],
            service_status_or_its_own_error,
        ),
        trial("exec::runs_a_command", &[repo("exec")], exec_runs_a_command),
        trial(
            "puppet_agent::version_reports_version_and_source",
            &[repo("puppet_agent")],
            puppet_agent_version,
        ),
        trial(
            "puppet_agent::sensitive_typed_parameter_takes_a_plain_value",
            &[repo("puppet_agent"), repo("facts")],
            puppet_agent_sensitive_typed_parameter,
        ),
        trial(
            "bolt_fixtures::shareable_task_gets_files_from_other_modules",
            &[BOLT],
            bolt_shareable_task_gets_files_from_other_modules,
        ),
        trial(
            "bolt_fixtures::results_as_bolts_spec_shows_them",
            &[BOLT],
            bolt_fixture_results_as_bolts_spec_shows_them,
        ),
        trial(
            "bolt_fixtures::every_task_loads_or_fails_as_bolts_spec_says",
            &[BOLT],
            bolt_every_fixture_task_loads,
        ),
    ];
    // Every task metadata of each Puppet module loads. puppet_agent's
    // install names a file of the facts module.
    let loads: [(&str, &[&str], Body); 5] = [
        ("facts", &[repo("facts"), repo("ruby_task_helper")], || {
            every_task_loads(&modulepaths()?.puppet, &["facts"], &[])
        }),
        ("package", &[repo("package")], || {
            every_task_loads(&modulepaths()?.puppet, &["package"], &[])
        }),
        ("service", &[repo("service")], || {
            every_task_loads(&modulepaths()?.puppet, &["service"], &[])
        }),
        (
            "puppet_agent",
            &[repo("puppet_agent"), repo("facts")],
            || every_task_loads(&modulepaths()?.puppet, &["puppet_agent"], &[]),
        ),
        ("exec", &[repo("exec")], || {
            every_task_loads(&modulepaths()?.puppet, &["exec"], &[])
        }),
    ];
    for (module, needs, body) in loads {
        trials.push(trial(
            &format!("{module}::every_task_metadata_loads"),
            needs,
            body,
        ));
    }
    libtest_mimic::run(&args, trials).exit();
}
