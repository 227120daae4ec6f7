//! The SSH transport's long-lived shell, driven through the library against
//! a real sshd: scripts marked `in_session` share one shell per connection
//! and get exactly their own output, stdin and exit status; the shell's
//! private directory lives as long as the connection; a script cut off by
//! a timeout or a shell killed from outside is replaced by a fresh shell.

mod common;

use std::path::Path;
use std::time::Duration;

use common::ferry::{key_line, one_target};
use common::sshd::{self, KeyType, client_keys};
use ferry::inventory::Inventory;
use ferry::transport::{Command, Overrides, Stream, Transport, TransportError, for_target};

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

async fn run(t: &dyn Transport, command: Command) -> Result<Output, TransportError> {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let done = t
        .run(&command, &mut |stream, bytes| match stream {
            Stream::Stdout => stdout.extend_from_slice(bytes),
            Stream::Stderr => stderr.extend_from_slice(bytes),
        })
        .await?;
    Ok(Output {
        code: done.exit_code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

fn session(script: &str) -> Command {
    Command::shell(script).in_session()
}

async fn connected() -> Box<dyn Transport> {
    let text = one_target(
        sshd::shared(),
        "t",
        "root",
        &key_line(&client_keys().path(KeyType::Ed25519)),
    );
    let inventory = Inventory::from_str(&text, Path::new("inline.yaml")).expect("inventory");
    let target = inventory.target("t").expect("target t").clone();
    let mut t = for_target(&target, &Overrides::default()).expect("transport");
    t.connect().await.expect("connect");
    t
}

#[tokio::test]
async fn scripts_share_one_shell_and_get_exactly_their_own_output() {
    let t = connected().await;
    let dir = t.posix().session_dir.clone().expect("ssh keeps a shell");

    let first = run(
        &*t,
        session("printf 'no newline'; printf 'to stderr' >&2; exit 3"),
    )
    .await
    .unwrap();
    assert_eq!(
        (first.code, first.stdout.as_str(), first.stderr.as_str()),
        (3, "no newline", "to stderr")
    );

    // stdin arrives whole; the shell persists, and makes its private
    // directory on request (`ferry_mkdirs`), with the dirs asked for in it.
    let piped = run(
        &*t,
        session("cat; ferry_mkdirs \"$FERRY_SESSION_DIR/a\" && echo \"$$ $FERRY_SESSION_DIR\"; ls -ld \"$FERRY_SESSION_DIR\" \"$FERRY_SESSION_DIR/a\" | cut -c1-10")
            .with_stdin(b"line one\n'quoted' $HOME `x`\n".to_vec()),
    )
    .await
    .unwrap();
    let lines: Vec<&str> = piped.stdout.lines().collect();
    assert_eq!(
        lines[..2],
        ["line one", "'quoted' $HOME `x`"],
        "{}",
        piped.stdout
    );
    let (pid, seen_dir) = lines[2].split_once(' ').unwrap();
    assert_eq!(seen_dir, dir);
    assert_eq!(
        lines[3..5],
        ["drwx------"; 2],
        "the shell's directory is private"
    );
    let again = run(&*t, session("ferry_mkdirs && echo made again"))
        .await
        .unwrap();
    assert_eq!(
        again.stdout, "made again\n",
        "an existing dir of the user's own is fine"
    );
    let foreign = run(
        &*t,
        session(
            "o=$(mktemp -d) && chown nobody \"$o\" && ln -s / \"$o.l\" || exit 1
            (FERRY_SESSION_DIR=$o; ferry_mkdirs || echo refused)
            (FERRY_SESSION_DIR=$o.l; ferry_mkdirs || echo refused link)
            rm -rf \"$o\" \"$o.l\"",
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        foreign.stdout, "refused\nrefused link\n",
        "a dir of another user's, or a link, is refused: {}",
        foreign.stderr
    );

    let again = run(&*t, session("echo $$")).await.unwrap();
    assert_eq!(again.stdout.trim(), pid, "the same shell runs every script");
    let own = run(&*t, Command::shell("echo $$")).await.unwrap();
    assert_ne!(own.stdout.trim(), pid, "other commands keep a channel each");

    // Large output passes through whole, and a token-like text is just text.
    let big = run(
        &*t,
        session("i=0; while [ $i -lt 20000 ]; do echo \"line $i ferry0123\"; i=$((i+1)); done"),
    )
    .await
    .unwrap();
    assert_eq!(big.stdout.lines().count(), 20000);
    assert!(big.stdout.ends_with("line 19999 ferry0123\n"));

    // Output a background process writes after its script ended is dropped.
    let bg = run(&*t, session("(sleep 0.3; echo late) & echo now"))
        .await
        .unwrap();
    assert_eq!(bg.stdout, "now\n");
    tokio::time::sleep(Duration::from_millis(600)).await;
    let next = run(&*t, session("echo next")).await.unwrap();
    assert_eq!(next.stdout, "next\n");

    assert!(Path::new(&dir).is_dir());
    let mut t = t;
    t.close().await;
    assert!(
        !Path::new(&dir).exists(),
        "{dir} is removed when the connection closes"
    );
}

#[tokio::test]
async fn a_cut_off_script_or_a_killed_shell_gets_a_fresh_shell() {
    let t = connected().await;
    let dir = t.posix().session_dir.clone().unwrap();
    let before = run(&*t, session("echo $$")).await.unwrap().stdout;

    let mut slow = session("sleep 5; echo finished");
    slow.timeout = Some(Duration::from_millis(500));
    let err = run(&*t, slow).await.err().expect("a timeout");
    assert!(matches!(err, TransportError::Timeout { .. }), "{err}");

    let after = run(&*t, session("echo $$; echo ok")).await.unwrap();
    assert_ne!(
        after.stdout.lines().next(),
        Some(before.trim()),
        "a new shell"
    );
    assert!(after.stdout.ends_with("ok\n"));

    // The shell dies between scripts: the next script still runs.
    let pid = after.stdout.lines().next().unwrap().to_string();
    let killed = run(&*t, Command::shell(format!("kill -9 {pid}")))
        .await
        .unwrap();
    assert_eq!(killed.code, 0, "{}", killed.stderr);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let fresh = run(&*t, session("echo alive")).await.unwrap();
    assert_eq!(fresh.stdout, "alive\n");

    let mut t = t;
    t.close().await;
    assert!(!Path::new(&dir).exists());
}
