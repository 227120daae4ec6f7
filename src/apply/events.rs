//! Reading back what the apply program reports ([`super::program`]): one
//! line per fact, `TOKEN<TAB>STEP<TAB>WHAT<TAB>FIELDS...`. Lines that do not
//! start with this run's token are not the program's and are ignored; a
//! line with the token that does not parse is a protocol error (a target
//! that lies is reported, never believed).

use super::types::EventStatus;

/// One fact the program reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A property event: changed, held back by noop, or failed.
    Event {
        step: usize,
        property: String,
        status: EventStatus,
        previous: String,
        detail: String,
    },
    /// The resource failed before it could change anything (`code` says
    /// why, for the type to put in words).
    Fail { step: usize, code: String },
    /// A line of a command's output.
    Out { step: usize, text: String },
    /// Skipped: these steps upstream failed.
    Skip { step: usize, failed: Vec<usize> },
    /// Refreshed by this many events.
    Refresh { step: usize, events: usize },
    /// Would have been refreshed by this many events (noop).
    RefreshNoop { step: usize, events: usize },
    /// The refresh failed with this status and output.
    RefreshFailed {
        step: usize,
        status: String,
        detail: String,
    },
    /// A notice the type logs without an event.
    Notice { step: usize, text: String },
    /// The lines of this step that follow, up to the next `Gen`, are of a
    /// resource the step generated: the file `rel` below a directory
    /// copied recursively.
    Gen { step: usize, rel: String },
    /// The step is over.
    Done { step: usize },
    /// The whole program is over.
    End,
    /// Nothing was applied: these contents (by sha256) are not in the
    /// target's cache directory `cache` (as the target names it) intact.
    Need { cache: String, shas: Vec<String> },
    /// Nothing was applied: another apply holds the target's lock for the
    /// user `uid` (its process id, when it wrote one).
    Busy { pid: Option<u32>, uid: String },
    /// Nothing was applied: the lock for the user `uid` is a directory
    /// that user does not own (`owner`, a uid, or `-` when unknown).
    Foreign { uid: String, owner: String },
}

/// Whether `s` is a numeric user id, as `id -u` prints it.
fn is_uid(s: &str) -> bool {
    !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit())
}

/// A line with this run's token that is not one the program writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the target sent a line ferry's apply program does not write: {0:?}")]
pub struct ProtocolError(pub String);

/// Reads one line of the program's stdout: `None` when it is not the
/// program's.
pub fn parse(token: &str, line: &str) -> Option<Result<Line, ProtocolError>> {
    let rest = line.strip_prefix(token)?.strip_prefix('\t')?;
    let bad = || ProtocolError(line.chars().take(200).collect());
    let mut fields = rest.split('\t');
    let step_text = fields.next().unwrap_or_default();
    let what = fields.next().unwrap_or_default();
    if step_text == "-" {
        let rest: Vec<&str> = fields.collect();
        return Some(match (what, rest.as_slice()) {
            ("end", []) => Ok(Line::End),
            ("busy", [pid, uid]) if is_uid(uid) => Ok(Line::Busy {
                pid: pid.parse().ok(),
                uid: uid.to_string(),
            }),
            ("foreign", [uid, owner]) if is_uid(uid) && (*owner == "-" || is_uid(owner)) => {
                Ok(Line::Foreign {
                    uid: uid.to_string(),
                    owner: owner.to_string(),
                })
            }
            ("need", [cache, shas @ ..])
                if !shas.is_empty()
                    && shas
                        .iter()
                        .all(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())) =>
            {
                Ok(Line::Need {
                    cache: cache.to_string(),
                    shas: shas.iter().map(|s| s.to_string()).collect(),
                })
            }
            _ => Err(bad()),
        });
    }
    let Ok(step) = step_text.parse::<usize>() else {
        return Some(Err(bad()));
    };
    let rest: Vec<&str> = fields.collect();
    let field = |i: usize| rest.get(i).copied().unwrap_or_default().to_string();
    let count = |i: usize| rest.get(i).and_then(|s| s.trim().parse::<usize>().ok());
    Some(match what {
        "ev" => match EventStatus::parse(&field(1)) {
            Some(status) => Ok(Line::Event {
                step,
                property: field(0),
                status,
                previous: field(2),
                // Failure text may hold tabs: it is the rest of the line.
                detail: rest.get(3..).map(|r| r.join("\t")).unwrap_or_default(),
            }),
            None => Err(bad()),
        },
        "fail" => Ok(Line::Fail {
            step,
            code: rest.join("\t"),
        }),
        "out" => Ok(Line::Out {
            step,
            text: rest.join("\t"),
        }),
        "notice" => Ok(Line::Notice {
            step,
            text: rest.join("\t"),
        }),
        "gen" if !rest.is_empty() => Ok(Line::Gen {
            step,
            rel: rest.join("\t"),
        }),
        "skip" => {
            let failed: Option<Vec<usize>> = rest
                .join(" ")
                .split_whitespace()
                .map(|s| s.parse::<usize>().ok())
                .collect();
            failed
                .map(|failed| Line::Skip { step, failed })
                .ok_or_else(bad)
        }
        "refresh" => count(0)
            .map(|events| Line::Refresh { step, events })
            .ok_or_else(bad),
        "refresh-noop" => count(0)
            .map(|events| Line::RefreshNoop { step, events })
            .ok_or_else(bad),
        "refresh-failed" => Ok(Line::RefreshFailed {
            step,
            status: field(0),
            detail: rest.get(1..).map(|r| r.join("\t")).unwrap_or_default(),
        }),
        "done" => Ok(Line::Done { step }),
        _ => Err(bad()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_and_strangers_are_ignored() {
        let t = "tok";
        assert_eq!(parse(t, "hello"), None);
        assert_eq!(parse(t, "tokx\t1\tdone"), None);
        assert_eq!(parse(t, "tok\t-\tend"), Some(Ok(Line::End)));
        assert_eq!(
            parse(t, "tok\t3\tev\tmode\tsuccess\t644\t600"),
            Some(Ok(Line::Event {
                step: 3,
                property: "mode".into(),
                status: EventStatus::Success,
                previous: "644".into(),
                detail: "600".into()
            }))
        );
        assert_eq!(
            parse(t, "tok\t4\tskip\t 1 2"),
            Some(Ok(Line::Skip {
                step: 4,
                failed: vec![1, 2]
            }))
        );
        assert!(matches!(parse(t, "tok\t4\tev\tx\tmaybe\t1"), Some(Err(_))));
        assert!(matches!(parse(t, "tok\tx\tdone"), Some(Err(_))));
        assert!(matches!(parse(t, "tok\t1\twhat"), Some(Err(_))));
        let sha = "ab".repeat(32);
        assert_eq!(
            parse(t, &format!("tok\t-\tneed\t/root/.cache\t{sha}")),
            Some(Ok(Line::Need {
                cache: "/root/.cache".into(),
                shas: vec![sha.clone()]
            }))
        );
        assert!(matches!(parse(t, "tok\t-\tneed\t/c\t../x"), Some(Err(_))));
        assert!(matches!(parse(t, "tok\t-\tneed\t/c"), Some(Err(_))));
        assert_eq!(
            parse(t, "tok\t-\tbusy\t42\t0"),
            Some(Ok(Line::Busy {
                pid: Some(42),
                uid: "0".into()
            }))
        );
        assert_eq!(
            parse(t, "tok\t-\tbusy\t-\t1000"),
            Some(Ok(Line::Busy {
                pid: None,
                uid: "1000".into()
            }))
        );
        assert_eq!(
            parse(t, "tok\t-\tforeign\t1000\t1001"),
            Some(Ok(Line::Foreign {
                uid: "1000".into(),
                owner: "1001".into()
            }))
        );
        assert!(matches!(
            parse(t, "tok\t-\tforeign\t1000\t../x"),
            Some(Err(_))
        ));
        assert!(matches!(parse(t, "tok\t-\tbusy\t42"), Some(Err(_))));
        assert_eq!(
            parse(t, "tok\t-\tforeign\t0\t-"),
            Some(Ok(Line::Foreign {
                uid: "0".into(),
                owner: "-".into()
            }))
        );
        assert!(matches!(parse(t, "tok\t-\tend\textra"), Some(Err(_))));
    }
}
