//! Unit tests for the AVI demuxer, with files built in code.
