//! Unit tests for the native FLAC demuxer, on files built in code.
