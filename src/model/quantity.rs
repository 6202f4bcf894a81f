//! `resource.Quantity`: the `100m`, `0.5`, `128Mi` strings of resource requests.
//!
//! The text is kept as written (so `-o yaml` shows what the manifest said) and parsed on demand
//! into integers: cpu in millicores, everything else in whole units (bytes, pods).

use serde::{Deserialize, Deserializer, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Quantity(pub String);

/// The message apimachinery gives for a string that is not a quantity.
pub const QUANTITY_FORMAT_ERROR: &str = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

impl Quantity {
    pub fn new(text: impl Into<String>) -> Self {
        Quantity(text.into())
    }
    /// The value scaled by 1000 (millicores for cpu), rounded up as Kubernetes' `MilliValue`.
    pub fn milli_value(&self) -> Option<i64> {
        parse_scaled(&self.0, 1000.0)
    }
    /// The value in whole units, rounded up as Kubernetes' `Value`.
    pub fn value(&self) -> Option<i64> {
        parse_scaled(&self.0, 1.0)
    }
    pub fn is_valid(&self) -> bool {
        self.milli_value().is_some()
    }
}

fn parse_scaled(text: &str, scale: f64) -> Option<i64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-')).unwrap_or(t.len());
    let (number, suffix) = t.split_at(split);
    if number.is_empty() || number.matches('.').count() > 1 || number[1..].contains(['+', '-']) {
        return None;
    }
    let n = crate::model::decode::parse_f64(number)?;
    let multiplier = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        s if s.starts_with(['e', 'E']) => 10f64.powi(s[1..].parse::<i32>().ok()?),
        _ => return None,
    };
    let v = (n * multiplier * scale).ceil();
    (v.is_finite() && v.abs() < 9.2e18).then_some(v as i64)
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            S(String),
            I(i64),
            F(f64),
        }
        let text = match Raw::deserialize(d)? {
            Raw::S(s) => s,
            Raw::I(i) => i.to_string(),
            Raw::F(f) => f.to_string(),
        };
        let q = Quantity(text);
        if q.is_valid() {
            Ok(q)
        } else {
            Err(serde::de::Error::custom(QUANTITY_FORMAT_ERROR))
        }
    }
}

/// The serde reading above, by hand: the untagged `Raw` takes a string, an i64 or an f64.
impl super::decode::FromValue for Quantity {
    fn from_value(v: &serde_json::Value) -> Result<Self, String> {
        use serde_json::Value;
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => match n.as_i64() {
                Some(i) => i.to_string(),
                None => n.as_f64().unwrap_or_default().to_string(),
            },
            _ => return Err(super::decode::custom("data did not match any variant of untagged enum Raw".into())),
        };
        let q = Quantity(text);
        if q.is_valid() {
            Ok(q)
        } else {
            Err(super::decode::custom(QUANTITY_FORMAT_ERROR.to_string()))
        }
    }
}

/// Formats millicores the way kubectl describe does (`250m`, `2`).
pub fn format_millicores(m: i64) -> String {
    if m % 1000 == 0 {
        format!("{}", m / 1000)
    } else {
        format!("{m}m")
    }
}

/// Formats bytes with the largest binary suffix that divides them (`128Mi`, `8Gi`).
pub fn format_bytes(b: i64) -> String {
    for (suffix, size) in [("Ti", 1i64 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
        if b != 0 && b % size == 0 {
            return format!("{}{suffix}", b / size);
        }
    }
    b.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_decimal_and_binary_suffixes() {
        assert_eq!(Quantity::new("100m").milli_value(), Some(100));
        assert_eq!(Quantity::new("0.5").milli_value(), Some(500));
        assert_eq!(Quantity::new("2").milli_value(), Some(2000));
        assert_eq!(Quantity::new("128Mi").value(), Some(128 << 20));
        assert_eq!(Quantity::new("1G").value(), Some(1_000_000_000));
        assert_eq!(Quantity::new("1e3").value(), Some(1000));
        for bad in ["", "abc", "1Q", "1.2.3", "--1"] {
            assert_eq!(Quantity::new(bad).milli_value(), None, "{bad}");
        }
    }

    #[test]
    fn quantities_format_back() {
        assert_eq!(format_millicores(250), "250m");
        assert_eq!(format_millicores(2000), "2");
        assert_eq!(format_bytes(8 << 30), "8Gi");
        assert_eq!(format_bytes(1000), "1000");
    }
}
