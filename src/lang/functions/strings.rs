//! String functions.

use crate::lang::values::value::{Value, str_to_num};

fn s(v: Option<&Value>) -> String {
    v.map(|v| v.to_s()).unwrap_or_default()
}

/// Compare two version strings like Puppet's `versioncmp`.
pub fn versioncmp(a: &str, b: &str) -> i64 {
    fn parts(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut digit = None;
        for c in s.chars() {
            if c == '.' || c == '-' {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(c.to_string());
                digit = None;
                continue;
            }
            let d = c.is_ascii_digit();
            if digit.is_some_and(|x| x != d) && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            digit = Some(d);
            cur.push(c);
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }
    if a == b {
        return 0;
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(pb.iter()) {
        if x == y {
            continue;
        }
        if x == "-" && y != "-" {
            return -1;
        }
        if y == "-" && x != "-" {
            return 1;
        }
        if x == "." && y != "." {
            return -1;
        }
        if y == "." && x != "." {
            return 1;
        }
        let ord = match (x.parse::<u128>(), y.parse::<u128>()) {
            (Ok(n), Ok(m)) if !(x.starts_with('0') || y.starts_with('0')) => n.cmp(&m),
            _ => x.to_uppercase().cmp(&y.to_uppercase()),
        };
        match ord {
            std::cmp::Ordering::Less => return -1,
            std::cmp::Ordering::Greater => return 1,
            std::cmp::Ordering::Equal => {}
        }
    }
    match pa.len().cmp(&pb.len()) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Equal => 0,
    }
}

pub fn sprintf(fmt: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut it = args.iter();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&n) = chars.peek() {
            chars.next();
            if n.is_ascii_alphabetic() || n == '%' {
                spec.push(n);
                break;
            }
            spec.push(n);
        }
        let conv = spec.chars().last().unwrap_or('s');
        let flags = spec.get(..spec.len().saturating_sub(1)).unwrap_or("");
        let left = flags.contains('-');
        let zero = flags.starts_with('0');
        let (width, prec) = match flags
            .trim_start_matches(['-', '0', '+', ' '])
            .split_once('.')
        {
            Some((w, p)) => (w.parse::<usize>().unwrap_or(0), p.parse::<usize>().ok()),
            None => (
                flags
                    .trim_start_matches(['-', '0', '+', ' '])
                    .parse::<usize>()
                    .unwrap_or(0),
                None,
            ),
        };
        let body = match conv {
            '%' => "%".to_string(),
            'd' | 'i' => match it.next() {
                Some(Value::Int(i)) => i.to_string(),
                Some(Value::Float(f)) => (*f as i64).to_string(),
                Some(v) => match str_to_num(&v.to_s()) {
                    Some(Value::Int(i)) => i.to_string(),
                    _ => v.to_s(),
                },
                None => String::new(),
            },
            'f' => {
                let f = match it.next() {
                    Some(Value::Int(i)) => *i as f64,
                    Some(Value::Float(f)) => *f,
                    Some(v) => v.to_s().parse().unwrap_or(0.0),
                    None => 0.0,
                };
                format!("{:.*}", prec.unwrap_or(6), f)
            }
            'x' => match it.next() {
                Some(Value::Int(i)) => format!("{i:x}"),
                Some(v) => v.to_s(),
                None => String::new(),
            },
            'o' => match it.next() {
                Some(Value::Int(i)) => format!("{i:o}"),
                Some(v) => v.to_s(),
                None => String::new(),
            },
            _ => {
                let v = s(it.next());
                match prec {
                    Some(p) => v.chars().take(p).collect(),
                    None => v,
                }
            }
        };
        let pad = width.saturating_sub(body.chars().count());
        if left {
            out.push_str(&body);
            out.push_str(&" ".repeat(pad));
        } else if zero && conv != 's' {
            out.push_str(&"0".repeat(pad));
            out.push_str(&body);
        } else {
            out.push_str(&" ".repeat(pad));
            out.push_str(&body);
        }
    }
    out
}
