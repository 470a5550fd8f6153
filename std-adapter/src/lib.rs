//! std sources for mediaslice.
