//! Unit tests of config resolution: host blocks, `Match`, `Include`,
//! option values, token expansion and error positions.

use super::*;
use tempfile::TempDir;

fn env() -> LocalEnv {
    LocalEnv {
        home: Some(PathBuf::from("/home/alice")),
        user: Some("alice".to_string()),
    }
}

fn write(dir: &TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("config");
    fs::write(&path, text).unwrap();
    path
}

fn resolve_text(text: &str, host: &str) -> Result<HostConfig, SshConfigError> {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, text);
    resolve_with(&path, host, &env())
}

const CONFIG: &str = "\
# global options before any Host apply to everything, first wins
ConnectTimeout 7

Host web1 web2
    HostName %h.internal.example.com
    User deploy
    Port 2201
    IdentityFile ~/.ssh/web_%r_%p
    IdentityFile /keys/%n-%h

Host *.example.com !legacy.example.com
    User ops
    ProxyJump bastion.example.com
    StrictHostKeyChecking accept-new

Host db
    HostName=10.0.0.5
    ProxyJump admin@jump1:2222,jump2
    UserKnownHostsFile ~/.ssh/known_hosts.db /etc/ssh/known_%h
    StrictHostKeyChecking no

Host nojump
    ProxyJump none
    UserKnownHostsFile none
    StrictHostKeyChecking ask

Host web1
    User ignored-second-value
    IdentityFile ~/.ssh/extra

Host *
    User fallback
    Port 22
    ConnectTimeout 30
    IdentityFile ~/.ssh/id_ed25519
";

#[test]
fn resolves_hosts_from_one_config() {
    let home = |p: &str| PathBuf::from(format!("/home/alice/{p}"));
    let cases: Vec<(&str, HostConfig)> = vec![
        (
            "web1",
            HostConfig {
                hostname: Some("web1.internal.example.com".into()),
                user: Some("deploy".into()),
                port: Some(2201),
                identity_files: vec![
                    home(".ssh/web_deploy_2201"),
                    PathBuf::from("/keys/web1-web1.internal.example.com"),
                    home(".ssh/extra"),
                    home(".ssh/id_ed25519"),
                ],
                connect_timeout: Some(Duration::from_secs(7)),
                ..Default::default()
            },
        ),
        (
            "WEB2",
            HostConfig {
                hostname: Some("web2.internal.example.com".into()),
                user: Some("deploy".into()),
                port: Some(2201),
                identity_files: vec![
                    home(".ssh/web_deploy_2201"),
                    PathBuf::from("/keys/web2-web2.internal.example.com"),
                    home(".ssh/id_ed25519"),
                ],
                connect_timeout: Some(Duration::from_secs(7)),
                ..Default::default()
            },
        ),
        (
            "app.example.com",
            HostConfig {
                user: Some("ops".into()),
                port: Some(22),
                identity_files: vec![home(".ssh/id_ed25519")],
                proxy_jump: vec!["bastion.example.com".into()],
                strict_host_key_checking: Some(StrictHostKeyChecking::AcceptNew),
                connect_timeout: Some(Duration::from_secs(7)),
                ..Default::default()
            },
        ),
        (
            // negated pattern excludes it from the *.example.com block
            "legacy.example.com",
            HostConfig {
                user: Some("fallback".into()),
                port: Some(22),
                identity_files: vec![home(".ssh/id_ed25519")],
                connect_timeout: Some(Duration::from_secs(7)),
                ..Default::default()
            },
        ),
        (
            "db",
            HostConfig {
                hostname: Some("10.0.0.5".into()),
                user: Some("fallback".into()),
                port: Some(22),
                identity_files: vec![home(".ssh/id_ed25519")],
                proxy_jump: vec!["admin@jump1:2222".into(), "jump2".into()],
                user_known_hosts_files: vec![
                    home(".ssh/known_hosts.db"),
                    PathBuf::from("/etc/ssh/known_10.0.0.5"),
                ],
                strict_host_key_checking: Some(StrictHostKeyChecking::No),
                connect_timeout: Some(Duration::from_secs(7)),
            },
        ),
        (
            "nojump",
            HostConfig {
                user: Some("fallback".into()),
                port: Some(22),
                identity_files: vec![home(".ssh/id_ed25519")],
                strict_host_key_checking: Some(StrictHostKeyChecking::Yes),
                connect_timeout: Some(Duration::from_secs(7)),
                ..Default::default()
            },
        ),
    ];
    let dir = TempDir::new().unwrap();
    let path = write(&dir, CONFIG);
    for (host, want) in cases {
        assert_eq!(resolve_with(&path, host, &env()).unwrap(), want, "{host}");
    }
}

#[test]
fn first_obtained_value_wins_across_blocks() {
    let text = "\
Host *.corp
    Port 1000
    StrictHostKeyChecking no
    UserKnownHostsFile /first
Host a.corp
    Port 2000
    User a
    StrictHostKeyChecking yes
    UserKnownHostsFile /second
    ProxyJump j1
Host *
    ProxyJump j2
    User z
";
    let got = resolve_text(text, "a.corp").unwrap();
    assert_eq!(got.port, Some(1000));
    assert_eq!(got.user.as_deref(), Some("a"));
    assert_eq!(
        got.strict_host_key_checking,
        Some(StrictHostKeyChecking::No)
    );
    assert_eq!(got.user_known_hosts_files, vec![PathBuf::from("/first")]);
    assert_eq!(got.proxy_jump, vec!["j1".to_string()]);
}

#[test]
fn strict_host_key_checking_values() {
    let cases = [
        ("yes", StrictHostKeyChecking::Yes),
        ("YES", StrictHostKeyChecking::Yes),
        ("true", StrictHostKeyChecking::Yes),
        ("ask", StrictHostKeyChecking::Yes),
        ("no", StrictHostKeyChecking::No),
        ("false", StrictHostKeyChecking::No),
        ("off", StrictHostKeyChecking::No),
        ("accept-new", StrictHostKeyChecking::AcceptNew),
    ];
    for (value, want) in cases {
        let got = resolve_text(&format!("StrictHostKeyChecking {value}\n"), "h").unwrap();
        assert_eq!(got.strict_host_key_checking, Some(want), "{value}");
    }
    let err = resolve_text("Host h\n  StrictHostKeyChecking maybe\n", "h").unwrap_err();
    match err {
        SshConfigError::InvalidValue { line, option, .. } => {
            assert_eq!((line, option), (Some(2), "StrictHostKeyChecking"));
        }
        other => panic!("unexpected {other}"),
    }
    assert_eq!(
        resolve_text("", "h").unwrap().strict_host_key_checking,
        None
    );
}

#[test]
fn connect_timeout() {
    let got = resolve_text("Host h\n ConnectTimeout 12\n", "h").unwrap();
    assert_eq!(got.connect_timeout, Some(Duration::from_secs(12)));
    let got = resolve_text("ConnectTimeout 0\n", "h").unwrap();
    assert_eq!(got.connect_timeout, None);
}

#[test]
fn syntax_errors_name_file_and_line() {
    let cases = [
        ("Host a\n  Port 22\n  Port notaport\n", 3),
        ("User x\nHost b\n\n  ConnectTimeout soon\n", 4),
        ("Host c\n  HostName \"unterminated\n", 2),
        ("Host\n", 1),
    ];
    for (text, want_line) in cases {
        let dir = TempDir::new().unwrap();
        let path = write(&dir, text);
        let err = resolve_with(&path, "a", &env()).unwrap_err();
        match &err {
            SshConfigError::Parse { path: p, line, .. } => {
                assert_eq!((p, *line), (&path, Some(want_line)), "{text:?}");
            }
            other => panic!("unexpected {other} for {text:?}"),
        }
        let message = err.to_string();
        assert!(
            message.contains(&format!("config:{want_line}")),
            "{message}"
        );
    }
}

#[test]
fn missing_file_is_default_and_unknown_options_are_tolerated() {
    let dir = TempDir::new().unwrap();
    let missing = dir.path().join("nope");
    assert_eq!(
        resolve_with(&missing, "x", &env()).unwrap(),
        HostConfig::default()
    );
    let got = resolve_text("UseKeychain yes\nSomeFutureOption 1\nUser u\n", "x").unwrap();
    assert_eq!(got.user.as_deref(), Some("u"));
    // a directory is not readable as a config file
    let err = resolve_with(dir.path(), "x", &env()).unwrap_err();
    assert!(matches!(err, SshConfigError::Read { .. }), "{err}");
}

#[test]
fn match_blocks() {
    let text = "\
Match host web*,!web9
    User matched
Match exec \"true\"
    User never
Match all
    Port 2022
";
    assert_eq!(
        resolve_text(text, "web1").unwrap().user.as_deref(),
        Some("matched")
    );
    let other = resolve_text(text, "web9").unwrap();
    assert_eq!(other.user, None);
    assert_eq!(other.port, Some(2022));
}

#[test]
fn includes_resolve_and_match_inside_include_is_refused() {
    let dir = TempDir::new().unwrap();
    let inc = dir.path().join("inc.conf");
    fs::write(&inc, "Host inc\n  User included\n").unwrap();
    let path = write(
        &dir,
        &format!("Include {}\nHost *\n  User main\n", inc.display()),
    );
    let got = resolve_with(&path, "inc", &env()).unwrap();
    assert_eq!(got.user.as_deref(), Some("included"));

    fs::write(&inc, "Host inc\n  Port 1\nMatch exec x\n  User wrong\n").unwrap();
    let err = resolve_with(&path, "inc", &env()).unwrap_err();
    assert!(
        matches!(err, SshConfigError::MatchInInclude { .. }),
        "{err}"
    );
    // hosts the swallowed block does not apply to are unaffected
    assert_eq!(
        resolve_with(&path, "other", &env())
            .unwrap()
            .user
            .as_deref(),
        Some("main")
    );
}

#[test]
fn token_expansion() {
    let cases = [
        ("%d/k", Ok("/home/alice/k")),
        (
            "/k/%u/%r@%h:%p/%n/100%%",
            Ok("/k/alice/bob@real:2200/alias/100%"),
        ),
        ("/k/%C", Err("unsupported token %C")),
        ("/k/%", Err("trailing %")),
    ];
    let tokens = Tokens {
        original_host: "alias",
        hostname: "real",
        port: 2200,
        remote_user: Some("bob"),
        local_user: Some("alice"),
        home: Some(Path::new("/home/alice")),
    };
    for (input, want) in cases {
        let got = tokens.expand(input).map_err(|e| e.to_string());
        let want = want.map(str::to_string).map_err(str::to_string);
        assert_eq!(got, want, "{input}");
    }
    let err = resolve_text("IdentityFile /k/%C\n", "h").unwrap_err();
    assert!(
        matches!(err, SshConfigError::InvalidValue { line: Some(1), .. }),
        "{err}"
    );
}
