//! Bounded output capture. Whatever a target prints, ferry keeps at most
//! `limit` bytes of each stream (stdout, stderr, and the two merged): the
//! first half and the last half, with the count of everything in between.
//! A stream within the limit is kept whole. When bytes were dropped, the
//! text form has a marker line where they were, and [`Collected::truncated`]
//! says how many each stream lost. The limit is set with `--max-output` on
//! the command line and `max-output` in the server's config; [`parse_size`]
//! reads the values those accept.

use super::result::{CommandOutput, Truncated};
use crate::transport::Stream;

/// Bytes kept per stream per target unless configured otherwise: 1 MiB.
pub const DEFAULT_MAX_OUTPUT: usize = 1024 * 1024;
/// The smallest limit the CLI and the server accept.
pub const MIN_MAX_OUTPUT: usize = 1024;
/// The largest limit the CLI and the server accept: 1 GiB.
pub const MAX_MAX_OUTPUT: usize = 1024 * 1024 * 1024;

/// Why a size setting was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("'{0}' is not a size: give bytes, or a number with K, M or G (KiB, MiB, GiB), e.g. 4M")]
    Syntax(String),
    #[error("{0} bytes is out of range: the output limit is between {MIN_MAX_OUTPUT} bytes and 1G")]
    Range(u64),
}

/// Reads an output limit: bytes, or a number with a binary suffix (`64K`,
/// `10M`, `1G`, also `KiB`, `MiB`, `GiB`), between 1 KiB and 1 GiB.
pub fn parse_size(text: &str) -> Result<usize, SizeError> {
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (number, suffix) = t.split_at(digits);
    let unit: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        _ => return Err(SizeError::Syntax(text.to_string())),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| SizeError::Syntax(text.to_string()))?;
    let bytes = n.saturating_mul(unit);
    check_size(bytes)
}

/// Checks that a limit given in bytes is in range.
pub fn check_size(bytes: u64) -> Result<usize, SizeError> {
    match usize::try_from(bytes) {
        Ok(n) if (MIN_MAX_OUTPUT..=MAX_MAX_OUTPUT).contains(&n) => Ok(n),
        _ => Err(SizeError::Range(bytes)),
    }
}

/// One stream's kept bytes: the first `limit / 2`, the last `limit - limit / 2`
/// (in a ring), and how many arrived in all.
#[derive(Clone, Debug)]
pub struct Captured {
    limit: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    /// Where the oldest byte of a full ring is.
    start: usize,
    total: u64,
}

impl Captured {
    pub fn new(limit: usize) -> Captured {
        Captured {
            limit,
            head: Vec::new(),
            tail: Vec::new(),
            start: 0,
            total: 0,
        }
    }

    fn head_cap(&self) -> usize {
        self.limit / 2
    }

    fn tail_cap(&self) -> usize {
        self.limit - self.head_cap()
    }

    /// Takes a chunk; memory stays within the limit however much arrives.
    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        let room = self.head_cap() - self.head.len();
        if room > 0 {
            let (now, rest) = data.split_at(room.min(data.len()));
            self.head.extend_from_slice(now);
            data = rest;
        }
        let cap = self.tail_cap();
        if data.is_empty() || cap == 0 {
            return;
        }
        if data.len() >= cap {
            self.tail.clear();
            self.tail.extend_from_slice(&data[data.len() - cap..]);
            self.start = 0;
            return;
        }
        if self.tail.len() < cap {
            let fits = (cap - self.tail.len()).min(data.len());
            let (now, rest) = data.split_at(fits);
            let want = (self.tail.len() * 2).clamp(self.tail.len() + fits, cap);
            self.tail.reserve_exact(want - self.tail.len());
            self.tail.extend_from_slice(now);
            data = rest;
        }
        // The ring is full: overwrite its oldest bytes.
        while !data.is_empty() {
            let n = (cap - self.start).min(data.len());
            self.tail[self.start..self.start + n].copy_from_slice(&data[..n]);
            self.start = (self.start + n) % cap;
            data = &data[n..];
        }
    }

    /// How many bytes arrived.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// How many bytes were dropped (0 when the stream fit).
    pub fn omitted(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    pub fn is_truncated(&self) -> bool {
        self.omitted() > 0
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The kept tail, oldest byte first.
    fn tail_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.tail.len());
        v.extend_from_slice(&self.tail[self.start..]);
        v.extend_from_slice(&self.tail[..self.start]);
        v
    }

    /// The kept text: the whole stream when it fit; otherwise the head,
    /// cut back to a character boundary, and the tail from one, and the
    /// number of bytes between them (the marker is the caller's to place).
    pub fn parts(&self) -> Parts {
        if !self.is_truncated() {
            let mut all = self.head.clone();
            all.extend_from_slice(&self.tail_bytes());
            return Parts {
                head: String::from_utf8_lossy(&all).into_owned(),
                cut: None,
            };
        }
        let (end, skip) = self.boundaries();
        let tail = self.tail_bytes();
        Parts {
            head: String::from_utf8_lossy(&self.head[..end]).into_owned(),
            cut: Some(Cut {
                omitted: self.shown_omitted(),
                limit: self.limit,
                tail: String::from_utf8_lossy(&tail[skip..]).into_owned(),
            }),
        }
    }

    /// Where the shown head ends and how many bytes of the tail's start
    /// are the rest of a character cut in two.
    fn boundaries(&self) -> (usize, usize) {
        let n = self.tail.len();
        let skip = (0..n.min(3))
            .take_while(|i| self.tail[(self.start + i) % n] & 0xC0 == 0x80)
            .count();
        (utf8_end(&self.head), skip)
    }

    /// The bytes a truncated stream's text leaves out: those dropped and
    /// the pieces of characters cut at either end (0 when it fit).
    pub fn shown_omitted(&self) -> u64 {
        if !self.is_truncated() {
            return 0;
        }
        let (end, skip) = self.boundaries();
        self.total - (end + self.tail.len() - skip) as u64
    }

    /// The kept text, with a marker line where bytes were dropped.
    pub fn text(&self) -> String {
        self.parts().joined()
    }
}

/// A stream's kept text; see [`Captured::parts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parts {
    pub head: String,
    pub cut: Option<Cut>,
}

/// Where a stream was cut: what was dropped and what follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub omitted: u64,
    pub limit: usize,
    pub tail: String,
}

impl Parts {
    /// Head, marker line and tail.
    pub fn joined(&self) -> String {
        match &self.cut {
            None => self.head.clone(),
            Some(cut) => format!(
                "{}{}{}",
                self.head,
                marker(cut.omitted, cut.limit),
                cut.tail
            ),
        }
    }
}

/// The line that stands for dropped output.
pub fn marker(omitted: u64, limit: usize) -> String {
    format!("\n[ferry: {omitted} bytes of output omitted; at most {limit} bytes are kept]\n")
}

/// The length of `bytes` without an incomplete UTF-8 sequence at its end.
fn utf8_end(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for back in 1..=len.min(4) {
        let b = bytes[len - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let need = match b {
            0xF0..=0xF7 => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        };
        return if need > back { len - back } else { len };
    }
    len
}

/// A command's output as ferry keeps it: stdout, stderr and both merged in
/// arrival order, each bounded by the same limit.
#[derive(Clone, Debug)]
pub struct Collected {
    pub stdout: Captured,
    pub stderr: Captured,
    pub merged: Captured,
}

impl Collected {
    pub fn new(limit: usize) -> Collected {
        Collected {
            stdout: Captured::new(limit),
            stderr: Captured::new(limit),
            merged: Captured::new(limit),
        }
    }

    pub fn push(&mut self, stream: Stream, data: &[u8]) {
        match stream {
            Stream::Stdout => self.stdout.push(data),
            Stream::Stderr => self.stderr.push(data),
        }
        self.merged.push(data);
    }

    /// The bytes each truncated stream lost, under the names of Bolt's
    /// result keys (none when everything was kept).
    pub fn truncated(&self) -> Truncated {
        let lost = |c: &Captured| c.is_truncated().then(|| c.shown_omitted());
        Truncated {
            merged_output: lost(&self.merged),
            stderr: lost(&self.stderr),
            stdout: lost(&self.stdout),
        }
    }

    /// The kept output of a command that ended with `exit_code`.
    pub fn into_output(self, exit_code: i32) -> CommandOutput {
        CommandOutput {
            exit_code,
            stdout: self.stdout.text(),
            stderr: self.stderr.text(),
            merged_output: self.merged.text(),
            truncated: self.truncated(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(limit: usize, chunks: &[&[u8]]) -> Captured {
        let mut c = Captured::new(limit);
        for chunk in chunks {
            c.push(chunk);
        }
        c
    }

    #[test]
    fn within_the_limit_everything_is_kept() {
        let c = fed(10, &[b"abc", b"defg", b"hij"]);
        assert!(!c.is_truncated());
        assert_eq!(c.text(), "abcdefghij");
        assert_eq!(fed(10, &[]).text(), "");
    }

    #[test]
    fn over_the_limit_head_and_tail_are_kept() {
        // Every split of the same stream gives the same result.
        let data: Vec<u8> = (0..100u8).map(|i| b'a' + i % 26).collect();
        for size in [1, 3, 4, 7, 50, 100] {
            let chunks: Vec<&[u8]> = data.chunks(size).collect();
            let c = fed(10, &chunks);
            assert_eq!(c.total(), 100);
            assert_eq!(c.omitted(), 90);
            let p = c.parts();
            assert_eq!(p.head, "abcde");
            let cut = p.cut.expect("cut");
            assert_eq!((cut.omitted, cut.tail.as_str()), (90, "rstuv"), "{size}");
            assert_eq!(
                c.text(),
                format!("abcde{}rstuv", marker(90, 10)),
                "chunks of {size}"
            );
        }
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        // "é" is two bytes; a cut through one drops it whole.
        let c = fed(
            6,
            &["aaé".as_bytes(), "xxxxxxxx".as_bytes(), "bébé".as_bytes()],
        );
        let p = c.parts();
        assert_eq!(p.head, "aa");
        let cut = p.cut.expect("cut");
        assert_eq!(cut.tail, "bé");
        assert_eq!(cut.omitted, c.total() - 2 - 3);
    }

    #[test]
    fn a_zero_limit_keeps_nothing_and_does_not_panic() {
        let c = fed(0, &[b"abc"]);
        assert_eq!(c.omitted(), 3);
        assert_eq!(c.parts().head, "");
    }

    #[test]
    fn collected_names_the_streams_that_lost_bytes() {
        let mut out = Collected::new(4);
        out.push(Stream::Stdout, b"12345678");
        out.push(Stream::Stderr, b"ab");
        let cut = out.truncated();
        assert_eq!(
            serde_json::to_value(cut).ok(),
            Some(serde_json::json!({"stdout": 4, "merged_output": 6}))
        );
        assert!(Collected::new(4).truncated().is_none());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("10m"), Ok(10 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("2G"), Err(SizeError::Range(2 << 30)));
        assert_eq!(parse_size("10"), Err(SizeError::Range(10)));
        assert!(matches!(parse_size("ten"), Err(SizeError::Syntax(_))));
        assert!(matches!(parse_size("1.5M"), Err(SizeError::Syntax(_))));
        assert!(matches!(parse_size(""), Err(SizeError::Syntax(_))));
        assert!(matches!(
            parse_size("99999999999999999999"),
            Err(SizeError::Syntax(_))
        ));
    }
}
