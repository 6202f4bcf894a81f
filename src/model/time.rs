//! Simulated time: instants and durations as plain milliseconds.
//!
//! The core never reads a clock. `Time` counts milliseconds since the simulation began; it is
//! shown to people as a wall-clock timestamp by adding a fixed epoch, so every run (native or in
//! the page) prints the same `creationTimestamp` for the same seed.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Unix seconds of simulated time zero: 2026-01-01T00:00:00Z.
pub const EPOCH_UNIX_SECS: u64 = 1_767_225_600;

/// An instant in simulated time, in milliseconds since the simulation started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of simulated time in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const fn millis(ms: u64) -> Self {
        Duration(ms)
    }
    pub const fn secs(s: u64) -> Self {
        Duration(s * 1000)
    }
    pub const fn mins(m: u64) -> Self {
        Duration(m * 60_000)
    }
    pub fn as_millis(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// Parses the duration forms people type: `500ms`, `30s`, `5m`, `1h`, `2m30s`, `1.5s`.
    pub fn parse(text: &str) -> Result<Duration, String> {
        let bad = || format!("invalid duration {text:?}: expected a number with a unit, like 500ms, 30s, 5m or 1h");
        let t = text.trim();
        if t.is_empty() {
            return Err(bad());
        }
        let mut total = 0f64;
        let mut rest = t;
        while !rest.is_empty() {
            let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            if num_len == 0 {
                return Err(bad());
            }
            let value = crate::model::decode::parse_f64(&rest[..num_len]).ok_or_else(bad)?;
            rest = &rest[num_len..];
            let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
            let factor = match &rest[..unit_len] {
                "ms" => 1.0,
                "s" => 1000.0,
                "m" => 60_000.0,
                "h" => 3_600_000.0,
                "d" => 86_400_000.0,
                _ => return Err(bad()),
            };
            rest = &rest[unit_len..];
            total += value * factor;
        }
        if !total.is_finite() || total > 1e15 {
            return Err(bad());
        }
        Ok(Duration(total.round() as u64))
    }
}

impl std::ops::Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl Time {
    pub fn since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    pub fn as_millis(self) -> u64 {
        self.0
    }
    /// RFC 3339 with whole seconds, as Kubernetes writes `metav1.Time`.
    pub fn rfc3339(self) -> String {
        let secs = EPOCH_UNIX_SECS + self.0 / 1000;
        let (y, mo, d, h, mi, s) = civil_from_unix(secs);
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    }
    /// RFC 3339 with microseconds, as Kubernetes writes `metav1.MicroTime`.
    pub fn rfc3339_micro(self) -> String {
        let secs = EPOCH_UNIX_SECS + self.0 / 1000;
        let (y, mo, d, h, mi, s) = civil_from_unix(secs);
        let micros = (self.0 % 1000) * 1000;
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{micros:06}Z")
    }
    /// Parses the forms `rfc3339` and `rfc3339_micro` produce, and any RFC 3339 time as
    /// kube-apiserver reads one (Go's `time.RFC3339`): fractional seconds of any length and a
    /// `Z` or a numeric `±hh:mm` offset — clients such as kopf write `…T05:37:26.159000+00:00`.
    pub fn parse_rfc3339(text: &str) -> Option<Time> {
        let b = text.as_bytes();
        if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<u64>().ok();
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let (frac, offset_secs) = split_offset(text.get(19..)?)?;
        let millis = match frac.strip_prefix('.') {
            Some(digits) if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) => {
                let padded = format!("{digits:0<3}");
                padded[..3].parse::<u64>().ok()?
            }
            None if frac.is_empty() => 0,
            _ => return None,
        };
        if mo == 0 || mo > 12 || d == 0 || d > 31 || h > 23 || mi > 59 || s > 60 {
            return None;
        }
        let days = days_from_civil(y as i64, mo as u32, d as u32);
        let unix = days * 86_400 + (h * 3600 + mi * 60 + s) as i64 - offset_secs;
        let rel = unix - EPOCH_UNIX_SECS as i64;
        (rel >= 0).then(|| Time(rel as u64 * 1000 + millis))
    }
}

/// Splits what follows the seconds of an RFC 3339 time into the fraction (`.159`, or empty) and
/// the zone's offset east of UTC in seconds (`Z`: 0, `+01:00`: 3600).
fn split_offset(rest: &str) -> Option<(&str, i64)> {
    if let Some(frac) = rest.strip_suffix('Z') {
        return Some((frac, 0));
    }
    let at = rest.len().checked_sub(6)?;
    let (frac, zone) = rest.split_at_checked(at)?;
    let z = zone.as_bytes();
    let sign = match z[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    if z[3] != b':' || !zone[1..3].bytes().chain(zone[4..].bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (hh, mm) = (zone[1..3].parse::<i64>().ok()?, zone[4..].parse::<i64>().ok()?);
    (hh < 24 && mm < 60).then_some((frac, sign * (hh * 3600 + mm * 60)))
}

pub(crate) fn civil_from_unix(secs: u64) -> (i64, u32, u32, u64, u64, u64) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
}

pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// kubectl's short human duration (`45s`, `2m30s`, `5m`, `3h`, `2d`), from
/// k8s.io/apimachinery/pkg/util/duration.HumanDuration.
pub fn human_duration(d: Duration) -> String {
    let secs = d.0 / 1000;
    if secs < 120 {
        // kubectl prints sub-second ages as 0s.
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        let days = hours / 24;
        return if h == 0 { format!("{days}d") } else { format!("{days}d{h}h") };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    format!("{}y", hours / 24 / 365)
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 < 1000 {
            write!(f, "{}ms", self.0)
        } else if self.0.is_multiple_of(1000) {
            write!(f, "{}s", self.0 / 1000)
        } else {
            write!(f, "{:.3}s", self.0 as f64 / 1000.0)
        }
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.rfc3339())
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Time::parse_rfc3339(&text).ok_or_else(|| serde::de::Error::custom(format!("invalid time {text:?}")))
    }
}

/// An RFC 3339 string, with the message the serde reading above gives.
impl super::decode::FromValue for Time {
    fn from_value(v: &serde_json::Value) -> Result<Self, String> {
        let text = String::from_value(v)?;
        Time::parse_rfc3339(&text).ok_or_else(|| super::decode::custom(format!("invalid time {text:?}")))
    }
}

/// `metav1.MicroTime`: serialised with microseconds (leases, events' eventTime).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct MicroTime(pub Time);

impl Serialize for MicroTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.rfc3339_micro())
    }
}

impl<'de> Deserialize<'de> for MicroTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Time::deserialize(d).map(MicroTime)
    }
}

impl super::decode::FromValue for MicroTime {
    fn from_value(v: &serde_json::Value) -> Result<Self, String> {
        Time::from_value(v).map(MicroTime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_the_forms_people_type() {
        assert_eq!(Duration::parse("500ms"), Ok(Duration(500)));
        assert_eq!(Duration::parse("30s"), Ok(Duration(30_000)));
        assert_eq!(Duration::parse("5m"), Ok(Duration(300_000)));
        assert_eq!(Duration::parse("2m30s"), Ok(Duration(150_000)));
        assert_eq!(Duration::parse("1.5s"), Ok(Duration(1500)));
        for bad in ["", "5", "s", "5x", "-1s", "1..2s", "ms5"] {
            assert!(Duration::parse(bad).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn ages_print_like_kubectl() {
        let cases = [(0, "0s"), (45, "45s"), (119, "119s"), (150, "2m30s"), (300, "5m"), (1800, "30m"), (10_800, "3h"), (172_800, "2d")];
        for (secs, want) in cases {
            assert_eq!(human_duration(Duration::secs(secs)), want, "{secs}s");
        }
    }

    #[test]
    fn timestamps_round_trip_through_rfc3339() {
        assert_eq!(Time(0).rfc3339(), "2026-01-01T00:00:00Z");
        let t = Time(86_400_000 * 59 + 3_723_456);
        assert_eq!(t.rfc3339(), "2026-03-01T01:02:03Z");
        assert_eq!(t.rfc3339_micro(), "2026-03-01T01:02:03.456000Z");
        assert_eq!(Time::parse_rfc3339(&t.rfc3339_micro()), Some(t));
        assert_eq!(Time::parse_rfc3339("2025-12-31T23:59:59Z"), None);
    }

    #[test]
    fn times_with_a_numeric_offset_parse_as_kube_apiserver_reads_them() {
        let t = Time(86_400_000 * 59 + 3_723_456);
        assert_eq!(Time::parse_rfc3339("2026-03-01T01:02:03.456000+00:00"), Some(t));
        assert_eq!(Time::parse_rfc3339("2026-03-01T02:02:03.456+01:00"), Some(t));
        assert_eq!(Time::parse_rfc3339("2026-02-28T23:32:03.456-01:30"), Some(t));
        assert_eq!(Time::parse_rfc3339("2026-03-01T01:02:03+00:00"), Some(Time(86_400_000 * 59 + 3_723_000)));
        for bad in [
            "2026-03-01T01:02:03+0000",
            "2026-03-01T01:02:03+00:0x",
            "2026-03-01T01:02:03 00:00",
            "2026-03-01T01:02:03.+00:00",
            "2026-13-01T01:02:03Z",
        ] {
            assert_eq!(Time::parse_rfc3339(bad), None, "{bad}");
        }
    }
}
