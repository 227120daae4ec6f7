//! puppetlabs-inifile's model of an INI file (`Puppet::Util::IniFile`),
//! in awk, for [`super::ini_setting`] and [`super::ini_subsetting`]:
//! the file read into sections (a global one first, then one per header
//! line, each spanning its header to the line before the next), settings
//! recognised with the module's regexes (a key is the shortest run ending
//! in neither blank nor separator that is followed by the separator; a
//! value is the rest of the line, trailing blanks included), and its
//! edits: a value replaced in place on every line of the key, a new key
//! put after its commented-out form (`#key = ...`) or at the end of its
//! section before the section's trailing blank lines, a new section
//! appended at the end after a blank line, a removal that takes the
//! section's header along when the section is left empty. Saving writes
//! every line with a newline, as Ruby's `IO#puts`. The module's own
//! oddities are kept (a removal's line numbers move once however many
//! lines it removes).
//!
//! The program sees its settings in the environment: `KVS` (the
//! separator stripped, or one space if it is only blanks), `KVSFULL` (the
//! separator written between a new key and its value), `PRE` and `SUF`
//! (around section names), `INDCHAR` and `INDW` (indentation of new keys;
//! `INDW` empty: the section's smallest).

use super::param_error;
use crate::apply::catalog::Resource;
use crate::apply::types::ParamError;

/// `k_v_s` as the module derives it from `key_val_separator` for its
/// regexes, refused when it holds a character those regexes would read
/// as syntax.
pub fn regex_separator(r: &Resource, kvs: &str) -> Result<String, ParamError> {
    let ws = |c: char| c.is_ascii_whitespace() || c == '\x0b' || c == '\0';
    let k = if !kvs.is_empty() && kvs.chars().all(ws) {
        " ".to_string()
    } else {
        kvs.trim_matches(ws).to_string()
    };
    if let Some(c) = k.chars().find(|c| "\\.*+?()[]{}|^$#-".contains(*c)) {
        return Err(param_error(
            r,
            "key_val_separator",
            &format!(
                "ferry cannot use a separator holding '{c}' (the module puts it in a regular expression as it is)"
            ),
        ));
    }
    Ok(k)
}

/// The awk functions; `parse()` reads `L[1..N]` into the model.
pub const INI_LIB: &str = r##"
function isws(c) { return c == " " || c == "\t" || c == "\n" || c == "\v" || c == "\f" || c == "\r" }
function isblank(s,   i) { for (i = 1; i <= length(s); i++) if (!isws(substr(s, i, 1))) return 0; return 1 }
function body(s) { return (substr(s, length(s)) == "\n") ? substr(s, 1, length(s) - 1) : s }
function inkvs(c) { return length(KVS) > 0 && index(KVS, c) > 0 }
# `\s*KVS[ \t]*` at p of s (the blanks given back until KVS fits); SEPLEN.
function sepat(s, p,   q, k, e, c) {
  q = p; while (q <= length(s) && isws(substr(s, q, 1))) q++
  for (k = q; k >= p; k--) {
    if (substr(s, k, length(KVS)) != KVS) continue
    e = k + length(KVS)
    while (e <= length(s)) { c = substr(s, e, 1); if (c != " " && c != "\t") break; e++ }
    SEPLEN = e - p
    return 1
  }
  return 0
}
# The setting regex: M1 indentation, M2 key, M3 separator, M4 value.
function psetting(s,   n, i, j, c) {
  s = body(s); n = length(s)
  i = 1; while (i <= n && isws(substr(s, i, 1))) i++
  c = substr(s, i, 1)
  if (i > n || c == "#" || c == ";") return 0
  for (j = i; j <= n; j++) {
    c = substr(s, j, 1)
    if (j > i && (isws(c) || inkvs(c))) continue
    if (sepat(s, j + 1)) {
      M1 = substr(s, 1, i - 1); M2 = substr(s, i, j - i + 1)
      M3 = substr(s, j + 1, SEPLEN); M4 = substr(s, j + 1 + SEPLEN)
      return 1
    }
  }
  return 0
}
# The commented-setting regex: C3 is the key.
function pcomment(s,   n, i, h, hs, ks, j, c) {
  s = body(s); n = length(s)
  i = 1; while (i <= n && isws(substr(s, i, 1))) i++
  h = i; while (h <= n && (substr(s, h, 1) == "#" || substr(s, h, 1) == ";")) h++
  for (hs = h; hs > i; hs--) {
    ks = hs; while (ks <= n && isws(substr(s, ks, 1))) ks++
    for (j = ks; j <= n; j++) {
      c = substr(s, j, 1)
      if (isws(c) || inkvs(c)) continue
      if (sepat(s, j + 1)) { C3 = substr(s, ks, j - ks + 1); return 1 }
    }
  }
  return 0
}
# The section regex: SECNAME.
function psection(s,   t, n) {
  t = body(s)
  while (length(t) > 0 && isws(substr(t, 1, 1))) t = substr(t, 2)
  if (substr(t, 1, length(PRE)) != PRE) return 0
  t = substr(t, length(PRE) + 1)
  while (length(t) > 0 && isws(substr(t, length(t)))) t = substr(t, 1, length(t) - 1)
  n = length(t) - length(SUF)
  if (n < 0 || substr(t, n + 1) != SUF) return 0
  SECNAME = substr(t, 1, n)
  return 1
}
function newsec(name, start, end,   k) {
  k = NS++
  SN[k] = name; SS[k] = start; SE[k] = end; IND[k] = ""; NADD[k] = 0
  SIDX[name] = k; NAMES[NN++] = name
  return k
}
function readsec(name, start, from,   k, ln, empty, ind) {
  k = newsec(name, start, start)
  empty = 1
  for (ln = from; ln < NLINES; ln++) {
    if (psection(LN[ln])) break
    if (psetting(LN[ln])) {
      EX[k, M2] = M4
      ind = length(M1)
      if (IND[k] == "" || ind < IND[k]) IND[k] = ind
    }
    SE[k] = ln; empty = 0
  }
  if (name == "" && empty) SE[k] = ""
  return ln
}
function parse(   i, ln) {
  KVS = ENVIRON["KVS"]; KVSFULL = ENVIRON["KVSFULL"]; PRE = ENVIRON["PRE"]; SUF = ENVIRON["SUF"]
  INDCHAR = ENVIRON["INDCHAR"]; INDW = ENVIRON["INDW"]
  NLINES = N
  for (i = 1; i <= N; i++) LN[i - 1] = sline(i)
  NS = 0; NN = 0
  ln = readsec("", 0, 0)
  while (ln < NLINES) {
    if (psection(LN[ln])) ln = readsec(SECNAME, ln, ln + 1)
    else ln++
  }
}
function hassec(name) { return name in SIDX }
# The value of a key, or GOT = 0.
function getvalue(name, key,   k) {
  GOT = 0
  if (!(name in SIDX)) return ""
  k = SIDX[name]
  if ((k, key) in EX) { GOT = 1; return EX[k, key] }
  if ((k, key) in ADDI) { GOT = 1; return ADDV[k, ADDI[k, key]] }
  return ""
}
function secindex(name,   i) { for (i = 0; i < NN; i++) if (NAMES[i] == name) return i; return -1 }
function shift(from, by,   i, k) {
  for (i = from; i < NN; i++) {
    k = SIDX[NAMES[i]]
    if (SS[k] != "") SS[k] += by
    if (SE[k] != "") SE[k] += by
  }
}
function insertline(at, s,   i) { for (i = NLINES; i > at; i--) LN[i] = LN[i - 1]; LN[at] = s; NLINES++ }
function deleteline(at,   i) { for (i = at; i < NLINES - 1; i++) LN[i] = LN[i + 1]; delete LN[NLINES - 1]; NLINES-- }
function indent(k,   w, s, i) {
  w = (INDW != "") ? INDW + 0 : (IND[k] != "" ? IND[k] : 0)
  s = ""; for (i = 0; i < w; i++) s = s INDCHAR
  return s
}
# set_value(section, key, separator, value); haskey 0: the section only.
function setvalue(name, haskey, key, sep, value,   k, ln, c) {
  if (!(name in SIDX)) newsec(name, "", "")
  k = SIDX[name]
  if (haskey && ((k, key) in EX)) {
    for (ln = SS[k]; ln <= SE[k]; ln++)
      if (ln < NLINES && psetting(LN[ln]) && M2 == key) LN[ln] = M1 M2 M3 value
    EX[k, key] = value
    return
  }
  c = -1
  if (haskey && SE[k] != "")
    for (ln = SS[k]; ln <= SE[k]; ln++) if (ln < NLINES && pcomment(LN[ln]) && C3 == key) { c = ln; break }
  if (c >= 0) {
    insertline(c + 1, indent(k) key sep value)
    EX[k, key] = value
    SE[k]++
    shift(secindex(name) + 1, 1)
    return
  }
  if (haskey) {
    if ((k, key) in ADDI) ADDV[k, ADDI[k, key]] = value
    else { ADDI[k, key] = NADD[k]; ADDK[k, NADD[k]] = key; ADDV[k, NADD[k]] = value; NADD[k]++ }
  }
}
function removesetting(name, key,   k, ln, si, i) {
  k = SIDX[name]
  if (!((k, key) in EX)) return
  for (ln = SS[k]; ln <= SE[k]; ln++)
    if (ln < NLINES && psetting(LN[ln]) && M2 == key) deleteline(ln)
  delete EX[k, key]
  if (SE[k] != "") SE[k]--
  si = secindex(name)
  shift(si + 1, -1)
  if (name == "" ? SE[k] == "" : SS[k] == SE[k]) {
    deleteline(SS[k])
    shift(si + 1, -1)
    for (i = si; i < NN - 1; i++) NAMES[i] = NAMES[i + 1]
    NN--
    delete SIDX[name]
  }
}
function save(   g, gempty, idx, k, nb, isnew, ln, i, line) {
  g = SIDX[""]
  gempty = SE[g] == "" && NADD[g] == 0
  for (idx = 0; idx < NN; idx++) {
    k = SIDX[NAMES[idx]]
    nb = 0
    isnew = SE[k] == ""
    if (isnew && SN[k] != "") {
      if ((idx == 1 && !gempty) || idx > 1) puts("")
      puts(PRE SN[k] SUF)
    }
    if (!isnew) for (ln = SS[k]; ln <= SE[k]; ln++) {
      line = LN[ln]
      if (isblank(line)) WB[nb++] = line
      else { for (i = 0; i < nb; i++) puts(WB[i]); nb = 0; puts(line) }
    }
    for (i = 0; i < NADD[k]; i++) puts(indent(k) ADDK[k, i] KVSFULL ADDV[k, i])
    if (nb > 0) { for (i = 0; i < nb; i++) puts(WB[i]); nb = 0 }
    else if (isnew && NADD[k] > 0 && idx < NN - 1) puts("")
  }
}
"##;
