//! Unit tests of the converters.
