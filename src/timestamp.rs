//! The one place a UTC time becomes text, in the three forms the server writes.
//!
//! Contract: [`iso`] is ISO 8601 / RFC 3339 in UTC to the second (`2026-12-01T20:13:55Z`, report
//! cards), [`iso_micros`] the same to the microsecond (trace lines, fixed width so they sort),
//! [`compact`] the form a file name can hold (`20261201-201355`, bundle directories).

use time::OffsetDateTime;

/// `YYYY-MM-DDThh:mm:ssZ`.
pub fn iso(at: OffsetDateTime) -> String {
    let [y, mo, d, h, mi, s] = fields(at);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `YYYY-MM-DDThh:mm:ss.uuuuuuZ`.
pub fn iso_micros(at: OffsetDateTime) -> String {
    let [y, mo, d, h, mi, s] = fields(at);
    let micros = at.microsecond();
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{micros:06}Z")
}

/// `YYYYMMDD-hhmmss`.
pub fn compact(at: OffsetDateTime) -> String {
    let [y, mo, d, h, mi, s] = fields(at);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// Year, month, day, hour, minute and second in UTC.
fn fields(at: OffsetDateTime) -> [i32; 6] {
    let at = at.to_offset(time::UtcOffset::UTC);
    [
        at.year(),
        i32::from(u8::from(at.month())),
        i32::from(at.day()),
        i32::from(at.hour()),
        i32::from(at.minute()),
        i32::from(at.second()),
    ]
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
