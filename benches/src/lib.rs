//! Benchmarks live here (see issue 9).
