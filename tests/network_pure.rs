//! The network transport's pure parts as data, no device: each
//! `tests/network/cli/NAME.raw` holds the bytes a real device (FRR's vtysh
//! on a PTY) sent back after one command was written, and `NAME.expected`
//! what ferry must make of them. Each case is one test, `cli::NAME`.
//!
//! Configuration diffs likewise: `tests/network/config/NAME.running` (a
//! device's `show running-config`), `NAME.desired` (the configuration a
//! user wants) and `NAME.expected`: the diff as ferry prints it, a `---`
//! line, and the CLI lines that push it. Each is one test, `config::NAME`.
//!
//! Device facts: `tests/network/facts/NAME.show_version` (and, where the
//! platform reads it, `NAME.show_interface_brief`), real command output,
//! next to `NAME.expected.json`, the facts (its `platform` names the
//! platform). Each is one test, `facts::NAME`.
//!
//! Platforms' tables (IOS, EOS, Junos, FRR, generic: prompts, banners,
//! shells, pagers, error lines), from the vendors' documented sessions:
//! `tests/network/prompts/PLATFORM.prompts`, one line per text a device
//! prints last, `"TEXT" => KIND` (`user|privileged|config HOST [CONTEXT]`,
//! `password`, `pager`, `shell`, `banner` or `none`), each text exactly one
//! kind; `tests/network/errors/PLATFORM.errors`, `MODE "LINE" => error|ok`.
//! Each file is one test, `prompts::PLATFORM` and `errors::PLATFORM`; `#`
//! lines are comments.
//!
//! Device resources: `tests/network/resources/NAME.json`, one resource
//! (`{platform, type, title, params, running}`: `running` is the device's
//! configuration text), next to `NAME.expected`: the change as ferry
//! prints it, a `---` line and the CLI lines that push it; or `error: MSG`,
//! the resource's error. Each is one test, `resources::NAME`.
//!
//! Configuration sessions: `tests/network/sessions/NAME.session` replays a
//! device's side of a whole `device configure` (written from the vendor's
//! documented CLI sessions): a header (`platform`, `host`, `job: configure`
//! with `--noop`/`--save`, `outcome: ok|failed`, `message:` the first line
//! of the result's output or error), a `---` line, then each command ferry
//! must send, in order, as a `>>> COMMAND` line followed by the device's
//! reply (its last line the prompt). `NAME.desired` is the desired
//! configuration. Each is one test, `sessions::NAME`: ferry must send
//! exactly those commands and end with that outcome.
//!
//! Device catalogs: `tests/network/catalogs/NAME.pp`, a manifest compiled
//! for a device (the device types built in; `NAME.modules/` is the
//! modulepath when there is one), next to `NAME.expected`: one line per
//! device resource, `Type[title] {parameters}`, or `error: MSG` (the
//! compile error, the manifest named by its file name). Each is one test,
//! `catalogs::NAME`.
//!
//! An expected file:
//!
//! ```text
//! platform: frr
//! host: r1                   (optional, r1 by default: the prompt's host)
//! command: show foo          (as sent, leading spaces kept)
//! mode: privileged           (where the command was entered)
//! prompt: privileged         (the mode of the prompt that ended it)
//! error: % Unknown command: show foo   (optional: the error ferry reports)
//! sent-as: configure         (optional: the platform table's command this
//!                             is: paging-off, enable, configure, end,
//!                             exit-block, commit, discard, save,
//!                             show-running)
//! ---
//! the output, echo and prompt stripped
//! ```

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

use ferry::run::result::{Outcome, Output};
use ferry::transport::TransportError;
use ferry::transport::network::cli::{self, Dialect, Mode, Platform};
use ferry::transport::network::session::Answer;
use ferry::transport::network::{DeviceCli, config, facts, resources};

fn dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/network")
        .join(kind)
}

/// The case files of `kind` with extension `ext`, by name.
fn cases(kind: &str, ext: &str) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir(kind))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == ext))
                .filter_map(|p| Some((p.file_stem()?.to_str()?.to_string(), p)))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

fn mode(text: &str) -> Result<Mode, Failed> {
    match text {
        "user" => Ok(Mode::User),
        "privileged" => Ok(Mode::Privileged),
        "config" => Ok(Mode::Config),
        other => Err(format!("unknown mode '{other}'").into()),
    }
}

/// A case passes when it found no problems.
fn verdict(problems: Vec<String>) -> Result<(), Failed> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// The text of `path` with its extension made `ext`.
fn sibling(path: &Path, ext: &str) -> Result<String, Failed> {
    let p = path.with_extension(ext);
    std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()).into())
}

/// A case file: `name: value` header lines, a `---` line, the body.
struct Headed<'a> {
    header: &'a str,
    body: &'a str,
}

impl<'a> Headed<'a> {
    fn split(text: &'a str) -> Result<Headed<'a>, Failed> {
        let (header, body) = text
            .split_once("---\n")
            .ok_or("the case file has no --- line")?;
        Ok(Headed { header, body })
    }

    fn field(&self, name: &str) -> Option<&'a str> {
        self.header
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
    }

    fn platform(&self) -> Result<Platform, Failed> {
        self.field("platform")
            .ok_or("no platform")?
            .parse()
            .map_err(|e| Failed::from(format!("{e}")))
    }
}

fn cli_case(raw_path: &Path) -> Result<(), Failed> {
    let raw = std::fs::read(raw_path).map_err(|e| format!("{e}"))?;
    let expected = sibling(raw_path, "expected")?;
    let case = Headed::split(&expected)?;
    let output = case.body;
    let field = |name: &str| case.field(name);
    let platform = case.platform()?;
    let command = field("command").ok_or("no command")?;
    let entered = mode(field("mode").ok_or("no mode")?)?;
    let prompt = mode(field("prompt").ok_or("no prompt")?)?;
    let host = field("host").unwrap_or("r1");
    let dialect = Dialect::new(platform, None);
    // Every byte but the last few is still "more to come".
    for cut in [raw.len() / 3, raw.len().saturating_sub(3)] {
        if let Some(early) = cli::reply(&dialect, command, &raw[..cut], Some(host)) {
            return Err(format!("a reply after {cut} of {} bytes: {early:?}", raw.len()).into());
        }
    }
    let reply = cli::reply(&dialect, command, &raw, Some(host)).ok_or("no prompt at the end")?;
    let mut problems = Vec::new();
    if reply.prompt.mode != prompt {
        problems.push(format!(
            "prompt mode {} (expected {prompt})",
            reply.prompt.mode
        ));
    }
    let want_output = output.strip_suffix('\n').unwrap_or(output);
    if reply.output != want_output {
        problems.push(format!(
            "output:\n{}\n--- expected:\n{want_output}",
            reply.output
        ));
    }
    let error = dialect.error(&reply.output, entered);
    if error.as_deref() != field("error") {
        problems.push(format!("error {error:?} (expected {:?})", field("error")));
    }
    if let Some(role) = field("sent-as") {
        let profile = dialect.profile();
        let table: Vec<&str> = match role {
            "paging-off" => profile.paging_off.to_vec(),
            "enable" => profile.enable.into_iter().collect(),
            "configure" => vec![profile.configure],
            "end" => vec![profile.end],
            "exit-block" => vec![profile.exit_block],
            "commit" => profile.commit.into_iter().collect(),
            "save" => profile.save.into_iter().collect(),
            "discard" => profile.discard.into_iter().collect(),
            "show-running" => vec![profile.show_running],
            other => return Err(format!("unknown sent-as '{other}'").into()),
        };
        if !table.contains(&command) {
            problems.push(format!(
                "{platform}'s {role} is {table:?}, the transcript's command is '{command}'"
            ));
        }
    }
    verdict(problems)
}

fn config_case(running_path: &Path) -> Result<(), Failed> {
    let read = |ext: &str| {
        let p = running_path.with_extension(ext);
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    };
    let (running, desired, expected) = (read("running")?, read("desired")?, read("expected")?);
    let (want_diff, want_commands) = expected
        .split_once("---\n")
        .ok_or("the expected file has no --- line")?;
    let change = config::diff(&config::parse(&running), &config::parse(&desired));
    let mut problems = Vec::new();
    if change.to_string() != want_diff {
        problems.push(format!("diff:\n{change}--- expected:\n{want_diff}"));
    }
    let commands: String = change
        .commands()
        .iter()
        .map(|c| format!("{}\n", c.text))
        .collect();
    if commands != want_commands {
        problems.push(format!(
            "commands:\n{commands}--- expected:\n{want_commands}"
        ));
    }
    // A configuration lacks nothing of itself: a second run changes nothing.
    let parsed = config::parse(&desired);
    let itself = config::diff(&parsed, &parsed);
    if !itself.is_empty() {
        problems.push(format!("the desired text lacks part of itself:\n{itself}"));
    }
    verdict(problems)
}

fn facts_case(version_path: &Path) -> Result<(), Failed> {
    let read = |ext: &str| std::fs::read_to_string(version_path.with_extension(ext)).ok();
    let expected: serde_json::Value =
        serde_json::from_str(&read("expected.json").ok_or("no NAME.expected.json")?)
            .map_err(|e| format!("NAME.expected.json: {e}"))?;
    let platform: Platform = expected["platform"]
        .as_str()
        .ok_or("no platform")?
        .parse()
        .map_err(|e| format!("{e}"))?;
    let outputs: Vec<String> = ["show_version", "show_interface_brief"]
        .iter()
        .map_while(|ext| read(ext))
        .collect();
    let got = serde_json::to_value(facts::parse(platform, &outputs)).map_err(|e| format!("{e}"))?;
    if got == expected {
        Ok(())
    } else {
        Err(format!("got:\n{got:#}\nexpected:\n{expected:#}").into())
    }
}

/// The lines of a table file that are not comments or blank.
fn table_lines(path: &Path) -> Result<Vec<String>, Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}

/// `"TEXT" => REST` as (TEXT, REST); TEXT is a JSON string.
fn quoted(line: &str) -> Result<(String, String), Failed> {
    let (text, rest) = line
        .rsplit_once(" => ")
        .ok_or_else(|| format!("no ' => ' in: {line}"))?;
    let text: String = serde_json::from_str(text.trim_start())
        .map_err(|e| format!("not a JSON string ({e}): {text}"))?;
    Ok((text, rest.trim().to_string()))
}

fn platform_of(path: &Path) -> Result<Platform, Failed> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem.parse::<Platform>()
        .map_err(|e| Failed::from(format!("{e}")))
}

fn prompts_case(path: &Path) -> Result<(), Failed> {
    let dialect = Dialect::new(platform_of(path)?, None);
    let mut problems = Vec::new();
    for line in table_lines(path)? {
        let (text, want) = quoted(&line)?;
        let mut kinds = Vec::new();
        if let Some(p) = dialect.prompt(&text, None) {
            let mut kind = format!("{} {}", p.mode, p.host);
            if let Some(c) = p.context {
                kind = format!("{kind} {c}");
            }
            kinds.push(kind);
        }
        for (name, is) in [
            ("password", dialect.is_password_prompt(&text)),
            ("pager", dialect.is_pager(&text)),
            ("shell", dialect.is_shell_prompt(&text)),
            ("banner", dialect.profile().is_banner(&text)),
        ] {
            if is {
                kinds.push(name.to_string());
            }
        }
        let got = match kinds.as_slice() {
            [] => "none".to_string(),
            [one] => one.clone(),
            many => format!("several: {}", many.join(", ")),
        };
        if got != want {
            problems.push(format!("{text:?}: {got} (expected {want})"));
        }
    }
    verdict(problems)
}

fn errors_case(path: &Path) -> Result<(), Failed> {
    let dialect = Dialect::new(platform_of(path)?, None);
    let mut problems = Vec::new();
    for line in table_lines(path)? {
        let (entered, rest) = line
            .split_once(' ')
            .ok_or_else(|| format!("no mode in: {line}"))?;
        let (text, want) = quoted(rest)?;
        let got = match dialect.error(&text, mode(entered)?) {
            Some(_) => "error",
            None => "ok",
        };
        if got != want {
            problems.push(format!("{entered} {text:?}: {got} (expected {want})"));
        }
    }
    verdict(problems)
}

fn resource_case(json_path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(json_path).map_err(|e| format!("{e}"))?;
    let case: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json_path.display()))?;
    let expected_path = json_path.with_extension("expected");
    let expected = std::fs::read_to_string(&expected_path)
        .map_err(|e| format!("{}: {e}", expected_path.display()))?;
    let field = |k: &str| case[k].as_str().unwrap_or_default().to_string();
    let platform: Platform = field("platform").parse().map_err(|e| format!("{e}"))?;
    let params = case["params"].as_object().cloned().unwrap_or_default();
    let running = config::parse(&field("running"));
    let got = match resources::desired(&field("type"), &field("title"), &params, platform) {
        Err(e) => format!("error: {e}\n"),
        Ok(desired) => {
            let change = resources::change(&running, &desired);
            let commands: String = change
                .commands()
                .iter()
                .map(|c| format!("{}\n", c.text))
                .collect();
            format!("{change}---\n{commands}")
        }
    };
    if got == expected {
        Ok(())
    } else {
        Err(format!("got:\n{got}--- expected:\n{expected}").into())
    }
}

/// A device that answers from a transcript: each command ferry sends must
/// be the next one the transcript holds.
struct Replay {
    dialect: Dialect,
    host: String,
    /// What is left: (command, the device's reply with its prompt last).
    exchanges: std::sync::Mutex<std::collections::VecDeque<(String, String)>>,
    mode: std::sync::Mutex<Mode>,
}

#[async_trait::async_trait]
impl DeviceCli for Replay {
    async fn exec(&self, line: &str) -> Result<Answer, TransportError> {
        let next = self
            .exchanges
            .lock()
            .map_err(|_| fail("poisoned"))?
            .pop_front();
        let Some((command, reply)) = next else {
            return Err(fail(&format!(
                "ferry sent '{line}' after the transcript's end"
            )));
        };
        if command != line {
            return Err(fail(&format!(
                "ferry sent '{line}'; the transcript expects '{command}'"
            )));
        }
        let raw = format!("{line} \r\n{}", reply.replace('\n', "\r\n"));
        let got = cli::reply(&self.dialect, line, raw.as_bytes(), Some(&self.host))
            .ok_or_else(|| fail(&format!("the reply to '{line}' ends with no prompt")))?;
        let mut mode = self.mode.lock().map_err(|_| fail("poisoned"))?;
        let error = self.dialect.error(&got.output, *mode);
        *mode = got.prompt.mode;
        Ok(Answer {
            output: got.output,
            error,
            prompt: got.prompt,
        })
    }

    fn cli_dialect(&self) -> Dialect {
        self.dialect.clone()
    }
}

fn fail(why: &str) -> TransportError {
    TransportError::Command(why.to_string())
}

fn session_case(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{e}"))?;
    let desired = sibling(path, "desired")?;
    let case = Headed::split(&text)?;
    let script = case.body;
    let field = |name: &str| case.field(name);
    let platform = case.platform()?;
    let job = field("job").ok_or("no job")?;
    let mut exchanges = std::collections::VecDeque::new();
    for chunk in script.split(">>> ").filter(|c| !c.is_empty()) {
        let (command, reply) = chunk.split_once('\n').ok_or("a command with no reply")?;
        // The prompt is the reply's last, unfinished line.
        let reply = reply.strip_suffix('\n').unwrap_or(reply);
        exchanges.push_back((command.to_string(), reply.to_string()));
    }
    let replay = Replay {
        dialect: Dialect::new(platform, None),
        host: field("host").unwrap_or("r1").to_string(),
        exchanges: std::sync::Mutex::new(exchanges),
        mode: std::sync::Mutex::new(Mode::Privileged),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("{e}"))?;
    let outcome = runtime
        .block_on(ferry::run::actions::device::configure(
            &replay,
            &desired,
            job.contains("--noop"),
            job.contains("--save"),
        ))
        .map_err(|e| format!("{e}"))?;
    let (got, value) = match &outcome {
        Outcome::Ok(Output::Task(v)) => ("ok", v["_output"].clone()),
        Outcome::Failed(Output::Task(v)) => ("failed", v["_error"]["msg"].clone()),
        other => return Err(format!("an outcome of another kind: {other:?}").into()),
    };
    let message = value.as_str().unwrap_or_default();
    let mut problems = Vec::new();
    if Some(got) != field("outcome") {
        problems.push(format!(
            "outcome {got} (expected {:?}): {message}",
            field("outcome")
        ));
    }
    let first = message.lines().next().unwrap_or_default();
    if Some(first) != field("message") {
        problems.push(format!(
            "message '{first}' (expected {:?})",
            field("message")
        ));
    }
    let left: Vec<String> = replay
        .exchanges
        .lock()
        .map_err(|_| "poisoned")?
        .iter()
        .map(|(c, _)| c.clone())
        .collect();
    if !left.is_empty() {
        problems.push(format!("never sent: {left:?}"));
    }
    verdict(problems)
}

fn catalog_case(pp: &Path) -> Result<(), Failed> {
    let expected = sibling(pp, "expected")?;
    let modules = pp.with_extension("modules");
    let request = ferry::catalog::CompileRequest {
        manifest: ferry::catalog::ManifestSource::File(pp.to_path_buf()),
        modulepath: ferry::catalog::Modulepath::new(
            modules.is_dir().then_some(modules).into_iter().collect(),
        ),
        facts: serde_json::Map::new(),
        node: "r1".into(),
        environment: None,
    };
    let options = ferry::catalog::CompileOptions {
        device_types: true,
        ..Default::default()
    };
    let got = match ferry::catalog::compile_with_options(
        &request,
        &ferry::lang::loader::FsLoader,
        &options,
    ) {
        Err(e) => {
            let name = pp.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            format!(
                "error: {}\n",
                e.to_string().replace(&pp.display().to_string(), name)
            )
        }
        Ok(catalog) => catalog
            .resources
            .iter()
            .filter(|r| !matches!(r.type_name.as_str(), "Stage" | "Class"))
            .map(|r| {
                format!(
                    "{}[{}] {}\n",
                    r.type_name,
                    r.title,
                    serde_json::Value::Object(r.parameters.clone())
                )
            })
            .collect(),
    };
    if got == expected {
        Ok(())
    } else {
        Err(format!("got:\n{got}--- expected:\n{expected}").into())
    }
}

/// How one case of a kind runs.
type Case = fn(&Path) -> Result<(), Failed>;

fn main() {
    let args = Arguments::from_args();
    // (kind, the extension that makes a case, how a case runs)
    let kinds: [(&str, &str, Case); 8] = [
        ("cli", "raw", cli_case),
        ("config", "running", config_case),
        ("facts", "show_version", facts_case),
        ("prompts", "prompts", prompts_case),
        ("errors", "errors", errors_case),
        ("resources", "json", resource_case),
        ("catalogs", "pp", catalog_case),
        ("sessions", "session", session_case),
    ];
    let mut trials = Vec::new();
    for (kind, ext, run) in kinds {
        for (name, path) in cases(kind, ext) {
            trials.push(Trial::test(format!("{kind}::{name}"), move || run(&path)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
