//! `file_line` from puppetlabs-stdlib (its `ruby` provider): one line in
//! a text file, present or absent, found by its exact text or by the
//! `match` regex, placed after the `after` regex or at the end. The
//! provider's decisions are kept to the letter, quirks included: with a
//! `match`, the line already being in the file is enough to be in sync
//! (matching lines are left alone); `replace => false` with a match found
//! counts as a change but writes nothing; rewritten lines all end with a
//! newline (`IO#puts`), removals keep the file's last line as it was.
//! The one event is `ensure` (`created`, `removed`). The regexes are
//! Ruby's, translated by [`super::ruby_regex`] (what cannot be is a
//! [`ParamError`]); the file is read and rewritten by [`super::edit`].

use std::fmt::Write as _;

use serde_json::Value;

use super::edit::{self, AWK_LIB};
use super::ruby_regex::to_ere;
use super::{
    EventStatus, EventText, ParamError, bool_param, generic_event, param_error, present_absent,
    text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

#[derive(Debug, Clone)]
pub struct FileLine {
    pub path: String,
    pub present: bool,
    pub line: Option<String>,
    /// The `match` regex as given, and as an ERE.
    pub match_: Option<(String, String)>,
    pub after: Option<(String, String)>,
    pub match_for_absence: bool,
    pub multiple: bool,
    pub replace: bool,
    pub replace_all: bool,
    pub append_on_no_match: bool,
}

/// The provider's decisions, in awk (see the module text); the verdicts
/// are `insync`, `change` (noop), `written` (new content in OUT),
/// `touched` (a change that writes nothing) and `err CODE`.
const PROGRAM: &str = r#"
function count(re,   i, c) {
  c = 0
  for (i = 1; i <= N; i++) if (sline(i) ~ re && !(ramnml && hasline && chomp(L[i]) == line)) c++
  return c
}
function create(   i, s, mc, ac) {
  if (!replace) {
    if (!hasmatch) { if (N > 0) done("err nilregex") }
    else if (count(mre) > 0) done("touched")
  }
  if (hasmatch) {
    mc = count(mre)
    if (mc > 1 && !multiple) done("err multimatch")
    for (i = 1; i <= N; i++) {
      s = sline(i)
      if (s ~ mre) puts(line); else puts(s)
      if (mc == 0 && hasafter && s ~ are) { puts(line); mc++ }
    }
    if (mc == 0) puts(line)
  } else if (hasafter) {
    ac = count(are)
    if (ac > 1 && !multiple) done("err multiafter " ac)
    for (i = 1; i <= N; i++) { s = sline(i); puts(s); if (s ~ are) puts(line) }
    if (ac == 0) puts(line)
  } else {
    for (i = 1; i <= N; i++) puts(sline(i))
    puts(line)
  }
  written("written")
}
function destroy(   i) {
  if (mfa && hasmatch) {
    if (count(mre) > 1 && !multiple) done("err multimatch")
    for (i = 1; i <= N; i++) if (!(sline(i) ~ mre)) emit(sline(i))
  } else {
    for (i = 1; i <= N; i++) if (!(hasline && chomp(L[i]) == line)) emit(sline(i))
  }
  written("written")
}
END {
  line = ENVIRON["LINE"]; hasline = ENVIRON["HASLINE"] == 1
  mre = ENVIRON["MATCH"]; hasmatch = ENVIRON["HASMATCH"] == 1
  are = ENVIRON["AFTER"]; hasafter = ENVIRON["HASAFTER"] == 1
  present = ENVIRON["PRESENT"] == 1; ramnml = ENVIRON["RAMNML"] == 1
  multiple = ENVIRON["MULTIPLE"] == 1; replace = ENVIRON["REPLACE"] == 1
  aonm = ENVIRON["AONM"] == 1; mfa = ENVIRON["MFA"] == 1
  lc = 0
  if (hasline) for (i = 1; i <= N; i++) if (chomp(L[i]) == line) lc++
  if (!hasmatch) exists = lc > 0
  else {
    mc = count(mre)
    if (present) {
      if (mc == 0) exists = lc > 0 || !aonm
      else if (ramnml) exists = 0
      else if (lc == 0) exists = !replace
      else exists = 1
    } else {
      if (mc == 0) exists = lc > 0
      else if (lc == 0) exists = mfa
      else exists = 1
    }
  }
  if (exists == present) done("insync")
  if (NOOP) done("change")
  if (present) create(); else destroy()
}
"#;

impl FileLine {
    pub fn parse(r: &Resource) -> Result<FileLine, ParamError> {
        let path = super::path_param(r, false)?;
        let present = present_absent(r, "present")? == "present";
        let regex = |name: &str| -> Result<Option<(String, String)>, ParamError> {
            match text_param(r, name)? {
                None => Ok(None),
                Some(src) => match to_ere(&src) {
                    Ok(ere) => Ok(Some((src, ere))),
                    Err(e) => Err(param_error(r, name, &e.to_string())),
                },
            }
        };
        let match_ = regex("match")?;
        let after = regex("after")?;
        let line = text_param(r, "line")?;
        let match_for_absence = bool_param(r, "match_for_absence", false)?;
        let multiple_set = match r.param("multiple") {
            None | Some(Value::Null) => None,
            Some(_) => Some(bool_param(r, "multiple", false)?),
        };
        let replace = bool_param(r, "replace", true)?;
        let replace_all = bool_param(r, "replace_all_matches_not_matching_line", false)?;
        if replace_all && multiple_set == Some(false) {
            return Err(param_error(
                r,
                "multiple",
                "multiple must be true when replace_all_matches_not_matching_line is true",
            ));
        }
        if replace_all && !replace {
            return Err(param_error(
                r,
                "replace",
                "replace must be true when replace_all_matches_not_matching_line is true",
            ));
        }
        if line.is_none() && (present || !match_for_absence || match_.is_none()) {
            return Err(param_error(r, "line", "line is a required attribute"));
        }
        // Any encoding is read as bytes (see the module text).
        let _ = text_param(r, "encoding")?;
        Ok(FileLine {
            path,
            present,
            line,
            match_,
            after,
            match_for_absence,
            multiple: multiple_set.unwrap_or(false),
            replace,
            replace_all,
            append_on_no_match: bool_param(r, "append_on_no_match", true)?,
        })
    }

    fn previous(&self) -> &'static str {
        if self.present { "absent" } else { "present" }
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        edit::locate(out, &self.path);
        let path = &self.path;
        let _ = writeln!(
            out,
            "if [ -d \"$_p\" ]; then _fail {n} {}",
            q(&format!("Is a directory @ io_fread - {path}"))
        );
        if !noop {
            // Ruby reads a missing file as empty only in noop.
            let _ = writeln!(
                out,
                "elif [ ! -e \"$_p\" ]; then _fail {n} {}",
                q(&format!("No such file or directory @ rb_sysopen - {path}"))
            );
        }
        out.push_str("else\n");
        let flag = |b: bool| String::from(if b { "1" } else { "0" });
        let mut env = vec![
            ("LINE", self.line.clone().unwrap_or_default()),
            ("HASLINE", flag(self.line.is_some())),
            (
                "MATCH",
                self.match_
                    .as_ref()
                    .map(|m| m.1.clone())
                    .unwrap_or_default(),
            ),
            ("HASMATCH", flag(self.match_.is_some())),
            (
                "AFTER",
                self.after.as_ref().map(|m| m.1.clone()).unwrap_or_default(),
            ),
            ("HASAFTER", flag(self.after.is_some())),
            ("PRESENT", flag(self.present)),
            ("RAMNML", flag(self.replace_all)),
            ("MULTIPLE", flag(self.multiple)),
            ("REPLACE", flag(self.replace)),
            ("AONM", flag(self.append_on_no_match)),
            ("MFA", flag(self.match_for_absence)),
        ];
        env.retain(|(_, v)| !v.is_empty());
        edit::run_awk(out, &format!("{AWK_LIB}{PROGRAM}"), &env, noop);
        let prev = self.previous();
        let _ = writeln!(
            out,
            "case $_r in\n\
             insync) ;;\n\
             change) _ev {n} ensure noop {prev} ;;\n\
             touched) rm -f -- \"$_t\"; _ev {n} ensure success {prev} ;;\n\
             written) if {commit}; then _ev {n} ensure success {prev}; else _ev {n} ensure failure {prev} \"$_err\"; fi ;;\n\
             *) rm -f -- \"$_t\"; _ev {n} ensure failure {prev} \"$_r\" ;;\n\
             esac\nfi",
            commit = edit::commit_644()
        );
    }

    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        let desired = if self.present { "present" } else { "absent" };
        let pattern =
            |p: &Option<(String, String)>| p.as_ref().map(|m| m.0.clone()).unwrap_or_default();
        let detail = match detail.trim().strip_prefix("err ") {
            Some("multimatch") => format!(
                "More than one line in file '{}' matches pattern '{}'",
                self.path,
                pattern(&self.match_)
            ),
            Some("nilregex") => "wrong argument type nil (expected Regexp)".into(),
            Some(rest) => match rest.strip_prefix("multiafter ") {
                Some(count) => format!(
                    "{count} lines match pattern '{}' in file '{}'. One or no line must match the pattern.",
                    pattern(&self.after),
                    self.path
                ),
                None => rest.to_string(),
            },
            None => detail.trim().to_string(),
        };
        generic_event(
            property,
            status,
            Value::String(previous.into()),
            Value::String(desired.into()),
            &detail,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource(params: Value) -> Resource {
        Resource::with_params("File_line", "t", &params)
    }

    /// Applies `fl` to a file holding `content`: the verdict and the
    /// file after.
    fn apply(fl: &FileLine, content: Option<&[u8]>, noop: bool) -> (String, Option<Vec<u8>>) {
        let step = |s: &mut String, path: &str| {
            let f = FileLine {
                path: path.to_string(),
                ..fl.clone()
            };
            f.script(s, 0, noop);
        };
        let (lines, after) = edit::run_steps(content, &[&step]);
        (lines.join("\n"), after)
    }

    fn fl(params: Value) -> FileLine {
        let mut p = params;
        p["path"] = json!("/x");
        FileLine::parse(&resource(p)).expect("parses")
    }

    #[test]
    fn behaves_as_the_ruby_provider() {
        // (params, file before, verdict, file after)
        let cases: Vec<(Value, Option<&str>, &str, Option<&str>)> = vec![
            (
                json!({"line": "a=1"}),
                Some("x\ny"),
                "ev ensure success absent",
                Some("x\ny\na=1\n"),
            ),
            (json!({"line": "x"}), Some("x\r\ny\n"), "", Some("x\r\ny\n")),
            (
                json!({"line": "b=2", "match": "^b="}),
                Some("a\nb=1\nc\n"),
                "ev ensure success absent",
                Some("a\nb=2\nc\n"),
            ),
            (
                json!({"line": "b=2", "match": "^b=", "replace": false}),
                Some("b=1\n"),
                "",
                Some("b=1\n"),
            ),
            (
                json!({"line": "b=2", "match": "^b="}),
                Some("b=1\nb=3\n"),
                "ev ensure failure absent err multimatch",
                Some("b=1\nb=3\n"),
            ),
            (
                json!({"line": "new", "after": "^\\[s\\]"}),
                Some("[s]\nz"),
                "ev ensure success absent",
                Some("[s]\nnew\nz\n"),
            ),
            (
                json!({"line": "new", "after": "^\\[s\\]"}),
                Some("[s]\n[s]\n"),
                "ev ensure failure absent err multiafter 2",
                Some("[s]\n[s]\n"),
            ),
            (
                json!({"ensure": "absent", "line": "gone"}),
                Some("gone\nkeep\ngone"),
                "ev ensure success present",
                Some("keep\n"),
            ),
            (
                json!({"ensure": "absent", "match": "^g", "match_for_absence": true}),
                Some("keep\ngone"),
                "ev ensure success present",
                Some("keep\n"),
            ),
            (
                json!({"ensure": "absent", "line": "gone"}),
                Some("keep\nlast"),
                "",
                Some("keep\nlast"),
            ),
            (
                json!({"line": "k=v", "match": "^k=", "append_on_no_match": false}),
                Some("a\n"),
                "",
                Some("a\n"),
            ),
            (
                json!({"line": "k=v", "match": "^k=", "multiple": true,
                       "replace_all_matches_not_matching_line": true}),
                Some("k=v\nk=w\n"),
                "ev ensure success absent",
                Some("k=v\nk=v\n"),
            ),
            (
                json!({"line": "it's $x \\ %s"}),
                Some(""),
                "ev ensure success absent",
                Some("it's $x \\ %s\n"),
            ),
            (
                json!({"line": "a"}),
                None,
                "fail No such file or directory @ rb_sysopen - PATH",
                None,
            ),
        ];
        for (params, before, verdict, after) in cases {
            let f = fl(params.clone());
            let (got, file) = apply(&f, before.map(str::as_bytes), false);
            assert_eq!(got, verdict, "{params}");
            assert_eq!(
                file.as_deref(),
                after.map(str::as_bytes),
                "{params}: {:?}",
                file.as_deref().map(String::from_utf8_lossy)
            );
        }
        // noop: a missing file reads as empty, nothing is written.
        let (got, file) = apply(&fl(json!({"line": "a"})), None, true);
        assert_eq!(got, "ev ensure noop absent");
        assert_eq!(file, None);
    }

    #[test]
    fn refuses_what_puppet_refuses() {
        let err = |p: Value| FileLine::parse(&resource(p)).unwrap_err();
        assert_eq!(
            err(json!({"line": "a"})).message,
            "path is a required attribute"
        );
        assert_eq!(
            err(json!({"line": "a", "path": "rel"})).message,
            "File paths must be fully qualified, not 'rel'"
        );
        assert_eq!(
            err(json!({"path": "/x"})).message,
            "line is a required attribute"
        );
        assert_eq!(
            err(json!({"path": "/x", "line": "a", "match": "a",
                       "replace_all_matches_not_matching_line": true, "multiple": false}))
            .message,
            "multiple must be true when replace_all_matches_not_matching_line is true"
        );
        let e = err(json!({"path": "/x", "line": "a", "match": "(?=a)"}));
        assert_eq!(e.param, "match");
        assert!(e.message.contains("look-ahead"), "{}", e.message);
        assert_eq!(
            e.to_string(),
            "Parameter match failed on File_line[t]: ferry cannot translate a look-ahead in the regular expression '(?=a)' to a POSIX one"
        );
    }
}
