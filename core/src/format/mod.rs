//! One module per format family.

#[cfg(feature = "mkv")]
pub mod mkv;
#[cfg(feature = "mp4")]
pub mod mp4;
#[cfg(feature = "riff")]
pub mod riff;
