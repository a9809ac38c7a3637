//! Keys and values on the command line and in text output.
//!
//! Text form: printable ASCII stands for itself, a backslash is `\\`, and
//! any other byte is `\xNN` (`\n`, `\t`, `\r` and `\0` are accepted on
//! input too). Every byte string has exactly one text form, so what
//! `scan` prints can be given back to `get` or `delete` as it is.

use std::fmt::Write as _;

/// How keys and values are written on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Text with `\xNN` escapes.
    Escaped,
    /// Hexadecimal digits.
    Hex,
}

impl Encoding {
    pub fn from_hex_flag(hex: bool) -> Encoding {
        if hex {
            Encoding::Hex
        } else {
            Encoding::Escaped
        }
    }

    pub fn decode(self, what: &str, s: &str) -> Result<Vec<u8>, String> {
        match self {
            Encoding::Escaped => unescape(s).map_err(|e| format!("{what} {s:?}: {e}")),
            Encoding::Hex => from_hex(s).map_err(|e| format!("{what} {s:?}: {e}")),
        }
    }

    pub fn encode(self, bytes: &[u8]) -> String {
        match self {
            Encoding::Escaped => escape(bytes),
            Encoding::Hex => to_hex(bytes),
        }
    }
}

/// The text form of `bytes`.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out
}

/// Parses the text form (see the module comment).
pub fn unescape(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'r') => out.push(b'\r'),
            Some(b'0') => out.push(0),
            Some(b'x') => {
                let digits = b.get(i + 2..i + 4).ok_or_else(|| {
                    format!("\\x at byte {i} needs two hexadecimal digits after it")
                })?;
                let hi = hex_digit(digits[0]);
                let lo = hex_digit(digits[1]);
                match (hi, lo) {
                    (Some(h), Some(l)) => out.push(h << 4 | l),
                    _ => {
                        return Err(format!(
                            "\\x at byte {i} needs two hexadecimal digits after it"
                        ))
                    }
                }
                i += 4;
                continue;
            }
            Some(&c) => {
                return Err(format!(
                    "unknown escape \\{} at byte {i} (use \\\\ for a backslash)",
                    c as char
                ))
            }
            None => return Err("a lone backslash at the end (use \\\\)".into()),
        }
        i += 2;
    }
    Ok(out)
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

pub fn to_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

pub fn from_hex(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return Err(format!("odd number of hexadecimal digits ({})", b.len()));
    }
    b.chunks(2)
        .enumerate()
        .map(|(i, pair)| match (hex_digit(pair[0]), hex_digit(pair[1])) {
            (Some(h), Some(l)) => Ok(h << 4 | l),
            _ => Err(format!("not a hexadecimal digit at position {}", i * 2)),
        })
        .collect()
}

/// The smallest key greater than every key starting with `prefix`, or
/// `None` when there is none (the prefix is empty or all `0xff`).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// A byte count for people: `1.5 MiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_string_round_trips_through_its_text_form() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(unescape(&escape(&all)).unwrap(), all);
        assert_eq!(escape(b"a\\b\x00\xff c"), "a\\\\b\\x00\\xff c");
        assert_eq!(unescape("\\n\\t\\0\\x41").unwrap(), b"\n\t\0A");
    }

    #[test]
    fn bad_escapes_are_errors() {
        for bad in ["\\", "\\x", "\\x4", "\\xzz", "\\q"] {
            assert!(unescape(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(from_hex(&to_hex(b"\x00\x01\xfe")).unwrap(), b"\x00\x01\xfe");
        assert!(from_hex("abc").is_err());
        assert!(from_hex("zz").is_err());
        assert_eq!(from_hex("ABcd").unwrap(), b"\xab\xcd");
    }

    #[test]
    fn prefix_successors() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff\xff"), None);
        assert_eq!(prefix_successor(b""), None);
    }
}
