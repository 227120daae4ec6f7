//! Puppet's `file` type: ensure (file, present, directory, link, absent),
//! content and source (read on the controller, sent inline through the
//! `printf` builtin, never on a command line), target, owner, group, mode
//! (numeric and symbolic), replace, force and a suffix backup. New
//! content is written to a temporary file beside the path, given its mode
//! and owner, and renamed over it, so a file is never half-written.
//! Creating a file sets its content, mode and owner in the one `ensure`
//! change, as Puppet does; an existing file's properties change one event
//! each, in Puppet's order: content, owner, group, mode.

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::mode::{Mode, ModeError, display_current};
use super::{
    EventStatus, EventText, ParamError, SourceError, Sources, bool_param, display, list_param,
    param_error, text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::{printf_bytes, q, single_quoted};

/// What `ensure` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ensure {
    /// A regular file.
    File,
    /// Anything at the path; a regular file when there is nothing.
    Present,
    Directory,
    Link,
    Absent,
}

impl Ensure {
    fn as_str(self) -> &'static str {
        match self {
            Ensure::File => "file",
            Ensure::Present => "present",
            Ensure::Directory => "directory",
            Ensure::Link => "link",
            Ensure::Absent => "absent",
        }
    }
}

/// Content to put in the file.
#[derive(Debug, Clone)]
pub struct Content {
    pub bytes: Vec<u8>,
    pub sha256: String,
    pub sensitive: bool,
}

#[derive(Debug, Clone)]
pub struct File {
    pub path: String,
    /// `None`: manage only the properties of whatever is there.
    pub ensure: Option<Ensure>,
    pub content: Option<Content>,
    /// Sources on the target itself (absolute paths and `file://` URIs,
    /// as for a Puppet agent), tried in order before `content`, which
    /// holds the first `puppet:///` source found after them (if any).
    pub local_sources: Vec<String>,
    /// No source of the list could be read: the resource fails with this
    /// (on the target, when none of `local_sources` exists either).
    pub source_error: Option<String>,
    pub target: Option<String>,
    pub owner: Option<String>,
    pub group: Option<String>,
    pub mode: Option<Mode>,
    /// A mode Puppet accepts in the catalog but cannot apply: the
    /// resource fails with this when it is applied.
    pub mode_error: Option<String>,
    pub replace: bool,
    pub force: bool,
    /// A suffix for backups of replaced content (`backup => '.bak'`).
    pub backup_suffix: Option<String>,
    /// The content comes from the target's content cache (checked by
    /// sha256 there) rather than inside the program.
    pub cached: bool,
    /// `recurse` with a `puppet:///` source directory: the files and
    /// directories made under this one.
    pub recursion: Option<Recursion>,
    /// The program reads this path's state (and checksum) once, with all
    /// the others, before the first step ([`crate::apply::program`]'s
    /// prefetch), for as long as nothing has changed.
    pub prefetch: bool,
    /// `links => follow`: a link at the path is read through (its target's
    /// type, mode, owner and content), and modes and owners are set
    /// through it; a new body still replaces the link, as Puppet's
    /// rename over the path does.
    pub follow_links: bool,
}

/// What a directory copied from a source (`recurse`) manages below it.
#[derive(Debug, Clone)]
pub struct Recursion {
    /// One file resource per entry of the source tree, sorted by path
    /// (Puppet's generated resources, `File[PATH/REL]`).
    pub children: Vec<File>,
    /// `purge`: whatever else is below the directory is removed.
    pub purge: bool,
}

/// Whether a `recurse` value asks for recursion (`true`, `inf`, `remote`,
/// or a depth, which `recurselimit` also gives).
fn recurse_param(r: &Resource) -> Result<(bool, Option<u64>), ParamError> {
    let limit = |v: &Value| match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    let depth = match r.param("recurselimit") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            limit(v)
                .ok_or_else(|| param_error(r, "recurselimit", &format!("Invalid value {v}")))?,
        ),
    };
    Ok(match r.param("recurse") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => (false, depth),
        Some(Value::Bool(true)) => (true, depth),
        Some(Value::String(s)) if s == "false" => (false, depth),
        Some(Value::String(s)) if matches!(s.as_str(), "true" | "inf" | "remote") => (true, depth),
        Some(v) => match limit(v) {
            Some(n) => (n > 0, depth.or(Some(n))),
            None => {
                return Err(param_error(
                    r,
                    "recurse",
                    &format!("Invalid recurse value {v}"),
                ));
            }
        },
    })
}

/// A content a shell variable can hold: UTF-8 without NUL.
fn text_content(c: &Content) -> Option<&str> {
    std::str::from_utf8(&c.bytes)
        .ok()
        .filter(|t| !t.contains('\0'))
}

/// The path on the target a source names: an absolute path or a
/// `file:///` URI (a Puppet agent reads those on its own node).
fn local_source(uri: &str) -> Option<String> {
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    path.starts_with('/').then(|| path.to_string())
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl File {
    pub fn parse(r: &Resource, sources: &dyn Sources) -> Result<File, ParamError> {
        let path = super::path_param(r, true)?;
        let path = if path.len() > 1 {
            path.trim_end_matches('/').to_string()
        } else {
            path
        };
        let target = text_param(r, "target")?;
        let content_text = text_param(r, "content")?;
        let source = list_param(r, "source")?;
        if content_text.is_some() && !source.is_empty() {
            return Err(param_error(
                r,
                "source",
                "You cannot specify more than one of content, source, target",
            ));
        }
        let ensure = match text_param(r, "ensure")?.as_deref() {
            None => {
                if content_text.is_some() || !source.is_empty() {
                    Some(Ensure::File)
                } else if target.is_some() {
                    Some(Ensure::Link)
                } else {
                    None
                }
            }
            Some("file") => Some(Ensure::File),
            Some("present") => Some(Ensure::Present),
            Some("directory") => Some(Ensure::Directory),
            Some("link") => Some(Ensure::Link),
            Some("absent") | Some("false") => Some(Ensure::Absent),
            Some(other) if other.starts_with('/') => {
                // Puppet takes a path as ensure: a link to it.
                return Ok(File {
                    target: Some(other.to_string()),
                    ensure: Some(Ensure::Link),
                    ..File::parse_rest(r, path, None, None, None)?
                });
            }
            Some(other) => {
                return Err(param_error(
                    r,
                    "ensure",
                    &format!(
                        "Invalid value \"{other}\". Valid values are absent, false, file, present, directory, link. Valid values match /./."
                    ),
                ));
            }
        };
        if ensure == Some(Ensure::Link) && target.is_none() {
            return Err(param_error(r, "target", "ensure => link needs a target"));
        }
        let mut source_error = None;
        let mut local_sources = Vec::new();
        let (recurse, depth) = recurse_param(r)?;
        if recurse && ensure != Some(Ensure::Absent) {
            let mut f = File::parse_rest(r, path, Some(Ensure::Directory), None, None)?;
            match f.recurse(r, &source, depth, sources) {
                Ok(rec) => f.recursion = Some(rec),
                Err(why) => f.source_error = Some(why),
            }
            return Ok(f);
        }
        let content = match content_text {
            Some(text) => Some(Content {
                sha256: sha256_hex(text.as_bytes()),
                bytes: text.into_bytes(),
                sensitive: r.is_sensitive("content"),
            }),
            None if !source.is_empty() => {
                let mut found = None;
                let mut errors = Vec::new();
                for uri in &source {
                    if let Some(p) = local_source(uri) {
                        local_sources.push(p);
                        continue;
                    }
                    match sources.read(uri) {
                        Ok(bytes) => {
                            found = Some(bytes);
                            break;
                        }
                        Err(SourceError::NotFound(_)) => {}
                        Err(e) => {
                            errors.push(e.to_string());
                            break;
                        }
                    }
                }
                if found.is_none() {
                    // Puppet's words, with the local paths as file:// URIs.
                    let shown: Vec<String> = source
                        .iter()
                        .map(|u| match local_source(u) {
                            Some(p) if !u.starts_with("file:") => format!("file://{p}"),
                            _ => u.clone(),
                        })
                        .collect();
                    let mut message = format!(
                        "Could not retrieve information from environment {} source(s) {}",
                        sources.environment(),
                        shown.join(", ")
                    );
                    if !errors.is_empty() {
                        message = format!("{message}: {}", errors.join("; "));
                    }
                    source_error = Some(message);
                }
                found.map(|bytes| Content {
                    sha256: sha256_hex(&bytes),
                    bytes,
                    sensitive: r.is_sensitive("source"),
                })
            }
            None => None,
        };
        let mut f = File::parse_rest(r, path, ensure, content, target)?;
        f.source_error = source_error;
        f.local_sources = local_sources;
        Ok(f)
    }

    fn parse_rest(
        r: &Resource,
        path: String,
        ensure: Option<Ensure>,
        content: Option<Content>,
        target: Option<String>,
    ) -> Result<File, ParamError> {
        let (mode, mode_error) = match text_param(r, "mode")? {
            Some(m) => match Mode::parse(&m) {
                Ok(mode) => (Some(mode), None),
                Err(e @ ModeError::XNotPlus { .. }) => (None, Some(e.to_string())),
                Err(e) => return Err(param_error(r, "mode", &e.to_string())),
            },
            None => (None, None),
        };
        let backup_suffix = match r.param("backup") {
            Some(Value::String(s)) if s.starts_with('.') => Some(s.clone()),
            _ => None,
        };
        Ok(File {
            path,
            ensure,
            content,
            local_sources: Vec::new(),
            source_error: None,
            target,
            owner: text_param(r, "owner")?,
            group: text_param(r, "group")?,
            mode,
            mode_error,
            replace: bool_param(r, "replace", true)?,
            force: bool_param(r, "force", false)?,
            backup_suffix,
            cached: false,
            recursion: None,
            prefetch: false,
            follow_links: match text_param(r, "links")?.as_deref() {
                None | Some("manage") | Some("ignore") => false,
                Some("follow") => true,
                Some(other) => {
                    return Err(param_error(
                        r,
                        "links",
                        &format!(
                            "Invalid value \"{other}\". Valid values are follow, manage, ignore."
                        ),
                    ));
                }
            },
        })
    }

    /// The mode a new file or directory starts from (Puppet's umask 022).
    fn base_mode(&self) -> u32 {
        if self.ensure == Some(Ensure::Directory) {
            0o755
        } else {
            0o644
        }
    }

    /// The children of a directory copied recursively from the first
    /// `puppet:///` source that is a directory; what ferry cannot copy
    /// (no source, a source on the target) fails the resource with the
    /// reason.
    fn recurse(
        &self,
        r: &Resource,
        source: &[String],
        depth: Option<u64>,
        sources: &dyn Sources,
    ) -> Result<Recursion, String> {
        if let Some(v) = r.param("ignore").filter(|v| !v.is_null()) {
            return Err(format!(
                "ferry does not apply recurse with ignore ({v}) yet"
            ));
        }
        let purge = bool_param(r, "purge", false).map_err(|e| e.message)?;
        let mut tree = None;
        for uri in source {
            if local_source(uri).is_some() {
                return Err(format!(
                    "ferry copies directories recursively from puppet:///modules sources only, not {uri}"
                ));
            }
            match sources.tree(uri) {
                Ok(Some(entries)) => {
                    tree = Some((uri, entries));
                    break;
                }
                Ok(None) | Err(SourceError::NotFound(_)) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        let Some((uri, entries)) = tree else {
            return Err(if source.is_empty() {
                "ferry applies recurse only with a puppet:///modules source directory".to_string()
            } else {
                format!(
                    "Could not retrieve information from environment {} source(s) {}",
                    sources.environment(),
                    source.join(", ")
                )
            });
        };
        let mut children = Vec::new();
        for (rel, is_dir) in entries {
            if depth.is_some_and(|d| rel.split('/').count() as u64 > d) {
                continue;
            }
            let content = if is_dir {
                None
            } else {
                let bytes = sources
                    .read(&format!("{uri}/{rel}"))
                    .map_err(|e| e.to_string())?;
                Some(Content {
                    sha256: sha256_hex(&bytes),
                    bytes,
                    sensitive: r.is_sensitive("source"),
                })
            };
            children.push(File {
                path: format!("{}/{rel}", self.path.trim_end_matches('/')),
                ensure: Some(if is_dir {
                    Ensure::Directory
                } else {
                    Ensure::File
                }),
                content,
                local_sources: Vec::new(),
                source_error: None,
                target: None,
                owner: self.owner.clone(),
                group: self.group.clone(),
                mode: self.mode.clone(),
                mode_error: self.mode_error.clone(),
                replace: self.replace,
                force: false,
                backup_suffix: self.backup_suffix.clone(),
                cached: false,
                recursion: None,
                prefetch: false,
                follow_links: self.follow_links,
            });
        }
        children.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        Ok(Recursion { children, purge })
    }

    /// The generated resource `rel` below this recursing directory: the
    /// source tree's entry, or, for what purge removed, the path absent.
    pub fn generated(&self, rel: &str) -> File {
        let path = format!("{}/{rel}", self.path.trim_end_matches('/'));
        let child = self
            .recursion
            .as_ref()
            .and_then(|r| r.children.iter().find(|c| c.path == path));
        match child {
            Some(c) => c.clone(),
            None => File {
                path,
                ensure: Some(Ensure::Absent),
                content: None,
                local_sources: Vec::new(),
                recursion: None,
                prefetch: false,
                ..self.clone()
            },
        }
    }

    /// Whether the file has a body to write: content, or a source.
    fn has_body(&self) -> bool {
        self.content.is_some() || !self.local_sources.is_empty()
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        if self.source_error.is_some() && self.local_sources.is_empty() {
            let _ = writeln!(out, "_fail {n} source");
            return;
        }
        let p = q(&self.path);
        let step = if self.prefetch {
            format!(" {n}")
        } else {
            String::new()
        };
        let _ = writeln!(out, "_p={p}\n_st \"$_p\"{step}");
        if self.follow_links {
            out.push_str(
                "if [ \"$_ft\" = link ] && [ -e \"$_p\" ]; then\n\
                 if [ -d \"$_p\" ]; then _ft=directory; elif [ -f \"$_p\" ]; then _ft=file; else _ft=other; fi\n\
                 set -- $(stat -L -c '%a %U %G %u %g' -- \"$_p\" 2>/dev/null); _fm=$1 _fu=$2 _fg=$3 _fuid=$4 _fgid=$5\n\
                 fi\n",
            );
        }
        // The wanted body's sha256 (`_ws`): the content's, or that of the
        // first source on the target that exists (`_src`).
        let mut close = "";
        if self.has_body() {
            let sha = self.content.as_ref().map(|c| c.sha256.as_str());
            let _ = writeln!(out, "_src= _ws={}", sha.unwrap_or_default());
            if !self.local_sources.is_empty() {
                let list: Vec<String> = self.local_sources.iter().map(|s| q(s)).collect();
                let _ = writeln!(
                    out,
                    "for _q in {}; do if [ -f \"$_q\" ]; then _src=$_q; _sum \"$_q\"; _ws=$_h; break; fi; done",
                    list.join(" ")
                );
                if sha.is_none() {
                    let _ = writeln!(out, "if [ -z \"$_src\" ]; then _fail {n} source; else :");
                    close = "fi\n";
                }
            }
        }
        // Text content is in the program once, in `_cv`, whichever way
        // the file is written.
        if let Some(text) = self
            .content
            .as_ref()
            .filter(|_| !self.cached && !noop)
            .and_then(text_content)
        {
            let _ = writeln!(out, "_cv={}", single_quoted(text));
        }
        self.script_body(out, n, noop);
        out.push_str(close);
        if let Some(rec) = &self.recursion {
            self.script_children(out, n, noop, rec);
        }
    }

    /// A recursing directory's generated resources, each announced with a
    /// `gen` line: the source tree's entries in order, then (`purge`)
    /// whatever else is below the directory, each top-most one removed.
    fn script_children(&self, out: &mut String, n: usize, noop: bool, rec: &Recursion) {
        let base = self.path.trim_end_matches('/');
        for child in &rec.children {
            let rel = child.path[base.len()..].trim_start_matches('/');
            let _ = writeln!(out, "_e {n} gen {}", q(rel));
            child.script(out, n, noop);
        }
        if !rec.purge {
            return;
        }
        let keep: String = rec
            .children
            .iter()
            .map(|c| format!("{}\n", c.path[base.len()..].trim_start_matches('/')))
            .collect();
        let gone = File {
            path: String::new(),
            ensure: Some(Ensure::Absent),
            force: self.force,
            ..self.clone()
        };
        let mut remove = String::new();
        gone.script_absent(&mut remove, n, noop);
        let _ = write!(
            out,
            "_b={b}\n_keep={keep}\n\
             if [ -d \"$_b\" ] && [ ! -h \"$_b\" ]; then\n\
             _list=$(cd \"$_b\" && find . -mindepth 1 2>/dev/null | LC_ALL=C sort)\n\
             _gone=; _oifs=$IFS; set -f; IFS='\n'\n\
             for _q in $_list; do\n\
             IFS=$_oifs; _q=${{_q#./}}\n\
             case \"$_keep\" in *\"\n$_q\n\"*) IFS='\n'; continue ;; esac\n\
             if [ -n \"$_gone\" ]; then case $_q in \"$_gone\"/*) _e {n} gen \"$_q\"; IFS='\n'; continue ;; esac; fi\n\
             if [ ! -e \"$_b/$_q\" ] && [ ! -h \"$_b/$_q\" ]; then IFS='\n'; continue; fi\n\
             {mark}\
             _e {n} gen \"$_q\"\n\
             _p=\"$_b/$_q\"; _st \"$_p\"\n\
             {remove}\
             IFS='\n'\n\
             done\n\
             IFS=$_oifs; set +f\n\
             fi\n",
            b = q(base),
            keep = q(&format!("\n{keep}")),
            // What a removed directory held is reported, with nothing
            // left to do; in noop nothing is removed, so each is its own.
            mark = if noop { "" } else { "_gone=$_q\n" },
        );
    }

    fn script_body(&self, out: &mut String, n: usize, noop: bool) {
        if let Some(e) = &self.mode_error {
            if noop {
                let _ = writeln!(out, "[ \"$_ft\" = absent ] && _ev {n} ensure noop absent");
                return;
            }
            let _ = writeln!(
                out,
                "if [ \"$_ft\" = absent ]; then _ev {n} ensure failure absent {e}; else _ev {n} mode failure \"$_fm\" {e}; fi",
                e = q(e)
            );
            return;
        }
        match self.ensure {
            Some(Ensure::File) | Some(Ensure::Present) => self.script_file(out, n, noop),
            Some(Ensure::Directory) => self.script_directory(out, n, noop),
            Some(Ensure::Link) => self.script_link(out, n, noop),
            Some(Ensure::Absent) => self.script_absent(out, n, noop),
            None => {
                let _ = writeln!(
                    out,
                    "if [ \"$_ft\" != absent ] && [ \"$_ft\" != link ]; then"
                );
                self.script_content(out, n, noop);
                self.script_properties(out, n, noop);
                out.push_str("fi\n");
            }
        }
    }

    /// Commands that make the file's new body at `$_t` with its mode and
    /// owner (`_wm` computed), then rename it over the path.
    fn write_new(&self, keep_owner: bool) -> String {
        let from_content = match &self.content {
            Some(c) if self.cached => format!("_blob {} \"$_t\"", c.sha256),
            Some(c) if text_content(c).is_some() => "printf '%s' \"$_cv\" > \"$_t\"".to_string(),
            Some(c) => format!("{} > \"$_t\"", printf_bytes(&c.bytes)),
            None => ": > \"$_t\"".to_string(),
        };
        let write = if self.local_sources.is_empty() {
            from_content
        } else {
            format!("if [ -n \"$_src\" ]; then cp -- \"$_src\" \"$_t\"; else {from_content}; fi")
        };
        let mut cmds = vec![format!("(umask 077; {write})")];
        cmds.push("chmod \"$_wm\" \"$_t\"".to_string());
        match (&self.owner, &self.group) {
            (Some(o), Some(g)) => cmds.push(format!("chown {}:{} \"$_t\"", q(o), q(g))),
            (Some(o), None) => cmds.push(format!("chown {} \"$_t\"", q(o))),
            (None, Some(g)) => cmds.push(format!("chgrp {} \"$_t\"", q(g))),
            (None, None) => {}
        }
        if keep_owner && self.owner.is_none() && self.group.is_none() {
            cmds.push("{ [ \"$(id -u)\" != 0 ] || chown \"$_fuid:$_fgid\" \"$_t\"; }".into());
        }
        cmds.push("mv -f \"$_t\" \"$_p\"".to_string());
        cmds.join(" && ")
    }

    fn script_file(&self, out: &mut String, n: usize, noop: bool) {
        let want = self.ensure.map(Ensure::as_str).unwrap_or("file");
        let mode = self
            .mode
            .as_ref()
            .map(|m| m.script(0o644))
            .unwrap_or_else(|| format!("_wm={:o}\n", self.base_mode()));
        // Present: anything already there will do.
        if self.ensure == Some(Ensure::Present) {
            let _ = writeln!(out, "if [ \"$_ft\" != absent ]; then :");
            self.script_content(out, n, noop);
            self.script_properties(out, n, noop);
            out.push_str("else\n");
        } else {
            out.push_str("case $_ft in\nfile)\n");
            self.script_content(out, n, noop);
            self.script_properties(out, n, noop);
            out.push_str(";;\n*)\n");
        }
        // Nothing there, or something else in the way.
        let ws = if self.has_body() { " \"$_ws\"" } else { "" };
        out.push_str("_prev=$_ft\n");
        if noop {
            let _ = writeln!(out, "_ev {n} ensure noop \"$_prev\"{ws}");
        } else {
            let remove = if self.force {
                "rm -rf -- \"$_p\""
            } else {
                "{ [ \"$_ft\" != directory ] || { echo 'Could not remove existing directory; use force to override' >&2; false; }; } && rm -f -- \"$_p\""
            };
            let write_new = self.write_new(false);
            let _ = write!(
                out,
                "_t=\"$_p.ferrytmp.$$\"\n_ft=file\n{mode}_ft=$_prev\n\
                 if _err=$({{ {{ [ \"$_ft\" = absent ] || {remove}; }} && {write}; }} 2>&1); then _ev {n} ensure success \"$_prev\"{ws}\n\
                 else rm -f -- \"$_t\"; _ev {n} ensure failure \"$_prev\" \"$_err\"; fi\n",
                write = write_new,
            );
        }
        if self.ensure == Some(Ensure::Present) {
            out.push_str("fi\n");
        } else {
            out.push_str(";;\nesac\n");
        }
        let _ = want;
    }

    /// Replaces the content of an existing regular file when it differs.
    fn script_content(&self, out: &mut String, n: usize, noop: bool) {
        if !self.has_body() || !self.replace {
            return;
        }
        let _ = writeln!(
            out,
            "if [ \"$_ft\" = file ]; then _sum \"$_p\"{}; if [ \"$_h\" != \"$_ws\" ]; then",
            if self.prefetch {
                format!(" {n}")
            } else {
                String::new()
            }
        );
        if noop {
            let _ = writeln!(out, "_ev {n} content noop \"$_h\" \"$_ws\"");
        } else {
            let backup = match &self.backup_suffix {
                Some(sfx) => format!("cp -p -- \"$_p\" \"$_p\"{} && ", q(sfx)),
                None => String::new(),
            };
            let write_new = self.write_new(true);
            let _ = writeln!(
                out,
                "_t=\"$_p.ferrytmp.$$\" _wm=$_fm\n\
                 if _err=$({{ {backup}{}; }} 2>&1); then _ev {n} content success \"$_h\" \"$_ws\"\n\
                 else rm -f -- \"$_t\"; _ev {n} content failure \"$_h\" \"$_err\"; fi",
                write_new
            );
        }
        out.push_str("fi; fi\n");
    }

    /// Owner, group and mode of something that exists.
    fn script_properties(&self, out: &mut String, n: usize, noop: bool) {
        for (prop, db, who, tool, cur_name, cur_id) in [
            ("owner", "passwd", "user", "chown", "_fu", "_fuid"),
            ("group", "group", "group", "chgrp", "_fg", "_fgid"),
        ] {
            let wanted = if prop == "owner" {
                &self.owner
            } else {
                &self.group
            };
            let Some(w) = wanted else { continue };
            // Already owned as wanted (by name, or by id when a number is
            // given): in sync, with no lookup. Otherwise the wanted name
            // and id come from the target's own databases.
            let same = if w.bytes().all(|b| b.is_ascii_digit()) {
                format!("[ \"${cur_id}\" = {w} ]")
            } else {
                format!("[ \"${cur_name}\" = {} ]", q(w))
            };
            let _ = writeln!(
                out,
                "if ! {same}; then\n\
                 _w=$(getent {db} {w} 2>/dev/null) || _w=\n\
                 if [ -z \"$_w\" ]; then _ev {n} {prop} failure \"${cur_name}\" 'Could not find {who} '{w}\n\
                 else _wn=${{_w%%:*}}; _r=${{_w#*:}}; _r=${{_r#*:}}; _wid=${{_r%%:*}}\n\
                 if [ \"${cur_id}\" != \"$_wid\" ]; then",
                w = q(w)
            );
            let fields = format!("\"${cur_name}\" \"${cur_id}\" \"$_wn\" \"$_wid\"");
            if noop {
                let _ = writeln!(out, "_ev {n} {prop} noop {fields}");
            } else {
                let _ = writeln!(
                    out,
                    "if _err=$({tool}{h} \"$_wid\" \"$_p\" 2>&1); then _ev {n} {prop} success {fields}; else _ev {n} {prop} failure \"${cur_name}\" \"$_err\"; fi",
                    h = if self.follow_links { "" } else { " -h" }
                );
            }
            out.push_str("fi; fi; fi\n");
        }
        if let Some(m) = &self.mode {
            out.push_str(&m.script(self.base_mode()));
            let _ = writeln!(out, "if [ $((0$_wm)) -ne $((0${{_fm:-0}})) ]; then");
            if noop {
                let _ = writeln!(out, "_ev {n} mode noop \"$_fm\" \"$_wm\"");
            } else {
                let _ = writeln!(
                    out,
                    "if _err=$(chmod \"$_wm\" \"$_p\" 2>&1); then _ev {n} mode success \"$_fm\" \"$_wm\"; else _ev {n} mode failure \"$_fm\" \"$_err\"; fi"
                );
            }
            out.push_str("fi\n");
        }
    }

    fn script_directory(&self, out: &mut String, n: usize, noop: bool) {
        out.push_str("if [ \"$_ft\" = directory ]; then :\n");
        self.script_properties(out, n, noop);
        out.push_str("else\n_prev=$_ft\n");
        if noop {
            let _ = writeln!(out, "_ev {n} ensure noop \"$_prev\"");
        } else {
            let mode = self
                .mode
                .as_ref()
                .map(|m| m.script(0o755))
                .unwrap_or_else(|| "_wm=755\n".into());
            let mut cmds = vec![
                "{ [ \"$_prev\" = absent ] || rm -f -- \"$_p\"; }".to_string(),
                "mkdir -- \"$_p\"".into(),
                "chmod \"$_wm\" \"$_p\"".into(),
            ];
            if let Some(o) = &self.owner {
                cmds.push(format!("chown {} \"$_p\"", q(o)));
            }
            if let Some(g) = &self.group {
                cmds.push(format!("chgrp {} \"$_p\"", q(g)));
            }
            let _ = write!(
                out,
                "_ft=directory\n{mode}_ft=$_prev\n\
                 if _err=$({{ {}; }} 2>&1); then _ev {n} ensure success \"$_prev\"; else _ev {n} ensure failure \"$_prev\" \"$_err\"; fi\n",
                cmds.join(" && ")
            );
        }
        out.push_str("fi\n");
    }

    fn script_link(&self, out: &mut String, n: usize, noop: bool) {
        let target = q(self.target.as_deref().unwrap_or_default());
        let _ = writeln!(
            out,
            "if [ \"$_ft\" = link ]; then _lt=$(readlink -- \"$_p\"); if [ \"$_lt\" != {target} ]; then"
        );
        if noop {
            let _ = writeln!(out, "_ev {n} target noop \"$_lt\"");
        } else {
            let _ = writeln!(
                out,
                "if _err=$({{ rm -f -- \"$_p\" && ln -s -- {target} \"$_p\"; }} 2>&1); then _ev {n} target success \"$_lt\"; else _ev {n} target failure \"$_lt\" \"$_err\"; fi"
            );
        }
        out.push_str("fi\nelse\n_prev=$_ft\n");
        if noop {
            let _ = writeln!(out, "_ev {n} ensure noop \"$_prev\"");
        } else {
            let remove = if self.force { "rm -rf" } else { "rm -f" };
            let _ = writeln!(
                out,
                "if _err=$({{ {{ [ \"$_prev\" = absent ] || {remove} -- \"$_p\"; }} && ln -s -- {target} \"$_p\"; }} 2>&1); then _ev {n} ensure success \"$_prev\"; else _ev {n} ensure failure \"$_prev\" \"$_err\"; fi"
            );
        }
        out.push_str("fi\n");
    }

    fn script_absent(&self, out: &mut String, n: usize, noop: bool) {
        out.push_str("if [ \"$_ft\" != absent ]; then\n_prev=$_ft\n");
        if noop {
            let _ = writeln!(out, "_ev {n} ensure noop \"$_prev\"");
        } else if self.force {
            let _ = writeln!(
                out,
                "if _err=$(rm -rf -- \"$_p\" 2>&1); then _ev {n} ensure success \"$_prev\"; else _ev {n} ensure failure \"$_prev\" \"$_err\"; fi"
            );
        } else {
            let _ = writeln!(
                out,
                "if [ \"$_prev\" = directory ]; then _e {n} notice 'Not removing directory; use '\\''force'\\'' to override'; _ev {n} ensure success directory\n\
                 elif _err=$(rm -f -- \"$_p\" 2>&1); then _ev {n} ensure success \"$_prev\"; else _ev {n} ensure failure \"$_prev\" \"$_err\"; fi"
            );
        }
        out.push_str("fi\n");
    }

    /// `ensure` as the catalog gave it (`present` stays `present`).
    fn desired_ensure(&self) -> &'static str {
        match self.ensure {
            None => "file",
            Some(e) => e.as_str(),
        }
    }

    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        let sensitive = self.content.as_ref().is_some_and(|c| c.sensitive);
        let fields: Vec<&str> = detail.split('\t').collect();
        let field = |i: usize| fields.get(i).copied().unwrap_or_default();
        let number = |s: &str| {
            s.parse::<u64>()
                .map(Value::from)
                .unwrap_or_else(|_| Value::String(s.into()))
        };
        // The wanted body's sha256, as the program reported it (a source
        // on the target is known only there), else the content's.
        let wanted_sha: Option<String> = match (property, status) {
            ("ensure" | "content", EventStatus::Success | EventStatus::Noop)
                if !field(0).is_empty() =>
            {
                Some(field(0).to_string())
            }
            _ => self.content.as_ref().map(|c| c.sha256.clone()),
        };
        // (previous value, desired value, how each reads in messages)
        let (prev_v, desired_v, prev_s, desired_s): (Value, Value, String, String) = match property
        {
            "ensure" => {
                let d = self.desired_ensure().to_string();
                (
                    previous.into(),
                    d.clone().into(),
                    display(previous),
                    display(&d),
                )
            }
            "content" => {
                let new = wanted_sha
                    .as_ref()
                    .map(|sha| format!("{{sha256}}{sha}"))
                    .unwrap_or_default();
                let old = format!("{{sha256}}{previous}");
                // Puppet's report holds the wanted checksum base64-encoded
                // (a binary Ruby string), the current one as text.
                let encoded =
                    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &new);
                (
                    old.clone().into(),
                    encoded.into(),
                    display(&old),
                    display(&new),
                )
            }
            "mode" => {
                let wanted = self.mode.as_ref().map(Mode::display).unwrap_or_default();
                let set = display_current(field(0));
                let shown = match &self.mode {
                    Some(Mode::Symbolic(text, _)) => format!("{} ({text})", display(&set)),
                    _ => display(&set),
                };
                let prev = display_current(previous);
                // A numeric mode is shown as set (a directory's gains
                // search bits); a symbolic one as written.
                let wanted = match &self.mode {
                    Some(Mode::Symbolic(..)) => wanted,
                    _ if !field(0).is_empty() => set.clone(),
                    _ => wanted,
                };
                (prev.clone().into(), wanted.into(), display(&prev), shown)
            }
            "owner" | "group" if status != EventStatus::Failure => (
                number(field(0)),
                number(field(2)),
                display(previous),
                display(field(1)),
            ),
            _ => {
                let d = match property {
                    "owner" => self.owner.clone(),
                    "group" => self.group.clone(),
                    "target" => self.target.clone(),
                    _ => None,
                }
                .unwrap_or_default();
                (
                    previous.into(),
                    d.clone().into(),
                    display(previous),
                    display(&d),
                )
            }
        };
        let redacted = sensitive && matches!(property, "content" | "ensure");
        let message = match status {
            EventStatus::Noop if redacted => {
                "current_value [redacted], should be [redacted] (noop)".into()
            }
            EventStatus::Noop => format!("current_value {prev_s}, should be {desired_s} (noop)"),
            EventStatus::Failure => format!(
                "change from {} to {} failed: {}",
                if redacted { "[redacted]" } else { &prev_s },
                if redacted { "[redacted]" } else { &desired_s },
                failure_detail(
                    property,
                    self.desired_ensure(),
                    detail,
                    self.mode_error.is_some()
                )
            ),
            EventStatus::Success if redacted => "changed [redacted] to [redacted]".into(),
            EventStatus::Success => match property {
                "ensure" if previous == "absent" || self.has_body() => {
                    match (&wanted_sha, self.desired_ensure()) {
                        (Some(sha), "file" | "present") => {
                            format!("defined content as '{{sha256}}{sha}'")
                        }
                        _ => "created".into(),
                    }
                }
                "ensure" if self.desired_ensure() == "absent" => "removed".into(),
                other => format!("{other} changed {prev_s} to {desired_s}"),
            },
        };
        let (previous, desired) = if redacted {
            (
                Value::String("[redacted]".into()),
                Value::String("[redacted]".into()),
            )
        } else {
            (prev_v, desired_v)
        };
        EventText {
            previous,
            desired,
            message,
            redacted,
        }
    }

    pub fn failure(&self, code: &str) -> String {
        match (code, &self.source_error) {
            ("source", Some(e)) => e.clone(),
            _ => code.to_string(),
        }
    }
}

fn failure_detail(property: &str, desired: &str, detail: &str, raw: bool) -> String {
    let detail = detail.trim();
    if property == "ensure" && !raw {
        format!("Could not set '{desired}' on ensure: {detail}")
    } else {
        detail.to_string()
    }
}
