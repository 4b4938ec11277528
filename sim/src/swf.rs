//! Tokenizer for Standard Workload Format job lines.
//!
//! Why compiled: SWF separates fields by runs of blanks, which CSV readers (DuckDB's included) cannot
//! split, and splitting 2.4 million lines with regular expressions in SQL or Python costs seconds.
//! This loop reads the decompressed bytes once and fills columns.  Acceptance rules live here only;
//! the reasons it gives for rejected lines are what users see in the quarantine.

pub const FIELDS: usize = 18;
/// The largest magnitude, in seconds, of a time field (submit, wait, run, requested and think time)
/// and of the header's `UnixStartTime`: about 3,000 years.  No log comes near it, and below it every
/// sum the lake and the simulator make of times (a submit instant as a timestamp, submit + wait +
/// run) stays far inside 64 bits and DuckDB's timestamp range, so one corrupt line cannot break the
/// queries of every log.
pub const MAX_SECONDS: i64 = 100_000_000_000;
/// The largest processor count (fields 5 and 8): the simulator counts processors in 32 bits.
pub const MAX_PROCS: i64 = i32::MAX as i64;
/// 1-based numbers of the time fields and of the processor fields.
const TIME_FIELDS: [usize; 5] = [2, 3, 4, 9, 18];
const PROCS_FIELDS: [usize; 2] = [5, 8];
/// 0-based index of field 6 (average CPU time), the one field that may be fractional.
pub const FRACTIONAL_FIELD: usize = 5;

#[derive(Debug, Default)]
pub struct ParsedSwf {
    /// 1-based line number of every accepted job line.
    pub line: Vec<i64>,
    /// The 17 integer fields (field 6 excluded), column by column.
    pub ints: Vec<Vec<i64>>,
    /// Field 6.
    pub avg_cpu_time: Vec<f64>,
    /// `;` lines, in order, with their line numbers.
    pub comments: Vec<(i64, String)>,
    /// Rejected data lines: line number, raw text, reason.
    pub rejected: Vec<(i64, String, String)>,
    pub data_lines: i64,
    pub crlf_lines: i64,
    /// Lines ended by a lone carriage return (old Mac files): read as line ends.
    pub cr_lines: i64,
    /// The file began with a UTF-8 byte-order mark (skipped).
    pub bom: bool,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn parse_int(token: &[u8]) -> Option<i64> {
    let (negative, digits) = match token.first() {
        Some(b'-') => (true, &token[1..]),
        _ => (false, token),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(d - b'0');
    }
    Some(if negative { -value } else { value })
}

fn parse_number(token: &[u8]) -> Option<f64> {
    // Only plain decimal notation: Rust's parser would also take "inf" and "nan".
    if !token
        .iter()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    std::str::from_utf8(token)
        .ok()?
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

fn describe(token: &[u8]) -> String {
    String::from_utf8_lossy(token).into_owned()
}

/// Why a data line is not a job line, or its values.
fn parse_line(text: &[u8], ints: &mut [i64; FIELDS - 1], frac: &mut f64) -> Result<(), String> {
    let tokens: Vec<&[u8]> = text
        .split(|&b| is_blank(b))
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.len() != FIELDS {
        return Err(format!("expected {FIELDS} fields, found {}", tokens.len()));
    }
    let mut k = 0;
    for (i, token) in tokens.iter().enumerate() {
        if i == FRACTIONAL_FIELD {
            *frac = parse_number(token)
                .ok_or_else(|| format!("field {} is not a number: '{}'", i + 1, describe(token)))?;
        } else {
            let value = parse_int(token).ok_or_else(|| {
                format!("field {} is not an integer: '{}'", i + 1, describe(token))
            })?;
            let limit = if TIME_FIELDS.contains(&(i + 1)) {
                MAX_SECONDS
            } else if PROCS_FIELDS.contains(&(i + 1)) {
                MAX_PROCS
            } else {
                i64::MAX
            };
            if value.abs() > limit {
                return Err(format!(
                    "field {} is out of range: {value} (at most {limit} in magnitude)",
                    i + 1
                ));
            }
            ints[k] = value;
            k += 1;
        }
    }
    Ok(())
}

/// Split a whole decompressed log into columns, comments and rejected lines.
pub fn parse(data: &[u8]) -> ParsedSwf {
    let mut out = ParsedSwf {
        ints: vec![Vec::new(); FIELDS - 1],
        ..Default::default()
    };
    let estimate = data.len() / 64;
    out.line.reserve(estimate);
    out.avg_cpu_time.reserve(estimate);
    for col in out.ints.iter_mut() {
        col.reserve(estimate);
    }
    let mut ints = [0i64; FIELDS - 1];
    let mut frac = 0.0f64;
    let data = match data.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => {
            out.bom = true;
            rest
        }
        None => data,
    };
    // Lines end with LF (or CR LF); a file without any LF is an old Mac file whose lines end with a
    // lone CR.  (Looking for both at every byte would slow the common case by a tenth.)
    let old_mac = !data.contains(&b'\n');
    let separator = if old_mac { b'\r' } else { b'\n' };
    let mut lines = data.split(|&b| b == separator).peekable();
    let mut number: i64 = 0;
    while let Some(mut line) = lines.next() {
        if lines.peek().is_none() && line.is_empty() {
            break; // the line end that closes the file does not start a line
        }
        if old_mac {
            out.cr_lines += i64::from(lines.peek().is_some());
        } else if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
            out.crlf_lines += 1;
        }
        number += 1;
        let start = line.iter().position(|&b| !is_blank(b));
        let Some(start) = start else { continue }; // blank line
        if line[start] == b';' {
            out.comments
                .push((number, String::from_utf8_lossy(line).into_owned()));
            continue;
        }
        out.data_lines += 1;
        match parse_line(line, &mut ints, &mut frac) {
            Ok(()) => {
                out.line.push(number);
                for (col, v) in out.ints.iter_mut().zip(ints.iter()) {
                    col.push(*v);
                }
                out.avg_cpu_time.push(frac);
            }
            Err(reason) => {
                out.rejected
                    .push((number, String::from_utf8_lossy(line).into_owned(), reason))
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_is_skipped_and_lone_carriage_returns_end_lines() {
        let text = b"\xEF\xBB\xBF; MaxProcs: 4\r 1 0 5 10 2 3.5 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1\r\r2 1 0 10 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1\r";
        let p = parse(text);
        assert!(p.bom);
        assert_eq!(p.comments, vec![(1, "; MaxProcs: 4".to_string())]);
        assert_eq!(p.line, vec![2, 4]); // line 3 is blank
        assert_eq!((p.data_lines, p.cr_lines, p.crlf_lines), (2, 4, 0));
        assert!(p.rejected.is_empty());
    }

    #[test]
    fn parses_jobs_comments_blanks_and_crlf() {
        let text = b"; MaxProcs: 4\r\n\n 1 0 5 10 2 3.5 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1\r\n\t2  1 0 10 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1";
        let p = parse(text);
        assert_eq!(p.line, vec![3, 4]);
        assert_eq!(p.comments, vec![(1, "; MaxProcs: 4".to_string())]);
        assert_eq!(p.ints[0], vec![1, 2]);
        assert_eq!(p.avg_cpu_time, vec![3.5, -1.0]);
        assert_eq!(p.crlf_lines, 2);
        assert_eq!(p.data_lines, 2);
        assert!(p.rejected.is_empty());
    }

    #[test]
    fn rejects_with_reasons() {
        let text = b"1 2 3\n1 0 5 10 2 3.5 -1 2 6x0 -1 1 1 1 -1 -1 -1 -1 -1\n1 0 5 10 2 nan -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1\n";
        let p = parse(text);
        assert!(p.line.is_empty());
        let reasons: Vec<&str> = p.rejected.iter().map(|r| r.2.as_str()).collect();
        assert_eq!(
            reasons,
            vec![
                "expected 18 fields, found 3",
                "field 9 is not an integer: '6x0'",
                "field 6 is not a number: 'nan'"
            ]
        );
    }

    #[test]
    fn times_and_processor_counts_out_of_range_are_rejected() {
        let ok = b"1 0 5 10 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1";
        let late = b"2 100000000001 5 10 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1";
        let long = b"3 0 5 -100000000001 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1";
        let wide = b"4 0 5 10 2 -1 -1 2147483648 60 -1 1 1 1 -1 -1 -1 -1 -1";
        let edge =
            b"5 100000000000 5 10 2147483647 -1 999999999999999999 2 60 -1 1 1 1 -1 -1 -1 -1 -1";
        let text = [&ok[..], late, long, wide, edge].join(&b'\n');
        let p = parse(&text);
        assert_eq!(p.line, vec![1, 5]);
        let reasons: Vec<&str> = p.rejected.iter().map(|r| r.2.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "field 2 is out of range: 100000000001 (at most 100000000000 in magnitude)",
                "field 4 is out of range: -100000000001 (at most 100000000000 in magnitude)",
                "field 8 is out of range: 2147483648 (at most 2147483647 in magnitude)",
            ]
        );
    }

    #[test]
    fn integers_that_overflow_are_rejected() {
        assert_eq!(parse_int(b"-1"), Some(-1));
        assert_eq!(
            parse_int(b"999999999999999999"),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(parse_int(b"9999999999999999999"), None);
        assert_eq!(parse_int(b"-"), None);
        assert_eq!(parse_int(b"3.0"), None);
    }
}
