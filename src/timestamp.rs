//! The one place a UTC time becomes text, in the three forms the server writes.
//!
//! Contract: [`iso`] is ISO 8601 / RFC 3339 in UTC to the second (`2026-12-01T20:13:55Z`, report
//! cards), [`iso_micros`] the same to the microsecond (trace lines, fixed width so they sort),
//! [`compact`] the form a file name can hold (`20261201-201355`, bundle directories).

use time::OffsetDateTime;

/// `YYYY-MM-DDThh:mm:ssZ`.
pub fn iso(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

/// `YYYY-MM-DDThh:mm:ss.uuuuuuZ`.
pub fn iso_micros(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.microsecond()
    )
}

/// `YYYYMMDD-hhmmss`.
pub fn compact(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms() {
        let at = OffsetDateTime::from_unix_timestamp_nanos(1_800_000_000_123_456_789).unwrap();
        assert_eq!(iso(at), "2027-01-15T08:00:00Z");
        assert_eq!(iso_micros(at), "2027-01-15T08:00:00.123456Z");
        assert_eq!(compact(at), "20270115-080000");
    }
}
