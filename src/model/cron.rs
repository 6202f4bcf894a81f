//! Cron schedules as kube-apiserver and the CronJob controller read them: robfig/cron v3's
//! `ParseStandard` (five fields, or a descriptor) and its `Next`, and the time zones a CronJob
//! may name.
//!
//! Why hand-written: the page's download is a budget, and what CronJobs need of cron is small —
//! five bit sets and a search forward through the calendar. The parser keeps robfig's rules and
//! its error texts, because the API server quotes them (`spec.schedule: Invalid value: "61 * * *
//! *": end of range (61) above maximum (59): 61`): lists, ranges, steps (`N/step` means
//! `N-max/step`), `*` and `?`, month and weekday names, day-of-week 0–6, and the day rule —
//! day-of-month and day-of-week are ORed when both are restricted, ANDed when either is `*`.
//! `@every DURATION` is accepted, as `ParseStandard` accepts it.
//!
//! Time zones: the full IANA database is far too large for the page, so only the zones whose
//! rules never change are simulated — UTC (and its aliases) and the fixed offsets `Etc/GMT-14` to
//! `Etc/GMT+12`. Any other name is refused by validation with a message saying so, rather than
//! computing a wrong time for it.

use super::time::days_from_civil;

/// Bit 63 marks a field written as `*` or `?` (robfig's `starBit`), which decides the day rule.
const STAR: u64 = 1 << 63;

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Five fields, as bit sets (bit n = value n).
    Spec { minute: u64, hour: u64, dom: u64, month: u64, dow: u64 },
    /// `@every DURATION`: whole seconds, at least one.
    Every { secs: i64 },
}

/// One field's bounds and names.
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MINUTES: Bounds = Bounds { min: 0, max: 59, names: &[] };
const HOURS: Bounds = Bounds { min: 0, max: 23, names: &[] };
const DOM: Bounds = Bounds { min: 1, max: 31, names: &[] };
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds { min: 0, max: 6, names: &[("sun", 0), ("mon", 1), ("tue", 2), ("wed", 3), ("thu", 4), ("fri", 5), ("sat", 6)] };

/// `cron.ParseStandard`: the error is robfig's text, which validation quotes.
pub fn parse_standard(spec: &str) -> Result<Schedule, String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    // `TZ=` / `CRON_TZ=` prefixes parse (validation refuses them for CronJobs separately).
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let Some(space) = spec.find(' ') else { return Err(format!("provided bad location {spec}: unknown time zone")) };
        spec = spec[space..].trim();
    }
    if let Some(descriptor) = spec.strip_prefix('@') {
        return parse_descriptor(descriptor, spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
    }
    Ok(Schedule::Spec {
        minute: field(fields[0], &MINUTES)?,
        hour: field(fields[1], &HOURS)?,
        dom: field(fields[2], &DOM)?,
        month: field(fields[3], &MONTHS)?,
        dow: field(fields[4], &DOW)?,
    })
}

/// `parseDescriptor`: `@yearly` and friends as the five fields they stand for.
fn parse_descriptor(name: &str, spec: &str) -> Result<Schedule, String> {
    let fields = match name {
        "yearly" | "annually" => "0 0 1 1 *",
        "monthly" => "0 0 1 * *",
        "weekly" => "0 0 * * 0",
        "daily" | "midnight" => "0 0 * * *",
        "hourly" => "0 * * * *",
        _ => {
            let Some(duration) = name.strip_prefix("every ") else { return Err(format!("unrecognized descriptor: {spec}")) };
            let nanos =
                go_duration(duration).ok_or_else(|| format!("failed to parse duration {spec}: time: invalid duration \"{duration}\""))?;
            // `cron.Every`: below a second is a second; the rest is cut to whole seconds.
            return Ok(Schedule::Every { secs: (nanos / 1_000_000_000).max(1) as i64 });
        }
    };
    parse_standard(fields)
}

/// A field: a comma-separated list of ranges (`getField`; empty items are skipped).
fn field(text: &str, bounds: &Bounds) -> Result<u64, String> {
    let mut bits = 0;
    for expr in text.split(',').filter(|e| !e.is_empty()) {
        bits |= range(expr, bounds)?;
    }
    Ok(bits)
}

/// `getRange`: `number | number "-" number [ "/" number ]`, or `*`/`?` with an optional step.
fn range(expr: &str, b: &Bounds) -> Result<u64, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (mut start, mut end, mut extra);
    if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (start, end, extra) = (b.min, b.max, STAR);
    } else {
        start = int_or_name(low_and_high[0], b)?;
        end = match low_and_high.len() {
            1 => start,
            2 => int_or_name(low_and_high[1], b)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        extra = 0;
    }
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = parse_uint(range_and_step[1])?;
            // "N/step" means "N-max/step".
            if low_and_high.len() == 1 {
                end = b.max;
            }
            if step > 1 {
                extra = 0;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < b.min {
        return Err(format!("beginning of range ({start}) below minimum ({}): {expr}", b.min));
    }
    if end > b.max {
        return Err(format!("end of range ({end}) above maximum ({}): {expr}", b.max));
    }
    if start > end {
        return Err(format!("beginning of range ({start}) beyond end of range ({end}): {expr}"));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    let mut bits = 0u64;
    while start <= end {
        bits |= 1 << start;
        start += step;
    }
    Ok(bits | extra)
}

fn int_or_name(text: &str, b: &Bounds) -> Result<u32, String> {
    let lower = text.to_ascii_lowercase();
    match b.names.iter().find(|(name, _)| *name == lower) {
        Some((_, value)) => Ok(*value),
        None => parse_uint(text),
    }
}

/// `mustParseInt`: Go's `strconv.Atoi` and its errors, then no negatives.
fn parse_uint(text: &str) -> Result<u32, String> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!("failed to parse int from {text}: strconv.Atoi: parsing \"{text}\": invalid syntax"));
    }
    let Ok(value) = text.parse::<i64>() else {
        return Err(format!("failed to parse int from {text}: strconv.Atoi: parsing \"{text}\": value out of range"));
    };
    if value < 0 {
        return Err(format!("negative number ({value}) not allowed: {text}"));
    }
    // Anything past a field's maximum fails its range check; keep it representable.
    Ok(value.min(1_000) as u32)
}

/// Go's `time.ParseDuration`, in nanoseconds (only non-negative values are of use here).
fn go_duration(text: &str) -> Option<u64> {
    if text == "0" {
        return Some(0);
    }
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += number * factor;
    }
    (total.is_finite() && total < 9.2e18).then_some(total as u64)
}

/// A CronJob's `timeZone`, as far as kubeloop can compute it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Zone {
    /// A zone with one fixed offset from UTC, in seconds east.
    Fixed(i32),
    /// A name the API server would refuse, with its message.
    Invalid(String),
    /// A name that may be a real IANA zone, whose rules kubeloop does not carry.
    Unmodelled,
}

/// The zone a `timeZone` names: `validateTimeZone`'s checks, then the zones simulated.
pub fn zone(name: &str) -> Zone {
    if name.is_empty() {
        return Zone::Invalid("timeZone must be nil or non-empty string".into());
    }
    let valid_part = |p: &str| {
        p != "."
            && p != ".."
            && !p.starts_with('-')
            && (1..=14).contains(&p.len())
            && p.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'+'))
    };
    if !name.split('/').all(valid_part) {
        return Zone::Invalid(format!("unknown time zone {name}"));
    }
    if name.eq_ignore_ascii_case("Local") {
        return Zone::Invalid("timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones".into());
    }
    const UTC_NAMES: &[&str] = &["UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "Universal", "Zulu", "Greenwich"];
    let bare = name.strip_prefix("Etc/").unwrap_or(name);
    if UTC_NAMES.contains(&bare) {
        return Zone::Fixed(0);
    }
    // `Etc/GMT+5` is five hours *behind* UTC (POSIX signs); tzdata has GMT-14 to GMT+12.
    if let Some(offset) = name.strip_prefix("Etc/GMT") {
        let hours = |digits: &str| digits.parse::<i32>().ok().filter(|_| !digits.starts_with('0') && digits.len() <= 2);
        match (offset.strip_prefix('+').and_then(hours), offset.strip_prefix('-').and_then(hours)) {
            (Some(h), _) if h <= 12 => return Zone::Fixed(-h * 3600),
            (_, Some(h)) if h <= 14 => return Zone::Fixed(h * 3600),
            _ => return Zone::Invalid(format!("unknown time zone {name}")),
        }
    }
    Zone::Unmodelled
}

/// What kube-apiserver answers for a `timeZone` kubeloop does not simulate.
pub const UNMODELLED_ZONE: &str =
    "kubeloop does not carry the IANA time zone rules; only UTC (Etc/UTC) and the fixed offsets Etc/GMT-14 to Etc/GMT+12 are simulated";

impl Schedule {
    /// `Schedule.Next`: the first time strictly after `after` (Unix seconds, any fraction
    /// dropped) the schedule fires in a zone `offset` seconds east of UTC; `None` if none within
    /// five years (a schedule like `0 0 30 2 *` never fires).
    pub fn next(&self, after: i64, offset: i32) -> Option<i64> {
        let (minute, hour, dom, month, dow) = match self {
            Schedule::Every { secs } => return Some(after + secs),
            Schedule::Spec { minute, hour, dom, month, dow } => (*minute, *hour, *dom, *month, *dow),
        };
        let offset = i64::from(offset);
        // The first whole minute after `after`, in the zone's wall-clock seconds.
        let mut t = (after.div_euclid(60) + 1) * 60 + offset;
        let year_limit = civil(t).0 + 5;
        loop {
            let (y, mo, d, h, mi) = civil(t);
            if y > year_limit {
                return None;
            }
            let day_start = t - t.rem_euclid(86_400);
            if month & (1 << mo) == 0 {
                let (ny, nm) = if mo == 12 { (y + 1, 1) } else { (y, mo + 1) };
                t = days_from_civil(ny, nm, 1) * 86_400;
            } else if !day_matches(dom, dow, d, t.div_euclid(86_400)) {
                t = day_start + 86_400;
            } else if hour & (1 << h) == 0 {
                t = t - t.rem_euclid(3_600) + 3_600;
            } else if minute & (1 << mi) == 0 {
                t += 60;
            } else {
                return Some(t - offset);
            }
        }
    }
}

/// `dayMatches`: both must match when either field is `*`, else either may.
fn day_matches(dom: u64, dow: u64, day: u32, days_since_epoch: i64) -> bool {
    // 1970-01-01 was a Thursday.
    let weekday = (days_since_epoch + 4).rem_euclid(7);
    let (dom_match, dow_match) = (dom & (1 << day) != 0, dow & (1 << weekday) != 0);
    if dom & STAR != 0 || dow & STAR != 0 {
        dom_match && dow_match
    } else {
        dom_match || dow_match
    }
}

/// Wall-clock fields of seconds since the Unix epoch: (year, month, day, hour, minute).
fn civil(t: i64) -> (i64, u32, u32, u32, u32) {
    let days = t.div_euclid(86_400);
    let (y, mo, d, ..) = super::time::civil_from_unix((days.max(0) * 86_400) as u64);
    let rem = t.rem_euclid(86_400);
    (y, mo, d, (rem / 3600) as u32, (rem % 3600 / 60) as u32)
}

/// RFC 3339 of Unix seconds in a zone `offset` seconds east (`Z` for UTC), as Go's
/// `Time.In(loc).Format(time.RFC3339)` writes it.
pub fn rfc3339_in(unix: i64, offset: i32) -> String {
    let local = unix + i64::from(offset);
    let (y, mo, d, h, mi) = civil(local);
    let s = local.rem_euclid(60);
    let zone = match offset {
        0 => "Z".to_string(),
        o => format!("{}{:02}:{:02}", if o < 0 { '-' } else { '+' }, o.abs() / 3600, o.abs() % 3600 / 60),
    };
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{zone}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-01-01T00:00:00Z, a Thursday.
    const NEW_YEAR: i64 = 1_767_225_600;

    fn next(spec: &str, after: i64) -> Option<i64> {
        parse_standard(spec).unwrap().next(after, 0)
    }

    #[test]
    fn every_minute_fires_on_the_next_whole_minute() {
        assert_eq!(next("* * * * *", NEW_YEAR), Some(NEW_YEAR + 60));
        assert_eq!(next("* * * * *", NEW_YEAR + 59), Some(NEW_YEAR + 60));
        assert_eq!(next("*/5 * * * *", NEW_YEAR + 60), Some(NEW_YEAR + 300));
        assert_eq!(next("@hourly", NEW_YEAR), Some(NEW_YEAR + 3600));
        assert_eq!(next("@daily", NEW_YEAR + 1), Some(NEW_YEAR + 86_400));
        assert_eq!(next("@every 90s", NEW_YEAR), Some(NEW_YEAR + 90));
    }

    #[test]
    fn days_are_ored_when_both_are_restricted_and_anded_with_a_star() {
        // Monday 2026-01-05 comes before the 15th.
        assert_eq!(next("0 0 15 * MON", NEW_YEAR), Some(NEW_YEAR + 4 * 86_400));
        assert_eq!(next("0 0 * * MON", NEW_YEAR), Some(NEW_YEAR + 4 * 86_400));
        // @weekly is Sunday midnight: 2026-01-04.
        assert_eq!(next("@weekly", NEW_YEAR), Some(NEW_YEAR + 3 * 86_400));
        // @yearly: 2027-01-01.
        assert_eq!(next("@yearly", NEW_YEAR), Some(NEW_YEAR + 365 * 86_400));
        assert_eq!(next("0 0 30 2 *", NEW_YEAR), None, "never fires");
    }

    #[test]
    fn a_fixed_offset_zone_shifts_the_wall_clock() {
        // 09:00 in Etc/GMT-2 (UTC+2) is 07:00 UTC.
        let Zone::Fixed(offset) = zone("Etc/GMT-2") else { panic!() };
        assert_eq!(offset, 7200);
        assert_eq!(parse_standard("0 9 * * *").unwrap().next(NEW_YEAR, offset), Some(NEW_YEAR + 7 * 3600));
        assert_eq!(rfc3339_in(NEW_YEAR + 7 * 3600, offset), "2026-01-01T09:00:00+02:00");
        assert_eq!(rfc3339_in(NEW_YEAR, 0), "2026-01-01T00:00:00Z");
        assert_eq!(zone("Etc/GMT+12"), Zone::Fixed(-12 * 3600));
        assert_eq!(zone("UTC"), Zone::Fixed(0));
        assert_eq!(zone("Europe/Paris"), Zone::Unmodelled);
        assert_eq!(zone("Etc/GMT+13"), Zone::Invalid("unknown time zone Etc/GMT+13".into()));
        assert_eq!(zone("a//b"), Zone::Invalid("unknown time zone a//b".into()));
    }

    #[test]
    fn errors_are_robfigs_words() {
        let err = |s: &str| parse_standard(s).unwrap_err();
        assert_eq!(err("61 * * * *"), "end of range (61) above maximum (59): 61");
        assert_eq!(err("* * * *"), "expected exactly 5 fields, found 4: [* * * *]");
        assert_eq!(err("* * * * 7"), "end of range (7) above maximum (6): 7");
        assert_eq!(err("5-1 * * * *"), "beginning of range (5) beyond end of range (1): 5-1");
        assert_eq!(err("* * 0 * *"), "beginning of range (0) below minimum (1): 0");
        assert_eq!(err("x * * * *"), "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax");
        assert_eq!(err("*/0 * * * *"), "step of range should be a positive number: */0");
        assert_eq!(err("@fortnightly"), "unrecognized descriptor: @fortnightly");
        assert_eq!(err("1-2-3 * * * *"), "too many hyphens: 1-2-3");
        assert!(parse_standard("0 0 ? JAN-MAR mon-fri").is_ok());
        assert!(parse_standard("TZ=UTC * * * * *").is_ok());
    }
}
