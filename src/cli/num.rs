//! Bounds of the numeric flags. A value outside them is refused by the parser with a message
//! naming the bound (clap prints it with the flag and exits 2), instead of panicking on a
//! `Duration` conversion, allocating for a hundred million prompts or waiting a geological age
//! for the next request. The bounds are far beyond any real benchmark; docs/run.md "Flag limits"
//! lists them.

use crate::record::RequestRate;

/// Longest duration any seconds flag takes: one week.
pub const MAX_SECS: f64 = 7.0 * 86_400.0;
/// Slowest request rate: one request every 1,000 s (anything slower is not a load test).
pub const MIN_RATE: f64 = 1e-3;
/// Fastest finite request rate; beyond it `inf` says the same.
pub const MAX_RATE: f64 = 1e6;
/// Most prompts (and warm-up requests) of one run: the records alone take ~0.5 GB at this size.
pub const MAX_PROMPTS: usize = crate::dataset::MAX_PROMPTS;
/// Most requests in flight (each holds a socket; far above any file-descriptor limit in use).
pub const MAX_CONCURRENCY: usize = 100_000;
/// Longest prompt, in tokens.
pub const MAX_INPUT_LEN: u32 = crate::dataset::MAX_INPUT_LEN;
/// Longest output, in tokens.
pub const MAX_OUTPUT_LEN: u32 = crate::dataset::MAX_OUTPUT_LEN;

fn number(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !v.is_finite() {
        return Err(format!("`{s}` is not a finite number"));
    }
    Ok(v)
}

fn whole(s: &str) -> Result<u64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number ≥ 0"))
}

/// Seconds: positive, at most [`MAX_SECS`].
pub fn secs(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v <= 0.0 || v > MAX_SECS {
        return Err(format!(
            "must be a number of seconds in (0, {MAX_SECS}] (one week), got {s}"
        ));
    }
    Ok(v)
}

/// Minutes in (0, one week].
pub fn minutes(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v <= 0.0 || v * 60.0 > MAX_SECS {
        return Err(format!(
            "must be a number of minutes in (0, {}] (one week), got {s}",
            MAX_SECS / 60.0
        ));
    }
    Ok(v)
}

/// `inf`, or requests per second in [[`MIN_RATE`], [`MAX_RATE`]].
pub fn rate(s: &str) -> Result<RequestRate, String> {
    let r: RequestRate = s.parse()?;
    match r {
        RequestRate::PerSecond(v) if !(MIN_RATE..=MAX_RATE).contains(&v) => Err(format!(
            "must be `inf` or requests per second in [{MIN_RATE}, {MAX_RATE}], got {s}"
        )),
        _ => Ok(r),
    }
}

fn whole_in(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let v = whole(s)?;
    if v < lo || v > hi {
        return Err(format!("must be in [{lo}, {hi}], got {s}"));
    }
    Ok(v)
}

/// Prompts of a run: 1 ..= [`MAX_PROMPTS`], or vLLM's `-1` (every prompt of the file), read
/// as 0.
pub fn prompts(s: &str) -> Result<usize, String> {
    if s.trim() == "-1" {
        return Ok(0);
    }
    whole_in(s, 1, MAX_PROMPTS as u64).map(|v| v as usize)
}

/// `--timed-trace-sec-multiplier`: seconds per unit of a trace's timestamps, in (0, 3600].
pub fn time_unit(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if !(v > 0.0 && v <= 3600.0) {
        return Err(format!(
            "must be seconds per timestamp unit in (0, 3600], got {s}"
        ));
    }
    Ok(v)
}

/// Warm-up requests: 0 ..= [`MAX_PROMPTS`].
pub fn warmups(s: &str) -> Result<usize, String> {
    whole_in(s, 0, MAX_PROMPTS as u64).map(|v| v as usize)
}

/// Requests in flight: 1 ..= [`MAX_CONCURRENCY`].
pub fn concurrency(s: &str) -> Result<u64, String> {
    whole_in(s, 1, MAX_CONCURRENCY as u64)
}

/// A prompt length in tokens: 1 ..= [`MAX_INPUT_LEN`].
pub fn input_len(s: &str) -> Result<u32, String> {
    whole_in(s, 1, u64::from(MAX_INPUT_LEN)).map(|v| v as u32)
}

/// A length in tokens that may be 0 (a prefix or suffix): 0 ..= [`MAX_INPUT_LEN`].
pub fn len_or_zero(s: &str) -> Result<u32, String> {
    whole_in(s, 0, u64::from(MAX_INPUT_LEN)).map(|v| v as u32)
}

/// How many distinct shared prefixes: 1 ..= [`MAX_PROMPTS`].
pub fn prefixes(s: &str) -> Result<u32, String> {
    whole_in(s, 1, MAX_PROMPTS as u64).map(|v| v as u32)
}

/// A ramp-up rate: requests per second in [[`MIN_RATE`], [`MAX_RATE`]].
pub fn rps(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if !(MIN_RATE..=MAX_RATE).contains(&v) {
        return Err(format!(
            "must be requests per second in [{MIN_RATE}, {MAX_RATE}], got {s}"
        ));
    }
    Ok(v)
}

/// An output length in tokens: 1 ..= [`MAX_OUTPUT_LEN`].
pub fn output_len(s: &str) -> Result<u32, String> {
    whole_in(s, 1, u64::from(MAX_OUTPUT_LEN)).map(|v| v as u32)
}

/// `--random-range-ratio`: a finite number ≥ 0 (the convention's own upper bound is checked
/// with the convention).
pub fn range_ratio(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v < 0.0 {
        return Err(format!("must be ≥ 0, got {s}"));
    }
    Ok(v)
}

/// `--burstiness` (a gamma shape): in [0.01, 1000].
pub fn burstiness(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if !(0.01..=1000.0).contains(&v) {
        return Err(format!("must be in [0.01, 1000], got {s}"));
    }
    Ok(v)
}

/// `--temperature`: in [0, 100].
pub fn temperature(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("must be in [0, 100], got {s}"));
    }
    Ok(v)
}

/// Milliseconds of the fake server's delays: [0, one hour].
pub fn millis(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if !(0.0..=3_600_000.0).contains(&v) {
        return Err(format!("must be milliseconds in [0, 3600000], got {s}"));
    }
    Ok(v)
}

/// A percentage in (0, 100).
pub fn percent(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if !(v > 0.0 && v < 100.0) {
        return Err(format!("must be a percentage in (0, 100), got {s}"));
    }
    Ok(v)
}

/// A probability in (0, 1) (a level, a power).
pub fn probability(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if !(v > 0.0 && v < 1.0) {
        return Err(format!("must be a probability in (0, 1), got {s}"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_values_are_refused_with_the_bound() {
        for (f, v) in [
            (rate as fn(&str) -> Result<RequestRate, String>, "1e-20"),
            (rate, "1e-12"),
            (rate, "0"),
            (rate, "nan"),
            (rate, "1e7"),
        ] {
            let e = f(v).unwrap_err();
            assert!(e.contains(v) || e.contains("positive"), "{v}: {e}");
        }
        assert_eq!(rate("inf").unwrap(), RequestRate::Inf);
        assert_eq!(rate("0.5").unwrap(), RequestRate::PerSecond(0.5));
        assert!(secs("1e30").unwrap_err().contains("one week"));
        assert!(secs("0").is_err() && secs("-1").is_err() && secs("inf").is_err());
        assert!(secs("NaN").unwrap_err().contains("not a finite number"));
        assert_eq!(secs("2.5").unwrap(), 2.5);
        assert!(concurrency("4611686018427387904")
            .unwrap_err()
            .contains("[1, 100000]"));
        assert!(concurrency("0").is_err());
        assert!(prompts("100000000").unwrap_err().contains("1000000"));
        assert!(prompts("-3").unwrap_err().contains("whole number"));
        assert!(range_ratio("NaN")
            .unwrap_err()
            .contains("not a finite number"));
        assert!(range_ratio("-0.5").unwrap_err().contains("≥ 0"));
        assert!(output_len("0").is_err() && input_len("10000001").is_err());
        assert!(burstiness("0").is_err() && temperature("-1").is_err());
        assert!(rps("1e-20").unwrap_err().contains("[0.001, 1000000]"));
        assert!(rps("inf").is_err() && rps("2").is_ok());
        assert!(len_or_zero("4294967295").is_err() && len_or_zero("0").is_ok());
        assert!(prefixes("0").is_err() && prefixes("4000000000").is_err());
        assert!(percent("0").is_err() && percent("100").is_err() && percent("5").is_ok());
        assert!(probability("1").unwrap_err().contains("(0, 1)") && probability("0.95").is_ok());
    }
}
