//! Fuzz targets that need no database, as property tests (proptest) run by `cargo test`:
//! each runs its committed seed corpus (`server/tests/fuzz-corpus/<target>/`) and then a
//! fixed number of random cases from a fixed seed. The targets that need the schema or a
//! database are in `server/tests/fuzz/`. See `support` for running a longer pass.

mod canonical;
pub(crate) mod support;
mod validate;
mod webhook_url;
