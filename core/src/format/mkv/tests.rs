//! Unit tests for the Matroska demuxer.
