//! Spans of time as the command line writes them: a timeout (`90s`, `500ms`) and a time
//! ago (`3d`, `1w`), one reading of "a number and its unit" for both.

use std::time::Duration;

/// `90`, `90s`, `5m`, `1h`, `500ms`: a timeout, more than zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (value, unit) = number_and_unit(text).ok_or_else(|| {
        format!(
            "{:?} is not a duration; use e.g. 90s, 10m or 1h",
            text.trim()
        )
    })?;
    let duration = match unit {
        "ms" => Duration::from_millis(value),
        "" => Duration::from_secs(value),
        "s" | "m" | "h" => Duration::from_secs(value.saturating_mul(seconds_per(unit))),
        other => return Err(format!("unknown unit {other:?}; use ms, s, m or h")),
    };
    if duration.is_zero() {
        return Err("the timeout must be more than zero".to_owned());
    }
    Ok(duration)
}

/// `30m`, `2h`, `3d`, `1w`: a time ago.
pub fn parse_age(text: &str) -> Result<Duration, String> {
    let (value, unit) = number_and_unit(text).ok_or_else(|| {
        format!(
            "{:?} is not a time ago; use e.g. 30m, 2h, 3d or 1w",
            text.trim()
        )
    })?;
    match unit {
        "s" | "m" | "h" | "d" | "w" => {
            Ok(Duration::from_secs(value.saturating_mul(seconds_per(unit))))
        }
        other => Err(format!("unknown unit {other:?}; use s, m, h, d or w")),
    }
}

/// `90s` as (90, "s"); None when it does not start with a number.
fn number_and_unit(text: &str) -> Option<(u64, &str)> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    Some((number.parse().ok()?, unit.trim()))
}

fn seconds_per(unit: &str) -> u64 {
    match unit {
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_take_ms_s_m_h_and_a_bare_number_of_seconds() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration(" 5m "), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(
            parse_duration("2d"),
            Err("unknown unit \"d\"; use ms, s, m or h".to_owned())
        );
        assert_eq!(
            parse_duration("soon"),
            Err("\"soon\" is not a duration; use e.g. 90s, 10m or 1h".to_owned())
        );
        for zero in ["0", "0s", "0ms"] {
            assert_eq!(
                parse_duration(zero),
                Err("the timeout must be more than zero".to_owned())
            );
        }
    }

    #[test]
    fn ages_take_s_m_h_d_w_and_need_a_unit() {
        assert_eq!(parse_age("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_age("3d"), Ok(Duration::from_secs(3 * 86_400)));
        assert_eq!(parse_age("1w"), Ok(Duration::from_secs(604_800)));
        assert_eq!(
            parse_age("3"),
            Err("unknown unit \"\"; use s, m, h, d or w".to_owned())
        );
        assert_eq!(
            parse_age("yesterday"),
            Err("\"yesterday\" is not a time ago; use e.g. 30m, 2h, 3d or 1w".to_owned())
        );
    }
}
