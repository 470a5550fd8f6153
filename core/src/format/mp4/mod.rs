//! ISO base media file format (being written).
