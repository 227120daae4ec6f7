//! Formatting `Timestamp` and `Timespan` values with a format string, as
//! Puppet's `strftime` does: a timestamp as Ruby's `Time#strftime` (flags
//! `-`, `_`, `0`, `^`, `#`, a width, `:` for `%z`; the date, time, week,
//! zone and combined directives), optionally moved to a timezone given as
//! an offset or an abbreviation; a timespan with Puppet's own format
//! (`%D`, `%H`, `%M`, `%S`, `%L`, `%N`, the largest unit unbounded).

use chrono::{DateTime, Datelike, FixedOffset, Offset, Timelike, Utc};

use crate::lang::values::error::ValueError;

const NS: i128 = 1_000_000_000;

/// The UTC offset in seconds that timezone `tz` names: `current` (the
/// compiling process's), `+HH:MM`, `+HHMM`, `+HH`, `UTC`/`GMT`/`Z` or a
/// North American abbreviation, case-insensitive.
pub fn utc_offset(tz: &str) -> Result<i32, ValueError> {
    let illegal = || ValueError(format!("Illegal timezone '{tz}'"));
    let t = tz.trim();
    if t.eq_ignore_ascii_case("current") {
        return Ok(chrono::Local::now().offset().fix().local_minus_utc());
    }
    let named = match t.to_ascii_uppercase().as_str() {
        "UTC" | "GMT" | "UT" | "Z" => Some(0),
        "EST" | "CDT" => Some(-5),
        "EDT" => Some(-4),
        "CST" | "MDT" => Some(-6),
        "MST" | "PDT" => Some(-7),
        "PST" => Some(-8),
        _ => None,
    };
    if let Some(h) = named {
        return Ok(h * 3600);
    }
    let (sign, rest) = match t.as_bytes().first() {
        Some(b'+') => (1, &t[1..]),
        Some(b'-') => (-1, &t[1..]),
        _ => return Err(illegal()),
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) || rest.matches(':').count() > 1 {
        return Err(illegal());
    }
    let (h, m) = match digits.len() {
        1 | 2 => (digits.as_str(), "0"),
        4 => digits.split_at(2),
        _ => return Err(illegal()),
    };
    let (h, m): (i32, i32) = (
        h.parse().map_err(|_| illegal())?,
        m.parse().map_err(|_| illegal())?,
    );
    if h > 23 || m > 59 {
        return Err(illegal());
    }
    Ok(sign * (h * 3600 + m * 60))
}

/// One parsed `%` directive: flags, width and conversion.
#[derive(Default, Clone, Copy)]
struct Spec {
    pad: Option<char>,
    no_pad: bool,
    upper: bool,
    swap: bool,
    colons: usize,
    width: Option<usize>,
}

impl Spec {
    /// A number with its default width and padding (`0` or space).
    fn num(&self, n: i64, width: usize, pad: char) -> String {
        if self.no_pad {
            return n.to_string();
        }
        let w = self.width.unwrap_or(width);
        let pad = self.pad.unwrap_or(pad);
        let digits = n.unsigned_abs().to_string();
        let sign = if n < 0 { "-" } else { "" };
        let fill = w.saturating_sub(digits.len() + sign.len());
        if pad == '0' {
            format!("{sign}{}{digits}", "0".repeat(fill))
        } else {
            format!("{}{sign}{digits}", " ".repeat(fill))
        }
    }

    /// A word, case-changed by `^` or `#`, padded to the width.
    fn text(&self, s: &str, swap_lower: bool) -> String {
        let s = if self.upper {
            s.to_uppercase()
        } else if self.swap && swap_lower {
            s.to_lowercase()
        } else if self.swap {
            s.to_uppercase()
        } else {
            s.to_string()
        };
        let fill = self.width.unwrap_or(0).saturating_sub(s.chars().count());
        let pad = if self.no_pad {
            ""
        } else if self.pad == Some('0') {
            "0"
        } else {
            " "
        };
        format!("{}{s}", pad.repeat(fill))
    }
}

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Timestamp `ns` (nanoseconds since the epoch) formatted as Ruby's
/// `Time#strftime`, in UTC or at `offset` seconds from it. A format that
/// ends inside a directive is Ruby's `invalid format`.
pub fn format_timestamp(ns: i128, fmt: &str, offset: Option<i32>) -> Result<String, ValueError> {
    let secs = ns.div_euclid(NS);
    let frac = ns.rem_euclid(NS) as u32;
    let zone = FixedOffset::east_opt(offset.unwrap_or(0)).unwrap_or_else(|| Utc.fix());
    let Some(t) = i64::try_from(secs)
        .ok()
        .and_then(|s| DateTime::from_timestamp(s, frac))
        .map(|t| t.with_timezone(&zone))
    else {
        return Ok(crate::lang::values::time::fmt_stamp(ns));
    };
    let mut out = String::new();
    let chars: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '%' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut spec = Spec::default();
        let mut modifier = false;
        while let Some(&c) = chars.get(i) {
            match c {
                // Ruby's locale modifiers (`%Ey`, `%Od`) change nothing.
                'E' | 'O' => modifier = true,
                '-' => spec.no_pad = true,
                '_' => spec.pad = Some(' '),
                '0' => spec.pad = Some('0'),
                '^' => spec.upper = true,
                '#' => spec.swap = true,
                ':' => spec.colons += 1,
                _ => break,
            }
            i += 1;
        }
        let mut width = String::new();
        while let Some(c) = chars.get(i).filter(|c| c.is_ascii_digit()) {
            width.push(*c);
            i += 1;
        }
        spec.width = width.parse().ok();
        let Some(&conv) = chars.get(i) else {
            if spec.colons == 0 && !modifier {
                return Err(ValueError(format!("invalid format: {fmt}")));
            }
            out.extend(&chars[start..]);
            break;
        };
        i += 1;
        match stamp_directive(&t, conv, spec, offset, ns) {
            Some(s) => out.push_str(&s),
            None => out.extend(&chars[start..i]),
        }
    }
    Ok(out)
}

/// One directive of a timestamp; None when Ruby does not know it (the
/// directive is then copied as written).
fn stamp_directive(
    t: &DateTime<FixedOffset>,
    conv: char,
    spec: Spec,
    offset: Option<i32>,
    ns: i128,
) -> Option<String> {
    // Ruby names the zone of a UTC time only; a fixed offset has none.
    let zone_name = if offset.is_none() { "UTC" } else { "" };
    // The combined forms hold complete directives only.
    let again = |f: &str| format_timestamp(ns, f, offset).unwrap_or_default();
    let s = &spec;
    if spec.colons > 0 && conv != 'z' {
        return None;
    }
    let hour12 = |h: u32| if h.is_multiple_of(12) { 12 } else { h % 12 } as i64;
    Some(match conv {
        'Y' => {
            let y = i64::from(t.year());
            if y >= 0 {
                s.num(y, 4, '0')
            } else {
                s.num(y, 5, '0')
            }
        }
        'C' => s.num(i64::from(t.year()).div_euclid(100), 2, '0'),
        'y' => s.num(i64::from(t.year()).rem_euclid(100), 2, '0'),
        'm' => s.num(i64::from(t.month()), 2, '0'),
        'B' => s.text(MONTHS[t.month0() as usize], false),
        'b' | 'h' => s.text(&MONTHS[t.month0() as usize][..3], false),
        'd' => s.num(i64::from(t.day()), 2, '0'),
        'e' => s.num(i64::from(t.day()), 2, ' '),
        'j' => s.num(i64::from(t.ordinal()), 3, '0'),
        'H' => s.num(i64::from(t.hour()), 2, '0'),
        'k' => s.num(i64::from(t.hour()), 2, ' '),
        'I' => s.num(hour12(t.hour()), 2, '0'),
        'l' => s.num(hour12(t.hour()), 2, ' '),
        'P' => s.text(if t.hour() < 12 { "am" } else { "pm" }, false),
        'p' => s.text(if t.hour() < 12 { "AM" } else { "PM" }, true),
        'M' => s.num(i64::from(t.minute()), 2, '0'),
        'S' => s.num(i64::from(t.second()), 2, '0'),
        'L' | 'N' => {
            let digits = s.width.unwrap_or(if conv == 'L' { 3 } else { 9 });
            let mut f = format!("{:09}", t.nanosecond() % 1_000_000_000);
            if digits <= 9 {
                f.truncate(digits);
            } else {
                f.push_str(&"0".repeat(digits - 9));
            }
            f
        }
        'z' => {
            let off = t.offset().local_minus_utc();
            let sign = if off < 0 { '-' } else { '+' };
            let a = off.unsigned_abs();
            let (h, m, sec) = (a / 3600, a / 60 % 60, a % 60);
            match s.colons {
                0 => format!("{sign}{h:02}{m:02}"),
                1 => format!("{sign}{h:02}:{m:02}"),
                _ => format!("{sign}{h:02}:{m:02}:{sec:02}"),
            }
        }
        'Z' => s.text(zone_name, true),
        'A' => s.text(DAYS[t.weekday().num_days_from_sunday() as usize], false),
        'a' => s.text(
            &DAYS[t.weekday().num_days_from_sunday() as usize][..3],
            false,
        ),
        'u' => s.num(i64::from(t.weekday().number_from_monday()), 1, '0'),
        'w' => s.num(i64::from(t.weekday().num_days_from_sunday()), 1, '0'),
        'G' => s.num(i64::from(t.iso_week().year()), 4, '0'),
        'g' => s.num(i64::from(t.iso_week().year()).rem_euclid(100), 2, '0'),
        'V' => s.num(i64::from(t.iso_week().week()), 2, '0'),
        'U' => {
            let wd = i64::from(t.weekday().num_days_from_sunday());
            s.num((i64::from(t.ordinal0()) + 7 - wd) / 7, 2, '0')
        }
        'W' => {
            let wd = i64::from(t.weekday().num_days_from_monday());
            s.num((i64::from(t.ordinal0()) + 7 - wd) / 7, 2, '0')
        }
        's' => s.num(i64::try_from(ns.div_euclid(NS)).unwrap_or(0), 1, '0'),
        'n' => "\n".into(),
        't' => "\t".into(),
        '%' => "%".into(),
        'c' => s.text(&again("%a %b %e %H:%M:%S %Y"), false),
        'D' | 'x' => s.text(&again("%m/%d/%y"), false),
        'F' => s.text(&again("%Y-%m-%d"), false),
        'v' => s.text(&again("%e-%^b-%4Y"), false),
        'X' | 'T' => s.text(&again("%H:%M:%S"), false),
        'r' => s.text(&again("%I:%M:%S %p"), false),
        'R' => s.text(&again("%H:%M"), false),
        _ => return None,
    })
}

/// Which unit a timespan directive shows.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Nano,
    Milli,
    Second,
    Minute,
    Hour,
    Day,
}

/// Timespan `ns` formatted with Puppet's timespan format: `%D`, `%H`,
/// `%M`, `%S`, `%L`, `%N` with `-` (no padding), `_` (spaces), `0` and a
/// width; the largest unit used is a total, the others wrap.
pub fn format_timespan(ns: i128, fmt: &str) -> Result<String, ValueError> {
    enum Seg {
        Lit(String),
        Val(Unit, Option<char>, Option<usize>),
    }
    let bad = |start: usize, pos: usize| {
        let expr: String = fmt.chars().skip(start).take(pos - start).collect();
        ValueError(format!(
            "Bad format specifier '{expr}' in '{fmt}', at position {pos}"
        ))
    };
    let mut segs: Vec<Seg> = Vec::new();
    let mut in_spec = false;
    let mut in_width = false;
    let mut pad = Some('0');
    let mut width: Option<usize> = None;
    let mut start = 0;
    let mut last = 0;
    for (pos, c) in fmt.chars().enumerate() {
        last = pos;
        if !in_spec {
            if c == '%' {
                (in_spec, in_width, pad, width, start) = (true, false, Some('0'), None, pos);
            } else if let Some(Seg::Lit(s)) = segs.last_mut() {
                s.push(c);
            } else {
                segs.push(Seg::Lit(c.to_string()));
            }
            continue;
        }
        let unit = match c {
            '%' => {
                segs.push(Seg::Lit("%".into()));
                in_spec = false;
                continue;
            }
            '-' | '_' if in_width => return Err(bad(start, pos)),
            '-' | '_' => {
                pad = (c == '_').then_some(' ');
                in_width = true;
                continue;
            }
            'D' => Unit::Day,
            'H' => Unit::Hour,
            'M' => Unit::Minute,
            'S' => Unit::Second,
            'L' => Unit::Milli,
            'N' => Unit::Nano,
            d if d.is_ascii_digit() => {
                if !in_width && d == '0' {
                    pad = Some('0');
                } else {
                    let n = d as usize - '0' as usize;
                    width = Some(width.unwrap_or(0).saturating_mul(10).saturating_add(n));
                }
                in_width = true;
                continue;
            }
            _ => return Err(bad(start, pos)),
        };
        segs.push(Seg::Val(unit, pad, width));
        in_spec = false;
    }
    if in_spec {
        return Err(bad(start, last));
    }
    let highest = segs
        .iter()
        .filter_map(|s| match s {
            Seg::Val(u, ..) => Some(*u),
            Seg::Lit(_) => None,
        })
        .max();
    let total = ns.unsigned_abs();
    let mut out = String::from(if ns < 0 { "-" } else { "" });
    let mut total_used = false;
    for seg in &segs {
        let (unit, pad, width) = match seg {
            Seg::Lit(s) => {
                out.push_str(s);
                continue;
            }
            Seg::Val(u, p, w) => (*u, *p, *w),
        };
        // Puppet marks the first segment of the highest unit as a total.
        let is_total = Some(unit) == highest && !total_used;
        if is_total {
            total_used = true;
        }
        let ns_u = NS.unsigned_abs();
        let (value, default_width) = match unit {
            Unit::Day => (total / (ns_u * 86_400), 1),
            Unit::Hour => (wrap(total / (ns_u * 3600), 24, is_total), 2),
            Unit::Minute => (wrap(total / (ns_u * 60), 60, is_total), 2),
            Unit::Second => (wrap(total / ns_u, 60, is_total), 2),
            Unit::Milli => (wrap(total / 1_000_000, 1000, is_total), 3),
            Unit::Nano => {
                let w = width.unwrap_or(9);
                let v = if w < 9 {
                    let v = total / 10u128.pow((9 - w) as u32);
                    if is_total {
                        v
                    } else {
                        v % 10u128.pow(w as u32)
                    }
                } else if is_total {
                    total
                } else {
                    total % ns_u
                };
                (v, 9)
            }
        };
        let w = width.unwrap_or(default_width);
        let fraction = matches!(unit, Unit::Milli | Unit::Nano);
        let value = if fraction && !is_total && pad != Some('0') {
            strip_trailing_zeros(value)
        } else {
            value
        };
        out.push_str(&match (pad, fraction) {
            (None, _) => value.to_string(),
            (Some(_), true) => format!("{value:<w$}"),
            (Some(' '), false) => format!("{value:>w$}"),
            (Some(_), false) => format!("{value:0>w$}"),
        });
    }
    Ok(out)
}

fn wrap(v: u128, m: u128, total: bool) -> u128 {
    if total { v } else { v % m }
}

/// `120` → `12`, `0` → `0` (Puppet's `/\A([0-9]+?)0*\z/`).
fn strip_trailing_zeros(mut v: u128) -> u128 {
    while v != 0 && v.is_multiple_of(10) {
        v /= 10;
    }
    v
}
