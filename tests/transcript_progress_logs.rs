//! (being written)

mod support;
