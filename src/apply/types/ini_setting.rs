//! `ini_setting` from puppetlabs-inifile (its `ruby` provider): one key
//! of an INI file, present with a value or absent, in a section (`''` is
//! the part before the first header). The file is read and edited as
//! the module's `IniFile` does ([`super::ini_file`]); a missing file reads
//! as empty and is created (mode 0644). `ensure` events are `created` and
//! `removed`; a value change is a `value` event whose message, like
//! Puppet's with its default `show_diff = false`, hides both values
//! (`value changed [redacted sensitive information] to [redacted
//! sensitive information]`) while the event keeps them.

use std::fmt::Write as _;

use serde_json::Value;

use super::edit::{self, AWK_LIB};
use super::ini_file::{INI_LIB, regex_separator};
use super::{
    EventStatus, EventText, ParamError, bool_param, generic_event, param_error, present_absent,
    text_param,
};
use crate::apply::catalog::Resource;

/// What Puppet shows for an ini value when `show_diff` is off.
pub const HIDDEN: &str = "[redacted sensitive information]";

#[derive(Debug, Clone)]
pub struct IniSetting {
    pub path: String,
    pub present: bool,
    pub section: String,
    pub setting: Option<String>,
    pub value: Option<String>,
    /// The value was `Sensitive`: the report shows neither value.
    pub sensitive: bool,
    pub key_val_separator: String,
    /// `key_val_separator` as the module's regexes use it.
    pub regex_separator: String,
    pub section_prefix: String,
    pub section_suffix: String,
    pub indent_char: String,
    pub indent_width: Option<u32>,
    pub force_new_section_creation: bool,
}

/// The provider's `exists?`, `create`, `value=` and `destroy`; verdicts
/// `insync`, `change ensure`, `written ensure`, `change value<TAB>OLD`,
/// `written value<TAB>OLD`.
const PROGRAM: &str = r#"
END {
  parse()
  sec = ENVIRON["SECTION"]; haskey = ENVIRON["HASKEY"] == 1; key = ENVIRON["KEY"]
  hasvalue = ENVIRON["HASVALUE"] == 1; value = ENVIRON["VALUE"]
  present = ENVIRON["PRESENT"] == 1; force = ENVIRON["FORCE"] == 1
  if (!haskey) exists = hassec(sec)
  else if (hassec(sec)) { getvalue(sec, key); exists = GOT }
  else if (!force) done("insync")
  else exists = 0
  if (present) {
    if (!exists) {
      if (NOOP) done("change ensure")
      setvalue(sec, haskey, key, KVSFULL, value); save(); written("written ensure")
    }
    if (hasvalue) {
      cur = getvalue(sec, key)
      if (!GOT || cur != value) {
        if (NOOP) done("change value\t" cur)
        setvalue(sec, haskey, key, KVSFULL, value); save(); written("written value\t" cur)
      }
    }
    done("insync")
  }
  if (!exists) done("insync")
  if (NOOP) done("change ensure")
  removesetting(sec, key); save(); written("written ensure")
}
"#;

/// Ruby's `String#strip`.
pub fn strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b' || c == '\0')
}

/// `show_diff` is checked as the module checks it, then has no effect:
/// Puppet's own `show_diff` setting is off by default.
pub fn check_show_diff(r: &Resource) -> Result<(), ParamError> {
    match r.param("show_diff") {
        None | Some(Value::Null) | Some(Value::Bool(_)) => Ok(()),
        Some(Value::String(s)) if matches!(s.as_str(), "true" | "false" | "yes" | "no" | "md5") => {
            Ok(())
        }
        Some(other) => Err(param_error(
            r,
            "show_diff",
            &format!("Invalid value {other}. Valid values are true, md5, false."),
        )),
    }
}

impl IniSetting {
    pub fn parse(r: &Resource) -> Result<IniSetting, ParamError> {
        let path = super::path_param(r, false)?;
        check_show_diff(r)?;
        if bool_param(r, "refreshonly", false)? {
            return Err(param_error(
                r,
                "refreshonly",
                "ferry does not apply refreshonly ini settings yet",
            ));
        }
        let value = match r.param("value") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(b.to_string()),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(_) => text_param(r, "value")?.map(|v| strip(&v).to_string()),
        };
        let setting = text_param(r, "setting")?.map(|s| strip(&s).to_string());
        if setting.is_none() && value.is_some() {
            return Err(param_error(
                r,
                "setting",
                "ferry needs a setting for a value (the module would write a key-less line)",
            ));
        }
        let key_val_separator =
            text_param(r, "key_val_separator")?.unwrap_or_else(|| " = ".to_string());
        let indent_width = match text_param(r, "indent_width")? {
            None => None,
            Some(w) => Some(w.trim().parse::<u32>().map_err(|_| {
                param_error(
                    r,
                    "indent_width",
                    &format!("Invalid indent_width {w:?}: a whole number"),
                )
            })?),
        };
        for p in [
            "path",
            "section",
            "setting",
            "key_val_separator",
            "indent_char",
        ] {
            if text_param(r, p)?.is_some_and(|v| v.contains('\n')) {
                return Err(param_error(r, p, "the value holds a newline"));
            }
        }
        Ok(IniSetting {
            path,
            present: present_absent(r, "present")? == "present",
            section: text_param(r, "section")?.unwrap_or_default(),
            setting,
            value,
            sensitive: r.is_sensitive("value"),
            regex_separator: regex_separator(r, &key_val_separator)?,
            key_val_separator,
            section_prefix: text_param(r, "section_prefix")?.unwrap_or_else(|| "[".into()),
            section_suffix: text_param(r, "section_suffix")?.unwrap_or_else(|| "]".into()),
            indent_char: text_param(r, "indent_char")?.unwrap_or_else(|| " ".into()),
            indent_width,
            force_new_section_creation: bool_param(r, "force_new_section_creation", true)?,
        })
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let flag = |b: bool| String::from(if b { "1" } else { "0" });
        let env = vec![
            ("KVS", self.regex_separator.clone()),
            ("KVSFULL", self.key_val_separator.clone()),
            ("PRE", self.section_prefix.clone()),
            ("SUF", self.section_suffix.clone()),
            ("INDCHAR", self.indent_char.clone()),
            (
                "INDW",
                self.indent_width.map(|w| w.to_string()).unwrap_or_default(),
            ),
            ("SECTION", self.section.clone()),
            ("HASKEY", flag(self.setting.is_some())),
            ("KEY", self.setting.clone().unwrap_or_default()),
            ("HASVALUE", flag(self.value.is_some())),
            ("VALUE", self.value.clone().unwrap_or_default()),
            ("PRESENT", flag(self.present)),
            ("FORCE", flag(self.force_new_section_creation)),
        ];
        script_with(
            out,
            n,
            noop,
            &self.path,
            &format!("{AWK_LIB}{INI_LIB}{PROGRAM}"),
            &env,
            self.present,
            ("value", "644"),
        );
    }

    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        describe_ini(
            property,
            status,
            previous,
            detail,
            self.present,
            self.value.as_deref(),
            self.sensitive,
        )
    }
}

/// The shell around an ini program (and sysctl's): locate the file, run
/// the program, report its verdict (`insync`, `change ensure`, `change
/// value<TAB>OLD`, `written ...` likewise, `err ...`); `value_prop` names
/// the value property, `new_mode` the mode of a file made new.
#[allow(clippy::too_many_arguments)]
pub fn script_with(
    out: &mut String,
    n: usize,
    noop: bool,
    path: &str,
    program: &str,
    env: &[(&str, String)],
    present: bool,
    (value_prop, new_mode): (&str, &str),
) {
    edit::locate(out, path);
    let env: Vec<(&str, String)> = env.iter().filter(|(_, v)| !v.is_empty()).cloned().collect();
    edit::run_awk(out, program, &env, noop);
    let prev = if present { "absent" } else { "present" };
    let is_dir = crate::apply::program::q(&format!("Is a directory @ rb_sysopen - {path}"));
    let _ = writeln!(
        out,
        "case $_r in\n\
         insync) ;;\n\
         'change ensure') _ev {n} ensure noop {prev} ;;\n\
         'change value'*) _ev {n} {value_prop} noop \"${{_r#*\t}}\" ;;\n\
         written*) _v=${{_r#*\t}}; _prop=ensure; _was={prev}\n\
         case $_r in 'written value'*) _prop={value_prop} _was=$_v ;; esac\n\
         if [ -d \"$_p\" ]; then rm -f -- \"$_t\"; _ev {n} \"$_prop\" failure \"$_was\" {is_dir}\n\
         elif {commit}; then _ev {n} \"$_prop\" success \"$_was\"; else _ev {n} \"$_prop\" failure \"$_was\" \"$_err\"; fi ;;\n\
         *) rm -f -- \"$_t\"; _ev {n} ensure failure {prev} \"${{_r#err }}\" ;;\n\
         esac",
        commit = edit::commit(new_mode)
    );
}

/// The events of `ini_setting` and `ini_subsetting`.
pub fn describe_ini(
    property: &str,
    status: EventStatus,
    previous: &str,
    detail: &str,
    present: bool,
    value: Option<&str>,
    sensitive: bool,
) -> EventText {
    if property != "value" {
        return generic_event(
            property,
            status,
            Value::String(previous.into()),
            Value::String(if present { "present" } else { "absent" }.into()),
            detail,
        );
    }
    if sensitive {
        return super::redacted_event(status, detail);
    }
    let message = match status {
        EventStatus::Noop => format!("current_value {HIDDEN}, should be {HIDDEN} (noop)"),
        EventStatus::Success => format!("value changed {HIDDEN} to {HIDDEN}"),
        EventStatus::Failure => {
            format!("change from {HIDDEN} to {HIDDEN} failed: {}", detail.trim())
        }
    };
    EventText {
        previous: Value::String(previous.into()),
        desired: value
            .map(|v| Value::String(v.into()))
            .unwrap_or(Value::Null),
        message,
        redacted: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::types::edit::run_each;
    use serde_json::json;

    fn resource(params: Value) -> Resource {
        Resource::with_params("Ini_setting", "t", &params)
    }

    fn ini(params: Value) -> IniSetting {
        let mut p = params;
        p["path"] = json!("/x");
        IniSetting::parse(&resource(p)).expect("parses")
    }

    /// Applies the settings in turn to `content`: the events and the file.
    fn apply(content: &str, settings: &[IniSetting]) -> (Vec<String>, String) {
        let (events, file) = run_each(Some(content.as_bytes()), settings, |s, path, out| {
            IniSetting {
                path: path.into(),
                ..s.clone()
            }
            .script(out, 0, false)
        });
        (
            events,
            String::from_utf8_lossy(&file.unwrap_or_default()).into_owned(),
        )
    }

    /// Outcomes taken from puppet apply with inifile 4 on the same input.
    #[test]
    fn edits_as_the_module_does() {
        let (events, file) = apply(
            "[s]\na = 1\na = 2\n[t]\nb=1",
            &[
                ini(json!({"section": "s", "setting": "a", "ensure": "absent"})),
                ini(json!({"section": "t", "setting": "c", "value": "new"})),
                ini(json!({"section": "nope", "setting": "c", "value": "new",
                           "force_new_section_creation": false})),
            ],
        );
        assert_eq!(
            events,
            ["ev ensure success present", "ev ensure success absent"]
        );
        assert_eq!(file, "[s]\na = 2\n[t]\nb=1\nc = new\n");
        let custom = json!({"section_prefix": "<", "section_suffix": ">",
                            "key_val_separator": " : "});
        let with = |extra: Value| {
            let mut p = custom.clone();
            for (k, v) in extra.as_object().into_iter().flatten() {
                p[k] = v.clone();
            }
            ini(p)
        };
        let (events, file) = apply(
            "x=1\n<sec>\nk : v   \n",
            &[
                with(json!({"section": "sec", "setting": "k", "value": "v"})),
                with(json!({"section": "other", "setting": "z", "value": "q"})),
            ],
        );
        assert_eq!(events, ["ev value success v", "ev ensure success absent"]);
        assert_eq!(file, "x=1\n<sec>\nk : v\n\n<other>\nz : q\n");
    }

    #[test]
    fn values_and_messages() {
        let s = ini(json!({"setting": " k ", "value": 8080}));
        assert_eq!(s.setting.as_deref(), Some("k"));
        assert_eq!(s.value.as_deref(), Some("8080"));
        let e = s.describe("value", EventStatus::Success, "80", "");
        assert_eq!(
            e.message,
            "value changed [redacted sensitive information] to [redacted sensitive information]"
        );
        assert_eq!(e.previous, json!("80"));
        assert_eq!(e.desired, json!("8080"));
        assert_eq!(
            ini(json!({"setting": "k", "value": " v "}))
                .value
                .as_deref(),
            Some("v")
        );
        let err = IniSetting::parse(&resource(json!({"path": "x", "setting": "k"}))).unwrap_err();
        assert_eq!(err.message, "File paths must be fully qualified, not 'x'");
        let err = IniSetting::parse(&resource(
            json!({"path": "/x", "setting": "k", "key_val_separator": " . "}),
        ))
        .unwrap_err();
        assert_eq!(err.param, "key_val_separator");
        assert_eq!(
            regex_separator(&resource(json!({})), "  ").expect("blank separator"),
            " "
        );
    }
}
