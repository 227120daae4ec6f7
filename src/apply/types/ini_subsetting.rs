//! `ini_subsetting` from puppetlabs-inifile (its `ruby` provider): one
//! item of a setting whose value is a list (`args = "-Xmx1g -Xms256m"`),
//! as the module's `SettingValue` reads it: the value unquoted when it is
//! quoted (that quote kept, else `quote_char` used), split into the runs
//! of characters that are not in `subsetting_separator`, each stripped.
//! An item is found by its name followed by `subsetting_key_val_separator`
//! (or, with `use_exact_match`, by being exactly the name); its value is
//! the rest. A new item goes at the end, the start, before or after
//! another item, or at an index (`insert_type`); changing an item changes
//! every item of that name; removing one removes them all and, with
//! `delete_if_empty`, the setting when nothing is left. The setting is
//! then written back through the module's `IniFile` model
//! ([`super::ini_file`]), so a setting not in the file is created.
//! Events are those of [`super::ini_setting`].

use super::edit::AWK_LIB;
use super::ini_file::{INI_LIB, regex_separator};
use super::ini_setting::{check_show_diff, describe_ini, script_with};
use super::{
    EventStatus, EventText, ParamError, bool_param, param_error, present_absent, text_param,
};
use crate::apply::catalog::Resource;

/// Where a new item goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Insert {
    Start,
    End,
    Before(String),
    After(String),
    Index(i64),
}

#[derive(Debug, Clone)]
pub struct IniSubsetting {
    pub path: String,
    pub present: bool,
    pub section: String,
    pub setting: String,
    pub subsetting: String,
    pub value: Option<String>,
    pub sensitive: bool,
    pub subsetting_separator: String,
    pub subsetting_key_val_separator: String,
    pub key_val_separator: String,
    pub regex_separator: String,
    pub quote_char: String,
    pub use_exact_match: bool,
    pub insert: Insert,
    pub delete_if_empty: bool,
}

/// `SettingValue` and the provider; verdicts as `ini_setting`'s.
const PROGRAM: &str = r##"
function strip(s) {
  while (length(s) > 0 && isws(substr(s, 1, 1))) s = substr(s, 2)
  while (length(s) > 0 && isws(substr(s, length(s)))) s = substr(s, 1, length(s) - 1)
  return s
}
function svinit(has, v,   q, u, i, c, cur, inrun) {
  NI = 0; QUOTE = ENVIRON["QUOTE"]
  if (!has) return
  q = ""
  if (substr(v, 1, 1) == "\"" && substr(v, length(v)) == "\"") q = "\""
  else if (substr(v, 1, 1) == "'" && substr(v, length(v)) == "'") q = "'"
  if (q != "") { QUOTE = q; u = substr(v, 2, length(v) - 2) } else u = v
  cur = ""; inrun = 0
  for (i = 1; i <= length(u); i++) {
    c = substr(u, i, 1)
    if (index(SEP, c)) { if (inrun) IT[NI++] = strip(cur); cur = ""; inrun = 0 }
    else { cur = cur c; inrun = 1 }
  }
  if (inrun) IT[NI++] = strip(cur)
}
function svget(   i, s) {
  s = ""
  for (i = 0; i < NI; i++) s = (i ? s SEP : "") IT[i]
  return QUOTE s QUOTE
}
function matches(item, name, exact) {
  if (exact) return item == name
  return substr(item, 1, length(name SKVS)) == name SKVS
}
function find(name, exact,   i) { for (i = 0; i < NI; i++) if (matches(IT[i], name, exact)) return i; return -1 }
function insertitem(at, s,   i) { for (i = NI; i > at; i--) IT[i] = IT[i - 1]; IT[at] = s; NI++ }
function add(name, value, exact,   i, item, at, iv) {
  item = name SKVS value
  if (find(name, exact) >= 0) {
    for (i = 0; i < NI; i++) if (matches(IT[i], name, exact)) IT[i] = item
    return
  }
  if (INSTYPE == "start") insertitem(0, item)
  else if (INSTYPE == "before" || INSTYPE == "after") {
    at = find(INSVAL, exact)
    if (at < 0) IT[NI++] = item
    else insertitem(INSTYPE == "before" ? at : at + 1, item)
  } else if (INSTYPE == "index") {
    iv = INSVAL + 0
    if (iv > NI) iv = NI
    if (iv < 0) {
      if (NI + iv + 1 < 0) done("err index " iv " too small for array; minimum: -" (NI + 1))
      iv = NI + iv + 1
    }
    insertitem(iv, item)
  } else IT[NI++] = item
}
function remove(name, exact,   i, n) {
  n = 0
  for (i = 0; i < NI; i++) if (!matches(IT[i], name, exact)) IT[n++] = IT[i]
  NI = n
}
END {
  parse()
  sec = ENVIRON["SECTION"]; key = ENVIRON["KEY"]; name = ENVIRON["SUB"]
  SEP = ENVIRON["SEP"]; SKVS = ENVIRON["SKVS"]; exact = ENVIRON["EXACT"] == 1
  INSTYPE = ENVIRON["INSTYPE"]; INSVAL = ENVIRON["INSVAL"]
  hasvalue = ENVIRON["HASVALUE"] == 1; value = ENVIRON["VALUE"]
  present = ENVIRON["PRESENT"] == 1
  cur = getvalue(sec, key)
  svinit(GOT, cur)
  exists = find(name, exact) >= 0
  if (present) {
    if (!exists) {
      if (NOOP) done("change ensure")
      add(name, value, exact); setvalue(sec, 1, key, KVSFULL, svget()); save(); written("written ensure")
    }
    if (hasvalue) {
      i = find(name, 0)
      old = (i < 0) ? "" : substr(IT[i], length(name SKVS) + 1)
      if (i < 0 || old != value) {
        if (NOOP) done("change value\t" old)
        add(name, value, exact); setvalue(sec, 1, key, KVSFULL, svget()); save(); written("written value\t" old)
      }
    }
    done("insync")
  }
  if (!exists) done("insync")
  if (NOOP) done("change ensure")
  remove(name, exact)
  v = svget()
  if (v == "" && ENVIRON["DIE"] == 1) removesetting(sec, key); else setvalue(sec, 1, key, KVSFULL, v)
  save(); written("written ensure")
}
"##;

impl IniSubsetting {
    pub fn parse(r: &Resource) -> Result<IniSubsetting, ParamError> {
        let path = super::path_param(r, false)?;
        check_show_diff(r)?;
        let required = |name: &str| -> Result<String, ParamError> {
            match text_param(r, name)? {
                Some(v) if !v.contains('\n') => Ok(v),
                Some(_) => Err(param_error(r, name, "the value holds a newline")),
                None => Err(param_error(
                    r,
                    name,
                    &format!("ferry needs {name} for an ini_subsetting"),
                )),
            }
        };
        let setting = required("setting")?;
        let subsetting = required("subsetting")?;
        let subsetting_separator =
            text_param(r, "subsetting_separator")?.unwrap_or_else(|| " ".into());
        if subsetting_separator.is_empty() {
            return Err(param_error(
                r,
                "subsetting_separator",
                "an empty separator splits nothing (the module fails on it)",
            ));
        }
        let quote_char = text_param(r, "quote_char")?.unwrap_or_default();
        if !matches!(quote_char.as_str(), "" | "\"" | "'") {
            return Err(param_error(
                r,
                "quote_char",
                ":quote_char valid values are '', '\"' and \"'\"",
            ));
        }
        let insert_value = text_param(r, "insert_value")?;
        let insert = match text_param(r, "insert_type")?.as_deref() {
            None | Some("end") => Insert::End,
            Some("start") => Insert::Start,
            Some("before") => Insert::Before(insert_value.unwrap_or_default()),
            Some("after") => Insert::After(insert_value.unwrap_or_default()),
            Some("index") => Insert::Index(ruby_to_i(insert_value.as_deref().unwrap_or(""))),
            Some(other) => {
                return Err(param_error(
                    r,
                    "insert_type",
                    &format!(
                        "Invalid value \"{other}\". Valid values are start, end, before, after, index."
                    ),
                ));
            }
        };
        let key_val_separator =
            text_param(r, "key_val_separator")?.unwrap_or_else(|| " = ".to_string());
        Ok(IniSubsetting {
            path,
            present: present_absent(r, "present")? == "present",
            section: text_param(r, "section")?.unwrap_or_default(),
            setting,
            subsetting,
            value: text_param(r, "value")?,
            sensitive: r.is_sensitive("value"),
            subsetting_separator,
            subsetting_key_val_separator: text_param(r, "subsetting_key_val_separator")?
                .unwrap_or_default(),
            regex_separator: regex_separator(r, &key_val_separator)?,
            key_val_separator,
            quote_char,
            use_exact_match: bool_param(r, "use_exact_match", false)?,
            insert,
            delete_if_empty: bool_param(r, "delete_if_empty", false)?,
        })
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let flag = |b: bool| String::from(if b { "1" } else { "0" });
        let (instype, insval) = match &self.insert {
            Insert::Start => ("start", String::new()),
            Insert::End => ("end", String::new()),
            Insert::Before(v) => ("before", v.clone()),
            Insert::After(v) => ("after", v.clone()),
            Insert::Index(i) => ("index", i.to_string()),
        };
        let env = vec![
            ("KVS", self.regex_separator.clone()),
            ("KVSFULL", self.key_val_separator.clone()),
            ("PRE", "[".to_string()),
            ("SUF", "]".to_string()),
            ("INDCHAR", " ".to_string()),
            ("SECTION", self.section.clone()),
            ("KEY", self.setting.clone()),
            ("SUB", self.subsetting.clone()),
            ("SEP", self.subsetting_separator.clone()),
            ("SKVS", self.subsetting_key_val_separator.clone()),
            ("QUOTE", self.quote_char.clone()),
            ("EXACT", flag(self.use_exact_match)),
            ("INSTYPE", instype.to_string()),
            ("INSVAL", insval),
            ("HASVALUE", flag(self.value.is_some())),
            ("VALUE", self.value.clone().unwrap_or_default()),
            ("PRESENT", flag(self.present)),
            ("DIE", flag(self.delete_if_empty)),
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

/// Ruby's `String#to_i`: the leading integer, 0 when there is none.
fn ruby_to_i(s: &str) -> i64 {
    let t = s.trim_start();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, t.strip_prefix('+').unwrap_or(t)),
    };
    let d: String = digits
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '_')
        .filter(|c| *c != '_')
        .collect();
    d.parse::<i64>().map(|v| sign * v).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::types::edit::run_each;
    use serde_json::{Value, json};

    fn sub(params: Value) -> IniSubsetting {
        let mut p = params;
        p["path"] = json!("/x");
        let r = Resource::with_params("Ini_subsetting", "t", &p);
        IniSubsetting::parse(&r).expect("parses")
    }

    fn apply(content: &str, subs: &[IniSubsetting]) -> (Vec<String>, String) {
        let (events, file) = run_each(Some(content.as_bytes()), subs, |s, path, out| {
            IniSubsetting {
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

    #[test]
    fn items_change_as_the_module_changes_them() {
        let (events, file) = apply(
            "[j]\na = ' x=1 , y=2 ,'\n",
            &[
                sub(json!({"section": "j", "setting": "a", "subsetting": "y",
                           "subsetting_separator": ",", "subsetting_key_val_separator": "=",
                           "value": "3"})),
                sub(json!({"section": "j", "setting": "a", "subsetting": "w",
                           "subsetting_separator": ",", "insert_type": "index",
                           "insert_value": "-1"})),
                sub(json!({"section": "j", "setting": "b", "subsetting": "n",
                           "value": "1"})),
            ],
        );
        assert_eq!(
            events,
            [
                "ev value success 2",
                "ev ensure success absent",
                "ev ensure success absent"
            ]
        );
        assert_eq!(file, "[j]\na = 'x=1,y=3,w'\nb = n1\n");
        assert_eq!(ruby_to_i(" -2x"), -2);
        let bad = |p: Value| {
            let mut p = p;
            p["path"] = json!("/x");
            let r = Resource::with_params("Ini_subsetting", "t", &p);
            IniSubsetting::parse(&r).unwrap_err().message
        };
        assert_eq!(
            bad(json!({"setting": "a", "subsetting": "b", "quote_char": "x"})),
            ":quote_char valid values are '', '\"' and \"'\""
        );
        assert_eq!(
            bad(json!({"setting": "a", "subsetting": "b", "insert_type": "middle"})),
            "Invalid value \"middle\". Valid values are start, end, before, after, index."
        );
        assert_eq!(
            bad(json!({"setting": "a"})),
            "ferry needs subsetting for an ini_subsetting"
        );
        assert_eq!(ruby_to_i("abc"), 0);
    }
}
