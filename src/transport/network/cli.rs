//! What a network device's CLI looks like, as pure functions over text: the
//! [`Platform`]s ferry knows, their prompts (user `>`, privileged `#`,
//! configuration `(config…)#`) and which [`Mode`] each means, and how the
//! bytes a command brought back become its output: terminal escapes and
//! carriage returns removed, the echoed command, the closing prompt and the
//! lines around it stripped, the platform's error lines picked out. Each
//! platform's commands (paging off, enable, configuration mode, save) and
//! error lines are [`super::platform`]'s tables. No I/O: [`super::session`]
//! feeds it what the device sent.

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use regex::Regex;

use super::platform::{self, Profile, PromptStyle};

/// The kinds of device CLI ferry knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    /// FRRouting's vtysh.
    Frr,
    /// Cisco IOS and IOS XE.
    Ios,
    /// Arista EOS.
    Eos,
    /// Juniper Junos (operational `>`, configuration `#`).
    Junos,
    /// Any CLI with `>`/`#` prompts and `%` error lines.
    Generic,
}

/// A platform name ferry does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown platform '{0}' (known: frr, ios, eos, junos, generic)")]
pub struct UnknownPlatform(String);

impl FromStr for Platform {
    type Err = UnknownPlatform;
    fn from_str(s: &str) -> Result<Platform, UnknownPlatform> {
        match s {
            "frr" => Ok(Platform::Frr),
            "ios" => Ok(Platform::Ios),
            "eos" => Ok(Platform::Eos),
            "junos" => Ok(Platform::Junos),
            "generic" => Ok(Platform::Generic),
            other => Err(UnknownPlatform(other.to_string())),
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Platform::Frr => "frr",
            Platform::Ios => "ios",
            Platform::Eos => "eos",
            Platform::Junos => "junos",
            Platform::Generic => "generic",
        })
    }
}

/// Where a CLI session stands, as its prompt shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `host>`: show commands only; `enable` leads on.
    User,
    /// `host#` (Junos: `user@host>`).
    Privileged,
    /// `host(config…)#` (Junos: `user@host#`).
    Config,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::User => "user",
            Mode::Privileged => "privileged",
            Mode::Config => "config",
        })
    }
}

/// A prompt the device printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    /// The name before the mode marks (`r1`, `admin@mx1`).
    pub host: String,
    /// The configuration context in parentheses (`config-router`), if any.
    pub context: Option<String>,
    pub mode: Mode,
}

/// One platform's CLI (or a user's prompt override of it).
#[derive(Clone, Debug)]
pub struct Dialect {
    pub platform: Platform,
    /// The user's `prompt` regex, which then decides alone what a prompt is.
    custom: Option<Regex>,
}

/// A constant pattern, compiled on first use.
fn constant(re: &'static str) -> Regex {
    Regex::new(re).expect("a constant pattern compiles")
}

/// `host`, an optional `(context)`, then `>` or `#`: IOS-style prompts.
static IOS_PROMPT: LazyLock<Regex> = LazyLock::new(|| {
    constant(r"^(?P<host>[A-Za-z0-9_][\w.\-:/@]*)(?:\((?P<ctx>[^)]*)\))?(?P<end>[>#])\s?$")
});
/// `user@host>` or `user@host#`.
static JUNOS_PROMPT: LazyLock<Regex> =
    LazyLock::new(|| constant(r"^(?:\{[^}]*\}\s*)?(?P<host>[\w.\-]+@[\w.\-]+)(?P<end>[>#])\s?$"));
/// A pager's "more" prompt.
static PAGER: LazyLock<Regex> = LazyLock::new(|| constant(r"(?i)^\s*-+\s*\(?more\b.*$"));
/// A password prompt (after `enable`).
static PASSWORD: LazyLock<Regex> = LazyLock::new(|| constant(r"(?i)password:\s*$"));

impl Dialect {
    /// The dialect of `platform`; `prompt` (a user's regex, matched against
    /// the last line the device printed) replaces the platform's own.
    pub fn new(platform: Platform, prompt: Option<Regex>) -> Dialect {
        Dialect {
            platform,
            custom: prompt,
        }
    }

    /// Whether a user's regex decides what a prompt is (its prompts then
    /// carry no host name).
    pub fn is_custom(&self) -> bool {
        self.custom.is_some()
    }

    /// Whether the prompt names the configuration block the session is in
    /// (`(config-router)`), so that entering one shows.
    pub fn shows_context(&self) -> bool {
        self.custom.is_none() && self.profile().prompt_style == PromptStyle::Ios
    }

    /// The platform's commands, prompts and error lines.
    pub fn profile(&self) -> &'static Profile {
        platform::profile(self.platform)
    }

    /// The commands that stop the device from paging output.
    pub fn paging_off(&self) -> &'static [&'static str] {
        self.profile().paging_off
    }

    /// The command that leads from user to privileged mode, if the
    /// platform has one.
    pub fn enable(&self) -> Option<&'static str> {
        self.profile().enable
    }

    /// The command that enters configuration mode.
    pub fn configure(&self) -> &'static str {
        self.profile().configure
    }

    /// The command that leaves configuration mode from any depth.
    pub fn end(&self) -> &'static str {
        self.profile().end
    }

    /// The command that prints the running configuration.
    pub fn show_running(&self) -> &'static str {
        self.profile().show_running
    }

    /// The command that saves the running configuration to startup, where
    /// one is needed.
    pub fn save(&self) -> Option<&'static str> {
        self.profile().save
    }

    /// The command that makes configuration lines take effect, on a
    /// platform with a candidate configuration.
    pub fn commit(&self) -> Option<&'static str> {
        self.profile().commit
    }

    /// The command that throws away an uncommitted candidate.
    pub fn discard(&self) -> Option<&'static str> {
        self.profile().discard
    }

    /// The prompt `line` (the last, unfinished line the device printed) is,
    /// if it is one; with `host`, only a prompt for that host counts, so
    /// output that happens to end in `#` is not taken for one.
    pub fn prompt(&self, line: &str, host: Option<&str>) -> Option<Prompt> {
        let line = line.trim_start();
        if let Some(custom) = &self.custom {
            let caps = custom.captures(line)?;
            let text = caps.get(0).map_or("", |m| m.as_str()).trim_end();
            let mode = if text.contains("(config") {
                Mode::Config
            } else if text.ends_with('>') {
                Mode::User
            } else {
                Mode::Privileged
            };
            return Some(Prompt {
                host: String::new(),
                context: None,
                mode,
            });
        }
        let builtin = match self.profile().prompt_style {
            PromptStyle::Junos => &*JUNOS_PROMPT,
            PromptStyle::Ios => &*IOS_PROMPT,
        };
        let caps = builtin.captures(line)?;
        let found = caps.name("host").map_or("", |m| m.as_str());
        if host.is_some_and(|h| h != found) {
            return None;
        }
        let context = caps.name("ctx").map(|m| m.as_str().to_string());
        let end = caps.name("end").map_or("", |m| m.as_str());
        let mode = match (self.profile().prompt_style, end) {
            (PromptStyle::Junos, ">") => Mode::Privileged,
            (PromptStyle::Junos, _) => Mode::Config,
            (_, ">") => Mode::User,
            _ if context.as_deref().is_some_and(|c| c.starts_with("config")) => Mode::Config,
            _ => Mode::Privileged,
        };
        Some(Prompt {
            host: found.to_string(),
            context,
            mode,
        })
    }

    /// Whether `line` is a pager's "more" prompt.
    pub fn is_pager(&self, line: &str) -> bool {
        PAGER.is_match(line)
    }

    /// Whether `line` asks for a password (after `enable`).
    pub fn is_password_prompt(&self, line: &str) -> bool {
        PASSWORD.is_match(line)
    }

    /// The lines of `output` by which the device reported that the command
    /// failed, joined; `mode` is where the command was entered (in
    /// configuration mode every `%` line is an error).
    pub fn error(&self, output: &str, mode: Mode) -> Option<String> {
        let lines: Vec<&str> = output
            .lines()
            .map(str::trim)
            .filter(|l| self.is_error_line(l, mode))
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    fn is_error_line(&self, line: &str, mode: Mode) -> bool {
        self.profile().is_error(line, mode)
    }

    /// Whether `line` is a Unix shell's prompt, where a login landed
    /// instead of the CLI (Junos's root); the profile's `shell_to_cli`
    /// starts it.
    pub fn is_shell_prompt(&self, line: &str) -> bool {
        self.custom.is_none() && self.profile().is_shell_prompt(line)
    }
}

/// What a terminal would show for `raw`: escape sequences removed, `\r\n`
/// made `\n`, a line's text before a lone `\r` overwritten by what follows
/// it, backspaces applied, other control characters dropped.
pub fn screen_text(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\n' => lines.push(std::mem::take(&mut line)),
            '\r' => {
                if chars.peek().is_some_and(|n| *n != '\n' && *n != '\r') {
                    line.clear();
                }
            }
            '\u{8}' => {
                line.pop();
            }
            '\t' => line.push(c),
            c if c.is_control() => {}
            c => line.push(c),
        }
    }
    lines.push(line);
    lines.join("\n")
}

/// Skips one ANSI escape sequence (CSI, OSC or a two-character one).
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next();
                    break;
                }
            }
        }
        _ => {}
    }
}

/// The last line of screen text: where a prompt would be.
pub fn last_line(screen: &str) -> &str {
    screen.rsplit('\n').next().unwrap_or(screen)
}

/// A command's reply: its output, and the prompt the device ended it with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The output, without the echoed command, the prompt or blank lines
    /// before or after it.
    pub output: String,
    pub prompt: Prompt,
}

/// The reply in `raw` (everything the device sent after `command` was
/// written), once it ends with a prompt for `host`; `None` while more is
/// to come.
pub fn reply(dialect: &Dialect, command: &str, raw: &[u8], host: Option<&str>) -> Option<Reply> {
    let screen = screen_text(raw);
    let (body, last) = match screen.rfind('\n') {
        Some(i) => (&screen[..i], &screen[i + 1..]),
        None => ("", screen.as_str()),
    };
    let prompt = dialect.prompt(last, host)?;
    let mut lines: Vec<&str> = body.split('\n').collect();
    if body.is_empty() {
        lines.clear();
    }
    // The device echoes the command first (a redrawn line may carry the
    // prompt before it).
    if lines
        .first()
        .is_some_and(|l| !command.trim().is_empty() && l.trim_end().ends_with(command.trim()))
        || lines
            .first()
            .is_some_and(|l| l.trim().is_empty() && command.trim().is_empty())
    {
        lines.remove(0);
    }
    // Junos prints the configuration context (`[edit protocols]`) and the
    // routing engine (`{master:0}`) on lines of their own above a prompt.
    loop {
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        let context = lines.last().is_some_and(|l| dialect.profile().is_banner(l));
        if !context {
            break;
        }
        lines.pop();
    }
    let blank = lines.iter().take_while(|l| l.trim().is_empty()).count();
    lines.drain(..blank);
    Some(Reply {
        output: lines.join("\n"),
        prompt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frr() -> Dialect {
        Dialect::new(Platform::Frr, None)
    }

    #[test]
    fn prompts_give_their_mode() {
        let d = frr();
        let p = d.prompt("r1# ", None).expect("prompt");
        assert_eq!((p.host.as_str(), p.mode), ("r1", Mode::Privileged));
        let p = d.prompt("r1(config-router)# ", Some("r1")).expect("prompt");
        assert_eq!(p.mode, Mode::Config);
        assert_eq!(p.context.as_deref(), Some("config-router"));
        assert_eq!(d.prompt("r1>", None).map(|p| p.mode), Some(Mode::User));
        assert_eq!(d.prompt("r2# ", Some("r1")), None);
        assert_eq!(d.prompt(" neighbor 10.0.0.2 remote-as 65002", None), None);
        let j = Dialect::new(Platform::Junos, None);
        assert_eq!(
            j.prompt("admin@mx1> ", None).map(|p| p.mode),
            Some(Mode::Privileged)
        );
        assert_eq!(
            j.prompt("admin@mx1# ", None).map(|p| p.mode),
            Some(Mode::Config)
        );
    }

    #[test]
    fn a_prompt_override_decides_alone() {
        let re = Regex::new(r"^sw-\d+ ?[>#] ?$").expect("regex");
        let d = Dialect::new(Platform::Generic, Some(re));
        assert_eq!(d.prompt("sw-1 > ", None).map(|p| p.mode), Some(Mode::User));
        assert_eq!(d.prompt("r1# ", None), None);
    }

    #[test]
    fn screen_text_applies_carriage_returns_and_drops_escapes() {
        assert_eq!(
            screen_text(b"\x1b[?2004hr1# show\r\nx\r\n\x1b[?2004lr1# "),
            "r1# show\nx\nr1# "
        );
        assert_eq!(screen_text(b"abc\rxy\n"), "xy\n");
        assert_eq!(screen_text(b"ab\x08c"), "ac");
    }

    #[test]
    fn junos_configuration_context_lines_are_not_output() {
        // The shape Juniper documents for configuration mode.
        let j = Dialect::new(Platform::Junos, None);
        let raw = b"set system host-name mx1\r\n\r\n[edit]\r\nadmin@mx1# ";
        let r = reply(&j, "set system host-name mx1", raw, Some("admin@mx1")).expect("reply");
        assert_eq!((r.output.as_str(), r.prompt.mode), ("", Mode::Config));
        let raw =
            b"show foo\r\n                ^\r\nsyntax error, expecting <command>.\r\nadmin@mx1> ";
        let r = reply(&j, "show foo", raw, Some("admin@mx1")).expect("reply");
        assert_eq!(
            j.error(&r.output, r.prompt.mode).as_deref(),
            Some("syntax error, expecting <command>.")
        );
    }

    #[test]
    fn errors_depend_on_the_mode() {
        let d = frr();
        assert_eq!(
            d.error("% Unknown command: show foo", Mode::Privileged)
                .as_deref(),
            Some("% Unknown command: show foo")
        );
        assert_eq!(d.error("% No BGP neighbors found", Mode::Privileged), None);
        assert!(d.error("% Malformed address", Mode::Config).is_some());
    }
}
