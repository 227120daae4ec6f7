//! Module functions that reach the network while compiling, against real
//! servers started by the test: redis's `redisget` against a real
//! `redis-server` (Debian's redis-server package), and archive's
//! `go_md5`, `archive::artifactory_checksum` and
//! `archive::artifactory_latest_url` against a small local HTTP server
//! standing in for GoCD and Artifactory, which cannot be installed here
//! (it answers with the JSON shapes of Artifactory's storage API and a
//! GoCD checksum listing, a redirect and a 404). Their results cannot be
//! recorded from Puppet as fixed catalog cases (the servers' ports change
//! from run to run), so each is checked here against what the Ruby
//! function gives for the same answers; redisget's cases without a server
//! (`redis_redisget`, `err_redis_redisget*`) are recorded catalog cases
//! (Puppet needs Debian's ruby-redis to record them).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferry::catalog::{CompileRequest, ManifestSource, compile};

/// Compile `code`: the notify messages by title, or the error.
fn notices(code: &str) -> Result<Vec<(String, String)>, String> {
    let req = CompileRequest {
        manifest: ManifestSource::Code(code.to_string()),
        modulepath: vec![Path::new("/usr/share/puppet/modules").to_path_buf()].into(),
        facts: serde_json::Map::new(),
        node: "node1".into(),
        environment: None,
    };
    let cat = compile(&req).map_err(|e| e.to_string())?;
    Ok(cat
        .resources
        .iter()
        .filter(|r| r.type_name == "Notify")
        .map(|r| {
            let m = r.parameters.get("message").cloned().unwrap_or_default();
            (
                r.title.clone(),
                m.as_str().map_or_else(|| m.to_string(), str::to_string),
            )
        })
        .collect())
}

fn message(all: &[(String, String)], title: &str) -> String {
    all.iter()
        .find(|(t, _)| t == title)
        .map(|(_, m)| m.clone())
        .unwrap_or_else(|| panic!("no notify {title} in {all:?}"))
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A redis-server of its own, killed when dropped.
struct Redis {
    child: Child,
    port: u16,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_redis(password: &str) -> Redis {
    let port = free_port();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .args(["--requirepass", password])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server (apt package redis-server) runs");
    let redis = Redis { child, port };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    redis
}

/// Run RESP commands on one connection to the test's redis-server; each
/// must succeed.
fn redis_cmds(port: u16, cmds: &[&[&str]]) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut reader = BufReader::new(s.try_clone().expect("clone"));
    for args in cmds {
        let mut out = format!("*{}\r\n", args.len());
        for a in *args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        s.write_all(out.as_bytes()).expect("write");
        let mut line = String::new();
        reader.read_line(&mut line).expect("reply");
        assert!(line.starts_with('+'), "{args:?}: {line}");
    }
}

#[test]
fn redisget_reads_keys_from_a_real_redis() {
    let redis = start_redis("s3cret");
    let p = redis.port;
    redis_cmds(
        p,
        &[
            &["AUTH", "s3cret"],
            &["SET", "version", "v0.1"],
            &["SELECT", "2"],
            &["SET", "version", "v2.1"],
        ],
    );
    let dead = free_port();
    let code = format!(
        r#"
        notify {{ 'db0': message => redisget('version', 'redis://:s3cret@127.0.0.1:{p}') }}
        notify {{ 'db2': message => redisget('version', 'redis://:s3cret@127.0.0.1:{p}/2') }}
        notify {{ 'missing': message => String(redisget('nokey', 'redis://:s3cret@127.0.0.1:{p}')) }}
        notify {{ 'missing default': message => redisget('nokey', 'redis://:s3cret@127.0.0.1:{p}', 'dflt') }}
        notify {{ 'down default': message => redisget('version', 'redis://127.0.0.1:{dead}', 'fallback') }}
        "#
    );
    let all = notices(&code).expect("compiles");
    assert_eq!(message(&all, "db0"), "v0.1");
    assert_eq!(message(&all, "db2"), "v2.1");
    assert_eq!(message(&all, "missing"), "");
    assert_eq!(message(&all, "missing default"), "dflt");
    assert_eq!(message(&all, "down default"), "fallback");

    let down = notices(&format!(
        "$v = redisget('version', 'redis://127.0.0.1:{dead}')"
    ))
    .expect_err("no redis there");
    assert!(
        down.contains(&format!(
            "connection to redis server failed - Error connecting to Redis on 127.0.0.1:{dead} (Errno::ECONNREFUSED)"
        )),
        "{down}"
    );
    let noauth = notices(&format!(
        "$v = redisget('version', 'redis://127.0.0.1:{p}')"
    ))
    .expect_err("a password is required");
    assert!(noauth.contains("NOAUTH"), "{noauth}");
    let types = notices(&format!("$v = redisget(['k'], 'redis://127.0.0.1:{p}')"))
        .expect_err("a key must be a string");
    assert!(
        types.contains("redisget(): Wrong argument type given (Array for String) for arg1 (key)"),
        "{types}"
    );
    let arity = notices("$v = redisget('k')").expect_err("two or three arguments");
    assert!(
        arity.contains("redisget(): Wrong number of arguments given (1 for 2 or 3)"),
        "{arity}"
    );
}

/// A local HTTP server: `answer(path, authorization)` gives the status,
/// extra headers and body of each request. Serves until the test ends.
/// A stand-in's answer: status, extra header lines and body.
type Answer = (u16, String, String);

fn http_server(answer: fn(&str, Option<&str>, u16) -> Answer) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            let mut auth = None;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h
                    .strip_prefix("authorization: ")
                    .or(h.strip_prefix("Authorization: "))
                {
                    auth = Some(v.trim().to_string());
                }
            }
            let path = request.split(' ').nth(1).unwrap_or("/").to_string();
            let (status, headers, body) = answer(&path, auth.as_deref(), port);
            let mut s = stream;
            let _ = write!(
                s,
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
                body.len()
            );
        }
    });
    port
}

fn stand_in(path: &str, auth: Option<&str>, port: u16) -> Answer {
    let ok = |b: &str| (200, String::new(), b.to_string());
    match path {
        "/artifactory/api/storage/repo/g/m/1.0/m-1.0.jar" => ok(
            r#"{"uri":"x","checksums":{"sha1":"0123456789abcdef0123456789abcdef01234567","md5":"0123456789abcdef0123456789abcdef"}}"#,
        ),
        "/artifactory/api/storage/repo/g/m/2.0/m-2.0.jar" => {
            ok(r#"{"checksums":{"sha1":"NOT-HEX"}}"#)
        }
        "/moved/artifactory/api/storage/repo/g/m/1.0/m-1.0.jar" => (
            301,
            format!(
                "Location: http://127.0.0.1:{port}/artifactory/api/storage/repo/g/m/1.0/m-1.0.jar\r\n"
            ),
            String::new(),
        ),
        "/artifactory/api/storage/snap/g/m/1.0-SNAPSHOT" => ok(&format!(
            r#"{{"uri":"http://127.0.0.1:{port}/artifactory/api/storage/snap/g/m/1.0-SNAPSHOT","children":[
              {{"uri":"/m-1.0-20240101.120000-1.jar","folder":false}},
              {{"uri":"/m-1.0-20240301.120000-3.jar","folder":false}},
              {{"uri":"/m-1.0-20240201.120000-2.jar","folder":false}},
              {{"uri":"/m-1.0-20240401.120000-4-sources.jar","folder":false}},
              {{"uri":"/m-1.0-20240501.120000-5.jar","folder":true}},
              {{"uri":"/maven-metadata.xml","folder":false}}]}}"#
        )),
        "/artifactory/api/storage/snap/g/m/1.0-SNAPSHOT/m-1.0-20240301.120000-3.jar" => ok(
            r#"{"downloadUri":"http://repo/snap/g/m/1.0-SNAPSHOT/m-1.0-20240301.120000-3.jar","checksums":{"sha1":"aaaaabbbbbcccccdddddeeeeefffff0000011111"}}"#,
        ),
        "/artifactory/api/storage/snap/g/m/1.0-SNAPSHOT/m-1.0-20240401.120000-4-sources.jar" => ok(
            r#"{"downloadUri":"http://repo/sources.jar","checksums":{"sha1":"1111100000fffffeeeeedddddccccccbbbbbaaaa"}}"#,
        ),
        "/go/files/checksums" => {
            // admin:pw
            if auth == Some("Basic YWRtaW46cHc=") {
                ok(
                    "other.zip=ffffffffffffffffffffffffffffffff\napp.zip=0123456789abcdef0123456789abcdef\n",
                )
            } else {
                (401, String::new(), "auth required".into())
            }
        }
        _ => (404, String::new(), "not here".into()),
    }
}

#[test]
fn archive_functions_fetch_from_a_stand_in_artifactory_and_gocd() {
    let port = http_server(stand_in);
    let base = format!("http://127.0.0.1:{port}");
    let code = format!(
        r#"
        notify {{ 'sha1': message => archive::artifactory_checksum('{base}/artifactory/repo/g/m/1.0/m-1.0.jar') }}
        notify {{ 'md5': message => archive::artifactory_checksum('{base}/artifactory/repo/g/m/1.0/m-1.0.jar', 'md5') }}
        notify {{ 'redirected': message => archive::artifactory_checksum('{base}/moved/artifactory/repo/g/m/1.0/m-1.0.jar') }}
        notify {{ 'latest': message => String(archive::artifactory_latest_url('{base}/artifactory/snap/g/m/1.0-SNAPSHOT/m-1.0-SNAPSHOT.jar',
          {{ 'module' => 'm', 'base_rev' => '1.0', 'ext' => 'jar' }})) }}
        notify {{ 'latest classifier': message => String(archive::artifactory_latest_url('{base}/artifactory/snap/g/m/1.0-SNAPSHOT/m-1.0-SNAPSHOT.jar',
          {{ 'module' => 'm', 'base_rev' => '1.0', 'ext' => 'jar', 'classifier' => 'sources' }})) }}
        notify {{ 'go': message => go_md5('admin', 'pw', 'app.zip', '{base}/go/files/checksums') }}
        "#
    );
    let all = notices(&code).expect("compiles");
    assert_eq!(
        message(&all, "sha1"),
        "0123456789abcdef0123456789abcdef01234567"
    );
    assert_eq!(message(&all, "md5"), "0123456789abcdef0123456789abcdef");
    assert_eq!(
        message(&all, "redirected"),
        "0123456789abcdef0123456789abcdef01234567"
    );
    assert_eq!(
        message(&all, "latest"),
        "{'url' => 'http://repo/snap/g/m/1.0-SNAPSHOT/m-1.0-20240301.120000-3.jar', 'sha1' => 'aaaaabbbbbcccccdddddeeeeefffff0000011111'}"
    );
    assert_eq!(
        message(&all, "latest classifier"),
        "{'url' => 'http://repo/sources.jar', 'sha1' => '1111100000fffffeeeeedddddccccccbbbbbaaaa'}"
    );
    assert_eq!(message(&all, "go"), "0123456789abcdef0123456789abcdef");

    let missing = notices(&format!(
        "$c = archive::artifactory_checksum('{base}/artifactory/repo/none.jar')"
    ))
    .expect_err("404");
    assert!(
        missing.contains(&format!(
            "HTTP Error Code 404\nURL: {base}/artifactory/api/storage/repo/none.jar\nContent:\nnot here"
        )),
        "{missing}"
    );
    // Ruby fails on `response.body` while writing its own message.
    let bad = notices(&format!(
        "$c = archive::artifactory_checksum('{base}/artifactory/repo/g/m/2.0/m-2.0.jar')"
    ))
    .expect_err("no checksum");
    assert!(bad.contains("undefined method `body' for"), "{bad}");
    let unauthorized = notices(&format!(
        "$c = go_md5('admin', 'wrong', 'app.zip', '{base}/go/files/checksums')"
    ))
    .expect_err("401");
    assert!(
        unauthorized.contains("HTTP Error Code 401"),
        "{unauthorized}"
    );
    let no_line = notices(&format!(
        "$c = go_md5('admin', 'pw', 'none.zip', '{base}/go/files/checksums')"
    ))
    .expect_err("no such file");
    assert!(
        no_line.contains("undefined method `match' for nil:NilClass"),
        "{no_line}"
    );
    let none = notices(&format!(
        "$c = archive::artifactory_latest_url('{base}/artifactory/snap/g/m/1.0-SNAPSHOT/m-1.0-SNAPSHOT.jar', {{ 'module' => 'x', 'base_rev' => '1', 'ext' => 'jar' }})"
    ))
    .expect_err("no artifacts");
    assert!(
        none.contains("Couldn't find any Artifactory artifacts"),
        "{none}"
    );
    let arity = notices("$c = go_md5('a', 'b')").expect_err("four arguments");
    assert!(
        arity.contains(r#"Invalid go md5 info url ["a", "b"]"#),
        "{arity}"
    );
    let closed = free_port();
    let refused = notices(&format!(
        "$c = archive::artifactory_checksum('http://127.0.0.1:{closed}/artifactory/r/x.jar')"
    ))
    .expect_err("nothing listens");
    assert!(refused.contains("127.0.0.1"), "{refused}");
}
