//! The shell functions and variables of the SSH transport's long-lived
//! shell (transport::ssh::shell) that scripts run there may use — today the
//! task wrapper (task::wrapper). Both sides take the names from here: the
//! shell defines the functions with [`definitions`] and starts the service
//! with [`checksum_service`]; the wrapper calls [`SHA256_CHECK`] and
//! [`MKDIRS`], and removes every name in [`FUNCTIONS`] and [`VARIABLES`]
//! before it reads a task into its own subshell.

/// `ferry_sha256_check SHA PATH [SHA PATH ...]` succeeds when every file
/// has its sha256. It asks the checksum service while that runs, and starts
/// `sha256sum` otherwise.
pub const SHA256_CHECK: &str = "ferry_sha256_check";

/// `ferry_mkdirs DIR...` makes the shell's private directory, unless an
/// earlier script made it, and the given dirs, all mode 700, in one `mkdir`
/// (no `-p`: parents first), then succeeds only if the private directory is
/// a directory of the user's own and not a link. Errors for dirs that exist
/// already are silent: callers check what they need.
pub const MKDIRS: &str = "ferry_mkdirs";

/// The shell's private directory (set when the shell starts).
pub const SESSION_DIR: &str = "FERRY_SESSION_DIR";

/// The checksum service's process id, once it runs.
pub const SHA256_PID: &str = "FERRY_SHA256_PID";

/// Every function [`definitions`] defines.
pub const FUNCTIONS: [&str; 2] = [SHA256_CHECK, MKDIRS];

/// Every variable the shell, its functions and its service set.
pub const VARIABLES: [&str; 7] = [SESSION_DIR, SHA256_PID, "_n", "_ok", "_r", "_b", "_p"];

/// The definitions of [`FUNCTIONS`], sent when the shell starts.
pub fn definitions() -> String {
    format!(
        "{MKDIRS}() {{
mkdir -m 700 \"${SESSION_DIR}\" \"$@\" 2>/dev/null
[ -d \"${SESSION_DIR}\" ] && [ ! -h \"${SESSION_DIR}\" ] && [ -O \"${SESSION_DIR}\" ]
}}
{SHA256_CHECK}() {{
if [ -n \"${{{SHA256_PID}-}}\" ] && kill -0 \"${SHA256_PID}\" 2>/dev/null; then
_n=$(($# / 2)); _ok=0
printf '%s  %s\\n' \"$@\" >\"${SESSION_DIR}/.sum-in\" || return 1
while [ \"$_n\" -gt 0 ]; do
IFS= read -r _r || return 1
case $_r in *': OK') ;; *) _ok=1 ;; esac
_n=$((_n - 1))
done <\"${SESSION_DIR}/.sum-out\"
return $_ok
fi
printf '%s  %s\\n' \"$@\" | sha256sum -c >/dev/null 2>&1
}}
"
    )
}

/// Started before the shell's second script, so that one-off runs do not
/// pay for it: the checksum service behind [`SHA256_CHECK`]. One
/// `sha256sum -c` stays running, line-buffered, between two FIFOs in the
/// private directory: `<sha256>  <path>` lines go in, `<path>: OK` (or
/// `FAILED`) lines come out, and no process starts per check. The shell
/// itself holds both FIFOs open (fds 8 and 9), so the service lives exactly
/// as long as the shell; scripts run with those fds closed and the function
/// opens the FIFOs by name, so nothing a script leaves running can keep the
/// service alive. Line buffering is coreutils' `stdbuf`; where its library
/// is at a known path the shell sets what `stdbuf` would (`_STDBUF_O`,
/// `LD_PRELOAD`) and saves starting it. Where neither is there, or the
/// private directory does not exist yet, the service is not started.
pub fn checksum_service() -> String {
    format!(
        "_b=
for _p in /usr/libexec/coreutils/libstdbuf.so /usr/lib/coreutils/libstdbuf.so /usr/lib64/coreutils/libstdbuf.so; do
[ -f \"$_p\" ] && _b=$_p && break
done
if {{ [ -n \"$_b\" ] || command -v stdbuf >/dev/null 2>&1; }} && command -v sha256sum >/dev/null 2>&1 \\
&& mkfifo -m 600 \"${SESSION_DIR}/.sum-in\" \"${SESSION_DIR}/.sum-out\" 2>/dev/null; then
if [ -n \"$_b\" ]; then
_STDBUF_O=L LD_PRELOAD=\"${{LD_PRELOAD:+$LD_PRELOAD:}}$_b\" sha256sum -c <\"${SESSION_DIR}/.sum-in\" >\"${SESSION_DIR}/.sum-out\" 2>/dev/null &
else
stdbuf -oL sha256sum -c <\"${SESSION_DIR}/.sum-in\" >\"${SESSION_DIR}/.sum-out\" 2>/dev/null &
fi
{SHA256_PID}=$!
exec 8>\"${SESSION_DIR}/.sum-in\" 9<\"${SESSION_DIR}/.sum-out\"
fi
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text the shell sent before the names were constants: the
    /// definitions must stay byte for byte what they were.
    #[test]
    fn definitions_are_the_shells_functions() {
        let text = definitions();
        assert!(text.starts_with("ferry_mkdirs() {\nmkdir -m 700 \"$FERRY_SESSION_DIR\" \"$@\""));
        assert!(text.contains("\nferry_sha256_check() {\nif [ -n \"${FERRY_SHA256_PID-}\" ] && kill -0 \"$FERRY_SHA256_PID\""));
        assert!(
            checksum_service()
                .contains("\nFERRY_SHA256_PID=$!\nexec 8>\"$FERRY_SESSION_DIR/.sum-in\"")
        );
        for name in FUNCTIONS {
            assert!(
                text.contains(&format!("\n{name}() {{\n"))
                    || text.starts_with(&format!("{name}() {{\n"))
            );
        }
    }
}
