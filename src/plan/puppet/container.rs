//! Bolt's `run_container(image, options)`: runs a container on this
//! machine with the first of `podman` and `docker` on `PATH`, with Bolt's
//! options (`cmd`, split as a shell would; `env_vars`, handed to the
//! engine through its own environment so values never reach a command
//! line; `ports`, host port to container port; `rm`; `volumes`, host path
//! (made if missing) to container path; `workdir`; `_catch_errors`). Its
//! value is a `ContainerResult` (`stdout`, `stderr`, `exit_code`); a
//! non-zero exit is Bolt's `bolt/container-failure` unless errors are
//! caught, then a failed ContainerResult (`puppetlabs.tasks/container-error`).
//! A stopped plan ends the engine's process.

use std::path::PathBuf;

use super::functions::{arg_error, raise, stopped, want_args};
use super::library::PlanLibrary;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::values::plan::{
    ErrorValue, PlanObject, PlanResult, ResultKind, Target, to_json, value,
};
use crate::lang::values::value::Value;

/// The container engines ferry runs, in the order they are looked for.
const ENGINES: [&str; 2] = ["podman", "docker"];

fn engine() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ENGINES.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// The engine's `run` arguments, and the environment variables (given to
/// the engine's process, named on its command line only by name).
struct Run {
    args: Vec<String>,
    env: Vec<(String, String)>,
    catch_errors: bool,
}

fn options(c: &Call<'_>, image: &str, options: &[(Value, Value)]) -> EvalResult<Run> {
    let mut run = Run {
        args: vec!["run".into()],
        env: Vec::new(),
        catch_errors: false,
    };
    let (mut rm, mut workdir, mut cmd) = (false, None, Vec::new());
    let (mut ports, mut volumes) = (Vec::new(), Vec::new());
    let invalid = |msg: String| raise(c, ErrorValue::new(msg, "bolt/validation-error"));
    for (k, v) in options {
        let key = k.to_s();
        match (key.trim_start_matches('_'), v) {
            ("catch_errors", v) => run.catch_errors = v.truthy(),
            ("rm", v) => rm = v.truthy(),
            ("workdir", Value::Str(s)) => workdir = Some(s.clone()),
            ("cmd", Value::Str(s)) => {
                cmd = shlex::split(s).ok_or_else(|| {
                    invalid(format!("Option 'cmd' cannot be split into words: {s}"))
                })?;
            }
            ("cmd", other) => {
                return Err(invalid(format!(
                    "Option 'cmd' must be a string. Received a {}",
                    other.type_name()
                )));
            }
            ("env_vars", Value::Hash(h)) => {
                for (name, val) in h {
                    let Value::Str(name) = name else {
                        return Err(invalid(format!(
                            "Keys for option 'env_vars' must be strings: {}",
                            name.to_s()
                        )));
                    };
                    let text = match val {
                        Value::Array(_) | Value::Hash(_) => to_json(val).to_string(),
                        Value::Sensitive(inner) => inner.to_s(),
                        other => other.to_s(),
                    };
                    run.env.push((name.clone(), text));
                }
            }
            ("env_vars", other) => {
                return Err(invalid(format!(
                    "Option 'env_vars' must be a hash. Received a {}",
                    other.type_name()
                )));
            }
            ("ports", Value::Hash(h)) => {
                for (host, inside) in h {
                    match (host, inside) {
                        (Value::Int(a), Value::Int(b)) => ports.push(format!("{a}:{b}")),
                        _ => {
                            return Err(invalid(format!(
                                "Option 'ports' only accepts integers for keys and values. Received: {} => {}",
                                host.to_s(),
                                inside.to_s()
                            )));
                        }
                    }
                }
            }
            ("volumes", Value::Hash(h)) => {
                for (host, inside) in h {
                    let (Value::Str(host), Value::Str(inside)) = (host, inside) else {
                        return Err(invalid(format!(
                            "Option 'volumes' only accepts strings for keys and values. Received: {} => {}",
                            host.to_s(),
                            inside.to_s()
                        )));
                    };
                    std::fs::create_dir_all(host).map_err(|e| {
                        raise(
                            c,
                            ErrorValue::new(
                                format!("Unable to create host volume directory {host}: {e}"),
                                "bolt/file-error",
                            ),
                        )
                    })?;
                    volumes.push(format!("{host}:{inside}"));
                }
            }
            (name @ ("ports" | "volumes" | "workdir"), other) => {
                return Err(arg_error(c, name, "a value of Bolt's type", other));
            }
            (other, _) => {
                return Err(invalid(format!(
                    "Unknown option '{other}' for run_container (expected cmd, env_vars, ports, rm, volumes, workdir, _catch_errors)"
                )));
            }
        }
    }
    for (name, _) in &run.env {
        run.args.extend(["-e".into(), name.clone()]);
    }
    for v in volumes {
        run.args.extend(["-v".into(), v]);
    }
    for p in ports {
        run.args.extend(["-p".into(), p]);
    }
    if rm {
        run.args.push("--rm".into());
    }
    if let Some(w) = workdir {
        run.args.extend(["-w".into(), w]);
    }
    run.args.push(image.to_string());
    run.args.extend(cmd);
    Ok(run)
}

pub(super) fn run_container(
    lib: &PlanLibrary,
    _: &mut Evaluator<'_>,
    c: Call<'_>,
) -> EvalResult<Value> {
    want_args(&c, 1, 2)?;
    let image = match c.arg(0) {
        Value::Str(s) if !s.is_empty() => s,
        other => return Err(arg_error(&c, "image", "a String[1] value", &other)),
    };
    let given = match c.args.get(1) {
        None | Some(Value::Undef) => Vec::new(),
        Some(Value::Hash(h)) => h.clone(),
        Some(other) => return Err(arg_error(&c, "options", "a Hash value", other)),
    };
    let run = options(&c, &image, &given)?;
    let Some(engine) = engine() else {
        return Err(raise(
            &c,
            ErrorValue::new(
                "run_container needs podman or docker on PATH",
                "bolt/container-error",
            ),
        ));
    };
    let mut command = tokio::process::Command::new(&engine);
    command
        .args(&run.args)
        .envs(run.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = lib
        .handle
        .block_on(async { lib.stop.or(command.output()).await })
        .ok_or_else(|| stopped(&c))?
        .map_err(|e| {
            raise(
                &c,
                ErrorValue::new(
                    format!("Could not run {}: {e}", engine.display()),
                    "bolt/container-error",
                ),
            )
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let code = output.status.code().map_or(-1, i64::from);
    let mut result = PlanResult {
        kind: ResultKind::ContainerResult,
        target: Target {
            name: "localhost".into(),
            info: Default::default(),
        },
        action: "container".into(),
        object: Some(image.clone()),
        value: vec![
            (Value::str("stdout"), Value::Str(stdout)),
            (Value::str("stderr"), Value::Str(stderr.clone())),
            (Value::str("exit_code"), Value::Int(code)),
        ],
    };
    if code == 0 {
        return Ok(value(PlanObject::Result(result)));
    }
    let mut error = ErrorValue::new(
        format!("Error running container '{image}': {stderr}"),
        "puppetlabs.tasks/container-error",
    );
    error.issue_code = Some("CONTAINER_ERROR".into());
    error.details = vec![(Value::str("exit_code"), Value::Int(code))];
    result.value = vec![(Value::str("_error"), Value::from_json(&error.to_data()))];
    if run.catch_errors {
        return Ok(value(PlanObject::Result(result)));
    }
    let mut failure = ErrorValue::new(
        format!("Running container '{image}' failed."),
        "bolt/container-failure",
    );
    failure.details = vec![
        (Value::str("value"), Value::Hash(result.value)),
        (Value::str("object"), Value::Str(image)),
    ];
    Err(raise(&c, failure))
}
