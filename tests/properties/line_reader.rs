//! The bounded line reader: what it delivers does not depend on how the input is chunked (reads
//! of any size, interrupted reads), an overlong line is only ever reported `Oversized` (or, blank,
//! skipped), and a line within the limit is its decoded message; plus the pinned minimal cases.

use std::io::{self, Read};

use lean_beam_mcp::mcp::transport::{Inbound, LineReader};
use lean_beam_mcp::mcp::{DecodeError, Incoming, decode};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::{arb_envelope, config};

// ---------------------------------------------------------------------------------------------
// (b) The line reader
// ---------------------------------------------------------------------------------------------

/// A reader that hands out its bytes in the given piece sizes, cycling; a size of 0 is an
/// `Interrupted` error, which the reader must retry.
struct Pieces<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
    next: usize,
}

impl<'a> Pieces<'a> {
    fn new(data: &'a [u8], mut sizes: Vec<usize>) -> Self {
        sizes.push(1);
        Pieces {
            data,
            sizes,
            next: 0,
        }
    }
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        if size == 0 && !self.data.is_empty() {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = size.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// What a [`LineReader`] delivered, comparable.
#[derive(Debug, PartialEq)]
enum Item {
    Message(Result<Incoming, DecodeError>),
    Oversized(usize),
}

fn read_items(input: impl Read, limit: usize, len: usize) -> Vec<Item> {
    let mut reader = LineReader::new(input, limit);
    let mut items = Vec::new();
    while let Some(inbound) = reader.next_inbound() {
        items.push(match inbound {
            Inbound::Message(message) => Item::Message(message),
            Inbound::Oversized { limit } => Item::Oversized(limit),
        });
        assert!(items.len() <= len + 1, "more items than input lines");
    }
    items
}

/// Walks the input's lines alongside the items: an overlong line may only be `Oversized` (or,
/// whitespace only, skipped); a line within the limit is its decoded message (blank: nothing).
/// A line that fits only without its `\r` may be either. Every alignment is tried.
fn check_against_lines(data: &[u8], limit: usize, items: &[Item]) -> Result<(), TestCaseError> {
    // The item positions some alignment of the lines so far can have reached.
    let mut reached: Vec<usize> = vec![0];
    for (n, raw) in data.split(|b| *b == b'\n').enumerate() {
        let content = raw.strip_suffix(b"\r").unwrap_or(raw);
        let blank = content.iter().all(u8::is_ascii_whitespace);
        let message = Item::Message(decode(content));
        let mut next = Vec::new();
        for &at in &reached {
            let item = items.get(at);
            if blank {
                next.push(at);
            }
            if raw.len() > limit && item == Some(&Item::Oversized(limit)) {
                next.push(at + 1);
            }
            if !blank && content.len() <= limit && item == Some(&message) {
                next.push(at + 1);
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.is_empty() {
            return Err(TestCaseError::fail(format!(
                "line {n} ({} bytes, {} without \\r; limit {limit}) does not match {:?}",
                raw.len(),
                content.len(),
                reached.iter().map(|at| items.get(*at)).collect::<Vec<_>>()
            )));
        }
        reached = next;
    }
    prop_assert!(
        reached.contains(&items.len()),
        "items beyond the last line: {:?}",
        &items[reached.last().copied().unwrap_or(0)..]
    );
    Ok(())
}

fn arb_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => arb_envelope().prop_map(|v| v.to_string().into_bytes()),
        2 => prop::collection::vec(any::<u8>(), 0..40),
        1 => prop::sample::select(vec![&b""[..], b" ", b"\t \x0b", b"\r", b" \r"])
            .prop_map(<[u8]>::to_vec),
        1 => (1usize..100, prop::sample::select(vec![b' ', b'x', b'\t', b'\r']))
            .prop_map(|(n, byte)| vec![byte; n]),
    ]
}

fn arb_stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        (
            arb_line(),
            prop::sample::select(vec![&b"\n"[..], b"\r\n", b""]),
        ),
        0..6,
    )
    .prop_map(|lines| {
        lines
            .into_iter()
            .flat_map(|(line, end)| line.into_iter().chain(end.iter().copied()))
            .collect()
    })
}

fn arb_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![1 => Just(0usize), 6 => 1usize..64], 1..12)
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn line_reader_items_do_not_depend_on_chunking(
        data in arb_stream(),
        limit in 1usize..96,
        sizes in arb_sizes(),
    ) {
        let whole = read_items(&data[..], limit, data.len());
        let bytewise = read_items(Pieces::new(&data, vec![1]), limit, data.len());
        let pieces = read_items(Pieces::new(&data, sizes), limit, data.len());
        prop_assert_eq!(&bytewise, &whole, "1-byte reads differ from one read");
        prop_assert_eq!(&pieces, &whole, "arbitrary pieces differ from one read");
    }

    #[test]
    fn line_reader_never_passes_an_overlong_line(
        data in arb_stream(),
        limit in 1usize..96,
        sizes in arb_sizes(),
    ) {
        // 1-byte reads are covered by the chunking property.
        check_against_lines(&data, limit, &read_items(&data[..], limit, data.len()))?;
        check_against_lines(&data, limit, &read_items(Pieces::new(&data, sizes), limit, data.len()))?;
    }
}

/// Minimal case of `line_reader_items_do_not_depend_on_chunking` (a bug): an overlong line of
/// only whitespace is skipped when it arrives whole but reported `Oversized` when it arrives in
/// pieces, because the streaming path discards it before it can see it is blank.
#[test]
fn line_reader_overlong_blank_line_does_not_depend_on_chunking() {
    let data = b"   \n";
    let whole = read_items(&data[..], 1, data.len());
    let bytewise = read_items(Pieces::new(data, vec![1]), 1, data.len());
    assert_eq!(bytewise, whole);
}

/// A line that fits the limit only without its `\r` is a message however it arrives.
#[test]
fn line_reader_cr_at_the_limit_does_not_depend_on_chunking() {
    let data = b"{}\r\n";
    let whole = read_items(&data[..], 2, data.len());
    let bytewise = read_items(Pieces::new(data, vec![1]), 2, data.len());
    assert_eq!(bytewise, whole);
    assert!(matches!(whole[..], [Item::Message(_)]), "{whole:?}");
}
