//! Unit tests for the Ogg demuxer, on streams built in code.
