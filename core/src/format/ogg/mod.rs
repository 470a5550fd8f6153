//! Ogg (placeholder).
