//! What each platform's CLI is, as data: one [`Profile`] per [`Platform`]
//! holding the commands ferry sends (paging off, enable, entering and
//! leaving configuration mode, saving), how its prompts are shaped, which
//! lines it prints around a prompt that are not output (Junos's `[edit]`
//! context and `{master:0}` routing-engine banners), what a login that lands
//! in a Unix shell instead of the CLI looks like (Junos's root login), and by
//! which lines it reports an error. Taken from the vendors' own documented
//! sessions (Cisco IOS, Arista EOS, Juniper Junos, FRRouting's vtysh); the
//! transcripts under tests/network/ are the cases. No I/O, no state:
//! [`super::cli`] reads bytes with it, [`super::session`] drives a device
//! with it.

use std::sync::LazyLock;

use regex::Regex;

use super::cli::{Mode, Platform};

/// How a platform's prompts are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptStyle {
    /// `host>` (user), `host#` (privileged), `host(config…)#`
    /// (configuration): IOS, EOS, FRR's vtysh.
    Ios,
    /// `user@host>` (operational), `user@host#` (configuration), with the
    /// configuration context (`[edit interfaces]`) on the line above.
    Junos,
}

/// One rule by which an output line is an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// A `%` line whose text (after `%` and an FRR daemon tag such as
    /// `[ZEBRA]`) starts with this, lowercased.
    Percent(&'static str),
    /// A `%` line whose text ends with this, lowercased.
    PercentEnd(&'static str),
    /// Any line starting with this, lowercased.
    Starts(&'static str),
    /// Any line ending with this, lowercased.
    Ends(&'static str),
    /// Any line holding this, lowercased.
    Holds(&'static str),
    /// Every `%` line in configuration mode (IOS-style CLIs print nothing
    /// else with `%` there).
    PercentInConfig,
}

/// A platform's CLI.
#[derive(Debug)]
pub struct Profile {
    pub platform: Platform,
    pub prompt_style: PromptStyle,
    /// Sent once after the first prompt: no pager, no wrapping.
    pub paging_off: &'static [&'static str],
    /// Leads from user to privileged mode, if the platform has a user mode.
    pub enable: Option<&'static str>,
    /// Leads back from privileged to user mode.
    pub disable: Option<&'static str>,
    /// Enters configuration mode.
    pub configure: &'static str,
    /// Leaves configuration mode from any depth.
    pub end: &'static str,
    /// Leaves one configuration block.
    pub exit_block: &'static str,
    /// Makes configuration changes take effect, where entering a line does
    /// not (Junos's candidate configuration). It checks the candidate first
    /// and activates nothing when the check fails.
    pub commit: Option<&'static str>,
    /// Throws away the uncommitted candidate (after a rejected line or a
    /// refused commit), where there is one.
    pub discard: Option<&'static str>,
    /// Saves the running configuration to startup, where a change does not
    /// survive a restart otherwise (a Junos commit does).
    pub save: Option<&'static str>,
    /// Prints the running (Junos: the committed) configuration, from
    /// operational mode, in the form a desired configuration is written in.
    pub show_running: &'static str,
    /// Starts the CLI when a login lands in a Unix shell instead.
    pub shell_to_cli: Option<&'static str>,
    errors: &'static [Rule],
}

/// The `%` messages IOS and EOS print for a command they do not take.
const IOS_ERRORS: &[Rule] = &[
    Rule::Percent("invalid input"),
    Rule::Percent("incomplete command"),
    Rule::Percent("ambiguous command"),
    Rule::Percent("unknown command"),
    Rule::Percent("unrecognized command"),
    Rule::Percent("unavailable command"),
    Rule::Percent("invalid command"),
    Rule::Percent("bad secret"),
    Rule::Percent("bad password"),
    Rule::Percent("access denied"),
    Rule::Percent("authorization failed"),
    Rule::Percent("command rejected"),
    Rule::Percent("permission denied"),
    Rule::Percent("not supported"),
    Rule::Percent("error"),
    Rule::PercentEnd("not found"),
    Rule::Starts("command authorization failed"),
    Rule::Starts("command rejected"),
    Rule::PercentInConfig,
];

/// FRR's vtysh: IOS's messages, its own wording (`% Command incomplete`),
/// and the replies of `router bgp N` when another instance runs.
const FRR_ERRORS: &[Rule] = &[
    Rule::Percent("unknown command"),
    Rule::Percent("command incomplete"),
    Rule::Percent("incomplete command"),
    Rule::Percent("ambiguous command"),
    Rule::Percent("invalid input"),
    Rule::Percent("invalid command"),
    Rule::Percent("error"),
    Rule::Percent("bad secret"),
    Rule::Percent("access denied"),
    Rule::Percent("not supported"),
    Rule::Percent("permission denied"),
    Rule::PercentEnd("not found"),
    Rule::Holds("is already running"),
    Rule::Ends("is not running"),
    Rule::PercentInConfig,
];

/// Junos: messages without `%`, the caret line above them.
const JUNOS_ERRORS: &[Rule] = &[
    Rule::Starts("error:"),
    Rule::Starts("syntax error"),
    Rule::Starts("unknown command"),
    Rule::Starts("missing argument"),
    Rule::Starts("invalid value"),
    Rule::Starts("invalid interface type"),
    Rule::Starts("invalid ip address"),
    Rule::Starts("invalid numeric value"),
    Rule::Starts("number of elements exceeds limit"),
];

static PROFILES: [Profile; 5] = [
    Profile {
        platform: Platform::Frr,
        prompt_style: PromptStyle::Ios,
        paging_off: &["terminal length 0"],
        enable: Some("enable"),
        disable: Some("disable"),
        configure: "configure terminal",
        end: "end",
        exit_block: "exit",
        commit: None,
        discard: None,
        save: Some("write memory"),
        show_running: "show running-config",
        shell_to_cli: None,
        errors: FRR_ERRORS,
    },
    Profile {
        platform: Platform::Ios,
        prompt_style: PromptStyle::Ios,
        paging_off: &["terminal length 0", "terminal width 511"],
        enable: Some("enable"),
        disable: Some("disable"),
        configure: "configure terminal",
        end: "end",
        exit_block: "exit",
        commit: None,
        discard: None,
        save: Some("write memory"),
        show_running: "show running-config",
        shell_to_cli: None,
        errors: IOS_ERRORS,
    },
    Profile {
        platform: Platform::Eos,
        prompt_style: PromptStyle::Ios,
        paging_off: &["terminal length 0", "terminal width 32767"],
        enable: Some("enable"),
        disable: Some("disable"),
        configure: "configure terminal",
        end: "end",
        exit_block: "exit",
        commit: None,
        discard: None,
        save: Some("write memory"),
        show_running: "show running-config",
        shell_to_cli: None,
        errors: IOS_ERRORS,
    },
    Profile {
        platform: Platform::Junos,
        prompt_style: PromptStyle::Junos,
        paging_off: &["set cli screen-length 0", "set cli screen-width 1024"],
        enable: None,
        disable: None,
        // A private candidate: only ferry's own lines are committed, and
        // Junos refuses it while someone else's changes are uncommitted.
        configure: "configure private",
        end: "exit configuration-mode",
        exit_block: "up",
        commit: Some("commit"),
        discard: Some("rollback 0"),
        save: None,
        // As `set` lines: one statement per line, which a desired
        // configuration is written in and compared with line by line.
        show_running: "show configuration | display set",
        shell_to_cli: Some("cli"),
        errors: JUNOS_ERRORS,
    },
    Profile {
        platform: Platform::Generic,
        prompt_style: PromptStyle::Ios,
        paging_off: &["terminal length 0"],
        enable: Some("enable"),
        disable: Some("disable"),
        configure: "configure terminal",
        end: "end",
        exit_block: "exit",
        commit: None,
        discard: None,
        save: Some("write memory"),
        show_running: "show running-config",
        shell_to_cli: None,
        errors: IOS_ERRORS,
    },
];

/// The profile of `platform`.
pub fn profile(platform: Platform) -> &'static Profile {
    let i = match platform {
        Platform::Frr => 0,
        Platform::Ios => 1,
        Platform::Eos => 2,
        Platform::Junos => 3,
        Platform::Generic => 4,
    };
    &PROFILES[i]
}

fn constant(re: &'static str) -> Regex {
    Regex::new(re).expect("a constant pattern compiles")
}

/// A Unix shell's prompt where a CLI's was expected: `root@mx1:~ # `,
/// `root@mx1:RE:0% `, `%`.
static SHELL_PROMPT: LazyLock<Regex> =
    LazyLock::new(|| constant(r"^(?:[\w.\-]+@[\w.\-]+:\S*\s?[%$#]|(?:[\w.\-]+@[\w.\-]+)?%)\s?$"));
/// Lines Junos prints above a prompt: the configuration context
/// (`[edit]`, `[edit protocols bgp]`), the routing engine or cluster node
/// (`{master:0}`, `{primary:node0}`), or both (`{master}[edit]`).
static JUNOS_BANNER: LazyLock<Regex> =
    LazyLock::new(|| constant(r"^(?:\{[\w:\-]+\})?(?:\[edit(?:\s[^\]]*)?\])?$"));

impl Profile {
    /// Whether `line` (trimmed) says the command failed; `mode` is where
    /// the command was entered.
    pub fn is_error(&self, line: &str, mode: Mode) -> bool {
        let lower = line.trim().to_ascii_lowercase();
        let percent = lower.strip_prefix('%').map(|rest| {
            // FRR's daemons tag their messages: `% [ZEBRA] Unknown command`.
            let rest = rest.trim_start();
            match rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
                Some((_, after)) => after.trim_start(),
                None => rest,
            }
        });
        self.errors.iter().any(|rule| match (*rule, percent) {
            (Rule::Percent(p), Some(text)) => text.starts_with(p),
            (Rule::PercentEnd(p), Some(text)) => text.ends_with(p),
            (Rule::PercentInConfig, Some(_)) => mode == Mode::Config,
            (Rule::Starts(p), _) => lower.starts_with(p),
            (Rule::Ends(p), _) => lower.ends_with(p),
            (Rule::Holds(p), _) => lower.contains(p),
            _ => false,
        })
    }

    /// Whether `line` is one the platform prints around a prompt that is
    /// neither output nor the prompt (Junos's context and banner lines).
    pub fn is_banner(&self, line: &str) -> bool {
        let line = line.trim();
        self.prompt_style == PromptStyle::Junos && !line.is_empty() && JUNOS_BANNER.is_match(line)
    }

    /// Whether `line` is a Unix shell's prompt from which
    /// [`Profile::shell_to_cli`] starts the CLI.
    pub fn is_shell_prompt(&self, line: &str) -> bool {
        self.shell_to_cli.is_some() && SHELL_PROMPT.is_match(line.trim_start())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_platform_has_its_own_profile() {
        for p in [
            Platform::Frr,
            Platform::Ios,
            Platform::Eos,
            Platform::Junos,
            Platform::Generic,
        ] {
            assert_eq!(profile(p).platform, p);
        }
    }

    #[test]
    fn junos_banners_and_shell_prompts() {
        let j = profile(Platform::Junos);
        for banner in [
            "[edit]",
            "[edit protocols bgp]",
            "{master:0}",
            "{master}[edit]",
        ] {
            assert!(j.is_banner(banner), "{banner}");
        }
        assert!(!j.is_banner("interfaces {"));
        assert!(!profile(Platform::Ios).is_banner("[edit]"));
        for shell in ["root@mx1:~ # ", "root@mx1:RE:0% ", "% "] {
            assert!(j.is_shell_prompt(shell), "{shell}");
        }
        assert!(!j.is_shell_prompt("admin@mx1> "));
        assert!(!j.is_shell_prompt("admin@mx1# "));
        assert!(!profile(Platform::Ios).is_shell_prompt("% "));
    }
}
