//! The node-seeded "random" functions: Puppet's `fqdn_rand` and stdlib's
//! `fqdn_rotate` and `fqdn_rand_string`. Puppet seeds Ruby's `Random`
//! (MT19937) with the MD5 of the node's fqdn and the arguments, so the
//! results are pure functions of their inputs; this is a port of Ruby's
//! generator (random.c: `init_genrand`, `init_by_array`, the seed split in
//! 32-bit words, `limited_rand`) so that ferry picks the same numbers.

use md5::{Digest, Md5};

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator, ScopeId};
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::values::value::{Value, hash_get_str};

pub fn register(b: &mut Builder) {
    let f = Family::Random;
    b.add(
        &["fqdn_rand"],
        f,
        sig("Integer").req("max", any()).rest("args", any()),
        fqdn_rand,
    );
    b.add(
        &["fqdn_rotate"],
        f,
        sig("Any").rest("args", any()),
        fqdn_rotate,
    );
    b.add(
        &["fqdn_rand_string"],
        f,
        sig("String").rest("args", any()),
        fqdn_rand_string,
    );
}

const N: usize = 624;
const M: usize = 397;

/// Ruby's Mersenne Twister (MT19937), as `Random.new(seed)` sets it up.
pub struct Mt {
    state: [u32; N],
    index: usize,
}

impl Mt {
    fn init_genrand(s: u32) -> Mt {
        let mut state = [0u32; N];
        state[0] = s;
        for i in 1..N {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt { state, index: N }
    }

    fn init_by_array(key: &[u32]) -> Mt {
        let mut mt = Mt::init_genrand(19_650_218);
        let st = &mut mt.state;
        let (mut i, mut j) = (1usize, 0usize);
        let len = key.len().max(1);
        for _ in 0..N.max(len) {
            let prev = st[i - 1];
            st[i] = (st[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key.get(j).copied().unwrap_or(0))
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                st[0] = st[N - 1];
                i = 1;
            }
            if j >= len {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = st[i - 1];
            st[i] =
                (st[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                st[0] = st[N - 1];
                i = 1;
            }
        }
        st[0] = 0x8000_0000;
        mt
    }

    /// `Random.new(seed)` for a non-negative seed given as its bytes,
    /// most significant first (an MD5 digest, for instance).
    pub fn from_seed_be(bytes: &[u8]) -> Mt {
        // The seed's 32-bit words, least significant first, without
        // leading zero words.
        let mut words: Vec<u32> = bytes
            .rchunks(4)
            .map(|c| c.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)))
            .collect();
        while words.len() > 1 && words.last() == Some(&0) {
            words.pop();
        }
        // Ruby drops a top word equal to 1 (its "leading-zero-guard"),
        // keeping the zero words under it: 2**96 + 12345 seeds with
        // [12345, 0, 0], 2**32 + 5 with init_genrand(5).
        if words.len() > 1 && words.last() == Some(&1) {
            words.pop();
        }
        match words.as_slice() {
            [] => Mt::init_genrand(0),
            [one] => Mt::init_genrand(*one),
            many => Mt::init_by_array(many),
        }
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            for k in 0..N {
                let y = (self.state[k] & 0x8000_0000) | (self.state[(k + 1) % N] & 0x7fff_ffff);
                let mut v = self.state[(k + M) % N] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                self.state[k] = v;
            }
            self.index = 0;
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `rand(max)` for a positive integer `max`: Ruby's `limited_rand`,
    /// 32-bit words drawn most significant first, retried when over.
    pub fn rand_below(&mut self, max: u64) -> u64 {
        let limit = max.saturating_sub(1);
        if limit == 0 {
            return 0;
        }
        let mask = u64::MAX >> limit.leading_zeros();
        'retry: loop {
            let mut val = 0u64;
            for i in (0..2).rev() {
                if (mask >> (i * 32)) & 0xffff_ffff != 0 {
                    val |= u64::from(self.next_u32()) << (i * 32);
                    val &= mask;
                    if limit < val {
                        continue 'retry;
                    }
                }
            }
            return val;
        }
    }
}

/// `Random.new(Digest::MD5.hexdigest(text).hex).rand(max)`.
pub(crate) fn md5_rand(text: &str, max: u64) -> u64 {
    let digest = Md5::digest(text.as_bytes());
    Mt::from_seed_be(&digest).rand_below(max)
}

/// Ruby's `Array#join(':')` of Puppet values: nested arrays flattened,
/// undef empty.
fn ruby_join(parts: &[Value], out: &mut Vec<String>) {
    for p in parts {
        match p {
            Value::Array(a) => ruby_join(a, out),
            Value::Undef => out.push(String::new()),
            other => out.push(other.to_s()),
        }
    }
}

fn joined(parts: &[Value]) -> String {
    let mut out = Vec::new();
    ruby_join(parts, &mut out);
    out.join(":")
}

/// Ruby's `String#to_i`: leading whitespace, a sign, digits; 0 otherwise.
pub(crate) fn ruby_to_i(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::Float(f) => *f as i64,
        other => {
            let s = other.to_s();
            let t = s.trim_start();
            let (neg, digits) = match t.strip_prefix('-') {
                Some(r) => (true, r),
                None => (false, t.strip_prefix('+').unwrap_or(t)),
            };
            let n: i64 = digits
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '_')
                .filter(|c| *c != '_')
                .try_fold(0i64, |acc, c| {
                    acc.checked_mul(10)?
                        .checked_add(i64::from(c.to_digit(10).unwrap_or(0)))
                })
                .unwrap_or(i64::MAX);
            if neg { -n } else { n }
        }
    }
}

/// The node's fqdn: `$facts['networking']['fqdn']`.
fn networking_fqdn(ev: &Evaluator<'_>) -> String {
    match &ev.facts {
        Value::Hash(h) => match hash_get_str(h, "networking") {
            Some(Value::Hash(n)) => hash_get_str(n, "fqdn").map(|v| v.to_s()),
            _ => None,
        },
        _ => None,
    }
    .unwrap_or_default()
}

fn fqdn_rand(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let max = ruby_to_i(&c.arg(0));
    if max <= 0 {
        return Err(plain(format!("invalid argument - {max}")).into());
    }
    let seed = c.arg(1);
    let mut fqdn = networking_fqdn(ev);
    if c.arg(2).truthy() {
        fqdn = fqdn.to_lowercase();
    }
    let text = joined(&[Value::Str(fqdn), Value::Int(max), seed]);
    Ok(Value::Int(md5_rand(&text, max as u64) as i64))
}

fn fqdn_rotate(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Some(value) = c.args.first() else {
        return Err(plain("fqdn_rotate(): Wrong number of arguments given (0 for 1)").into());
    };
    // A 3.x function: an undef argument arrives as ''.
    let value = &match value {
        Value::Undef => Value::Str(String::new()),
        v => v.clone(),
    };
    let mut items: Vec<Value> = match value {
        Value::Array(a) => a.clone(),
        Value::Str(s) => s.chars().map(|ch| Value::Str(ch.to_string())).collect(),
        _ => {
            return Err(
                plain("fqdn_rotate(): Requires either array or string to work with").into(),
            );
        }
    };
    if items.len() <= 1 {
        return Ok(value.clone());
    }
    let fqdn = ev
        .lookup_var("::fqdn", ScopeId::TOP)
        .unwrap_or(Value::Undef);
    let mut parts = vec![fqdn];
    parts.extend(c.args.iter().skip(1).cloned());
    // `[fqdn, args].join(':')`: an empty rest still adds the separator.
    let mut text = joined(&parts[..1]);
    text.push(':');
    text.push_str(&joined(&parts[1..]));
    let offset = md5_rand(&text, items.len() as u64) as usize;
    let n = items.len();
    items.rotate_left(offset % n);
    Ok(match value {
        Value::Str(_) => Value::Str(items.iter().map(|v| v.to_s()).collect()),
        _ => Value::Array(items),
    })
}

fn fqdn_rand_string(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Some(len_arg) = c.args.first() else {
        return Err(plain("fqdn_rand_string(): wrong number of arguments (0 for 1)").into());
    };
    let is_integer = match len_arg {
        Value::Int(_) => true,
        Value::Str(s) => s.trim().parse::<i64>().is_ok(),
        _ => false,
    };
    let length = ruby_to_i(len_arg);
    if !is_integer || length <= 0 {
        return Err(plain("fqdn_rand_string(): first argument must be a positive integer").into());
    }
    let charset_arg = c.arg(1);
    if !matches!(charset_arg, Value::Undef | Value::Str(_)) {
        return Err(plain("fqdn_rand_string(): second argument must be undef or a string").into());
    }
    let mut charset: Vec<String> = charset_arg
        .to_s()
        .chars()
        .map(|ch| ch.to_string())
        .collect();
    if charset.is_empty() {
        charset = ('0'..='9')
            .chain('A'..='Z')
            .chain('a'..='z')
            .map(|ch| ch.to_string())
            .collect();
    }
    let rest: Vec<Value> = c.args.iter().skip(2).cloned().collect();
    let fqdn = networking_fqdn(ev);
    let mut out = String::new();
    for current in 1..=length.min(1 << 16) {
        let mut seed_parts = rest.clone();
        seed_parts.push(Value::Str(current.to_string()));
        let seed = joined(&seed_parts);
        let max = charset.len() as i64;
        let text = joined(&[Value::Str(fqdn.clone()), Value::Int(max), Value::Str(seed)]);
        let i = md5_rand(&text, max as u64) as usize;
        out.push_str(charset.get(i).map(String::as_str).unwrap_or(""));
    }
    Ok(Value::Str(out))
}

#[cfg(test)]
mod tests {
    use super::{Mt, md5_rand};

    fn be(n: u128) -> Vec<u8> {
        n.to_be_bytes().to_vec()
    }

    // Expected values from Ruby 3.1: `r = Random.new(seed); r.rand(max)`
    // twice, then `r.rand(2**40)`.
    #[test]
    fn matches_ruby_random() {
        let cases: &[(u128, u64, [u64; 2], u64)] = &[
            (42, 3, [2, 0], 63_273_432_170),
            (0, 10, [5, 0], 291_447_657_211),
            ((1u128 << 96) + 12345, 1000, [576, 352], 408_848_250_185),
            ((1u128 << 32) + 5, 7, [3, 6], 1_030_067_709_629),
        ];
        // Ruby: Random.new(2**64 + 3).rand(1000), Random.new(5 * 2**64 + 3).rand(1000)
        assert_eq!(
            Mt::from_seed_be(&be((1u128 << 64) + 3)).rand_below(1000),
            254
        );
        assert_eq!(
            Mt::from_seed_be(&be((5u128 << 64) + 3)).rand_below(1000),
            165
        );
        for (seed, max, firsts, big) in cases {
            let mut mt = Mt::from_seed_be(&be(*seed));
            assert_eq!(mt.rand_below(*max), firsts[0], "seed {seed}");
            assert_eq!(mt.rand_below(*max), firsts[1], "seed {seed}");
            assert_eq!(mt.rand_below(1 << 40), *big, "seed {seed}");
        }
    }

    #[test]
    fn fqdn_rand_seed_is_md5_of_the_joined_arguments() {
        // Random.new(Digest::MD5.hexdigest('node1.example.com:60:gitolite').hex).rand(60)
        assert_eq!(md5_rand("node1.example.com:60:gitolite", 60), 39);
    }
}
