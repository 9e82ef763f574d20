//! A size in bytes as a config file writes it: `1GiB`, `500MB`, `64 KiB`, or a number.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

/// What a size may look like, for messages.
pub const EXPECTED: &str = "a size such as \"1GiB\", \"500MB\", \"64KiB\" or a number of bytes";

impl ByteSize {
    /// Reads `1GiB`, `1.5 GB`, `500MB`, `64KiB`, `4096`: units are B, KB/MB/GB/TB (powers
    /// of 1000) and KiB/MiB/GiB/TiB (powers of 1024), in any case.
    pub fn parse(text: &str) -> Option<ByteSize> {
        let text = text.trim();
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: f64 = number.parse().ok()?;
        let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "kb" => 1_000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            "tb" => 1_000_000_000_000,
            "kib" => 1 << 10,
            "mib" => 1 << 20,
            "gib" => 1 << 30,
            "tib" => 1 << 40,
            _ => return None,
        };
        let bytes = number * factor as f64;
        // Finite, not negative, and within u64 (the cast saturates; refused instead).
        (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64)
            .then_some(ByteSize(bytes as u64))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 4] = [
            (1 << 40, "TiB"),
            (1 << 30, "GiB"),
            (1 << 20, "MiB"),
            (1 << 10, "KiB"),
        ];
        for (size, unit) in UNITS {
            if self.0 >= size {
                return write!(f, "{:.1} {unit}", self.0 as f64 / size as f64);
            }
        }
        write!(f, "{} B", self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SizeVisitor;
        impl Visitor<'_> for SizeVisitor {
            type Value = ByteSize;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED)
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<ByteSize, E> {
                u64::try_from(value)
                    .map(ByteSize)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(value), &self))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(value))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<ByteSize, E> {
                ByteSize::parse(value)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Str(value), &self))
            }
        }
        deserializer.deserialize_any(SizeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::ByteSize;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(ByteSize::parse("1GiB"), Some(ByteSize(1 << 30)));
        assert_eq!(ByteSize::parse("1.5 GB"), Some(ByteSize(1_500_000_000)));
        assert_eq!(ByteSize::parse("500mb"), Some(ByteSize(500_000_000)));
        assert_eq!(ByteSize::parse("64KiB"), Some(ByteSize(65_536)));
        assert_eq!(ByteSize::parse("4096"), Some(ByteSize(4096)));
        for bad in ["", "GiB", "1 parsec", "-1GB", "1e400", "1..2MB"] {
            assert_eq!(ByteSize::parse(bad), None, "{bad}");
        }
        assert_eq!(ByteSize(1 << 30).to_string(), "1.0 GiB");
        assert_eq!(ByteSize(512).to_string(), "512 B");
    }

    #[test]
    fn a_config_value_is_a_number_or_a_string() {
        #[derive(serde::Deserialize)]
        struct Table {
            size: ByteSize,
        }
        let read = |text: &str| toml::from_str::<Table>(text).map(|t| t.size);
        assert_eq!(read("size = 2048").unwrap(), ByteSize(2048));
        assert_eq!(read("size = \"2MiB\"").unwrap(), ByteSize(2 << 20));
        let error = read("size = \"lots\"").unwrap_err().to_string();
        assert!(error.contains("a size such as"), "{error}");
        assert!(read("size = -5").is_err());
    }
}
